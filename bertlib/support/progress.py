"""The training loops' progress bar. tqdm's notebook widget is saved in its first state
(``0%|``); this one, shown through a display handle, is replaced when it closes by its final
state, with a line of text and a picture for GitHub or nbviewer. Outside a notebook: tqdm's."""

from __future__ import annotations

from IPython.display import display
from tqdm.auto import tqdm
from tqdm.notebook import tqdm_notebook

IN_NOTEBOOK = issubclass(tqdm, tqdm_notebook)  # tqdm.auto chose the widget bar


class ProgressBar(tqdm):
    def __init__(self, *args, **kwargs):
        self._handle = None
        if IN_NOTEBOOK:
            kwargs["display"] = False  # shown below, through a handle we can update
        super().__init__(*args, **kwargs)
        if IN_NOTEBOOK and not self.disable:
            # A description such as "fine-tuning" must not wrap inside its word.
            self.container.children[0].layout.flex = "0 0 auto"
            self._handle = display(self.container, display_id=True)

    def close(self) -> None:
        super().close()
        if self._handle is not None:
            bundle = self.container._repr_mimebundle_()
            bundle["text/plain"] = self.container.__repr__(pretty=True)  # the bar as blocks
            bundle["image/png"] = bar_picture(str(self.container), self.n / (self.total or 1))
            self._handle.update(bundle, raw=True)
            self._handle = None


def bar_picture(line: str, fraction: float) -> bytes:
    """A PNG of tqdm's ``"desc: 100%|███| 300/300 [...]"``, the bar filled to ``fraction``."""
    from matplotlib.patches import Rectangle  # matplotlib only once a notebook bar closes

    from bertlib.viz.style import new_figure

    left, _, right = line.partition("|")
    right = right.rpartition("|")[2].strip()
    fig = new_figure(9, 0.4)
    ax = fig.add_axes((0, 0, 1, 1), xlim=(0, 1), ylim=(0, 1))
    ax.set_axis_off()
    ax.text(0.005, 0.5, left.strip(), va="center", fontsize=10)
    start, width = 0.2, 0.3
    ax.add_patch(Rectangle((start, 0.2), width, 0.6, facecolor="#EEEEEE", edgecolor="#999999"))
    ax.add_patch(Rectangle((start, 0.2), width * min(max(fraction, 0.0), 1.0), 0.6,
                           facecolor="#009E73" if fraction >= 1 else "#D55E00"))
    ax.text(start + width + 0.01, 0.5, right, va="center", fontsize=10)
    return fig._repr_png_()

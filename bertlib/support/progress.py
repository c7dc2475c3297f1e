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
    """A PNG of tqdm's ``"desc: 100%|███| 300/300 [...]"``, the bar filled to ``fraction``: one
    line, or where the count, rate and losses do not fit beside the bar, two (a picture wider
    than the page is shown scaled down, its 10-point text under 10 pixels)."""
    from matplotlib.patches import Rectangle  # matplotlib only once a notebook bar closes

    from bertlib.viz.fonts import add_cjk_fallback
    from bertlib.viz.style import PAGE_WIDTH, new_figure

    left, _, right = line.partition("|")
    right = right.rpartition("|")[2].strip()
    inches = PAGE_WIDTH - 0.2  # and the 0.1-inch pad either side that _repr_png_ adds
    fig = new_figure(inches, 0.4)
    ax = fig.add_axes((0, 0, 1, 1), xlim=(0, 1), ylim=(0, 1))
    ax.set_axis_off()
    start, width = 0.2, 0.3
    description = ax.text(0.005, 0.5, left.strip(), va="center", fontsize=10)
    frame = ax.add_patch(Rectangle((start, 0.2), width, 0.6, facecolor="#EEEEEE",
                                   edgecolor="#999999"))
    filled = ax.add_patch(Rectangle((start, 0.2), width * min(max(fraction, 0.0), 1.0), 0.6,
                                    facecolor="#009E73" if fraction >= 1 else "#D55E00"))
    after = ax.text(start + width + 0.01, 0.5, right, va="center", fontsize=10)
    add_cjk_fallback(fig)  # measured as drawn: a Japanese description's glyphs too
    if after.get_window_extent(fig.canvas.get_renderer()).x1 > fig.bbox.width:
        fig.set_size_inches(inches, 0.7)  # the bar on the first line, the rest under it
        description.set_y(0.72)
        for bar in (frame, filled):
            bar.set(y=0.57, height=0.3)
        after.set_position((0.005, 0.26))
    return fig._repr_png_()

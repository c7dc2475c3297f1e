"""The training losses as a figure that grows while ``train_bert`` runs."""

from __future__ import annotations

from IPython.display import display

from bertlib.support.checks import check_positive_int
from bertlib.support.i18n import resolve_language, text
from bertlib.train import TrainHistory
from bertlib.viz.style import new_figure


class LossPlot:
    """The losses every ``every`` steps: ``train_bert(..., callback=LossPlot().update)``."""

    def __init__(self, every: int = 10, lang: str | None = None):
        check_positive_int("every", every)
        self.every = every
        self.lang = resolve_language(lang)
        # Not pyplot's: shown only through the display handle, not again at the cell's end.
        self.fig = new_figure(5, 3, self.lang)
        self.ax = self.fig.add_subplot()
        self.lines = {name: self.ax.plot([], [], label=text(f"train_{name}_loss", self.lang))[0]
                      for name in ("mlm", "nsp")}
        self.ax.set_xlabel(text("train_step", self.lang))
        self.ax.set_ylabel(text("train_loss", self.lang))
        self.ax.legend()
        self._handle = None

    def update(self, history: TrainHistory) -> None:
        steps = len(history.mlm)
        if steps % self.every and steps != history.num_steps:
            return
        for name, line in self.lines.items():
            line.set_data(range(1, steps + 1), getattr(history, name))
        self.ax.relim()
        self.ax.autoscale_view()
        if self._handle is None:
            self._handle = display(self.fig, display_id=True)
        else:
            self._handle.update(self.fig)

"""The NSP head's answer as a figure: P(NotNext) and P(IsNext) as bars."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure

from bertlib.support.checks import number_array
from bertlib.support.i18n import text
from bertlib.viz._render import spines
from bertlib.viz.live import LiveFigure


class NSPPlot(LiveFigure):
    """Two horizontal bars, P(NotNext) and P(IsNext), with 0.5 marked."""

    def __init__(self, lang: str | None = None):
        super().__init__(8, 2.4, lang)
        self.figure.subplots_adjust(left=0.2, right=0.95, top=0.8, bottom=0.25)
        self.ax = self.figure.add_subplot()
        labels = [text("not_next", self.lang), text("is_next", self.lang)]
        self.bars = self.ax.barh([0, 1], [0, 0], color=["#E69F00", "#0072B2"],
                                 tick_label=labels)
        # On a white ground: a value beside the 0.5 line or inside a long bar stays legible.
        self.values = [self.ax.text(0, i, "", va="center", fontsize=12,
                                    bbox={"facecolor": "white", "edgecolor": "none", "pad": 1})
                       for i in range(2)]
        self.half = self.ax.axvline(0.5, color="black", linestyle="--", linewidth=1)
        self.ax.set_xlim(0, 1)
        self.ax.set_xlabel(text("probability", self.lang))
        self.ax.tick_params(axis="y", labelsize=12)
        self.probabilities = np.zeros(2)
        # The 0.5 line and the frame too: a full draw puts them over the bars.
        self.blitter.animate(*self.bars, *self.values, self.ax.title, self.half,
                             *spines([self.ax]))

    def update(self, probabilities: Sequence[float]) -> Figure:
        """probabilities: (P(NotNext), P(IsNext)), bertlib's label order (1 = IsNext)."""
        self.probabilities = probs = np.asarray(probabilities, dtype=float)
        for bar, label, p in zip(self.bars, self.values, probs, strict=True):
            bar.set_width(p)
            label.set_x(min(p, 0.88) + 0.01)
            label.set_text(f"{p:.3f}")
        self.ax.set_title(text("nsp_title", self.lang, p=probs[1]))
        return self.figure


def plot_nsp(probabilities: Sequence[float], lang: str | None = None) -> Figure:
    """The NSP head's two probabilities as bars."""
    probs = number_array("probabilities", probabilities).astype(float)
    if (probs.shape != (2,) or not np.isfinite(probs).all() or (probs < 0).any()
            or (probs > 1).any() or not np.isclose(probs.sum(), 1.0)):
        raise ValueError(f"probabilities must be two numbers in [0, 1] summing to 1; got "
                         f"{probabilities!r:.80}")
    return NSPPlot(lang).once(probs)

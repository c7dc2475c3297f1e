"""Every layer and head at once: one attention thumbnail per head, layers as rows."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from bertlib.i18n import text
from bertlib.viz._render import spines
from bertlib.viz.live import LiveFigure

MAX_WIDTH = 11.0  # inches: a 12-head model still fits a notebook column
THUMB = 2.2  # inches per thumbnail when there is room


class ModelViewPlot(LiveFigure):
    """A (num_blks x num_heads) grid of heatmaps of one input's attention, each on its own
    colour scale (a head that spreads its attention would otherwise look empty)."""

    def __init__(self, num_blks: int, num_heads: int, lang: str | None = None):
        self.shape = (num_blks, num_heads)
        side = min(THUMB, MAX_WIDTH / num_heads)
        width, height = side * num_heads + 0.8, side * num_blks + 0.9
        super().__init__(width, height, lang)
        self.figure.subplots_adjust(left=0.6 / width, right=1 - 0.2 / width,
                                    top=1 - 0.7 / height, bottom=0.2 / height,
                                    wspace=0.25, hspace=0.35)
        axes = self.figure.subplots(num_blks, num_heads, squeeze=False)
        self.images = []
        for (layer, head), ax in np.ndenumerate(axes):
            ax.set_xticks([])
            ax.set_yticks([])
            ax.set_title(text("model_view_cell", self.lang, layer=layer, head=head),
                         fontsize=9, y=1.0, pad=3)
            self.images.append(ax.imshow(np.zeros((1, 1)), cmap="viridis", vmin=0,
                                         aspect="auto", interpolation="nearest"))
        self.figure.suptitle(text("model_view_title", self.lang), fontsize=11)
        self.blitter.animate(*self.images, *spines(axes.flat))

    def update(self, attentions: np.ndarray) -> Figure:
        """attentions: (num_blks, num_heads, T, T)."""
        attentions = np.asarray(attentions)
        if attentions.ndim != 4 or attentions.shape[:2] != self.shape \
                or attentions.shape[2] != attentions.shape[3]:
            raise ValueError(f"attentions must be (num_blks, num_heads, T, T) = "
                             f"{(*self.shape, 'T', 'T')}; got {attentions.shape}")
        T = attentions.shape[-1]
        for image, weights in zip(self.images, attentions.reshape(-1, T, T), strict=True):
            image.set_data(weights)
            image.set_extent((-0.5, T - 0.5, T - 0.5, -0.5))
            image.axes.set_xlim(-0.5, T - 0.5)
            image.axes.set_ylim(T - 0.5, -0.5)
            image.set_clim(0, float(weights.max()) or 1.0)
        return self.figure


def plot_model_view(attentions: np.ndarray, lang: str | None = None) -> Figure:
    """Every layer and head of one input's attention. attentions: (num_blks, num_heads, T, T)."""
    attentions = np.asarray(attentions)
    return ModelViewPlot(*attentions.shape[:2], lang).once(attentions)

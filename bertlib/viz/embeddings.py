"""The input representation as a figure: token, segment and position embeddings and their sum."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from jaxtyping import Float
from matplotlib.figure import Figure

from bertlib.model import checked
from bertlib.support.i18n import text
from bertlib.viz._render import TokenLabels, pin_labels, show_image, spines
from bertlib.viz.live import LiveFigure
from bertlib.viz.style import PAGE_WIDTH, ROW, token_font


@checked
@dataclass(frozen=True)
class EmbeddingParts:
    """The three embeddings of each token and the encoder's input; arrays are (T, H)."""

    tokens: list  # of str; a typed list[str] would make beartype sample with Python's random
    token: Float[np.ndarray, "T H"]
    segment: Float[np.ndarray, "T H"]
    position: Float[np.ndarray, "T H"]
    total: Float[np.ndarray, "T H"]
    normalised: bool = False  # True when ``total`` is LayerNorm(sum), as in original BERT

    def panels(self) -> list[np.ndarray]:
        return [self.token, self.segment, self.position, self.total]


class EmbeddingPlot(LiveFigure):
    """Four (T, H) heatmaps side by side, rows labelled with the tokens, one colour scale."""

    def __init__(self, lang: str | None = None):
        super().__init__(PAGE_WIDTH, 4, lang)
        self.figure.subplots_adjust(left=0.1, right=0.9, top=0.88, bottom=0.12, wspace=0.08)
        self.axes = list(self.figure.subplots(1, 4))
        for ax in self.axes[1:]:  # the first gets TokenLabels below
            ax.set_yticks([])
        self.images = [ax.imshow(np.zeros((1, 1)), cmap="RdBu_r", aspect="auto",
                                 interpolation="nearest") for ax in self.axes]
        cax = self.figure.add_axes((0.92, 0.12, 0.012, 0.76))
        self.colorbar = self.figure.colorbar(self.images[0], cax=cax)
        self.colorbar.set_label(text("emb_value", self.lang))
        for ax in self.axes:
            ax.set_xlabel(text("hidden_dim", self.lang))
        # The frames too, drawn after the images as in a full draw: an image would cover them.
        self.blitter.animate(*self.images, *spines(self.axes), self.colorbar.ax)
        self.token_labels = TokenLabels(self.axes[0], self.blitter, "y")

    def update(self, parts: EmbeddingParts) -> Figure:
        T, H = parts.token.shape
        # A line of legible text per token, in steps of 8 tokens: a new height redraws
        # everything (~110 ms at 64 tokens against ~65 ms, see benchmarks/README.md).
        rows = ROW * 8 * math.ceil(T / 8)
        height = max(2.5, rows + 0.95)  # the title above, the axis and its label below
        if self.figure.get_figheight() != height:
            self.figure.set_size_inches(PAGE_WIDTH, height)
            self.figure.subplots_adjust(bottom=0.55 / height, top=1 - 0.4 / height)
            for ax in self.axes:  # the Blitter redraws the background at the new size
                pin_labels(ax, x_label=-0.4 / ((1 - 0.95 / height) * height))
        for ax in self.axes:
            ax.set_ylim(T - 0.5, -0.5)
        self.token_labels.set(parts.tokens, token_font(T, rows))
        keys = ["emb_token", "emb_segment", "emb_position",
                "emb_sum_norm" if parts.normalised else "emb_sum"]
        limit = max(float(np.abs(p).max()) for p in parts.panels()) or 1.0
        for ax, im, data, key in zip(self.axes, self.images, parts.panels(), keys, strict=True):
            show_image(im, data, -limit, limit)
            if ax.get_xlim() != (-0.5, H - 0.5) or ax.get_title() != text(key, self.lang):
                ax.set_xlim(-0.5, H - 0.5)
                ax.set_title(text(key, self.lang), y=1.0, pad=6)
                self.blitter.invalidate()  # both are part of the background
        return self.figure


def plot_input_representation(parts: EmbeddingParts, lang: str | None = None) -> Figure:
    """Token, segment and position embeddings and the encoder input, as heatmaps."""
    return EmbeddingPlot(lang).once(parts)

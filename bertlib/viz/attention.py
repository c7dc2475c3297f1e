"""Attention weights as figures: one head (or the mean) with one query's row, and all heads."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from jaxtyping import Float
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from torch import Tensor

from bertlib.model import checked
from bertlib.support.checks import check_int_in, check_tokens, number_array
from bertlib.support.i18n import text
from bertlib.viz._render import (
    TokenLabels,
    hbar_verts,
    heatmap,
    mark_boundary,
    pin_labels,
    show_image,
    spines,
)
from bertlib.viz.live import LiveFigure
from bertlib.viz.style import (
    BOUNDARY_COLOR,
    MIN_FONT,
    PAGE_WIDTH,
    ROW,
    label_size,
    literal,
    thinned,
    token_font,
)

GRID_HEIGHT = 5.0  # inches: all heads of a layer and the widget's controls fit a 720-pixel window

MAX_HEADS = 64  # one panel each, and the mean: BERT-large has 16; thousands take minutes
ROW_SUM_TOLERANCE = 1e-3  # float32 softmax rows of a few hundred keys sum to 1 within 1e-5


def check_weights(weights: np.ndarray) -> None:  # probabilities: finite, in [0, 1]
    bad = weights[~(np.isfinite(weights) & (weights >= 0) & (weights <= 1))]
    if bad.size:
        raise ValueError(f"weights must be attention weights, finite and in [0, 1]; got "
                         f"{bad.flat[0]!r}")


@dataclass(frozen=True)
class AttentionView:
    """One heatmap: (T, T) weights, rows queries; boundary: the first B token, or None."""

    weights: np.ndarray
    tokens: list[str]
    boundary: int | None = None
    query: int = 0
    title: str = ""
    note: str = ""


def map_side(T: int) -> float:
    """Inches of a token x token map: a legible line a token, in steps of 8 (a new size
    redraws all), so the default pair and the controls fit a projector's window."""
    return max(2.5, ROW * 8 * math.ceil(T / 8))


class TokenMapPlot(LiveFigure):
    """A figure around a token x token heatmap with colour bar, A/B boundary and labels."""

    def _add_map(self, ax_map) -> None:
        fig, line = self.figure, {"color": BOUNDARY_COLOR, "linewidth": 2}
        self.ax_map, self.cax = ax_map, fig.add_axes((0, 0, 1, 1))
        self.image = heatmap(ax_map)
        self.colorbar = fig.colorbar(self.image, cax=self.cax, label=text("weight", self.lang))
        self.hline = ax_map.axhline(0, **line)
        self.vline = ax_map.axvline(0, **line)
        ax_map.set_ylabel(text("query_axis", self.lang))
        ax_map.set_xlabel(text("key_axis", self.lang))
        self.query_labels = TokenLabels(ax_map, self.blitter, "y")
        self.key_labels = TokenLabels(ax_map, self.blitter, "x", rotation=90)

    def _place_map(self, left: float, below: float, side: float, T: int) -> None:
        """The map ``side`` inches a side, (``left``, ``below``) from the bottom left."""
        width, height = self.figure.get_size_inches()
        self.ax_map.set_position((left / width, below / height, side / width, side / height))
        self.cax.set_position(((left + side + 0.12) / width, below / height, 0.15 / width,
                               side / height))
        self.ax_map.set_xlim(-0.5, T - 0.5)
        self.ax_map.set_ylim(T - 0.5, -0.5)
        pin_labels(self.ax_map, x_label=-(below - 0.22) / side, y_label=-(left - 0.25) / side)

    def _draw_map(self, tokens: list[str], weights: np.ndarray, vmax: float,
                  boundary: int | None, title: str, across: tuple = ()) -> float:
        """Draw the map (``across``: more lines at the boundary); returns the labels' size."""
        inches = self.ax_map.get_position().height * self.figure.get_figheight()
        size, labels = token_font(len(tokens), inches), thinned(tokens, inches)
        self.query_labels.set(labels, size)
        self.key_labels.set(labels, size)
        show_image(self.image, weights, 0, vmax)
        mark_boundary(boundary, (self.hline, *across), (self.vline,))
        self.ax_map.set_title(literal(title), y=1.0, pad=6)
        return size


class AttentionPlot(TokenMapPlot):
    """A token x token heatmap, the A/B boundary marked, and beside it on the same rows the
    query's weights as bars: its highlighted row, turned to read top to bottom."""

    def __init__(self, lang: str | None = None):
        super().__init__(PAGE_WIDTH, 5, lang)
        # Placed by hand (see _layout): the bars' rows line up with the heatmap's.
        ax_map = self.figure.add_axes((0, 0, 1, 1))
        self.ax_row = self.figure.add_axes((0, 0, 1, 1))
        self._add_map(ax_map)
        # The boundary, across the bars.
        self.row_vline = self.ax_row.axhline(0, color=BOUNDARY_COLOR, linewidth=2)
        self.highlight = Rectangle((-0.5, -0.5), 1, 1, fill=False, edgecolor="#E69F00",
                                   linewidth=2.5)
        self.ax_map.add_patch(self.highlight)
        self.ax_row.set_xlabel(text("weight", self.lang))
        self.ax_row.set_xticks([])  # the scale follows the row; the peak is written instead
        self.peak = self.ax_row.text(1.0, -0.01, "", transform=self.ax_row.transAxes,
                                     ha="right", va="top", fontsize=10)  # where ticks would be
        self.note = self.figure.text(0.01, 0.005, "", fontsize=9, color="#555555")
        # One collection, not T Rectangles: ax.barh costs more than the whole redraw.
        self.bars = PolyCollection([], facecolors="#0072B2")
        self.ax_row.add_collection(self.bars, autolim=False)
        self.row_values = np.zeros(0)
        self.blitter.animate(self.image, self.hline, self.vline, self.row_vline, self.highlight,
                             self.colorbar.ax, self.ax_map.title, self.ax_row.title, self.peak,
                             self.note, self.bars, *spines([self.ax_map, self.ax_row]))
        self.bar_labels = TokenLabels(self.ax_row, self.blitter, "y")
        self._length: int | None = None

    def _layout(self, T: int) -> None:  # a long input: a map the page's width holds
        left, below, top, colorbar, bar_labels, bars = 1.0, 0.9, 0.4, 1.0, 0.8, 1.7
        side = min(map_side(T), PAGE_WIDTH - (left + colorbar + bar_labels + bars + 0.15))
        width, height = left + side + colorbar + bar_labels + bars + 0.15, below + side + top
        self.figure.set_size_inches(width, height)  # a new size: the Blitter redraws all
        self._place_map(left, below, side, T)
        x = left + side + colorbar + bar_labels
        self.ax_row.set_position((x / width, below / height, bars / width, side / height))
        self.ax_row.set_ylim(T - 0.5, -0.5)
        pin_labels(self.ax_row, x_label=-0.4 / side)
        self.highlight.set_width(T)
        self._length, self._side = T, side

    def update(self, view: AttentionView) -> Figure:
        weights, T = view.weights, len(view.tokens)
        if self._length != T:
            self._layout(T)
        vmax = float(weights.max()) or 1.0
        size = self._draw_map(view.tokens, weights, vmax, view.boundary, view.title,
                              (self.row_vline,))
        self.bar_labels.set(thinned(view.tokens, self._side), size)
        self.row_values = row = weights[view.query]
        self.bars.set_verts(hbar_verts(row))
        self.ax_row.set_xlim(0, vmax * 1.05)
        self.peak.set_text(text("row_peak", self.lang, value=row.max()))
        self.highlight.set_y(view.query - 0.5)
        self.ax_row.set_title(text("attends_title", self.lang,
                                   token=literal(view.tokens[view.query])),
                              fontsize=11, y=1.0, pad=6)
        self.note.set_text(literal(view.note))
        return self.figure


def plot_attention(view: AttentionView, lang: str | None = None) -> Figure:
    """One head's (or the mean) attention heatmap with the query token's row as bars."""
    check_tokens("tokens", view.tokens)
    weights = number_array("weights", view.weights)
    T = len(view.tokens)
    if weights.shape != (T, T) or T == 0:
        raise ValueError(f"weights must be (T, T) with T={T} tokens, T >= 1; got "
                         f"{weights.shape}")
    check_weights(weights)
    check_int_in("query", view.query, 0, T - 1, " (a token index)")
    return AttentionPlot(lang).once(replace(view, weights=weights))


def panel_side(cols: int) -> float:  # inches a panel of the all-heads grid
    return min(4.4, (PAGE_WIDTH - 1.8) / cols)


def grid_height(panels: int, cols: int) -> float:  # inches of the all-heads figure
    return (panel_side(cols) + 0.2) * math.ceil(panels / cols) + 1.0


class AllHeadsPlot(LiveFigure):
    """Small multiples: every head of one layer and their mean, on one colour scale."""

    def __init__(self, num_heads: int, lang: str | None = None):
        check_int_in("num_heads", num_heads, 1, MAX_HEADS,
                     " (one panel per head; BERT-large has 16)")
        self.num_panels = num_heads + 1
        # The fewest columns (largest panels) within the page and GRID_HEIGHT: the small BERT's
        # 2 heads and their mean in one row, BERT-Base's 12 and their mean in two rows of 7.
        self.cols = next(c for c in range(1, self.num_panels + 1)
                         if grid_height(self.num_panels, c) <= GRID_HEIGHT
                         or c == self.num_panels)
        self.side = panel_side(self.cols)
        self.rows = math.ceil(self.num_panels / self.cols)
        height = grid_height(self.num_panels, self.cols)
        width = self.side * self.cols + 1.8
        super().__init__(width, height, lang)
        self.figure.subplots_adjust(left=1.0 / width, right=1 - 1.3 / width,
                                    top=1 - 0.75 / height, bottom=0.9 / height, wspace=0.15,
                                    hspace=0.35)
        # No ticks: the outer panels get TokenLabels below.
        axes = list(self.figure.subplots(self.rows, self.cols, squeeze=False,
                                         subplot_kw={"xticks": [], "yticks": []}).flat)
        for ax in axes[self.num_panels:]:
            ax.set_visible(False)
        self.axes = axes[: self.num_panels]
        self.images = [heatmap(ax) for ax in self.axes]
        for i, ax in enumerate(self.axes):
            ax.set_title(text("mean_heads" if i == num_heads else "head_name", self.lang, head=i),
                         y=1.0, pad=4)
        cax = self.figure.add_axes((1 - 1.0 / width, 0.9 / height, 0.15 / width,
                                    1 - 1.65 / height))
        self.colorbar = self.figure.colorbar(self.images[0], cax=cax,
                                             label=text("weight", self.lang))
        self.suptitle = self.figure.suptitle("")
        self.blitter.animate(*self.images, self.colorbar.ax, self.suptitle,
                             *spines(self.axes))
        # Labels only on the outer panels (the single-head view has them all).
        self.token_labels = [
            *(TokenLabels(ax, self.blitter, "y") for i, ax in enumerate(self.axes)
              if i % self.cols == 0),
            *(TokenLabels(ax, self.blitter, "x", rotation=90) for i, ax in enumerate(self.axes)
              if i + self.cols >= self.num_panels),
        ]

    def update(self, weights: np.ndarray, tokens: list[str], layer: int) -> Figure:
        """weights: (num_heads, T, T) for one layer; the mean over heads is added here."""
        T = len(tokens)
        panels = [*weights, weights.mean(axis=0)]
        # A label needs about its font size plus a third along the axis; below MIN_FONT it is
        # not legible, and the panels are left unlabelled (the one-head view names them all).
        fontsize = min(label_size(T), math.floor(0.75 * 72 * self.side / T))
        labelled = fontsize >= MIN_FONT
        for ax in self.axes:  # only the animated images and labels depend on T
            ax.set_xlim(-0.5, T - 0.5)
            ax.set_ylim(T - 0.5, -0.5)
        for labels in self.token_labels:
            labels.set(tokens if labelled else [], fontsize)
        vmax = float(max(p.max() for p in panels)) or 1.0
        for im, data in zip(self.images, panels, strict=True):
            show_image(im, data, 0, vmax)
        self.suptitle.set_text(text("all_heads_title", self.lang, layer=layer))
        return self.figure


@checked
def plot_all_heads(weights: Float[np.ndarray | Tensor, "nh T T"], tokens: Sequence,
                   layer: int, lang: str | None = None) -> Figure:
    """Every head of one layer plus their mean. weights: (num_heads, T, T)."""
    weights = number_array("weights", weights)
    check_tokens("tokens", tokens)
    if len(tokens) != weights.shape[-1] or not tokens:
        raise ValueError(f"tokens must name the {weights.shape[-1]} positions of weights, at "
                         f"least one; got {len(tokens)}")
    check_int_in("layer", layer, 0)
    check_weights(weights)
    # Each query's weights over the keys are a softmax: rows summing to 3 are not attention.
    if not np.allclose(sums := weights.sum(-1), 1, rtol=0, atol=ROW_SUM_TOLERANCE):
        raise ValueError(f"weights must be attention weights, each row (one query's weights "
                         f"over the keys) summing to 1 within {ROW_SUM_TOLERANCE:g}; got a row "
                         f"summing to {sums.flat[np.abs(sums - 1).argmax()]:g}")
    return AllHeadsPlot(weights.shape[0], lang).once(weights, tokens, layer)

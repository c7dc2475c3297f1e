"""How one query's attention comes about, step by step, on real inputs: the scaled dot products
q·k/√d with every key, the key mask, the softmax, and the weighted sum of the values."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure

from bertlib.i18n import text
from bertlib.model import MultiHeadAttention
from bertlib.viz._render import TokenLabels, bar_verts, pin_labels, spines
from bertlib.viz.live import LiveFigure
from bertlib.viz.style import label_size, literal

SHOWN_VALUES = 3  # keys whose numbers are written beside their bars (the largest weights)


@dataclass(frozen=True)
class QueryKeySteps:
    """One head's attention for one query, in the order notebook 03 writes it.

    scores: (T,) q·k_j/√d; mask: (T,) True for real keys; weights: (T,) the softmax of the
    scores over the real keys; output: (d,) Σ_j weights_j v_j, the head's output for the query.
    """

    tokens: list[str]
    query: int
    head: int
    scores: np.ndarray
    mask: np.ndarray
    weights: np.ndarray
    output: np.ndarray


def query_key_steps(attention: MultiHeadAttention, X: torch.Tensor, tokens: list[str],
                    head: int, query: int, valid_len: int | None = None) -> QueryKeySteps:
    """The steps of ``attention``'s head ``head`` for position ``query`` of one sequence.

    X: (T, num_hiddens), the input of the block that ``attention`` belongs to (what the block
    below gave it); ``valid_len``: the real length, the keys after it are padding.
    """
    T, H = X.shape
    nh = attention.num_heads
    if not 0 <= head < nh:
        raise ValueError(f"head must be in [0, {nh - 1}]; got {head!r}")
    if not 0 <= query < T:
        raise ValueError(f"query must be a token index in [0, {T - 1}]; got {query!r}")
    if len(tokens) != T:
        raise ValueError(f"tokens must name the {T} positions of X; got {len(tokens)}")
    d = H // nh
    heads = slice(head * d, (head + 1) * d)  # the columns of this head (see _split_heads)
    with torch.no_grad():
        q = attention.W_q(X)[query, heads]  # (d,)
        k = attention.W_k(X)[:, heads]  # (T, d)
        v = attention.W_v(X)[:, heads]  # (T, d)
        scores = k @ q / math.sqrt(d)  # (T,)
        mask = torch.arange(T, device=X.device) < (T if valid_len is None else valid_len)
        weights = scores.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        output = weights @ v  # (d,)
    return QueryKeySteps(list(tokens), query, head,
                         *(t.cpu().numpy() for t in (scores, mask, weights, output)))


class QueryKeyPlot(LiveFigure):
    """Three panels on one key axis: scores, then weights (masked keys crossed out), then
    the output vector of the head for the query."""

    def __init__(self, lang: str | None = None):
        super().__init__(9, 8, lang)
        self.figure.subplots_adjust(left=0.12, right=0.97, top=0.89, bottom=0.09, hspace=0.9)
        self.ax_scores, self.ax_weights, self.ax_output = self.figure.subplots(
            3, 1, gridspec_kw={"height_ratios": [3, 3, 2]})
        # Weights live in [0, 1], so that axis is fixed and keeps its ticks; the scores and
        # the output change scale with every query, so their range is written instead of
        # ticked (ticks are background: a new scale would mean redrawing everything).
        self.ax_weights.set_ylim(0, 1.12)
        self.zero_lines = [ax.axhline(0, color="#888888", linewidth=0.8)
                           for ax in (self.ax_scores, self.ax_output)]
        self.ranges = [ax.text(0.995, 0.97, "", transform=ax.transAxes, ha="right", va="top",
                               fontsize=9) for ax in (self.ax_scores, self.ax_output)]
        self.score_bars = PolyCollection([], facecolors="#56B4E9")
        self.weight_bars = PolyCollection([], facecolors="#0072B2")
        self.output_bars = PolyCollection([], facecolors="#009E73")
        for ax, bars in ((self.ax_scores, self.score_bars), (self.ax_weights, self.weight_bars),
                         (self.ax_output, self.output_bars)):
            ax.add_collection(bars, autolim=False)
        for ax in (self.ax_scores, self.ax_output):
            ax.set_yticks([])
        self.masked = self.ax_weights.plot([], [], "x", color="#B00020", markersize=8)[0]
        self.numbers = [self.ax_weights.text(0, 0, "", ha="center", va="bottom", fontsize=9)
                        for _ in range(SHOWN_VALUES)]
        self.ax_scores.set_ylabel(text("qk_scores_axis", self.lang))
        self.ax_weights.set_ylabel(text("weight", self.lang))
        self.ax_output.set_ylabel(text("qk_output_axis", self.lang))
        self.ax_output.set_xlabel(text("qk_output_dims", self.lang))
        self.ax_weights.set_xlabel(text("key_axis", self.lang))
        self.ax_weights.set_xticks([])
        self.suptitle = self.figure.suptitle("")
        self.blitter.animate(self.score_bars, self.weight_bars, self.output_bars, self.masked,
                             *self.numbers, *self.zero_lines, *self.ranges, self.suptitle,
                             self.ax_scores.title, self.ax_weights.title, self.ax_output.title,
                             *spines([self.ax_scores, self.ax_weights, self.ax_output]))
        self.score_labels = TokenLabels(self.ax_scores, self.blitter, "x", rotation=90)
        for ax, below, left in ((self.ax_scores, -0.9, -0.04), (self.ax_weights, -0.25, -0.08),
                                (self.ax_output, -0.35, -0.04)):
            pin_labels(ax, x_label=below, y_label=left)

    def update(self, steps: QueryKeySteps, layer: int) -> Figure:
        T, d = len(steps.tokens), len(steps.output)
        self.score_labels.set(steps.tokens, label_size(T))
        for ax in (self.ax_scores, self.ax_weights):
            ax.set_xlim(-0.5, T - 0.5)
        self.ax_output.set_xlim(-0.5, d - 0.5)
        for ax, bars, values, zero, span in (
                (self.ax_scores, self.score_bars, steps.scores, *self.zero_lines[:1],
                 self.ranges[0]),
                (self.ax_output, self.output_bars, steps.output, *self.zero_lines[1:],
                 self.ranges[1])):
            low, high = float(min(values.min(), 0)), float(max(values.max(), 0))
            pad = 0.15 * (high - low or 1.0)
            ax.set_ylim(low - pad, high + pad)
            bars.set_verts(bar_verts(values))
            zero.set_ydata([0, 0])
            span.set_text(text("qk_range", self.lang, low=values.min(), high=values.max()))
        self.weight_bars.set_verts(bar_verts(steps.weights))
        padded = np.flatnonzero(~steps.mask)
        self.masked.set_data(padded, np.full(len(padded), 0.03))
        top = np.argsort(steps.weights)[::-1][:SHOWN_VALUES]
        for label, j in zip(self.numbers, top, strict=False):
            label.set_position((j, steps.weights[j]))
            label.set_text(f"{steps.weights[j]:.2f}")
        token = literal(steps.tokens[steps.query])
        self.ax_scores.set_title(text("qk_scores_title", self.lang, d=d), y=1.0, pad=6)
        self.ax_weights.set_title(text("qk_weights_title", self.lang, masked=len(padded)),
                                  y=1.0, pad=6)
        self.ax_output.set_title(text("qk_output_title", self.lang, d=d), y=1.0, pad=6)
        self.suptitle.set_text(text("qk_title", self.lang, layer=layer, head=steps.head,
                                    token=token))
        return self.figure


def plot_query_key(steps: QueryKeySteps, layer: int, lang: str | None = None) -> Figure:
    """The steps of one query's attention in one head, as a figure."""
    return QueryKeyPlot(lang).once(steps, layer)

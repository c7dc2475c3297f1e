"""One query's attention step by step: the scores q·k/τ, the key mask, the softmax, and the
weighted sum of the values."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import matplotlib
import numpy as np
import torch
from jaxtyping import Float
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.transforms import blended_transform_factory, offset_copy
from torch import Tensor

from bertlib.model import MultiHeadAttention, checked
from bertlib.support.checks import check_int_in
from bertlib.support.i18n import text
from bertlib.viz._render import NumberText, StampedText, TokenLabels, hbar_verts, pin_labels, spines
from bertlib.viz.live import LiveFigure
from bertlib.viz.style import BOUNDARY_COLOR, MIN_FONT, PAGE_WIDTH, literal

# Inches across: key labels | scores, numbers | mask | weights, numbers | values | colour bar.
WIDTH, LEFT, BARS, NUMBERS, MASK, VALUES = PAGE_WIDTH, 1.45, 1.4, 0.6, 0.8, 1.9
# The title and the formula share the top line: the view and its controls fit the screen.
TOP, BOTTOM, MARGIN = 0.55, 0.85, 0.12  # BOTTOM: the summary's two lines clear of the note
FORMULA = (r"$w_j = \mathrm{softmax}_j\,(\mathbf{q}\cdot\mathbf{k}_j/\tau + m_j)$"
           r"$\qquad \mathbf{o} = \Sigma_j\, w_j\,\mathbf{v}_j$")
REAL, PADDED = "#56B4E9", "#BBBBBB"  # score bars of real and padded keys
PAD_SHADE = "#F6DADA"  # the rows of padded keys
# Values and the output on one diverging scale; padded keys' values (weight 0) drawn grey.
VALUE_CMAP = matplotlib.colormaps["PuOr_r"].with_extremes(bad="#E4E4E4")


@dataclass(frozen=True)
class QueryKeySteps:
    """One query's attention in notebook 03's order; mask True at real keys, weights 0 else."""

    tokens: list[str]
    query: int
    head: int
    scores: np.ndarray
    mask: np.ndarray
    weights: np.ndarray
    values: np.ndarray
    output: np.ndarray
    temperature: float


@checked
def query_key_steps(attention: MultiHeadAttention, X: Float[Tensor, "T H"], tokens: Sequence,
                    head: int, query: int, valid_len=None, temperature=None) -> QueryKeySteps:
    """The steps of head ``head`` for position ``query``. X: the block's input; keys from
    ``valid_len`` on are padding; ``temperature``: τ (None: the model's √d; 1: unscaled)."""
    T, H = X.shape
    nh = attention.num_heads
    d = H // nh
    if X.dtype != attention.W_q.weight.dtype:  # torch would refuse the product deep inside
        raise ValueError(f"X must have the model's dtype, {attention.W_q.weight.dtype}; got "
                         f"{X.dtype} (convert it with X.to(that dtype))")
    check_int_in("head", head, 0, nh - 1)
    check_int_in("query", query, 0, T - 1, " (a token index)")
    if len(tokens) != T:
        raise ValueError(f"tokens must name the {T} positions of X; got {len(tokens)}")
    tau = math.sqrt(d) if temperature is None else float(temperature)
    heads = slice(head * d, (head + 1) * d)  # the columns of this head (see _split_heads)
    with torch.no_grad():
        q = attention.W_q(X)[query, heads]  # (d,)
        k = attention.W_k(X)[:, heads]  # (T, d)
        v = attention.W_v(X)[:, heads]  # (T, d)
        scores = k @ q / tau  # (T,)
        mask = torch.arange(T, device=X.device) < (T if valid_len is None else valid_len)
        weights = scores.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        output = weights @ v  # (d,)
    return QueryKeySteps(list(tokens), query, head,
                         *(t.cpu().numpy() for t in (scores, mask, weights, v, output)), tau)


def temperature_stops(head_size: int) -> list[float]:
    """τ from 1 to 4·√d in steps of √2, the model's own √d exactly among them."""
    root = math.sqrt(head_size)
    top = math.floor(2 * math.log2(4 * root) + 1e-9)  # 2^(top/2) is 4·√d, or just under it
    # A stop within a fourth of an octave of √d would sit beside it: √d takes its place.
    stops = [2 ** (k / 2) for k in range(top + 1) if abs(k / 2 - math.log2(root)) > 0.25]
    return sorted([*stops, root])


def temperature_caption(temperature: float, head_size: int, lang: str) -> str:
    root = math.sqrt(head_size)
    if math.isclose(temperature, root):
        return text("qk_temperature_model", lang, value=f"{root:.3g}")
    if math.isclose(temperature, 1):
        return text("qk_temperature_none", lang)
    key = "qk_temperature_flatter" if temperature > root else "qk_temperature_sharper"
    return text(key, lang, value=f"{temperature:.3g}", ratio=f"{temperature / root:.3g}")


def number(value: float, digits: int, sign: str = "") -> str:  # sign "+": +0.012, −0.034
    """``value`` to ``digits`` places with a true minus, as tick labels write it; one that rounds
    to zero is 0.000, without a sign (not −0.000)."""
    if round(value, digits) == 0:
        return f"{0:.{digits}f}"
    return f"{value:{sign}.{digits}f}".replace("-", "\u2212")


class QueryKeyPlot(LiveFigure):
    """A row per key: token, score, mask, weight and value vector; under them, the output."""

    def __init__(self, lang: str | None = None):
        super().__init__(WIDTH, 8, lang)
        fig = self.figure
        self.ax_scores, self.ax_mask, self.ax_weights, self.ax_values, self.ax_output, \
            self.cax = (fig.add_axes((0, 0, 1, 1)) for _ in range(6))
        self.columns = (self.ax_scores, self.ax_mask, self.ax_weights, self.ax_values)
        for ax in self.columns:
            ax.set(xticks=[], yticks=[])  # the bars' numbers are their scale; keys at left
        self.ax_mask.set_xlim(0, 1)
        self.ax_output.set_yticks([])
        self.ax_scores.set_ylabel(text("key_axis", self.lang))
        self.ax_output.set_xlabel(text("qk_value_dims", self.lang))
        self.ax_output.set_ylabel(text("qk_output_label", self.lang), rotation=0, ha="right",
                                  va="center")
        self.formula = fig.text(1 - MARGIN / WIDTH, 0, FORMULA, ha="right", va="baseline",
                                fontsize=12)
        # Token layer (redrawn with the keys): the shaded rows of padded keys and the mask.
        self.shades = [ax.add_collection(PolyCollection(
            [], facecolors=PAD_SHADE, transform=ax.get_yaxis_transform(), zorder=0.4),
            autolim=False) for ax in (self.ax_scores, self.ax_mask, self.ax_weights)]
        self.mask_texts: list[StampedText] = []
        self.blitter.animate(*self.shades, with_tokens=True)
        self.labels = TokenLabels(self.ax_scores, self.blitter, "y")
        # Redrawn on every update.
        self.highlights = [ax.add_patch(Rectangle(
            (0, 0), 1, 1, transform=ax.get_yaxis_transform(), facecolor="#FFE3A8",
            linewidth=0, zorder=0.5)) for ax in (self.ax_scores, self.ax_weights)]
        self.score_bars = self.ax_scores.add_collection(PolyCollection([]), autolim=False)
        self.weight_bars = self.ax_weights.add_collection(
            PolyCollection([], facecolors="#0072B2"), autolim=False)
        self.zero = self.ax_scores.axvline(0, color="#666666", linewidth=0.8)
        self.values = self.ax_values.imshow(np.zeros((1, 1)), cmap=VALUE_CMAP, aspect="auto",
                                            interpolation="nearest")
        self.output = self.ax_output.imshow(np.zeros((1, 1)), cmap=VALUE_CMAP, aspect="auto",
                                            interpolation="nearest", norm=self.values.norm)
        self.colorbar = fig.colorbar(self.values, cax=self.cax)
        self.score_numbers: list[NumberText] = []
        self.weight_numbers: list[NumberText] = []
        self.suptitle = fig.suptitle("", x=MARGIN / WIDTH, ha="left", va="baseline")
        self.weight_sum = fig.text(0, 0, "", ha="center", va="top", fontsize=10)
        # Under the scores: the temperature they were divided by, beside the weights' sum.
        self.temperature = fig.text(0, 0, "", ha="left", va="top", fontsize=10)
        self.summary = fig.text(0, 0, "", ha="left", va="top", fontsize=10)
        self.note = fig.text(0.01, 0.005, "", fontsize=9, color="#555555")
        self.titles = [ax.title for ax in self.columns]
        self.blitter.animate(*self.highlights, self.score_bars, self.weight_bars, self.zero,
                             self.values, self.output, self.colorbar.ax, self.suptitle,
                             self.weight_sum, self.temperature, self.summary, self.note,
                             *self.titles,
                             *spines([*self.columns, self.ax_output]))
        self.rows: int | None = None  # the rows laid out for (a multiple of 8)
        self.fontsize = 10.0
        self._mask: list[bool] = []

    def _layout(self, rows: int) -> None:
        """0.117 inches (MIN_FONT) a key up to 111 keys; more share 13 inches, unnumbered."""
        body = float(np.clip(0.117 * rows, 2.5, 13.0))
        height = TOP + body + BOTTOM
        self.figure.set_size_inches(WIDTH, height)
        self.fontsize = float(min(11, math.floor(0.95 * 72 * body / rows)))
        bottom = BOTTOM / height
        values_x = WIDTH - 0.75 - VALUES
        for ax, x, width in ((self.ax_scores, LEFT, BARS),
                             (self.ax_mask, LEFT + BARS + NUMBERS, MASK),
                             (self.ax_weights, LEFT + BARS + NUMBERS + MASK + 0.15, BARS),
                             (self.ax_values, values_x, VALUES)):
            ax.set_position((x / WIDTH, bottom, width / WIDTH, body / height))
            pin_labels(ax, y_label=-(LEFT - 0.25) / width)
            ax.title.set_fontsize(9)  # four titles side by side, each within its column
        # The output right under the values it averages; the summary beside it, at the left.
        self.ax_output.set_position((values_x / WIDTH, (BOTTOM - 0.4) / height,
                                     VALUES / WIDTH, 0.25 / height))
        pin_labels(self.ax_output, y_label=-0.05)
        # Right-aligned under "output o", at the height of the tick labels, clear of the "0".
        self.ax_output.xaxis.set_label_coords(-0.05, -0.75)
        self.ax_output.xaxis.label.set(ha="right", va="center")
        self.cax.set_position(((WIDTH - 0.65) / WIDTH, bottom, 0.12 / WIDTH, body / height))
        self.formula.set_y(1 - 0.25 / height)  # on the title's baseline
        self.suptitle.set_y(1 - 0.25 / height)
        weights_box = self.ax_weights.get_position()
        self.weight_sum.set_position(((weights_box.x0 + weights_box.x1) / 2,
                                      bottom - 0.08 / height))
        self.temperature.set_position((LEFT / WIDTH, bottom - 0.08 / height))
        self.summary.set_position((LEFT / WIDTH, (BOTTOM - 0.3) / height))
        self.rows = rows
        self.blitter.invalidate()

    def _pool(self, pool: list, n: int, ax, x: float, **kwargs) -> None:
        """``n`` texts of ``pool`` at axes fraction ``x`` of rows 0, 1, ..."""
        size = self.fontsize
        transform = offset_copy(blended_transform_factory(ax.transAxes, ax.transData),
                                self.figure, y=-0.35 * size, units="points")
        cls = StampedText if pool is self.mask_texts else NumberText
        new = [ax.add_artist(cls(x, i, "", transform=transform, fontsize=size,
                                 stamps=self.blitter.stamps, clip_on=False, **kwargs))
               for i in range(len(pool), n)]
        self.blitter.animate(*new, with_tokens=cls is StampedText)
        pool.extend(new)
        for i, t in enumerate(pool):
            t.set_transform(transform)
            t.set_fontsize(size)
            t.set_visible(i < n)

    def update(self, steps: QueryKeySteps, layer: int, note: str = "") -> Figure:
        T, d = len(steps.tokens), len(steps.output)
        rows = 2 * math.ceil(T / 2)
        if rows != self.rows:
            self._layout(rows)
        for ax in self.columns:
            ax.set_ylim(T - 0.5, -0.5)  # nothing in the background depends on it
        legible = self.fontsize >= MIN_FONT
        numbered = T if legible else 0
        right = 1 + (NUMBERS - 0.06) / BARS  # the numbers' right edge, in axes fractions
        self._pool(self.score_numbers, numbered, self.ax_scores, right, ha="right")
        self._pool(self.weight_numbers, numbered, self.ax_weights, right, ha="right")
        self._pool(self.mask_texts, numbered, self.ax_mask, 0.5, ha="center")
        self.labels.set(steps.tokens if legible else [], self.fontsize)
        mask = steps.mask.tolist()
        if mask != self._mask:  # the shades and the mask are in the token layer
            self._mask = mask
            padded = [j for j in range(T) if not mask[j]]
            for shade in self.shades:
                shade.set_verts([[(0, j - 0.5), (1, j - 0.5), (1, j + 0.5), (0, j + 0.5)]
                                 for j in padded])
            self.blitter.tokens_changed()
        self._bars(steps)
        for j in range(numbered):
            self.mask_texts[j].set_text("0" if mask[j] else "\u2212\u221e")
            self.score_numbers[j].set(text=number(steps.scores[j], 2),
                                      color="black" if mask[j] else "#777777")
            self.weight_numbers[j].set(text=number(steps.weights[j], 3) if mask[j] else "0",
                                       color="black" if mask[j] else BOUNDARY_COLOR)
        for highlight in self.highlights:
            highlight.set_y(steps.query - 0.5)
        self._values(steps)
        for title, key in zip(self.titles, ("scores", "mask", "weights", "values"), strict=True):
            title.set_text(text(f"qk_{key}_title", self.lang, d=d))
        self.weight_sum.set_text(text("qk_weight_sum", self.lang, total=steps.weights.sum()))
        self.temperature.set_text(temperature_caption(steps.temperature, d, self.lang))
        self.suptitle.set_text(text("qk_title", self.lang, layer=layer, head=steps.head,
                                    token=literal(steps.tokens[steps.query])))
        notes = [note] if note else []
        if not legible:
            notes.append(text("qk_no_numbers", self.lang))
        self.note.set_text(literal("  ".join(notes)))
        return self.figure

    def _bars(self, steps: QueryKeySteps) -> None:
        low, high = min(float(steps.scores.min()), 0.0), max(float(steps.scores.max()), 0.0)
        pad = 0.06 * (high - low or 1.0)
        self.ax_scores.set_xlim(low - pad, high + pad)
        self.score_bars.set_verts(hbar_verts(steps.scores))
        self.score_bars.set_facecolors([REAL if real else PADDED for real in steps.mask])
        self.ax_weights.set_xlim(0, 1.06 * (float(steps.weights.max()) or 1.0))
        self.weight_bars.set_verts(hbar_verts(steps.weights))

    def _values(self, steps: QueryKeySteps) -> None:
        T, d = steps.values.shape
        values = np.where(steps.mask[:, None], steps.values, np.nan)
        limit = float(np.nanmax(np.abs(values))) or 1.0
        self.values.set_data(values)
        self.values.set_extent((-0.5, d - 0.5, T - 0.5, -0.5))
        self.values.set_clim(-limit, limit)
        self.ax_values.set_xlim(-0.5, d - 0.5)
        self.output.set_data(steps.output[None, :])
        self.output.set_extent((-0.5, d - 0.5, 0.5, -0.5))
        if self.ax_output.get_xlim() != (-0.5, d - 0.5):  # its ticks are background
            self.ax_output.set_xlim(-0.5, d - 0.5)
            self.ax_output.set_ylim(0.5, -0.5)
            self.blitter.invalidate()
        first = ", ".join(number(v, 2) for v in steps.output[:4])
        self.summary.set_text(text("qk_output_summary", self.lang, d=d,
                                   low=number(steps.output.min(), 2),
                                   high=number(steps.output.max(), 2), first=first))


def plot_query_key(steps: QueryKeySteps, layer: int, lang: str | None = None) -> Figure:
    """The steps of one query's attention in one head."""
    return QueryKeyPlot(lang).once(steps, layer)

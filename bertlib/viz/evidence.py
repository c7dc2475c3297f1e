"""Attention next to evidence: one head's weights read three ways (raw, norm-based, rolled
out), beside what switching each head off does to the model's answers
(:mod:`bertlib.analysis.evidence`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import torch
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.transforms import offset_copy

from bertlib.analysis.evidence import attention_norms, attention_rollout, head_effects
from bertlib.inputs import EncodedInput, model_device
from bertlib.model import BERTModel
from bertlib.support.checks import check_int_in
from bertlib.support.i18n import text
from bertlib.viz._render import NumberText, TokenLabels, heatmap, mark_boundary, show_image, spines
from bertlib.viz.live import LiveFigure
from bertlib.viz.modelview import MEAN_HEAD, head_name
from bertlib.viz.querykey import number
from bertlib.viz.style import BOUNDARY_COLOR, MIN_FONT, PAGE_WIDTH, literal, token_font

# Inches: query labels | three maps | colour bar; under them keys, then the two grids. With its
# controls it fits a 720-pixel window (default pairs: 23, 29 tokens): the maps label what fits.
LEFT, GAP, COLORBAR, TOP, BELOW = 1.0, 0.12, 0.8, 0.28, 0.8
SIDE = (PAGE_WIDTH - LEFT - 2 * GAP - COLORBAR) / 3
# The grids: their titles and head numbers; their cells, 0.26 inches a row for up to two layers
# (a line of numbers), shared by more; room for the note under them.
GRID_HEAD, GRID_CELLS, CELL, BOTTOM = 0.62, 0.55, 0.26, 0.2
# The rows of masked tokens: Okabe-Ito reddish purple, apart from the A/B boundary's orange
# and from viridis's blues, greens and yellow.
MASKED_COLOR = "#CC79A7"
LIMIT = 0.05  # the grids' colour scale reaches at least ±0.05: small changes stay pale


@dataclass(frozen=True)
class Evidence:
    """One input, ``<mask>`` at ``masked``: weights, norms (L, nh, T, T), rollout (L, T, T);
    token_change (L, nh): P(original) with each head off against token_prob, is_next_change
    likewise; an unmeasurable change None, its ``*_notice`` the strings.json key saying why."""

    tokens: list[str]
    masked: list[int]
    originals: list[str]
    boundary: int | None
    weights: np.ndarray
    norms: np.ndarray
    rollout: np.ndarray
    token_change: np.ndarray | None = None
    token_prob: float | None = None
    token_notice: str = ""
    is_next_change: np.ndarray | None = None
    is_next: float | None = None
    is_next_notice: str = ""

    def select(self, keep: Sequence[int]) -> Evidence:  # rows not scaled again
        keep = list(keep)
        boundary = None if self.boundary is None else int(np.searchsorted(keep, self.boundary))
        rows_cols = (..., *np.ix_(keep, keep))
        return replace(self, tokens=[self.tokens[i] for i in keep],
                       masked=[keep.index(p) for p in self.masked], boundary=boundary,
                       weights=self.weights[rows_cols], norms=self.norms[rows_cols],
                       rollout=self.rollout[rows_cols])


def untrained_outputs(model: BERTModel) -> tuple[bool, bool]:
    """Whether MLM and NSP are untrained (a Hugging Face checkpoint's ``untrained_heads``)."""
    missing = set(getattr(model, "untrained_heads", ()))
    return "mlm" in missing, bool({"nsp", "pooler"} & missing)


def collect_evidence(model: BERTModel, enc: EncodedInput, masked: Sequence[int],
                     mask_id: int, mask_token: str) -> Evidence:
    """Run the model on ``enc`` masked at ``masked``, then with each head off (one batch)."""
    masked = sorted(masked)
    device = model_device(model)
    tokens, segments = enc.masked(masked, mask_id).tensors(device)
    weights, norms = attention_norms(model, tokens, segments)  # (1, L, nh, T, T) each
    norms = norms / norms.sum(-1, keepdim=True).clamp_min(torch.finfo(norms.dtype).tiny)
    no_mlm, no_nsp = untrained_outputs(model)
    notices = {"token_notice": "ev_no_mlm" if no_mlm else "" if masked else "ev_none_masked",
               "is_next_notice": "ev_no_nsp" if no_nsp else ""}
    evidence = Evidence([mask_token if i in masked else t for i, t in enumerate(enc.tokens)],
                        masked, [enc.tokens[p] for p in masked], enc.boundary,
                        weights[0].cpu().numpy(), norms[0].cpu().numpy(),
                        attention_rollout(weights)[0].cpu().numpy(), **notices)
    if all(notices.values()):  # nothing to measure: no pass with heads switched off
        return evidence
    positions = torch.tensor(masked, dtype=torch.long, device=device)
    effects = head_effects(model, tokens, segments, positions,
                           torch.tensor([enc.ids[p] for p in masked], device=device))
    changes = {}
    if not notices["token_notice"]:
        # (L, nh, P) - (P,): each position against the intact model, then their mean
        changes["token_change"] = (effects.token_prob - effects.base_token_prob
                                   ).mean(-1).cpu().numpy()
        changes["token_prob"] = float(effects.base_token_prob.mean())
    if not notices["is_next_notice"]:
        changes["is_next_change"] = (effects.is_next - effects.base_is_next).cpu().numpy()
        changes["is_next"] = effects.base_is_next
    return replace(evidence, **changes)


def shown_labels(tokens: Sequence[str], first: Sequence[int], step: int) -> list[str]:
    """``tokens``, blank where within ``step`` of one kept (those at ``first`` kept first)."""
    kept: list[int] = []
    for i in [*first, *range(len(tokens))]:
        if all(abs(i - k) >= step for k in kept):
            kept.append(i)
    return [t if i in kept else "" for i, t in enumerate(tokens)]


class EvidencePlot(LiveFigure):
    """Three maps of the chosen head on one scale (raw, norm-based, rollout), masked rows
    outlined; under them, layer x head grids of the changes in P(original token) and P(IsNext)
    with each head off, or a notice where they cannot be measured."""

    def __init__(self, num_blks: int, num_heads: int, lang: str | None = None):
        self.shape = (num_blks, num_heads)
        cell_h = min(CELL, GRID_CELLS / num_blks)
        cell_w = min(0.75, (PAGE_WIDTH / 2 - 0.9) / num_heads)
        grid_top = TOP + SIDE + BELOW + GRID_HEAD
        height = grid_top + num_blks * cell_h + BOTTOM
        super().__init__(PAGE_WIDTH, height, lang)
        fig, lang = self.figure, self.lang

        def box(x: float, top: float, w: float, h: float) -> tuple[float, float, float, float]:
            return x / PAGE_WIDTH, 1 - (top + h) / height, w / PAGE_WIDTH, h / height

        self.maps = [fig.add_axes(box(LEFT + k * (SIDE + GAP), TOP, SIDE, SIDE))
                     for k in range(3)]
        self.images = [heatmap(ax) for ax in self.maps]
        self.cax = fig.add_axes(box(PAGE_WIDTH - COLORBAR + 0.08, TOP, 0.12, SIDE))
        self.colorbar = fig.colorbar(self.images[0], cax=self.cax, label=text("ev_weight", lang))
        self.maps[0].set_ylabel(text("query_axis", lang))
        self.maps[0].yaxis.set_label_coords(-(LEFT - 0.25) / SIDE, 0.5)
        fig.text((LEFT + 1.5 * SIDE + GAP) / PAGE_WIDTH, 1 - (TOP + SIDE + 0.6) / height,
                 text("key_axis", lang), ha="center", va="top")
        line = {"color": BOUNDARY_COLOR, "linewidth": 1.5}
        self.boundaries = [(ax.axhline(0, **line), ax.axvline(0, **line)) for ax in self.maps]
        self.rows = [ax.add_collection(PolyCollection([], facecolors="none", linewidths=2,
                                                      edgecolors=MASKED_COLOR), autolim=False)
                     for ax in self.maps]
        for ax in self.maps:
            ax.set_title("", y=1.0, pad=6, fontsize=10)  # then set_text keeps the size
            ax.set(xticks=[], yticks=[])  # TokenLabels below, and left of the first map
        self.blitter.animate(*self.images, self.colorbar.ax, *self.rows,
                             *(line for pair in self.boundaries for line in pair),
                             *(ax.title for ax in self.maps), *spines(self.maps))
        self.query_labels = TokenLabels(self.maps[0], self.blitter, "y")
        self.key_labels = [TokenLabels(ax, self.blitter, "x", rotation=90) for ax in self.maps]

        # The grids, one in each half of the page, laid out once: they are the model's size.
        half = PAGE_WIDTH / 2
        width = num_heads * cell_w
        grids = []
        self.fontsize = 9.0 if cell_w >= 0.5 and cell_h >= 0.16 else 0.0  # 0: no numbers
        for k in range(2):
            x = k * half + (half - width) / 2 + 0.25
            ax = fig.add_axes(box(x, grid_top, width, num_blks * cell_h))
            ax.xaxis.tick_top()
            ax.xaxis.set_label_position("top")
            step = max(1, math.ceil(0.2 / cell_w))  # head numbers at least 0.2 inches apart
            ax.set_xticks(range(0, num_heads, step))
            ax.set_yticks(range(0, num_blks, max(1, math.ceil(0.15 / cell_h))))
            ax.tick_params(labelsize=9, pad=2)
            # "head" beside the head numbers and "layer" under it, beside the layer numbers:
            # left of the grid, where the row numbers leave room, not a line of their own.
            left = -(3.5 + 2 + 5.4 * len(str(num_blks - 1)) + 5)  # points: ticks, numbers
            for name, y, va in (("head", 1, "bottom"), ("layer", 0.5, "center")):
                ax.text(0, y, text(name, lang), fontsize=9, ha="right", va=va,
                        transform=offset_copy(ax.transAxes, fig, x=left,
                                              y=5.5 if va == "bottom" else 0, units="points"))
            cells = ax.imshow(np.zeros(self.shape), cmap="PuOr", aspect="auto",
                              interpolation="nearest")
            outline = ax.add_patch(Rectangle((0, 0), 1, 1, fill=False, edgecolor="black",
                                             linewidth=2.5, clip_on=False))
            centre = (k * half + half / 2 + 0.25) / PAGE_WIDTH
            title = fig.text(centre, 1 - (TOP + SIDE + BELOW + 0.02) / height, "",
                             ha="center", va="top", fontsize=9, linespacing=1.3)
            notice = fig.text(centre, 1 - (grid_top - 0.2 + num_blks * cell_h / 2) / height,
                              "", ha="center", va="center", fontsize=9, color="#5C3B00",
                              linespacing=1.3)
            at = offset_copy(ax.transData, fig, y=-0.35 * self.fontsize, units="points")
            numbers = [ax.add_artist(NumberText(h, layer, "", transform=at, ha="center",
                                                fontsize=self.fontsize or MIN_FONT,
                                                stamps=self.blitter.stamps))
                       for layer in range(num_blks) for h in range(num_heads)]
            grids.append((ax, cells, numbers, title, notice, outline))
            self.blitter.animate(cells, title, notice, *numbers, *spines([ax]),
                                 with_tokens=True)
        self.grids, self.cells, self.numbers, self.titles, self.notices, self.outlines = (
            list(column) for column in zip(*grids, strict=True))
        self.note = fig.text(0.01, 0.01, "", fontsize=9, color="#555555")
        self.blitter.animate(self.note, with_tokens=True)
        self.blitter.animate(*self.outlines)
        self._drawn: tuple | None = None  # what the token layer shows

    def update(self, evidence: Evidence, layer: int, head: int, note: str = "") -> Figure:
        T = len(evidence.tokens)
        maps = [*(a[layer].mean(0) if head == MEAN_HEAD else a[layer, head]
                  for a in (evidence.weights, evidence.norms)), evidence.rollout[layer]]
        vmax = float(max(m.max() for m in maps)) or 1.0
        for image, data in zip(self.images, maps, strict=True):
            show_image(image, data, 0, vmax, limits=True)
        rows = [[(-0.5, p - 0.5), (T - 0.5, p - 0.5), (T - 0.5, p + 0.5), (-0.5, p + 0.5)]
                for p in evidence.masked]
        for collection, (across, down) in zip(self.rows, self.boundaries, strict=True):
            collection.set_verts(rows)
            mark_boundary(evidence.boundary, (across,), (down,))
        self.maps[0].title.set_text(text("ev_raw_title", self.lang, layer=layer,
                                         head=head_name(head, self.lang)))
        self.maps[1].title.set_text(text("ev_norm_title", self.lang))
        self.maps[2].title.set_text(text("ev_rollout_title", self.lang, layer=layer))
        self._labels(evidence, note)
        first, last = (0, self.shape[1] - 1) if head == MEAN_HEAD else (head, head)
        for outline in self.outlines:  # round the chosen head, in each grid on screen
            outline.set_bounds(first - 0.5, layer - 0.5, last - first + 1, 1)
            outline.set_visible(outline.axes.get_visible())
        return self.figure

    def _labels(self, evidence: Evidence, note: str) -> None:
        """The token layer: labels that fit, the grids and titles, the note; only on a change."""
        T = len(evidence.tokens)
        # Labels as large as the one-head view's where they fit; at the smallest, every token's
        # while 0.9 of it apart (the ink of neighbours does not touch), else every second...
        spacing = 72 * SIDE / T  # points per token
        size = token_font(T, SIDE)
        ends = [0, T - 1] if evidence.boundary is None else [0, evidence.boundary - 1, T - 1]
        labels = shown_labels(evidence.tokens, [*evidence.masked, *ends],
                              math.ceil(0.9 * size / spacing))
        for token_labels in (self.query_labels, *self.key_labels):
            token_labels.set(labels, size)
        state = (labels, note, *(None if a is None else a.tobytes() for a in (
            evidence.token_change, evidence.is_next_change)),
            evidence.token_prob, evidence.is_next, evidence.token_notice,
            evidence.is_next_notice, tuple(evidence.originals))
        if state == self._drawn:
            return
        self._drawn = state
        one = len(evidence.originals) == 1
        base = text("ev_mlm_one" if one else "ev_mlm_many", self.lang, n=len(evidence.originals),
                    token=literal(evidence.originals[0]) if one else "",
                    p=evidence.token_prob or 0.0)
        grids = ((evidence.token_change, evidence.token_notice, "ev_mlm_title", base),
                 (evidence.is_next_change, evidence.is_next_notice, "ev_nsp_title",
                  text("ev_nsp_base", self.lang, p=evidence.is_next or 0.0)))
        for k, (change, notice, title, base) in enumerate(grids):
            self._grid(k, change, notice, f"{text(title, self.lang)}\n{base}")
        self.note.set_text(literal(note))
        self.blitter.tokens_changed()

    def _grid(self, k: int, change: np.ndarray | None, notice: str, title: str) -> None:
        """Grid ``k`` showing ``change`` (L, nh), or its notice when None."""
        ax, shown = self.grids[k], change is not None
        if ax.get_visible() != shown:  # its numbers of heads and layers: background
            ax.set_visible(shown)
            self.blitter.invalidate()
        for artist in (self.cells[k], *self.numbers[k], *ax.spines.values()):  # blitted
            artist.set_visible(shown)
        self.notices[k].set_text(text(notice, self.lang) if change is None else "")
        self.titles[k].set_text(title if change is not None else "")
        if change is None:
            return
        limit = max(LIMIT, float(np.abs(change).max()))
        show_image(self.cells[k], change, -limit, limit)
        for t, value in zip(self.numbers[k], change.ravel(), strict=True):
            t.set_text(number(value, 3, "+") if self.fontsize else "")
            t.set_color("white" if abs(value) > 0.6 * limit else "black")


def plot_evidence(evidence: Evidence, layer: int, head: int, lang: str | None = None) -> Figure:
    """The evidence view for one layer and head."""
    L, nh = evidence.weights.shape[:2]
    check_int_in("layer", layer, 0, L - 1)
    check_int_in("head", head, MEAN_HEAD, nh - 1, " (-1: the mean of heads)")
    return EvidencePlot(L, nh, lang).once(evidence, layer, head)

"""MLM masking as figures: one draw as coloured chips, and a tally over many draws."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch, Patch
from matplotlib.text import Text

from bertlib.inputs import EncodedInput
from bertlib.masking import Fate, mask_tokens
from bertlib.support.checks import check_int_in, check_tokens
from bertlib.support.i18n import text
from bertlib.support.rng import make_generator
from bertlib.text.vocab import SpecialTokens, Vocab
from bertlib.viz._render import StampedText, TokenLabels, bar_verts, spines
from bertlib.viz.fonts import add_cjk_fallback
from bertlib.viz.live import LiveFigure
from bertlib.viz.style import (
    FATE_COLORS,
    FATE_KEYS,
    FATE_TEXT_COLORS,
    NOT_SELECTED_COLOR,
    PAGE_WIDTH,
    label_size,
    literal,
)

# Chips flow in rows across the page, each as wide as its texts (a token and "→ <mask>").
CHIP_ROW, CHIP_HEIGHT, CHIP_GAP = 0.6, 0.54, 0.08  # inches
MIN_CHIP, CHIP_PAD = 0.45, 0.08  # inches: the narrowest chip; room either side of a text
MASK_TOKEN = SpecialTokens().mask  # what most selected chips read under their token
TOP_FONT, BOTTOM_FONT = 12, 10  # points: the token, and what the model sees under it
CHIPS_ACROSS = 0.98 * PAGE_WIDTH - 0.1  # inches of a row
MAX_CHIPS = 512  # BERT's longest input: 512 long words are 64 rows, a figure 39 inches tall
# A draw takes ~0.25 ms for a sentence pair (~3 ms at 512 tokens): 100,000 take half a minute;
# the widget offers at most 20,000, and the fractions settle long before.
MAX_SAMPLES = 100_000
EXPECTED_FATE_FRACTIONS = {Fate.MASK: 0.8, Fate.RANDOM: 0.1, Fate.KEEP: 0.1}


class ChipsPlot(LiveFigure):
    """Tokens as grey chips, a selected one outlined with what the model sees, in colour."""

    def __init__(self, lang: str | None = None):
        super().__init__(PAGE_WIDTH, 2, lang)
        self.ax = self.figure.add_axes((0.01, 0.01, 0.98, 0.8))
        self.ax.set_axis_off()
        handles = [Patch(facecolor=FATE_COLORS[f], label=text(FATE_KEYS[f], self.lang))
                   for f in Fate]
        handles.append(Patch(facecolor=NOT_SELECTED_COLOR, edgecolor="#999999",
                             label=text("fate_none", self.lang)))
        self.legend = self.figure.legend(handles=handles, loc="upper center", ncol=4,
                                         frameon=False, fontsize=11, bbox_to_anchor=(0.5, 0.93))
        self.title = self.figure.suptitle("", fontsize=13, y=0.995)
        self.blitter.animate(self.title)
        self.top_texts: list = []  # the original tokens
        self.outlines: list[FancyBboxPatch] = []
        self.bands: list[FancyBboxPatch] = []
        self.bottom_texts: list = []  # what the model sees at selected positions
        self.fates: list[Fate | None] = []
        self.widths: tuple[float, ...] = ()  # the chips laid out, in inches
        self._widths: dict[tuple[str, float], float] = {}  # a text's width, measured once

    def _width(self, label: str, size: float) -> float:
        """Inches ``label`` takes at ``size`` points, drawn as the chips draw it (CJK too)."""
        key = (label, size)
        if key not in self._widths:
            probe = Text(0, 0, label, fontsize=size)
            probe.set_figure(self.figure)
            add_cjk_fallback(probe)
            renderer = self.figure.canvas.get_renderer()
            self._widths[key] = probe.get_window_extent(renderer).width / self.figure.dpi
        return self._widths[key]

    def _chip_widths(self, tokens: Sequence[str], shown: Sequence[str],
                     fates: Sequence[Fate | None]) -> tuple[float, ...]:
        """Each chip as wide as its token and what the model sees there (at least "→ <mask>"),
        in steps of a tenth of an inch (a resample rarely moves the chips)."""
        mask = self._width(f"→ {literal(MASK_TOKEN)}", BOTTOM_FONT)
        return tuple(
            max(MIN_CHIP, math.ceil(10 * (2 * CHIP_PAD + max(
                self._width(literal(tok), TOP_FONT), mask,
                self._width(f"→ {literal(seen)}", BOTTOM_FONT) if fate is not None else 0))) / 10)
            for tok, seen, fate in zip(tokens, shown, fates, strict=True))

    def _layout(self, widths: tuple[float, ...]) -> None:
        for artist in self.ax.patches[:] + self.ax.texts[:]:
            artist.remove()
        self.blitter.forget(*self.top_texts, *self.outlines, *self.bands, *self.bottom_texts)
        self.blitter.invalidate()
        places, x, row = [], 0.0, 0
        for width in widths:  # left to right, a new row where the next chip does not fit
            if x > 0 and x + min(width, CHIPS_ACROSS) > CHIPS_ACROSS:
                x, row = 0.0, row + 1
            places.append((x, row * CHIP_ROW))
            x += min(width, CHIPS_ACROSS) + CHIP_GAP
        rows = row + 1
        height = CHIP_ROW * rows + 0.9
        self.figure.set_size_inches(PAGE_WIDTH, height)
        self.ax.set_position((0.01 + 0.05 / PAGE_WIDTH, 0.01, CHIPS_ACROSS / PAGE_WIDTH,
                              CHIP_ROW * rows / height))
        self.ax.set_xlim(0, CHIPS_ACROSS)
        self.ax.set_ylim(CHIP_ROW * rows, 0)
        box = "round,pad=0,rounding_size=0.1"
        self.top_texts, self.outlines, self.bands, self.bottom_texts = [], [], [], []
        # add_artist, not add_patch: the limits are fixed, and updating them per patch is slow.
        for (x, y), width in zip(places, widths, strict=True):
            width = min(width, CHIPS_ACROSS)
            self.ax.add_artist(FancyBboxPatch((x, y), width, CHIP_HEIGHT, boxstyle=box,
                                              linewidth=1, facecolor=NOT_SELECTED_COLOR,
                                              edgecolor="#999999"))
            self.top_texts.append(self.ax.add_artist(StampedText(
                x + width / 2, y + 0.15, "", ha="center", va="center", fontsize=TOP_FONT,
                color="#222222", stamps=self.blitter.stamps)))
            self.bands.append(self.ax.add_artist(FancyBboxPatch(
                (x + 0.05, y + 0.29), width - 0.1, 0.21,
                boxstyle="round,pad=0,rounding_size=0.06", linewidth=0)))
            self.outlines.append(self.ax.add_artist(FancyBboxPatch(
                (x, y), width, CHIP_HEIGHT, boxstyle=box, linewidth=3, fill=False)))
            self.bottom_texts.append(self.ax.add_artist(StampedText(
                x + width / 2, y + 0.395, "", ha="center", va="center", fontsize=BOTTOM_FONT,
                stamps=self.blitter.stamps)))
        # In the order of a full draw: a long token's text lies over its chip's outline.
        self.blitter.animate(*(artist for chip in zip(self.top_texts, self.bands, self.outlines,
                                                       self.bottom_texts, strict=True)
                               for artist in chip))
        self.widths = widths

    def update(self, tokens: Sequence[str], shown: Sequence[str], fates: Sequence[Fate | None],
               title: str = "") -> Figure:
        """shown: what the model sees; fates: None where not selected."""
        widths = self._chip_widths(tokens, shown, fates)
        if widths != self.widths:
            self._layout(widths)
        for top, tok in zip(self.top_texts, tokens, strict=True):
            top.set_text(literal(tok))
        self.fates = list(fates)
        for outline, band, bottom, seen, fate in zip(
                self.outlines, self.bands, self.bottom_texts, shown, fates, strict=True):
            selected = fate is not None
            for artist in (outline, band, bottom):
                artist.set_visible(selected)
            if selected:
                outline.set_edgecolor(FATE_COLORS[fate])
                band.set_facecolor(FATE_COLORS[fate])
                bottom.set(text=f"→ {literal(seen)}", color=FATE_TEXT_COLORS[fate])
        self.title.set_text(literal(title))
        return self.figure


def plot_mask_chips(tokens: Sequence[str], shown: Sequence[str],
                    fates: Sequence[Fate | None], title: str = "",
                    lang: str | None = None) -> Figure:
    """One masking draw as coloured chips, with a legend of the four fates."""
    check_tokens("tokens", tokens)
    check_tokens("shown", shown)
    if not 1 <= len(tokens) <= MAX_CHIPS:
        raise ValueError(f"tokens must hold 1 to {MAX_CHIPS} tokens (one chip each); got "
                         f"{len(tokens)}")
    if not len(tokens) == len(shown) == len(fates):
        raise ValueError(f"tokens, shown and fates must have one entry per token; got "
                         f"{len(tokens)}, {len(shown)}, {len(fates)}")
    return ChipsPlot(lang).once(tokens, shown, fates, title)


@dataclass(frozen=True)
class MaskTally:
    """Over ``samples`` draws: selections per position (T,), cumulative MASK/RANDOM/KEEP
    counts after each draw (samples, 3), and ``selected`` of ``candidates`` chosen a draw."""

    tokens: list[str]
    selection_counts: np.ndarray
    fate_counts: np.ndarray
    selected: int
    candidates: int

    @property
    def samples(self) -> int:
        return int(self.fate_counts.shape[0])

    @property
    def selection_fractions(self) -> np.ndarray:
        return self.selection_counts / self.samples

    @property
    def fate_fractions(self) -> np.ndarray:
        return self.fate_counts / self.fate_counts.sum(axis=1, keepdims=True)


def tally_masks(enc: EncodedInput, vocab: Vocab, mask_ratio: float, samples: int,
                seed: int) -> MaskTally:
    """Tally ``samples`` draws of :func:`mask_tokens` from one generator seeded ``seed``."""
    check_int_in("samples", samples, 1, MAX_SAMPLES, " (draws; each takes ~0.25 ms)")
    g = make_generator(seed=seed)
    selection = np.zeros(len(enc.ids), dtype=np.int64)
    per_draw = np.zeros((samples, len(Fate)), dtype=np.int64)
    for i in range(samples):
        masked = mask_tokens(enc.ids, vocab, mask_ratio=mask_ratio, generator=g)
        selection[masked.positions] += 1
        per_draw[i] = np.bincount(np.asarray(masked.fates, dtype=np.int64),
                                  minlength=len(Fate))
    # Every draw selects the same number of positions from the same candidates.
    return MaskTally(enc.tokens, selection, per_draw.cumsum(axis=0), len(masked.positions),
                     masked.num_candidates)


class TallyPlot(LiveFigure):
    """Selections per position and the running shares of the fates, expected values dashed."""

    def __init__(self, lang: str | None = None):
        super().__init__(PAGE_WIDTH, 4.2, lang)
        self.figure.subplots_adjust(left=0.06, right=0.98, top=0.9, bottom=0.3, wspace=0.18)
        self.ax_sel, self.ax_fate = self.figure.subplots(1, 2, gridspec_kw={"width_ratios": [3, 2]})
        self.bars = self.ax_sel.add_collection(PolyCollection([],
                                                              facecolor=FATE_COLORS[Fate.MASK]))
        self.expected = self.ax_sel.axhline(0, color="black", linestyle="--", linewidth=1.5)
        self.legend = self.ax_sel.legend([self.expected], [""], loc="upper right", fontsize=10)
        self.ax_sel.set_ylabel(text("tally_fraction", self.lang))
        self.ax_sel.set_title(text("tally_selection_title", self.lang))
        self.curves = {fate: self.ax_fate.plot([], [], color=FATE_COLORS[fate], linewidth=2,
                                               label=text(FATE_KEYS[fate], self.lang))[0]
                       for fate in Fate}
        references = [self.ax_fate.axhline(EXPECTED_FATE_FRACTIONS[fate], color=FATE_COLORS[fate],
                                           linestyle="--", linewidth=1.2) for fate in Fate]
        self.ax_fate.plot([], [], color="black", linestyle="--",
                          label=text("expected_value", self.lang))
        self.ax_fate.set(xscale="log", ylim=(0, 1), ylabel=text("tally_fraction", self.lang),
                         xlabel=text("tally_resample_axis", self.lang))
        self.fate_title = self.ax_fate.set_title("")
        fate_legend = self.ax_fate.legend(loc="center right", fontsize=9)
        # The reference lines and legends too, in the order of a full draw: over the curves.
        self.blitter.animate(self.bars, self.expected, self.legend, *self.curves.values(),
                             *references, fate_legend, self.fate_title,
                             *spines([self.ax_sel, self.ax_fate]))
        self.token_labels = TokenLabels(self.ax_sel, self.blitter, "x", rotation=90)

    def update(self, tally: MaskTally) -> Figure:
        T, fractions = len(tally.tokens), tally.selection_fractions
        self.bars.set_verts(bar_verts(fractions))
        self.ax_sel.set_xlim(-0.5, T - 0.5)
        self.token_labels.set(tally.tokens, label_size(T))
        expected = tally.selected / tally.candidates
        self.expected.set_ydata([expected, expected])
        self.legend.get_texts()[0].set_text(text(
            "tally_selection_expected", self.lang, selected=tally.selected,
            candidates=tally.candidates, percent=100 * expected))
        top = min(1.0, math.ceil(10 * max(2 * expected, 1.1 * float(fractions.max()))) / 10)
        if self.ax_sel.get_ylim() != (0, top):
            self.ax_sel.set_ylim(0, top)
            self.blitter.invalidate()
        draws = np.arange(1, tally.samples + 1)
        for fate, curve in self.curves.items():
            curve.set_data(draws, tally.fate_fractions[:, fate])
        right = max(2, tally.samples)  # a log axis needs two different limits
        if self.ax_fate.get_xlim() != (1, right):
            self.ax_fate.set_xlim(1, right)
            self.blitter.invalidate()
        self.fate_title.set_text(text("tally_fates_title", self.lang, samples=tally.samples))
        return self.figure


def plot_mask_tally(tally: MaskTally, lang: str | None = None) -> Figure:
    """Selection frequency per position and the running 80/10/10 fractions."""
    return TallyPlot(lang).once(tally)

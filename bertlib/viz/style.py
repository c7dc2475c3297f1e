"""The look shared by every figure and table: sizes, colours, fonts, label sizes.

Okabe-Ito colours throughout: distinguishable with the common forms of colour blindness.
"""

from __future__ import annotations

import io
import math
import re

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text

from bertlib.masking import Fate
from bertlib.support.i18n import resolve_language
from bertlib.viz.fonts import add_cjk_fallback, cjk_family

DPI = 90  # sharp on a projector, small enough PNGs to redraw fast
# The widest figure shown at its own size (a wider PNG is scaled down, its text too):
# JupyterLab's output area is 848 pixels in a 1280-pixel window with the file browser open.
PAGE_WIDTH = 9.2  # inches: 828 pixels at DPI
# The smallest text a figure draws: 8 points are 10 pixels at DPI, legible from the back of a
# classroom. The browser test checks that figures are shown at their size.
MIN_FONT = 8.0
# Inches per token of a heatmap or a table of tokens: a line of MIN_FONT labels, so that the
# default sentence pair (27-33 tokens) and a widget's controls fit a 720-pixel window.
ROW = 0.11
MAX_INCHES = 100  # 9,000 pixels at DPI; a larger figure would need gigabytes to draw
FATE_COLORS = {Fate.MASK: "#0072B2", Fate.RANDOM: "#E69F00", Fate.KEEP: "#009E73"}
FATE_TEXT_COLORS = {Fate.MASK: "white", Fate.RANDOM: "black", Fate.KEEP: "black"}
FATE_KEYS = {Fate.MASK: "fate_mask", Fate.RANDOM: "fate_random", Fate.KEEP: "fate_keep"}
NOT_SELECTED_COLOR = "#E8E8E8"
SEGMENT_COLORS = ("#D6EAF8", "#FDEBD0")  # backgrounds of sentence A and sentence B
BOUNDARY_COLOR = "#D55E00"  # the line between sentence A and sentence B


class CJKFigure(Figure):
    """A Figure whose texts fall back to the CJK font as they are drawn, and which shows itself
    as a PNG in any kernel (a plain Figure only under pyplot's inline backend)."""

    def set_size_inches(self, w, h=None, forward=True) -> None:  # at most MAX_INCHES a side
        width, height = (w, h) if h is not None else w
        if not (0 < width <= MAX_INCHES and 0 < height <= MAX_INCHES):
            raise ValueError(f"this input needs a figure of {width:.1f} x {height:.1f} inches; "
                             f"a figure is at most {MAX_INCHES} inches a side: show fewer "
                             "tokens, layers or heads")
        super().set_size_inches(w, h, forward)

    def _repr_png_(self) -> bytes:
        # As the inline backend draws: at the figure's own dpi, trimmed to what is drawn.
        buffer = io.BytesIO()
        self.savefig(buffer, format="png", dpi=self.dpi, bbox_inches="tight")
        return buffer.getvalue()

    def draw(self, renderer) -> None:
        add_cjk_fallback(self)
        super().draw(renderer)

    def draw_artist(self, a) -> None:
        # Most of a blitted redraw's ~200 artists hold no text: searching them cost more.
        if isinstance(a, Text) or a.get_children():
            add_cjk_fallback(a)
        super().draw_artist(a)


def new_figure(width: float, height: float, lang: str | None = None) -> Figure:
    """A Figure not tied to pyplot (no global state, freed with its owner), CJK-ready."""
    for name, value in (("width", width), ("height", height)):
        if not 0 < value <= MAX_INCHES:
            raise ValueError(f"{name} must be a number of inches in (0, {MAX_INCHES}]; got "
                             f"{value!r:.80}")
    fig = CJKFigure(figsize=(width, height), dpi=DPI)
    fig.cjk_family = cjk_family(resolve_language(lang))
    FigureCanvasAgg(fig)
    return fig


def label_size(n: int) -> float:
    """Token-label size, whole points from 12 to MIN_FONT (so the stamped labels are kept)."""
    return float(np.clip(round(14 - n / 6), MIN_FONT, 12))


def token_font(n: int, inches: float) -> float:
    """:func:`label_size`, smaller to fit ``n`` labels along ``inches``, at least MIN_FONT."""
    return float(max(MIN_FONT, min(label_size(n), math.floor(0.9 * 72 * inches / n))))


def thinned(tokens: list[str], inches: float) -> list[str]:
    """``tokens`` as labels along ``inches``: all of them where a line of MIN_FONT (at 0.9 of
    the pitch, as :func:`token_font` packs them) fits each, else every 2nd, 3rd... one, the
    others blank (a long input on a map the page's width holds)."""
    pitch = 72 * inches / max(1, len(tokens))  # points a token
    step = max(1, math.ceil(0.9 * MIN_FONT / pitch - 1e-9))
    return [t if i % step == 0 else "" for i, t in enumerate(tokens)]


# Characters no figure can draw (a lone surrogate stops matplotlib's text layout) or no SVG can
# hold (XML 1.0 allows no C0 control but tab, newline and carriage return, nor U+FFFE, U+FFFF).
UNDRAWABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def literal(label: str) -> str:
    """``label`` drawn character for character: ``$`` escaped ("$5 ... $10" is no mathtext),
    a character that cannot be drawn or saved as its Python escape (``\\x00``)."""
    return UNDRAWABLE.sub(lambda m: ascii(m.group())[1:-1], label.replace("$", r"\$"))

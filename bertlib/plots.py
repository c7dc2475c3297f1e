"""Figures of BERT's input, masking, attention, NSP and similarity, in pure matplotlib.

Each figure is a small class that builds its Figure once and then only updates its artists
(``update``), so the widgets can redraw in a few tens of milliseconds; the ``plot_*`` functions
are the one-shot versions that return a fresh :class:`~matplotlib.figure.Figure`. Nothing here
imports torch: the inputs are numpy arrays and lists of token strings.
"""

from __future__ import annotations

import math
import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from matplotlib import rcParams
from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.markers import TICKDOWN, TICKLEFT
from matplotlib.patches import FancyBboxPatch, Patch, Rectangle
from matplotlib.text import Text
from matplotlib.transforms import Affine2D

from bertlib.fonts import use_cjk_font
from bertlib.i18n import resolve_language, text
from bertlib.masking import Fate

DPI = 90  # sharp on a projector, small enough PNGs to redraw fast
# Okabe-Ito colours: distinguishable with the common forms of colour blindness.
FATE_COLORS = {Fate.MASK: "#0072B2", Fate.RANDOM: "#E69F00", Fate.KEEP: "#009E73"}
FATE_TEXT_COLORS = {Fate.MASK: "white", Fate.RANDOM: "black", Fate.KEEP: "black"}
FATE_KEYS = {Fate.MASK: "fate_mask", Fate.RANDOM: "fate_random", Fate.KEEP: "fate_keep"}
EXPECTED_FATE_FRACTIONS = {Fate.MASK: 0.8, Fate.RANDOM: 0.1, Fate.KEEP: 0.1}
NOT_SELECTED_COLOR = "#E8E8E8"
SEGMENT_COLORS = ("#D6EAF8", "#FDEBD0")  # backgrounds of sentence A and sentence B
BOUNDARY_COLOR = "#D55E00"
CHIP_COLUMNS = 8


def new_figure(width: float, height: float) -> Figure:
    """A Figure not tied to pyplot (no global state, freed with its owner), CJK-ready."""
    use_cjk_font()
    fig = Figure(figsize=(width, height), dpi=DPI)
    FigureCanvasAgg(fig)
    return fig


def _png_chunk(tag: bytes, data: bytes) -> bytes:
    return (struct.pack(">I", len(data)) + tag + data
            + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF))


def encode_png(rgba: np.ndarray) -> bytes:
    """An (h, w, 4) uint8 RGBA array as an RGB PNG, alpha dropped (figures are opaque).

    Written by hand because it is the widgets' fixed cost on every redraw: no per-row filter
    and zlib at level 1 take about half of Pillow's time for these flat-coloured figures, and
    give smaller files.
    """
    h, w = rgba.shape[:2]
    rows = np.empty((h, 1 + 3 * w), dtype=np.uint8)
    rows[:, 0] = 0  # filter type "None" for every row
    rows[:, 1:].reshape(h, w, 3)[...] = rgba[:, :, :3]
    header = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)  # 8-bit RGB, not interlaced
    return (b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", header)
            + _png_chunk(b"IDAT", zlib.compress(rows.data, 1)) + _png_chunk(b"IEND", b""))


def _encode_png(canvas: FigureCanvasAgg) -> bytes:
    return encode_png(np.asarray(canvas.buffer_rgba()))


def figure_png(fig: Figure) -> bytes:
    """The figure rendered as PNG bytes (a full draw)."""
    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    canvas.draw()
    return _encode_png(canvas)


class Blitter:
    """Redraws only a figure's changing ("animated") artists over cached backgrounds.

    Three layers. The background (everything not animated) is drawn in full only after
    :meth:`invalidate` (the owner changed something in it) or when the figure's pixel size or
    dpi has changed. Artists animated with ``with_tokens=True`` (token labels and their marks)
    change only with the text: they are drawn onto a second cached image after
    :meth:`tokens_changed`. The other animated artists (images, bars, titles) are drawn on every
    update. Text is what makes a figure slow to draw, so changing a head or a seed costs no text
    but titles, and new text costs no full redraw. Within a layer, artists are drawn in
    z-order, as a full draw would (an image first, then the lines and frame over it); so the
    token layer must hold only artists that nothing animated overlaps.
    """

    def __init__(self, fig: Figure):
        self.figure = fig
        self.artists: list = []
        self.token_artists: list = []
        self.stamps: dict = {}  # rendered texts of this figure, see _StampedText
        self._background = None
        self._background_of = None  # the (width, height, dpi) it was drawn at
        self._with_tokens = None

    def animate(self, *artists, with_tokens: bool = False) -> None:
        for artist in artists:
            artist.set_animated(True)
        (self.token_artists if with_tokens else self.artists).extend(artists)

    def forget(self, *artists) -> None:
        gone = {id(a) for a in artists}
        self.artists = [a for a in self.artists if id(a) not in gone]
        self.token_artists = [a for a in self.token_artists if id(a) not in gone]
        self._with_tokens = None

    def invalidate(self) -> None:
        self._background = self._with_tokens = None

    def tokens_changed(self) -> None:
        self._with_tokens = None

    def still(self) -> Figure:
        """The figure with nothing animated, for a one-shot figure that is shown once.

        savefig and a notebook's inline display leave out animated figure-level artists (a
        colour bar's axes, a suptitle), so the ``plot_*`` functions return this.
        """
        for artist in self.artists + self.token_artists:
            artist.set_animated(False)
        self.artists, self.token_artists = [], []
        self.invalidate()
        return self.figure

    def _draw(self, artists: list) -> None:
        for artist in sorted(artists, key=lambda a: a.get_zorder()):  # stable: ties keep order
            if artist.get_visible():
                self.figure.draw_artist(artist)

    def png(self) -> bytes:
        canvas = self.figure.canvas
        size = (*canvas.get_width_height(physical=True), self.figure.dpi)
        if self._background is None or self._background_of != size:
            canvas.draw()  # everything but the animated artists
            self._background = canvas.copy_from_bbox(self.figure.bbox)
            self._background_of = size
            self._with_tokens = None
        if self._with_tokens is None:
            canvas.restore_region(self._background)
            self._draw(self.token_artists)
            self._with_tokens = (canvas.copy_from_bbox(self.figure.bbox) if self.token_artists
                                 else self._background)
        canvas.restore_region(self._with_tokens)
        self._draw(self.artists)
        return _encode_png(canvas)


class _StampedText(Text):
    """A Text that renders each string (in a font, angle, colour, dpi) once, then stamps it.

    Laying out and rendering the glyphs costs about 1 ms per label, most of a widget's redraw
    when 64 tokens label two axes; a new sentence mostly reuses the tokens of the last one. The
    first draw of a string renders it whole on a transparent canvas of its own size and keeps
    the pixels and their offset from the text's anchor; later draws paste them there, clipped
    as the text would be (to within half a pixel of where a fresh render would put the
    glyphs). Other renderers (PDF, SVG) draw normally.
    """

    MAX_STAMPS = 4096  # per figure; then the cache starts again (a stamp is a few kB)

    def __init__(self, *args, stamps: dict, **kwargs):
        super().__init__(*args, **kwargs)
        self._stamps = stamps  # the figure's, Blitter.stamps

    def draw(self, renderer) -> None:
        if not self.get_visible() or not self.get_text():
            return
        if not isinstance(renderer, RendererAgg):
            super().draw(renderer)
            return
        x, y = (round(v) for v in self.get_transform().transform(self.get_unitless_position()))
        key = (self.get_text(), self.get_fontproperties(), self.get_rotation(),
               self.get_color(), self.get_horizontalalignment(),
               self.get_verticalalignment(), renderer.dpi)
        stamp = self._stamps.get(key)
        if stamp is None:
            if len(self._stamps) >= self.MAX_STAMPS:
                self._stamps.clear()
            stamp = self._stamps[key] = self._render(renderer, x, y)
        pixels, dx, dy = stamp
        gc = renderer.new_gc()
        self._set_gc_clip(gc)
        renderer.draw_image(gc, x + dx, y + dy, pixels)
        gc.restore()
        self.stale = False

    def _render(self, renderer, x: int, y: int) -> tuple[np.ndarray, int, int]:
        """The whole text drawn alone: its RGBA pixels and their bottom-left corner relative
        to the anchor pixel (x, y)."""
        x0, y0, x1, y1 = self.get_window_extent(renderer).padded(2).extents  # y upwards
        x0, y0 = math.floor(x0), math.floor(y0)
        scratch = RendererAgg(math.ceil(x1) - x0, math.ceil(y1) - y0, renderer.dpi)
        # Shifted by whole pixels, so the glyphs keep their sub-pixel placement.
        transform, clip_on = self.get_transform(), self.get_clip_on()
        self.set_transform(transform + Affine2D().translate(-x0, -y0))
        self.set_clip_on(False)
        try:
            super().draw(scratch)
        finally:
            self.set_transform(transform)
            self.set_clip_on(clip_on)
        # Buffer rows run top-down; draw_image wants them bottom-up.
        return np.asarray(scratch.buffer_rgba())[::-1].copy(), x0 - x, y0 - y


class TokenLabels:
    """Token names and tick marks beside an axes, exactly where matplotlib would put its ticks.

    Ticks are what makes a redraw slow: on every draw matplotlib lays out and measures each
    label again and draws each mark as its own line. Here the axis has no ticks; the marks are
    one line of tick-shaped markers and the labels are :class:`_StampedText` with the tick
    labels' transform, alignment, font and colour. Both are animated (see :class:`Blitter`), so
    new tokens, even a new number of them, leave the background alone. The texts are kept in a
    pool: a longer input adds texts, a shorter one hides the rest. Read the shown tokens from
    :attr:`tokens`.
    """

    def __init__(self, ax, blitter: Blitter, axis: str, rotation: float = 0.0):
        if axis not in ("x", "y"):
            raise ValueError(f"axis must be 'x' (below the axes) or 'y' (left); got {axis!r}")
        self.ax, self.blitter, self.axis, self.rotation = ax, blitter, axis, rotation
        self.texts: list = []
        self._count = 0
        (ax.set_yticks if axis == "y" else ax.set_xticks)([])
        color = rcParams[f"{axis}tick.labelcolor"]
        self.color = rcParams[f"{axis}tick.color"] if color == "inherit" else color
        self.marks = ax.add_artist(Line2D(
            [], [], linestyle="none", marker=TICKLEFT if axis == "y" else TICKDOWN,
            markersize=rcParams[f"{axis}tick.major.size"], color=rcParams[f"{axis}tick.color"],
            markeredgewidth=rcParams[f"{axis}tick.major.width"], clip_on=False,
            transform=ax.get_yaxis_transform() if axis == "y" else ax.get_xaxis_transform()))
        blitter.animate(self.marks, with_tokens=True)

    @property
    def tokens(self) -> list[str]:
        return [t.get_text() for t in self.texts[: self._count]]

    def _grow(self, n: int) -> None:
        a = self.axis
        pad = rcParams[f"{a}tick.major.size"] + rcParams[f"{a}tick.major.pad"]  # direction out
        if a == "y":
            transform, va, ha = self.ax.get_yaxis_text1_transform(pad)
        else:
            transform, va, ha = self.ax.get_xaxis_text1_transform(pad)
        new = [self.ax.add_artist(_StampedText(*((0, i) if a == "y" else (i, 0)), "",
                                               transform=transform, va=va, ha=ha,
                                               rotation=self.rotation, color=self.color,
                                               clip_on=False, stamps=self.blitter.stamps))
               for i in range(len(self.texts), n)]
        self.blitter.animate(*new, with_tokens=True)
        self.texts.extend(new)

    def set(self, tokens: Sequence[str], fontsize: float) -> None:
        """Show ``tokens`` at positions 0, 1, ... of the axis."""
        n = len(tokens)
        if self.tokens == list(tokens) and all(t.get_fontsize() == fontsize
                                               for t in self.texts[:n]):
            return
        if n > len(self.texts):
            self._grow(n)
        for i, t in enumerate(self.texts):
            if i < n:
                t.set_text(tokens[i])
                if t.get_fontsize() != fontsize:
                    t.set_fontsize(fontsize)
            t.set_visible(i < n)
        self._count = n
        at, zeros = np.arange(n), np.zeros(n)
        self.marks.set_data((zeros, at) if self.axis == "y" else (at, zeros))
        self.blitter.tokens_changed()


def _bar_verts(heights) -> list:
    """Corners of bars 0.8 wide at x = 0, 1, ..., for a PolyCollection (cheaper than bar())."""
    return [[(i - 0.4, 0), (i - 0.4, h), (i + 0.4, h), (i + 0.4, 0)]
            for i, h in enumerate(heights)]


def _spines(axes) -> list:
    """The frames of ``axes``, to be animated along with images drawn inside them."""
    return [spine for ax in axes for spine in ax.spines.values()]


def _pin_labels(ax, x_label: float | None = None, y_label: float | None = None) -> None:
    """Fix the axis labels at the given axes coordinates and the title just above the axes.

    Left to itself, matplotlib places them by measuring every tick label on each draw, which
    costs more than drawing them for 64 tokens.
    """
    if x_label is not None:
        ax.xaxis.set_label_coords(0.5, x_label)
    if y_label is not None:
        ax.yaxis.set_label_coords(y_label, 0.5)
    ax.set_title(ax.get_title(), y=1.0, pad=6)


def _label_size(n: int) -> float:
    """Tick-label font size that stays legible for short inputs and fits long ones; whole
    points, so that a few tokens more or less keep the same size (and the stamped labels)."""
    return float(np.clip(round(14 - n / 6), 7, 12))


# ---------------------------------------------------------------------------------------------
# Input representation
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EmbeddingParts:
    """The three embeddings of each token and the encoder's input; arrays are (T, H)."""

    tokens: list[str]
    token: np.ndarray
    segment: np.ndarray
    position: np.ndarray
    total: np.ndarray
    normalised: bool = False  # True when ``total`` is LayerNorm(sum), as in original BERT

    def __post_init__(self):
        shapes = [np.shape(p) for p in self.panels()]
        T = len(self.tokens)
        if T == 0 or any(shape != (T, shapes[0][-1]) for shape in shapes) or not shapes[0][-1]:
            raise ValueError(f"token, segment, position and total must all be (T, H) arrays with "
                             f"T = {T} tokens and H >= 1; got shapes {shapes}")

    def panels(self) -> list[np.ndarray]:
        return [self.token, self.segment, self.position, self.total]


class EmbeddingPlot:
    """Four (T, H) heatmaps side by side, rows labelled with the tokens, one colour scale.

    Only the images, the token labels and the colour bar change with the text; the rest is a
    background redrawn only when the figure's height changes (in steps of 16 tokens).
    """

    def __init__(self, lang: str | None = None):
        self.lang = resolve_language(lang)
        self.figure = new_figure(12, 4)
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
        self.blitter = Blitter(self.figure)
        # The frames too, drawn after the images as in a full draw: an image would cover them.
        self.blitter.animate(*self.images, *_spines(self.axes), self.colorbar.ax)
        self.token_labels = TokenLabels(self.axes[0], self.blitter, "y")

    def update(self, parts: EmbeddingParts) -> Figure:
        T, H = parts.token.shape
        # The height grows in steps of 16 tokens: within a step only the (animated) images and
        # labels change and the background is kept; a new height redraws everything (~110 ms
        # at 64 tokens against ~65 ms, see benchmarks/README.md).
        height = min(max(2.5, 0.16 * 16 * math.ceil(T / 16) + 1.4), 12)
        if self.figure.get_figheight() != height:
            self.figure.set_size_inches(12, height)
            self.figure.subplots_adjust(bottom=0.55 / height, top=1 - 0.4 / height)
            for ax in self.axes:  # the Blitter redraws the background at the new size
                _pin_labels(ax, x_label=-0.4 / ((1 - 0.95 / height) * height))
        for ax in self.axes:
            ax.set_ylim(T - 0.5, -0.5)
        self.token_labels.set(parts.tokens, _label_size(T))
        keys = ["emb_token", "emb_segment", "emb_position",
                "emb_sum_norm" if parts.normalised else "emb_sum"]
        limit = max(float(np.abs(p).max()) for p in parts.panels()) or 1.0
        for ax, im, data, key in zip(self.axes, self.images, parts.panels(), keys, strict=True):
            im.set_data(data)
            im.set_extent((-0.5, H - 0.5, T - 0.5, -0.5))
            im.set_clim(-limit, limit)
            if ax.get_xlim() != (-0.5, H - 0.5) or ax.get_title() != text(key, self.lang):
                ax.set_xlim(-0.5, H - 0.5)
                ax.set_title(text(key, self.lang), y=1.0, pad=6)
                self.blitter.invalidate()  # both are part of the background
        return self.figure

    def png(self) -> bytes:
        return self.blitter.png()


def plot_input_representation(parts: EmbeddingParts, lang: str | None = None) -> Figure:
    """Token, segment and position embeddings and the encoder input, as heatmaps."""
    plot = EmbeddingPlot(lang)
    plot.update(parts)
    return plot.blitter.still()


# ---------------------------------------------------------------------------------------------
# Masking
# ---------------------------------------------------------------------------------------------


class ChipsPlot:
    """Tokens as grey chips; a selected chip gets an outline and a band in its fate's colour
    saying what the model sees instead.

    Only the outlines, bands and texts are redrawn (stamped texts, and only the selected
    outlines and bands), so a resample costs little; the grey chips themselves are background,
    redrawn only when their number changes.
    """

    def __init__(self, lang: str | None = None):
        self.lang = resolve_language(lang)
        self.figure = new_figure(11, 2)
        self.ax = self.figure.add_axes((0.01, 0.01, 0.98, 0.8))
        self.ax.set_axis_off()
        handles = [Patch(facecolor=FATE_COLORS[f], label=text(FATE_KEYS[f], self.lang))
                   for f in Fate]
        handles.append(Patch(facecolor=NOT_SELECTED_COLOR, edgecolor="#999999",
                             label=text("fate_none", self.lang)))
        self.legend = self.figure.legend(handles=handles, loc="upper center", ncol=4,
                                         frameon=False, fontsize=11, bbox_to_anchor=(0.5, 0.93))
        self.title = self.figure.suptitle("", fontsize=13, y=0.995)
        self.blitter = Blitter(self.figure)
        self.blitter.animate(self.title)
        self.top_texts: list = []  # the original tokens
        self.outlines: list[FancyBboxPatch] = []
        self.bands: list[FancyBboxPatch] = []
        self.bottom_texts: list = []  # what the model sees at selected positions
        self.fates: list[Fate | None] = []

    def _layout(self, n: int) -> None:
        """Build ``n`` chips; their token texts are filled in by :meth:`update`."""
        for artist in self.ax.patches[:] + self.ax.texts[:]:
            artist.remove()
        self.blitter.forget(*self.top_texts, *self.outlines, *self.bands, *self.bottom_texts)
        self.blitter.invalidate()
        rows = max(1, math.ceil(n / CHIP_COLUMNS))
        height = 0.75 * rows + 0.9
        self.figure.set_size_inches(11, height)
        self.ax.set_position((0.01, 0.01, 0.98, (0.75 * rows) / height))
        self.ax.set_xlim(0, CHIP_COLUMNS)
        self.ax.set_ylim(rows, 0)
        box = "round,pad=0,rounding_size=0.12"
        self.top_texts, self.outlines, self.bands, self.bottom_texts = [], [], [], []
        # add_artist, not add_patch: the limits are fixed, and updating them per patch is slow.
        for i in range(n):
            x, y = i % CHIP_COLUMNS + 0.05, i // CHIP_COLUMNS + 0.08
            self.ax.add_artist(FancyBboxPatch((x, y), 0.9, 0.84, boxstyle=box, linewidth=1,
                                              facecolor=NOT_SELECTED_COLOR, edgecolor="#999999"))
            self.top_texts.append(self.ax.add_artist(_StampedText(
                x + 0.45, y + 0.24, "", ha="center", va="center", fontsize=12, color="#222222",
                stamps=self.blitter.stamps)))
            self.bands.append(self.ax.add_artist(FancyBboxPatch(
                (x + 0.06, y + 0.46), 0.78, 0.32, boxstyle="round,pad=0,rounding_size=0.08",
                linewidth=0)))
            self.outlines.append(self.ax.add_artist(FancyBboxPatch(
                (x, y), 0.9, 0.84, boxstyle=box, linewidth=3, fill=False)))
            self.bottom_texts.append(self.ax.add_artist(_StampedText(
                x + 0.45, y + 0.62, "", ha="center", va="center", fontsize=10,
                stamps=self.blitter.stamps)))
        # All animated and in the order of a full draw (chip by chip, then by z-order): a long
        # token's text lies over its chip's outline. Stamped, the texts cost little.
        self.blitter.animate(*(artist for chip in zip(self.top_texts, self.bands, self.outlines,
                                                       self.bottom_texts, strict=True)
                               for artist in chip))

    def update(self, tokens: Sequence[str], shown: Sequence[str], fates: Sequence[Fate | None],
               title: str = "") -> Figure:
        """tokens: the original sequence; shown: what the model sees; fates: one per token,
        None for positions not selected."""
        if not len(tokens) == len(shown) == len(fates):
            raise ValueError(f"tokens, shown and fates must have one entry per token; got "
                             f"{len(tokens)}, {len(shown)}, {len(fates)}")
        if len(tokens) != len(self.top_texts):
            self._layout(len(tokens))
        for top, tok in zip(self.top_texts, tokens, strict=True):
            top.set_text(tok)
        self.fates = list(fates)
        for outline, band, bottom, seen, fate in zip(
                self.outlines, self.bands, self.bottom_texts, shown, fates, strict=True):
            selected = fate is not None
            for artist in (outline, band, bottom):
                artist.set_visible(selected)
            if selected:
                outline.set_edgecolor(FATE_COLORS[fate])
                band.set_facecolor(FATE_COLORS[fate])
                bottom.set_text(f"→ {seen}")
                bottom.set_color(FATE_TEXT_COLORS[fate])
        self.title.set_text(title)
        return self.figure

    def png(self) -> bytes:
        return self.blitter.png()


def plot_mask_chips(tokens: Sequence[str], shown: Sequence[str],
                    fates: Sequence[Fate | None], title: str = "",
                    lang: str | None = None) -> Figure:
    """One masking draw as coloured chips, with a legend of the four fates."""
    plot = ChipsPlot(lang)
    plot.update(tokens, shown, fates, title)
    return plot.blitter.still()


@dataclass(frozen=True)
class MaskTally:
    """Counts over ``samples`` masking draws of one sequence.

    selection_counts: (T,) how often each position was selected; fate_counts: (samples, 3)
    cumulative counts of MASK/RANDOM/KEEP after each draw; selected/candidates: positions chosen
    per draw out of the maskable ones.
    """

    tokens: list[str]
    selection_counts: np.ndarray
    fate_counts: np.ndarray
    selected: int
    candidates: int

    def __post_init__(self):
        T = len(self.tokens)
        if T == 0 or np.shape(self.selection_counts) != (T,):
            raise ValueError(f"selection_counts must be ({T},), one count per token, with at "
                             f"least one token; got {np.shape(self.selection_counts)}")
        shape = np.shape(self.fate_counts)
        if len(shape) != 2 or shape[0] < 1 or shape[1] != len(Fate):
            raise ValueError(f"fate_counts must be (samples >= 1, {len(Fate)}); got {shape}")
        if not 1 <= self.selected <= self.candidates <= T:
            raise ValueError(f"need 1 <= selected <= candidates <= {T} tokens; got selected="
                             f"{self.selected}, candidates={self.candidates}")

    @property
    def samples(self) -> int:
        return int(self.fate_counts.shape[0])

    @property
    def selection_fractions(self) -> np.ndarray:
        return self.selection_counts / self.samples

    @property
    def fate_fractions(self) -> np.ndarray:
        """(samples, 3): running fraction of each fate among the tokens selected so far."""
        return self.fate_counts / self.fate_counts.sum(axis=1, keepdims=True)


class TallyPlot:
    """How often each position was selected over many masking draws, and the running shares
    of the three fates, each with its expected value as a dashed line.

    Redrawn in place: the bars, curves, expected selection rate, legend and token labels are
    animated; the background changes only with the number of draws (the log-scaled x axis) or
    the selection axis's range, which moves in steps of 0.1.
    """

    def __init__(self, lang: str | None = None):
        self.lang = resolve_language(lang)
        self.figure = new_figure(12, 4.2)
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
        self.ax_fate.set_xscale("log")
        self.ax_fate.set_ylim(0, 1)
        self.ax_fate.set_xlabel(text("tally_resample_axis", self.lang))
        self.ax_fate.set_ylabel(text("tally_fraction", self.lang))
        self.fate_title = self.ax_fate.set_title("")
        fate_legend = self.ax_fate.legend(loc="center right", fontsize=9)
        self.blitter = Blitter(self.figure)
        # The reference lines and legends too, in the order of a full draw: over the curves.
        self.blitter.animate(self.bars, self.expected, self.legend, *self.curves.values(),
                             *references, fate_legend, self.fate_title,
                             *_spines([self.ax_sel, self.ax_fate]))
        self.token_labels = TokenLabels(self.ax_sel, self.blitter, "x", rotation=90)

    def update(self, tally: MaskTally) -> Figure:
        T, fractions = len(tally.tokens), tally.selection_fractions
        self.bars.set_verts(_bar_verts(fractions))
        self.ax_sel.set_xlim(-0.5, T - 0.5)
        self.token_labels.set(tally.tokens, _label_size(T))
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

    def png(self) -> bytes:
        return self.blitter.png()


def plot_mask_tally(tally: MaskTally, lang: str | None = None) -> Figure:
    """Selection frequency per position and the running 80/10/10 fractions, with the expected
    values as dashed reference lines."""
    plot = TallyPlot(lang)
    plot.update(tally)
    return plot.blitter.still()


# ---------------------------------------------------------------------------------------------
# Attention
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AttentionView:
    """What one attention heatmap shows: (T, T) weights, rows = queries, columns = keys.

    boundary: index of the first sentence-B token among ``tokens``, or None without B.
    """

    weights: np.ndarray
    tokens: list[str]
    boundary: int | None = None
    query: int = 0
    title: str = ""
    note: str = ""


class AttentionPlot:
    """A token x token heatmap with the A/B boundary marked and, beneath it sharing the key
    axis, a bar chart of the chosen query token's row."""

    def __init__(self, lang: str | None = None):
        self.lang = resolve_language(lang)
        self.figure = new_figure(9, 9)
        # Placed by hand (see _layout) so the bars line up with the heatmap's columns; the
        # heatmap has no x tick labels of its own: the bars' labels below name the keys.
        self.ax_map = self.figure.add_axes((0, 0, 1, 1))
        self.ax_row = self.figure.add_axes((0, 0, 1, 1))
        self.cax = self.figure.add_axes((0, 0, 1, 1))
        self.ax_map.set_xticks([])
        self.image = self.ax_map.imshow(np.zeros((1, 1)), cmap="viridis", vmin=0,
                                        interpolation="nearest", aspect="auto")
        self.colorbar = self.figure.colorbar(self.image, cax=self.cax)
        self.colorbar.set_label(text("weight", self.lang))
        line = {"color": BOUNDARY_COLOR, "linewidth": 2}
        self.hline = self.ax_map.axhline(0, **line)
        self.vline = self.ax_map.axvline(0, **line)
        self.row_vline = self.ax_row.axvline(0, **line)
        self.highlight = Rectangle((-0.5, -0.5), 1, 1, fill=False, edgecolor="#E69F00",
                                   linewidth=2.5)
        self.ax_map.add_patch(self.highlight)
        self.ax_map.set_ylabel(text("query_axis", self.lang))
        self.ax_row.set_ylabel(text("weight", self.lang))
        self.ax_row.set_xlabel(text("key_axis", self.lang))
        self.ax_row.set_yticks([])  # the y scale follows the row; the peak is written instead
        self.peak = self.ax_row.text(0.995, 0.92, "", transform=self.ax_row.transAxes,
                                     ha="right", va="top", fontsize=10)
        self.note = self.figure.text(0.01, 0.005, "", fontsize=9, color="#555555")
        # One collection, not T Rectangles: ax.bar costs more than the whole redraw.
        self.bars = PolyCollection([], facecolors="#0072B2")
        self.ax_row.add_collection(self.bars, autolim=False)
        self.row_values = np.zeros(0)
        self.blitter = Blitter(self.figure)
        self.blitter.animate(self.image, self.hline, self.vline, self.row_vline, self.highlight,
                             self.colorbar.ax, self.ax_map.title, self.ax_row.title, self.peak,
                             self.note, self.bars, *_spines([self.ax_map, self.ax_row]))
        self.query_labels = TokenLabels(self.ax_map, self.blitter, "y")
        self.key_labels = TokenLabels(self.ax_row, self.blitter, "x", rotation=90)
        self._length: int | None = None

    def _layout(self, T: int) -> None:
        """Size and place everything for T tokens; the background is redrawn only when the
        figure's size changes."""
        # Inches of heatmap, in steps of 8 tokens: a new size redraws the whole figure.
        side = min(max(3.5, 0.8 * math.ceil(T / 8) + 2.5), 8.0)
        margin, below, bar_h, gap, top, right = 1.5, 1.3, 0.22 * side + 0.6, 0.5, 0.5, 1.1
        width, height = margin + side + right, below + bar_h + gap + side + top
        self.figure.set_size_inches(width, height)  # a new size: the Blitter redraws all
        self.ax_map.set_position((margin / width, (below + bar_h + gap) / height,
                                  side / width, side / height))
        self.ax_row.set_position((margin / width, below / height, side / width, bar_h / height))
        self.cax.set_position(((margin + side + 0.15) / width, (below + bar_h + gap) / height,
                               0.18 / width, side / height))
        for ax in (self.ax_map, self.ax_row):
            ax.set_xlim(-0.5, T - 0.5)
        self.ax_map.set_ylim(T - 0.5, -0.5)
        _pin_labels(self.ax_map, y_label=-(margin - 0.3) / side)
        _pin_labels(self.ax_row, x_label=-(below - 0.3) / bar_h, y_label=-(margin - 0.3) / side)
        self.highlight.set_width(T)
        self._length = T

    def update(self, view: AttentionView) -> Figure:
        weights = np.asarray(view.weights)
        T = len(view.tokens)
        if weights.shape != (T, T):
            raise ValueError(f"weights must be (T, T) with T={T} tokens; got {weights.shape}")
        if not 0 <= view.query < T:
            raise ValueError(f"query must be a token index in [0, {T - 1}]; got {view.query}")
        if self._length != T:
            self._layout(T)
        for labels in (self.query_labels, self.key_labels):
            labels.set(view.tokens, _label_size(T))
        vmax = float(weights.max()) or 1.0
        self.image.set_data(weights)
        self.image.set_extent((-0.5, T - 0.5, T - 0.5, -0.5))
        self.image.set_clim(0, vmax)
        row = weights[view.query]
        self.row_values = row
        self.bars.set_verts(_bar_verts(row))
        self.ax_row.set_ylim(0, vmax * 1.05)
        self.peak.set_text(f"max {row.max():.3f}")
        self.highlight.set_y(view.query - 0.5)
        has_boundary = view.boundary is not None and 0 < view.boundary < T
        for line in (self.hline, self.vline, self.row_vline):
            line.set_visible(has_boundary)
        if has_boundary:
            edge = view.boundary - 0.5
            self.hline.set_ydata([edge, edge])
            self.vline.set_xdata([edge, edge])
            self.row_vline.set_xdata([edge, edge])
        self.ax_map.set_title(view.title, y=1.0, pad=6)
        self.ax_row.set_title(text("attends_title", self.lang, token=view.tokens[view.query]),
                              fontsize=11, y=1.0, pad=4)
        self.note.set_text(view.note)
        return self.figure

    def png(self) -> bytes:
        return self.blitter.png()


def plot_attention(view: AttentionView, lang: str | None = None) -> Figure:
    """One head's (or the mean) attention heatmap with the query token's row as bars."""
    plot = AttentionPlot(lang)
    plot.update(view)
    return plot.blitter.still()


class AllHeadsPlot:
    """Small multiples: every head of one layer and their mean, on one colour scale."""

    def __init__(self, num_heads: int, lang: str | None = None):
        self.lang = resolve_language(lang)
        self.num_panels = num_heads + 1
        self.cols = min(4, self.num_panels)
        self.rows = math.ceil(self.num_panels / self.cols)
        height = 3.4 * self.rows + 1.0
        self.figure = new_figure(3.2 * self.cols + 1.8, height)
        self.figure.subplots_adjust(left=1.0 / (3.2 * self.cols + 1.8), right=0.88,
                                    top=1 - 0.75 / height, bottom=0.9 / height, wspace=0.15,
                                    hspace=0.35)
        axes = self.figure.subplots(self.rows, self.cols, squeeze=False)
        self.axes = list(axes.flat)
        for ax in self.axes[self.num_panels:]:
            ax.set_visible(False)
        self.axes = self.axes[: self.num_panels]
        self.images = [ax.imshow(np.zeros((1, 1)), cmap="viridis", vmin=0, aspect="auto",
                                 interpolation="nearest") for ax in self.axes]
        for i, ax in enumerate(self.axes):
            is_mean = i == num_heads
            ax.set_xticks([])  # the outer panels get TokenLabels below
            ax.set_yticks([])
            ax.set_title(text("mean_heads" if is_mean else "head_name", self.lang, head=i),
                         y=1.0, pad=4)
        cax = self.figure.add_axes((0.9, 0.9 / height, 0.015, 1 - 1.65 / height))
        self.colorbar = self.figure.colorbar(self.images[0], cax=cax)
        self.colorbar.set_label(text("weight", self.lang))
        self.suptitle = self.figure.suptitle("")
        self.blitter = Blitter(self.figure)
        self.blitter.animate(*self.images, self.colorbar.ax, self.suptitle,
                             *_spines(self.axes))
        # Labels only on the outer panels (the single-head view has them all).
        self.token_labels = [
            *(TokenLabels(ax, self.blitter, "y") for i, ax in enumerate(self.axes)
              if i % self.cols == 0),
            *(TokenLabels(ax, self.blitter, "x", rotation=90) for i, ax in enumerate(self.axes)
              if i + self.cols >= self.num_panels),
        ]

    def update(self, weights: np.ndarray, tokens: list[str], layer: int) -> Figure:
        """weights: (num_heads, T, T) for one layer; the mean over heads is added here."""
        weights = np.asarray(weights)
        T = len(tokens)
        if weights.shape != (self.num_panels - 1, T, T):
            raise ValueError(f"weights must be (num_heads={self.num_panels - 1}, T, T) with "
                             f"T={T}; got {weights.shape}")
        panels = [*weights, weights.mean(axis=0)]
        labelled = T <= 32  # beyond that the labels would not be legible
        for ax in self.axes:  # only the animated images and labels depend on T
            ax.set_xlim(-0.5, T - 0.5)
            ax.set_ylim(T - 0.5, -0.5)
        for labels in self.token_labels:
            labels.set(tokens if labelled else [], _label_size(T) - 2)
        vmax = float(max(p.max() for p in panels)) or 1.0
        for im, data in zip(self.images, panels, strict=True):
            im.set_data(data)
            im.set_extent((-0.5, T - 0.5, T - 0.5, -0.5))
            im.set_clim(0, vmax)
        self.suptitle.set_text(text("all_heads_title", self.lang, layer=layer))
        return self.figure

    def png(self) -> bytes:
        return self.blitter.png()


def plot_all_heads(weights: np.ndarray, tokens: list[str], layer: int,
                   lang: str | None = None) -> Figure:
    """Every head of one layer plus their mean. weights: (num_heads, T, T)."""
    plot = AllHeadsPlot(np.asarray(weights).shape[0], lang)
    plot.update(weights, tokens, layer)
    return plot.blitter.still()


# ---------------------------------------------------------------------------------------------
# Next-sentence prediction
# ---------------------------------------------------------------------------------------------


class NSPPlot:
    """Two horizontal bars, P(NotNext) and P(IsNext), with 0.5 marked."""

    def __init__(self, lang: str | None = None):
        self.lang = resolve_language(lang)
        self.figure = new_figure(8, 2.4)
        self.figure.subplots_adjust(left=0.2, right=0.95, top=0.8, bottom=0.25)
        self.ax = self.figure.add_subplot()
        labels = [text("not_next", self.lang), text("is_next", self.lang)]
        self.bars = self.ax.barh([0, 1], [0, 0], color=["#E69F00", "#0072B2"],
                                 tick_label=labels)
        self.values = [self.ax.text(0, i, "", va="center", fontsize=12) for i in range(2)]
        self.half = self.ax.axvline(0.5, color="black", linestyle="--", linewidth=1)
        self.ax.set_xlim(0, 1)
        self.ax.set_xlabel(text("probability", self.lang))
        self.ax.tick_params(axis="y", labelsize=12)
        self.probabilities = np.zeros(2)
        self.blitter = Blitter(self.figure)
        # The 0.5 line and the frame too: a full draw puts them over the bars.
        self.blitter.animate(*self.bars, *self.values, self.ax.title, self.half,
                             *_spines([self.ax]))

    def update(self, probabilities: Sequence[float]) -> Figure:
        """probabilities: (P(NotNext), P(IsNext)), bertlib's label order (1 = IsNext)."""
        probs = np.asarray(probabilities, dtype=float)
        if probs.shape != (2,) or not np.isclose(probs.sum(), 1.0):
            raise ValueError(f"probabilities must be two numbers summing to 1; got {probs}")
        self.probabilities = probs
        for bar, label, p in zip(self.bars, self.values, probs, strict=True):
            bar.set_width(p)
            label.set_position((min(p, 0.88) + 0.01, label.get_position()[1]))
            label.set_text(f"{p:.3f}")
        self.ax.set_title(text("nsp_title", self.lang, p=probs[1]))
        return self.figure

    def png(self) -> bytes:
        return self.blitter.png()


def plot_nsp(probabilities: Sequence[float], lang: str | None = None) -> Figure:
    """The NSP head's two probabilities as bars."""
    plot = NSPPlot(lang)
    plot.update(probabilities)
    return plot.blitter.still()


# ---------------------------------------------------------------------------------------------
# Similarity
# ---------------------------------------------------------------------------------------------


def plot_similarity(matrix, row_labels: Sequence[str], col_labels: Sequence[str],
                    title: str | None = None, lang: str | None = None) -> Figure:
    """A cosine-similarity heatmap on a fixed [-1, 1] scale, each value written in its cell.

    matrix: (R, C) array-like; row_labels: R strings; col_labels: C strings.
    """
    lang = resolve_language(lang)
    values = np.asarray(matrix, dtype=float)
    if values.ndim != 2 or values.size == 0:
        raise ValueError(f"matrix must be a non-empty 2-D array; got shape {values.shape}")
    R, C = values.shape
    if len(row_labels) != R or len(col_labels) != C:
        raise ValueError(f"need one label per row and column: matrix is {R}x{C}, got "
                         f"{len(row_labels)} row labels and {len(col_labels)} column labels")
    tolerance = 1e-4  # cosine similarities computed in float32 can overshoot 1 slightly
    if not np.isfinite(values).all() or np.abs(values).max() > 1 + tolerance:
        raise ValueError("matrix must hold cosine similarities: finite values in [-1, 1]")
    fig = new_figure(max(4.0, 1.0 * C + 2.5), max(3.0, 0.6 * R + 1.8))
    fig.set_layout_engine("constrained")
    ax = fig.add_subplot()
    image = ax.imshow(values, cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto")
    for (r, c), v in np.ndenumerate(values):
        ax.text(c, r, f"{v:.2f}", ha="center", va="center", fontsize=11,
                color="white" if abs(v) > 0.6 else "black")
    ax.set_xticks(range(C), list(col_labels), rotation=30, ha="right")
    ax.set_yticks(range(R), list(row_labels))
    ax.set_title(text("similarity_title", lang) if title is None else title)
    fig.colorbar(image, ax=ax).set_label(text("similarity_title", lang))
    return fig


__all__ = [
    "DPI",
    "FATE_COLORS",
    "SEGMENT_COLORS",
    "AllHeadsPlot",
    "AttentionPlot",
    "AttentionView",
    "Blitter",
    "ChipsPlot",
    "EmbeddingParts",
    "EmbeddingPlot",
    "MaskTally",
    "NSPPlot",
    "TallyPlot",
    "TokenLabels",
    "encode_png",
    "figure_png",
    "new_figure",
    "plot_all_heads",
    "plot_attention",
    "plot_input_representation",
    "plot_mask_chips",
    "plot_mask_tally",
    "plot_nsp",
    "plot_similarity",
]

"""What keeps the widgets under 100 ms a redraw, changing only how fast ordinary matplotlib
artists reach the screen (benchmarks/README.md measures each piece): :class:`Blitter` redraws
what changes over cached backgrounds; the text classes paste pre-rendered text."""

from __future__ import annotations

import math
import struct
import zlib
from collections.abc import Sequence

import matplotlib
import numpy as np
from matplotlib import rcParams
from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg
from matplotlib.figure import Figure
from matplotlib.font_manager import findfont, get_font
from matplotlib.ft2font import LoadFlags
from matplotlib.lines import Line2D
from matplotlib.markers import TICKDOWN, TICKLEFT
from matplotlib.text import Text
from matplotlib.transforms import Affine2D, IdentityTransform

from bertlib.viz.fonts import add_cjk_fallback
from bertlib.viz.style import literal


def _png_chunk(tag: bytes, data: bytes) -> bytes:
    return (struct.pack(">I", len(data)) + tag + data
            + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF))


def encode_png(rgba: np.ndarray, dpi: float | None = None) -> bytes:
    """An (h, w, 4) RGBA array as an RGB PNG (with ``dpi``: a pHYs chunk). By hand: no row
    filter and zlib level 1 take half of Pillow's time for these flat-coloured figures."""
    h, w = rgba.shape[:2]
    rows = np.empty((h, 1 + 3 * w), dtype=np.uint8)
    rows[:, 0] = 0  # filter type "None" for every row
    rows[:, 1:].reshape(h, w, 3)[...] = rgba[:, :, :3]
    header = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)  # 8-bit RGB, not interlaced
    density = b"" if dpi is None else _png_chunk(b"pHYs", struct.pack(
        ">IIB", *(2 * [round(dpi / 0.0254)]), 1))
    return (b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", header) + density
            + _png_chunk(b"IDAT", zlib.compress(rows.data, 1)) + _png_chunk(b"IEND", b""))


def canvas_png(canvas: FigureCanvasAgg, dpi: float | None = None) -> bytes:
    return encode_png(np.asarray(canvas.buffer_rgba()), dpi)


class Blitter:
    """Redraws a figure's animated artists over cached layers: the background (until
    :meth:`invalidate` or a new size), the token layer (``with_tokens=True``, until
    :meth:`tokens_changed`; nothing animated may overlap it), then the rest, in z-order."""

    def __init__(self, fig: Figure):
        self.figure = fig
        self.artists: list = []
        self.token_artists: list = []
        self.stamps: dict = {}  # rendered texts of this figure, see StampedText
        self._background = None
        self._backgrounds: dict[tuple, object] = {}
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

    MAX_BACKGROUNDS = 4  # a few MB each at 64 tokens on screen, up to 10 MB at 120 dpi

    def invalidate(self) -> None:
        self._background = self._with_tokens = None
        self._backgrounds.clear()

    def tokens_changed(self) -> None:
        self._with_tokens = None

    def save(self, fname, **kwargs) -> None:  # savefig, the animated artists included
        animated = self.artists + self.token_artists
        for artist in animated:
            artist.set_animated(False)
        try:
            # Text stays text: editable in SVG, embedded TrueType in PDF (for this call only).
            with matplotlib.rc_context({"svg.fonttype": "none", "pdf.fonttype": 42}):
                self.figure.savefig(fname, **kwargs)
        finally:
            for artist in animated:
                artist.set_animated(True)
            self.invalidate()

    def still(self) -> Figure:
        """The figure with nothing animated (savefig would leave those out), for plot_*."""
        for artist in self.artists + self.token_artists:
            artist.set_animated(False)
        self.artists, self.token_artists = [], []
        self.invalidate()
        return self.figure

    def _draw(self, artists: list) -> None:
        renderer = self.figure.canvas.get_renderer()
        for artist in sorted(artists, key=lambda a: a.get_zorder()):  # stable: ties keep order
            if not artist.get_visible():
                continue
            if type(artist) is Text:  # titles and notes, stamped: they rarely move
                add_cjk_fallback(artist)
                draw_stamped(artist, renderer, self.stamps, same_subpixel=True)
            else:
                self.figure.draw_artist(artist)

    def png(self, dpi: float | None = None) -> bytes:
        """The figure as PNG, redrawing only what changed (with ``dpi``: for saving)."""
        canvas = self.figure.canvas
        if dpi is not None:  # over the background kept for that size, then back
            shown = self.figure.dpi
            self.figure.set_dpi(dpi)
            try:
                canvas.restore_region(self._background_now())
                self._draw(self.token_artists)
                self._draw(self.artists)
                return canvas_png(canvas, dpi)
            finally:
                self.figure.set_dpi(shown)
        background = self._background_now()
        if background is not self._background:
            self._background, self._with_tokens = background, None
        if self._with_tokens is None:
            canvas.restore_region(self._background)
            self._draw(self.token_artists)
            self._with_tokens = (canvas.copy_from_bbox(self.figure.bbox) if self.token_artists
                                 else self._background)
        canvas.restore_region(self._with_tokens)
        self._draw(self.artists)
        return canvas_png(canvas)

    def _background_now(self):
        canvas = self.figure.canvas
        size = (*canvas.get_width_height(physical=True), self.figure.dpi)
        background = self._backgrounds.get(size)
        if background is None:
            canvas.draw()  # everything but the animated artists
            background = canvas.copy_from_bbox(self.figure.bbox)
            if len(self._backgrounds) >= self.MAX_BACKGROUNDS:
                self._backgrounds.clear()
            self._backgrounds[size] = background
        return background


class StampedText(Text):
    """A Text rendered once per string, font, angle, colour and dpi, then pasted: a label costs
    ~1 ms to render, and a new sentence reuses most tokens. PDF and SVG draw it normally."""

    MAX_STAMPS = 4096  # per figure; then the cache starts again (a stamp is a few kB)

    def __init__(self, *args, stamps: dict, **kwargs):
        super().__init__(*args, **kwargs)
        self._stamps = stamps  # the figure's, Blitter.stamps

    def draw(self, renderer) -> None:
        if isinstance(renderer, RendererAgg):
            draw_stamped(self, renderer, self._stamps)
        else:
            super().draw(renderer)


def draw_stamped(text: Text, renderer: RendererAgg, stamps: dict, *,
                 same_subpixel: bool = False) -> None:
    """Paste ``text``'s stamp (``same_subpixel``: one per pixel fraction, exactly in place)."""
    if not text.get_visible() or not text.get_text():
        return
    at = text.get_transform().transform(text.get_unitless_position())
    x, y = (round(v) for v in at)
    key = (text.get_text(), text.get_fontproperties(), text.get_rotation(), text.get_color(),
           text.get_horizontalalignment(), text.get_verticalalignment(), renderer.dpi,
           tuple(np.round((at - (x, y)) * 64)) if same_subpixel else None)
    stamp = stamps.get(key)
    if stamp is None:
        if len(stamps) >= StampedText.MAX_STAMPS:
            stamps.clear()
        stamp = stamps[key] = _render_alone(text, renderer, x, y)
    pixels, dx, dy = stamp
    gc = renderer.new_gc()
    text._set_gc_clip(gc)
    renderer.draw_image(gc, x + dx, y + dy, pixels)
    gc.restore()
    text.stale = False


def _render_alone(text: Text, renderer: RendererAgg, x: int, y: int,
                  ) -> tuple[np.ndarray, int, int]:
    """The text drawn alone: RGBA pixels, and their bottom-left corner relative to (x, y)."""
    x0, y0, x1, y1 = text.get_window_extent(renderer).padded(2).extents  # y upwards
    x0, y0 = math.floor(x0), math.floor(y0)
    scratch = RendererAgg(math.ceil(x1) - x0, math.ceil(y1) - y0, renderer.dpi)
    # Shifted by whole pixels, so the glyphs keep their sub-pixel placement.
    transform, clip_on = text.get_transform(), text.get_clip_on()
    text.set_transform(transform + Affine2D().translate(-x0, -y0))
    text.set_clip_on(False)
    try:
        Text.draw(text, scratch)
    finally:
        text.set_transform(transform)
        text.set_clip_on(clip_on)
    # Buffer rows run top-down; draw_image wants them bottom-up.
    return np.asarray(scratch.buffer_rgba())[::-1].copy(), x0 - x, y0 - y


class NumberText(Text):
    """A number pasted from stamps of its characters, on its baseline: numbers change every
    update, and whole-string stamps cost ~1 ms each. PDF and SVG draw it normally."""

    def __init__(self, *args, stamps: dict, **kwargs):
        super().__init__(*args, va="baseline", **kwargs)
        self._stamps = stamps  # the figure's, Blitter.stamps

    def draw(self, renderer) -> None:
        if not isinstance(renderer, RendererAgg):
            super().draw(renderer)
            return
        string = self.get_text()
        if not self.get_visible() or not string:
            return
        prop, color = self.get_fontproperties(), self.get_color()
        glyphs = [self._glyph(c, prop, color, renderer) for c in string]
        width = sum(advance for _, advance in glyphs)
        x, y = self.get_transform().transform(self.get_unitless_position())
        x -= {"left": 0.0, "center": width / 2, "right": width}[self.get_horizontalalignment()]
        gc = renderer.new_gc()
        self._set_gc_clip(gc)
        for (pixels, dx, dy), advance in glyphs:
            renderer.draw_image(gc, round(x) + dx, round(y) + dy, pixels)
            x += advance
        gc.restore()
        self.stale = False

    def _glyph(self, char: str, prop, color, renderer: RendererAgg) -> tuple[tuple, float]:
        key = ("glyph", char, prop, color, renderer.dpi)
        glyph = self._stamps.get(key)
        if glyph is None:
            if len(self._stamps) >= StampedText.MAX_STAMPS:
                self._stamps.clear()
            font = get_font(findfont(prop))
            font.set_size(prop.get_size_in_points(), renderer.dpi)
            advance = font.load_char(ord(char), flags=LoadFlags.NO_HINTING).linearHoriAdvance
            alone = Text(0, 0, char, fontproperties=prop, color=color, va="baseline",
                         transform=IdentityTransform())
            alone.set_figure(self.get_figure(root=False))
            glyph = self._stamps[key] = (_render_alone(alone, renderer, 0, 0),
                                         advance / 65536)  # 16.16 fixed point
        return glyph


class TokenLabels:
    """Token labels and ticks where matplotlib puts them, fast: stamped, in the token layer."""

    def __init__(self, ax, blitter: Blitter, axis: str, rotation: float = 0.0):
        self.ax, self.blitter, self.axis, self.rotation = ax, blitter, axis, rotation
        self.texts: list = []
        self.tokens: list[str] = []  # what is shown, as given (the texts escape "$")
        (ax.set_yticks if axis == "y" else ax.set_xticks)([])
        color = rcParams[f"{axis}tick.labelcolor"]
        self.color = rcParams[f"{axis}tick.color"] if color == "inherit" else color
        self.marks = ax.add_artist(Line2D(
            [], [], linestyle="none", marker=TICKLEFT if axis == "y" else TICKDOWN,
            markersize=rcParams[f"{axis}tick.major.size"], color=rcParams[f"{axis}tick.color"],
            markeredgewidth=rcParams[f"{axis}tick.major.width"], clip_on=False,
            transform=ax.get_yaxis_transform() if axis == "y" else ax.get_xaxis_transform()))
        blitter.animate(self.marks, with_tokens=True)

    def _grow(self, n: int) -> None:
        a = self.axis
        pad = rcParams[f"{a}tick.major.size"] + rcParams[f"{a}tick.major.pad"]  # direction out
        transform, va, ha = getattr(self.ax, f"get_{a}axis_text1_transform")(pad)
        new = [self.ax.add_artist(StampedText(*((0, i) if a == "y" else (i, 0)), "",
                                               transform=transform, va=va, ha=ha,
                                               rotation=self.rotation, color=self.color,
                                               clip_on=False, stamps=self.blitter.stamps))
               for i in range(len(self.texts), n)]
        self.blitter.animate(*new, with_tokens=True)
        self.texts.extend(new)

    def set(self, tokens: Sequence[str], fontsize: float) -> None:  # at 0, 1, ... of the axis
        n = len(tokens)
        if self.tokens == list(tokens) and all(t.get_fontsize() == fontsize
                                               for t in self.texts[:n]):
            return
        if n > len(self.texts):
            self._grow(n)
        for i, t in enumerate(self.texts):
            if i < n:
                t.set_text(literal(tokens[i]))
                if t.get_fontsize() != fontsize:
                    t.set_fontsize(fontsize)
                t.set_rotation(self.rotation if len(tokens[i]) > 2 else 0.0)  # 字, "a" stand
            t.set_visible(i < n)
        self.tokens = list(tokens)
        at, zeros = np.arange(n), np.zeros(n)
        self.marks.set_data((zeros, at) if self.axis == "y" else (at, zeros))
        self.blitter.tokens_changed()


def hbar_verts(widths, half: float = 0.4) -> list:
    """Corners of horizontal bars ``2 * half`` thick at y = 0, 1, ..., from x = 0, for a
    PolyCollection (cheaper than barh())."""
    return [[(0, j - half), (w, j - half), (w, j + half), (0, j + half)]
            for j, w in enumerate(widths)]


def bar_verts(heights) -> list:  # hbar_verts turned upright: bars 0.8 wide at x = 0, 1, ...
    return [[(x, y) for y, x in bar] for bar in hbar_verts(heights)]


def heatmap(ax):
    """An image in ``ax`` for attention weights, filled by :func:`show_image`."""
    return ax.imshow(np.zeros((1, 1)), cmap="viridis", vmin=0, aspect="auto",
                     interpolation="nearest")


def show_image(image, data: np.ndarray, low: float, high: float, *, limits: bool = False) -> None:
    """2-D ``data`` in ``image``, a unit a cell, on [low, high]; with ``limits``, axes fit it."""
    extent = (-0.5, data.shape[1] - 0.5, data.shape[0] - 0.5, -0.5)
    image.set_data(data)
    image.set_extent(extent)
    image.set_clim(low, high)
    if limits:
        image.axes.set_xlim(extent[:2])
        image.axes.set_ylim(extent[2:])


def mark_boundary(boundary: int | None, across=(), down=()) -> None:
    """Lines before token ``boundary`` (None: hidden), ``across`` and ``down``."""
    for line in (*across, *down):
        line.set_visible(boundary is not None)
    if boundary is not None:
        for line in across:
            line.set_ydata([boundary - 0.5] * 2)
        for line in down:
            line.set_xdata([boundary - 0.5] * 2)


def spines(axes) -> list:
    """The frames of ``axes``, to be animated along with images drawn inside them."""
    return [spine for ax in axes for spine in ax.spines.values()]


def pin_labels(ax, x_label: float | None = None, y_label: float | None = None) -> None:
    """Pin the axis labels here and the title above the axes (else draws measure tick labels)."""
    if x_label is not None:
        ax.xaxis.set_label_coords(0.5, x_label)
    if y_label is not None:
        ax.yaxis.set_label_coords(y_label, 0.5)
    ax.set_title(ax.get_title(), y=1.0, pad=6)

"""The base of every figure that a widget redraws in place."""

from __future__ import annotations

from pathlib import Path

from matplotlib.figure import Figure

from bertlib.i18n import resolve_language
from bertlib.viz._render import Blitter
from bertlib.viz.style import new_figure

SAVE_FORMATS = ("png", "svg", "pdf")
# A saved PNG's resolution: 870 to 1,100 pixels across the widgets' 7- to 9.2-inch figures
# (wider for long inputs), enough for a slide, and saved within the widgets' 100 ms (at 150 dpi
# the input representation of 64 tokens took 100 ms, at the old 300 dpi 390 ms); dpi=300 for
# print.
SAVE_DPI = 120


class LiveFigure:
    """A figure built once and then changed in place by :meth:`update`.

    A subclass builds its axes and artists in ``__init__`` and changes only their data in
    ``update(...)``, which returns :attr:`figure`. A widget shows :meth:`png`; a notebook that
    wants the picture once calls :meth:`once` (what the ``plot_*`` functions do). Artists that
    change are registered with ``self.blitter.animate`` so that a redraw skips the rest.
    """

    def __init__(self, width: float, height: float, lang: str | None = None):
        self.lang = resolve_language(lang)
        self.figure = new_figure(width, height, self.lang)
        self.blitter = Blitter(self.figure)

    def update(self, *args, **kwargs) -> Figure:
        raise NotImplementedError

    def png(self) -> bytes:
        """The current picture as PNG bytes, redrawing only what changed."""
        return self.blitter.png()

    def save(self, path: str | Path, *, dpi: int = SAVE_DPI) -> Path:
        """The current picture as a PNG, SVG or PDF file (by ``path``'s suffix); text stays
        text in SVG and PDF. ``dpi`` sets a PNG's resolution (120: enough for a slide; 300
        for print), and that of the heatmaps inside an SVG or PDF."""
        path = Path(path)
        fmt = path.suffix.lower().lstrip(".")
        if fmt not in SAVE_FORMATS:
            raise ValueError(f"path must end in one of {['.' + f for f in SAVE_FORMATS]}; "
                             f"got {str(path)!r}")
        if isinstance(dpi, bool) or not isinstance(dpi, int) or not 50 <= dpi <= 1200:
            raise ValueError(f"dpi must be an integer in [50, 1200]; got {dpi!r}")
        if fmt == "png":  # drawn like the picture on screen, only larger
            path.write_bytes(self.blitter.png(dpi))
        else:
            self.blitter.save(path, format=fmt, dpi=dpi)
        return path

    def once(self, *args, **kwargs) -> Figure:
        """``update(...)``, then the figure as a plain matplotlib Figure to show or save once.

        savefig and a notebook's inline display leave out animated figure-level artists (a
        colour bar's axes, a suptitle), so nothing stays animated.
        """
        self.update(*args, **kwargs)
        return self.blitter.still()

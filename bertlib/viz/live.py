"""The base of every figure that a widget redraws in place."""

from __future__ import annotations

import errno
from pathlib import Path

from matplotlib.figure import Figure

from bertlib.support.checks import InputError, check_int_in, check_path
from bertlib.support.files import ReadOnlyFileError, atomic_write
from bertlib.support.i18n import resolve_language, text
from bertlib.viz._render import Blitter
from bertlib.viz.style import new_figure

SAVE_FORMATS = ("png", "svg", "pdf")
# A saved PNG's resolution: 870 to 1,100 pixels across the widgets' figures, enough for a
# slide, saved within the widgets' 100 ms (300 dpi took 390 ms); dpi=300 for print.
SAVE_DPI = 120
# Why a file could not be written, said in the reader's language where it is a common reason.
SAVE_REASONS = {errno.EACCES: "save_no_permission", errno.EPERM: "save_no_permission",
                errno.EROFS: "save_no_permission", errno.ENOSPC: "save_disk_full",
                errno.EDQUOT: "save_disk_full", errno.EISDIR: "save_is_folder",
                errno.ENOENT: "save_no_folder", errno.ENOTDIR: "save_no_folder",
                errno.ENAMETOOLONG: "save_name_too_long"}


class SaveError(InputError):
    """A figure that could not be written: where and why, in every language."""

    def __init__(self, path: Path, err: OSError) -> None:
        self.reason = ("save_read_only" if isinstance(err, ReadOnlyFileError)
                       else SAVE_REASONS.get(err.errno))
        self.detail = err.strerror or type(err).__name__  # a rarer reason: the system's words
        super().__init__("save_failed", path=str(path), reason=self._reason("en"))

    def _reason(self, lang: str | None) -> str:
        return self.detail if self.reason is None else text(self.reason, lang)

    def message(self, lang: str | None = None) -> str:
        return text("save_failed", lang, path=self.params["path"], reason=self._reason(lang))


class LiveFigure:
    """A figure built in ``__init__``, changed in place by ``update(...)`` (its changing
    artists animated); a widget shows :meth:`png`, the ``plot_*`` functions call :meth:`once`."""

    def __init__(self, width: float, height: float, lang: str | None = None):
        self.lang = resolve_language(lang)
        self.figure = new_figure(width, height, self.lang)
        self.blitter = Blitter(self.figure)

    def png(self) -> bytes:
        return self.blitter.png()

    def save(self, path: str | Path, *, dpi: int = SAVE_DPI) -> Path:
        """The picture as PNG, SVG or PDF by ``path``'s suffix, written whole or not at all."""
        check_path("path", path)
        path = Path(path)
        fmt = path.suffix.lower().lstrip(".")
        if fmt not in SAVE_FORMATS:
            raise ValueError(f"path must end in one of {['.' + f for f in SAVE_FORMATS]}; "
                             f"got {str(path)!r}")
        check_int_in("dpi", dpi, 50, 1200)
        png = self.blitter.png(dpi) if fmt == "png" else b""  # as on screen, only larger
        try:
            if path.is_dir():  # os.replace would say only "Is a directory"
                raise IsADirectoryError(errno.EISDIR, "Is a directory")
            atomic_write(path, (lambda tmp: tmp.write_bytes(png)) if fmt == "png"
                         else lambda tmp: self.blitter.save(tmp, format=fmt, dpi=dpi))
        except OSError as err:  # a name too long for is_dir too
            raise SaveError(path, err) from None
        return path

    def once(self, *args, **kwargs) -> Figure:
        """``update(...)``, then the figure with nothing animated."""
        self.update(*args, **kwargs)
        return self.blitter.still()

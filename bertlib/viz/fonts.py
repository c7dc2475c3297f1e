"""Noto Sans CJK (OFL 1.1; PyPI's ``noto-cjk-sans-otc`` or Debian's ``fonts-noto-cjk``) for
matplotlib: Japanese figures use its Japanese face, others Simplified Chinese (the two draw 直,
骨, 写... differently)."""

from __future__ import annotations

import functools
import logging
import warnings
from pathlib import Path


def _not_a_cache_folder_notice(record: logging.LogRecord) -> bool:
    """False for matplotlib's notices that it made a temporary config or cache folder."""
    return record.funcName != "_get_config_or_cache_dir"


# Imported here first: with HOME or MPLCONFIGDIR read-only (a lab's shared account) matplotlib
# warns of a temporary cache folder, which the learner cannot help; held back for this import.
logging.getLogger("matplotlib").addFilter(_not_a_cache_folder_notice)
try:
    from matplotlib import font_manager  # finds the cache folder, as matplotlib does
    from matplotlib.artist import Artist
    from matplotlib.figure import Figure
    from matplotlib.text import Text
finally:
    logging.getLogger("matplotlib").removeFilter(_not_a_cache_folder_notice)

CJK_FAMILY = "Noto Sans CJK SC"  # the face of every language but those below
CJK_FAMILIES = {"ja": "Noto Sans CJK JP"}
FONT_FILE = "NotoSansCJK-Regular.ttc"
_SYSTEM_DIRS = (Path("/usr/share/fonts/opentype/noto"), Path("/usr/share/fonts/noto-cjk"))


def cjk_font_path() -> Path:
    """Path of the Noto Sans CJK collection; FileNotFoundError saying how to install it."""
    try:
        import noto_cjk_sans_otc
    except ImportError:
        candidates = [d / FONT_FILE for d in _SYSTEM_DIRS]
    else:
        candidates = [Path(str(noto_cjk_sans_otc.FONT_PATH))]
    for path in candidates:
        if path.is_file():
            return path
    raise FileNotFoundError(
        f"no CJK font found (looked for {[str(p) for p in candidates]}); "
        "install it with `pip install noto-cjk-sans-otc`"
    )


def cjk_family(lang: str) -> str:
    return CJK_FAMILIES.get(lang, CJK_FAMILY)


@functools.cache
def use_cjk_font() -> bool:
    """Register the CJK font once (no ``rcParams`` change); False, warning once, if none is."""
    try:
        path = cjk_font_path()
    except FileNotFoundError as err:
        warnings.warn(f"Chinese labels will not render: {err}", stacklevel=2)
        return False
    font_manager.fontManager.addfont(str(path))
    return True


def add_cjk_fallback(artist: Artist) -> None:
    """Append the figure's CJK face to the family of every text in ``artist`` lacking one.
    Per text as it is drawn, not through ``rcParams`` (every figure of the process): it also
    covers texts the user adds and tick labels made while drawing."""
    if not use_cjk_font():
        return
    figure = artist.get_figure(root=True) if not isinstance(artist, Figure) else artist
    face = getattr(figure, "cjk_family", CJK_FAMILY)
    faces = {CJK_FAMILY, *CJK_FAMILIES.values()}
    texts = [artist] if isinstance(artist, Text) else artist.findobj(Text)
    for t in texts:
        prop = t.get_fontproperties()
        family = prop.get_family()
        if not faces & set(family):
            prop.set_family([*family, face])

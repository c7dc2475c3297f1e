"""A CJK font for matplotlib, so Chinese and Japanese labels render instead of empty boxes.

The font is Noto Sans CJK (SIL Open Font License 1.1), installed from PyPI as the
``noto-cjk-sans-otc`` wheel, or found where Debian's ``fonts-noto-cjk`` puts it. The file is an
OpenType collection; matplotlib registers each face. A figure in Japanese uses the Japanese face
and every other figure the Simplified Chinese one: the two draw many of the same characters with
different glyph forms (直, 骨, 写...), and a Chinese form looks wrong to a Japanese reader.
"""

from __future__ import annotations

import functools
import logging
import warnings
from pathlib import Path


def _not_a_cache_folder_notice(record: logging.LogRecord) -> bool:
    """False for what matplotlib logs when it cannot use its config or cache folder ("mkdir -p
    failed...", "Matplotlib created a temporary cache directory...")."""
    return record.funcName != "_get_config_or_cache_dir"


# bertlib.viz imports matplotlib here first. On a locked-down machine (HOME or MPLCONFIGDIR not
# writable: a lab's shared account) matplotlib logs while it is imported that it made a
# temporary cache folder instead, a warning in a notebook's first output cell about nothing
# the learner can do. Only that is held back, only during this import: matplotlib's logging
# is left as it was.
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
    """The face that draws ``lang``'s figures (Chinese, or any language but Japanese: SC)."""
    return CJK_FAMILIES.get(lang, CJK_FAMILY)


def cjk_face_index(path: Path | None = None, family: str = CJK_FAMILY) -> int:
    """Index of the ``family`` face inside the collection."""
    from fontTools.ttLib import TTCollection

    path = cjk_font_path() if path is None else path
    collection = TTCollection(str(path), lazy=True)
    for index, face in enumerate(collection.fonts):
        if face["name"].getDebugName(1) == family:
            return index
    raise ValueError(f"{path} holds no face named {family!r}")


def cjk_codepoints(family: str = CJK_FAMILY) -> frozenset[int]:
    """Every code point the ``family`` face can draw (its cmap)."""
    from fontTools.ttLib import TTFont

    path = cjk_font_path()
    face = TTFont(str(path), fontNumber=cjk_face_index(path, family), lazy=True)
    return frozenset(face.getBestCmap())


@functools.cache
def use_cjk_font() -> bool:
    """Register the CJK font with matplotlib's font manager, once.

    Registering adds a font matplotlib can find; it changes no setting (``rcParams`` stay the
    user's). Returns False (with one warning) when no CJK font is installed, so English
    figures still work.
    """
    try:
        path = cjk_font_path()
    except FileNotFoundError as err:
        warnings.warn(f"Chinese labels will not render: {err}", stacklevel=2)
        return False
    font_manager.fontManager.addfont(str(path))
    return True


def add_cjk_fallback(artist: Artist) -> None:
    """Append the CJK face to the font family of every text in ``artist`` that lacks it: the
    face its figure was made for (``cjk_family`` of :func:`bertlib.viz.style.new_figure`'s
    figures), else the Simplified Chinese one.

    Latin text keeps its family; characters it lacks fall back to the CJK face. Done per text
    just before it is drawn (see :class:`bertlib.viz.style.CJKFigure`) rather than through
    ``rcParams["font.family"]``, which would change every figure of the process; a text
    keeps the family it had when created, so this also covers texts added later by the user
    and tick labels matplotlib creates while drawing.
    """
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

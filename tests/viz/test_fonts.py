import ast
import os
import string
import subprocess
import sys
import warnings
from pathlib import Path

import matplotlib
import numpy as np
from matplotlib import font_manager

from bertlib import viz
from bertlib.masking import Fate
from bertlib.support.i18n import STRINGS
from bertlib.viz import fonts

ZH_TOKENS = ["[CLS]", "起", "重", "机", "在", "飞", "[SEP]", "银", "行", "[SEP]"]


def cjk_face_index(family: str = fonts.CJK_FAMILY) -> int:
    """Index of the ``family`` face inside the font collection."""
    from fontTools.ttLib import TTCollection

    collection = TTCollection(str(fonts.cjk_font_path()), lazy=True)
    return next(i for i, face in enumerate(collection.fonts)
                if face["name"].getDebugName(1) == family)


def cjk_codepoints(family: str = fonts.CJK_FAMILY) -> frozenset[int]:
    """Every code point the ``family`` face can draw (its cmap)."""
    from fontTools.ttLib import TTFont

    face = TTFont(str(fonts.cjk_font_path()), fontNumber=cjk_face_index(family), lazy=True)
    return frozenset(face.getBestCmap())


def literal_text(template: str) -> str:
    return "".join(lit for lit, _, _, _ in string.Formatter().parse(template))


def test_font_file_is_a_collection_with_the_simplified_chinese_face():
    path = fonts.cjk_font_path()
    assert path.is_file() and path.stat().st_size > 1_000_000
    from fontTools.ttLib import TTCollection

    names = [f["name"].getDebugName(1) for f in TTCollection(str(path), lazy=True).fonts]
    assert names[cjk_face_index()] == fonts.CJK_FAMILY


def test_matplotlib_resolves_the_family_to_that_face():
    assert fonts.use_cjk_font()
    found = font_manager.findfont(font_manager.FontProperties(family=fonts.CJK_FAMILY),
                                  fallback_to_default=False)
    assert str(found.path) == str(fonts.cjk_font_path())
    assert found.face_index == cjk_face_index()


def test_cjk_font_is_a_fallback_after_the_default_family():
    fig = viz.new_figure(2, 1)
    label = fig.text(0.1, 0.5, "银行")  # added by the user after new_figure
    fig.canvas.draw()
    family = label.get_fontproperties().get_family()
    assert family[-1] == fonts.CJK_FAMILY
    assert family.count(fonts.CJK_FAMILY) == 1
    assert family[0] != fonts.CJK_FAMILY  # Latin keeps the default family


def test_no_figure_or_widget_changes_rcparams():
    before = dict(matplotlib.rcParams)
    draw_zh_figures()
    assert dict(matplotlib.rcParams) == before


def test_matplotlib_is_imported_quietly_on_a_locked_down_machine(tmp_path):
    """With HOME and MPLCONFIGDIR unwritable (a lab's shared account), matplotlib logs while it
    is imported that it made a temporary cache folder: a warning in a notebook's first output
    cell. bertlib.viz imports matplotlib first in bertlib.viz.fonts, with that notice held
    back, and leaves matplotlib's logging as it was."""
    init = ast.parse(Path(viz.__file__).read_text(encoding="utf-8"))
    first = next(node for node in init.body if isinstance(node, ast.ImportFrom))
    assert (first.module, [a.name for a in first.names]) == ("bertlib.viz", ["fonts"])
    (tmp_path / "file").write_text("")  # root writes into a 0555 folder, not under a file
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
    env |= {"HOME": str(tmp_path / "file" / "home"), "MPLCONFIGDIR": str(tmp_path / "file" / "mpl")}

    def stderr(code: str) -> str:
        run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, timeout=120)
        assert run.returncode == 0, run.stderr
        return run.stderr

    assert "Matplotlib created a temporary cache directory" in stderr("import matplotlib")
    assert stderr(f"import logging, runpy; runpy.run_path({fonts.__file__!r}); "
                  "assert not logging.getLogger('matplotlib').filters") == ""


def test_every_chinese_string_is_covered_by_the_font():
    covered = cjk_codepoints()
    used = {ch for entry in STRINGS.values() for ch in literal_text(entry["zh"])}
    missing = sorted(ch for ch in used if not ch.isspace() and ord(ch) not in covered)
    assert missing == []
    assert ord("注") in covered and 0x0F00 not in covered  # the check can fail


def draw_zh_figures() -> list[str]:
    """Draw every kind of figure in Chinese with Chinese tokens; return the warnings."""
    T = len(ZH_TOKENS)
    rng = np.random.default_rng(0)
    weights = rng.random((2, T, T))
    weights /= weights.sum(-1, keepdims=True)
    emb = rng.normal(size=(T, 8))
    fates = [None, Fate.MASK, None, Fate.RANDOM, None, Fate.KEEP, None, None, None, None]
    tally = viz.MaskTally(ZH_TOKENS, np.arange(T) % 6, np.cumsum(np.ones((5, 3)), axis=0), 1, 7)
    figures = [
        viz.plot_input_representation(
            viz.EmbeddingParts(ZH_TOKENS, emb, emb, emb, emb), lang="zh"),
        viz.plot_mask_chips(ZH_TOKENS, ZH_TOKENS, fates, "标题", lang="zh"),
        viz.plot_mask_tally(tally, lang="zh"),
        viz.plot_attention(viz.AttentionView(weights[0], ZH_TOKENS, 7, 2, "注意力"),
                             lang="zh"),
        viz.plot_all_heads(weights, ZH_TOKENS, 0, lang="zh"),
        viz.plot_nsp([0.3, 0.7], lang="zh"),
        viz.plot_similarity(np.eye(2), ["银行（河岸）", "银行（金融）"], ["起重机", "鹤"],
                              lang="zh"),
    ]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for fig in figures:
            for artist in fig.findobj(lambda a: a.get_animated()):
                artist.set_animated(False)  # a full draw must include every artist
            fig.canvas.draw()
    return [str(w.message) for w in caught]


def test_chinese_figures_draw_without_missing_glyphs():
    messages = draw_zh_figures()
    assert not [m for m in messages if "missing from font" in m]


def test_the_glyph_check_detects_a_missing_glyph():
    fig = viz.new_figure(2, 1)
    fig.text(0.1, 0.5, "\u0f00")  # Tibetan: in neither font
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig.canvas.draw()
    assert any("missing from font" in str(w.message) for w in caught)


def test_a_japanese_figure_uses_the_japanese_face_and_its_glyph_forms():
    """直 and 骨 are drawn differently in Japan and in China: a Japanese edition's figure must
    draw the Japanese forms, a Chinese one the Chinese forms."""
    drawn = {}
    for lang in ("ja", "zh"):
        fig = viz.new_figure(2, 1, lang)
        label = fig.text(0.05, 0.3, "直骨", fontsize=40)
        fig.canvas.draw()
        assert label.get_fontproperties().get_family()[-1] == fonts.cjk_family(lang)
        drawn[lang] = np.asarray(fig.canvas.buffer_rgba())
    assert fonts.cjk_family("ja") == "Noto Sans CJK JP"
    assert fonts.cjk_family("zh") == fonts.cjk_family("en") == fonts.CJK_FAMILY
    assert (drawn["ja"] != drawn["zh"]).any()
    fig = viz.new_figure(2, 1, "ja")  # the same characters in the same face draw the same
    fig.text(0.05, 0.3, "直骨", fontsize=40)
    fig.canvas.draw()
    assert (np.asarray(fig.canvas.buffer_rgba()) == drawn["ja"]).all()


def test_every_japanese_string_is_covered_by_the_japanese_face():
    covered = cjk_codepoints(fonts.cjk_family("ja"))
    used = {ch for entry in STRINGS.values() for ch in literal_text(entry.get("ja", ""))}
    missing = sorted(ch for ch in used if not ch.isspace() and ord(ch) not in covered)
    assert missing == []

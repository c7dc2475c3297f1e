"""The two notebook editions are generated from one source each and cannot drift apart."""

import importlib.util
import re
import shutil
from pathlib import Path

import jupytext
import nbformat
import pytest

from bertlib.exercises import EXERCISES
from bertlib.i18n import get_language, set_language

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
_spec = importlib.util.spec_from_file_location("notebooks_tool", ROOT / "tools" / "notebooks.py")
tool = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tool)

SOURCES = sorted((NOTEBOOKS / "src").glob("*.py"))


def test_committed_editions_match_their_sources():
    assert tool.check() == []


@pytest.mark.parametrize("src", SOURCES, ids=lambda p: p.stem)
def test_source_round_trips_through_jupytext(src):
    assert jupytext.writes(jupytext.read(src), "py:percent") == src.read_text(encoding="utf-8")


@pytest.mark.parametrize("src", SOURCES, ids=lambda p: p.stem)
def test_editions_share_code_and_keep_only_their_language(src):
    source = tool.load_source(src)
    en, zh = (tool.edition(source, lang) for lang in ("en", "zh"))
    code = [c.source for c in source.cells if c.cell_type == "code"]
    for lang, nb in (("en", en), ("zh", zh)):
        assert [source for _, source in tool.shared_code(nb)] == code
        setup = nb.cells[1]  # generated, right after the title
        assert (setup.cell_type, setup.id, setup.source) == ("code", tool.SETUP_ID,
                                                             tool.setup_cell(lang))
        assert setup.source.endswith(f'set_language("{lang}")')
        markdown = [c.source for c in nb.cells if c.cell_type == "markdown"]
        unwrap = tool.unwrap_chinese if lang == "zh" else str
        assert markdown == [unwrap(c.source) for c in source.cells
                            if c.metadata.get("lang") == lang]
        assert not any("lang" in c.metadata for c in nb.cells)
        assert nb.metadata.kernelspec.name == "python3"


def test_chinese_paragraphs_are_unwrapped_without_stray_spaces():
    source = "\n".join([
        "## 标题",
        "第一行的结尾，",
        "第二行接着写，形状为",
        "`(B, T)`，然后",
        "继续。",
        "",
        "* 列表项的第一行",
        "  和它的续行",
        "* 第二项",
        "",
        "| 表 | 格 |",
        "| --- | --- |",
        "$$x = 1$$",
        "公式之后",
        "```python",
        "code line",
        "more code",
        "```",
    ])
    assert tool.unwrap_chinese(source).split("\n") == [
        "## 标题",
        "第一行的结尾，第二行接着写，形状为 `(B, T)`，然后继续。",
        "",
        "* 列表项的第一行和它的续行",
        "* 第二项",
        "",
        "| 表 | 格 |",
        "| --- | --- |",
        "$$x = 1$$",
        "公式之后",
        "```python",
        "code line",
        "more code",
        "```",
    ]


def test_notebooks_use_exactly_the_exercises_that_exist():
    text = "\n".join(src.read_text(encoding="utf-8") for src in SOURCES)
    assert set(re.findall(r'check_exercise\("(\w+)"', text)) == set(EXERCISES)


def test_library_code_is_shown_whole_or_by_marked_region():
    """Listings come from bertlib.viz.listing (whole objects or marked regions), never from
    slicing source text at a matched line, which breaks on any reformatting."""
    for src in SOURCES:
        code = src.read_text(encoding="utf-8")
        assert "inspect.getsource" not in code, src.name


def test_index_links_every_notebook_in_both_languages():
    index = tool.load_source(NOTEBOOKS / "src" / "00_index.py")
    for lang in ("en", "zh"):
        text = "\n".join(c.source for c in tool.edition(index, lang).cells)
        for src in SOURCES:
            assert f"]({src.stem}.ipynb)" in text, (lang, src.stem)


@pytest.fixture
def copy(tmp_path):
    """A copy of notebooks/ (sources and both editions) that a test may break."""
    for sub in ("src", "en", "zh"):
        shutil.copytree(NOTEBOOKS / sub, tmp_path / sub)
    return tmp_path


def _edit_notebook(path, change):
    nb = nbformat.read(path, as_version=4)
    change(nb)
    nbformat.write(nb, path)


def _first_code_cell(nb):
    """The first code cell both editions share (after the generated set-up cell)."""
    return next(c for c in nb.cells if c.cell_type == "code" and c.id != tool.SETUP_ID)


def test_the_copy_is_clean(copy):
    assert tool.check(copy) == []


def test_check_finds_code_edited_in_one_edition(copy):
    def edit(nb):
        _first_code_cell(nb).source += "\nprint('only in Chinese')"

    _edit_notebook(copy / "zh" / "03_encoder.ipynb", edit)
    problems = tool.check(copy)
    assert any(p.startswith("zh/03_encoder.ipynb differs from src/03_encoder.py") for p in problems)
    assert any("English and Chinese code cells differ" in p for p in problems)
    assert not any(p.startswith("en/") for p in problems)


def test_check_finds_a_set_up_cell_in_the_wrong_language(copy):
    def english(nb):
        nb.cells[1].source = tool.setup_cell("en")

    _edit_notebook(copy / "zh" / "03_encoder.ipynb", english)
    (problem,) = tool.check(copy)
    assert problem.startswith("zh/03_encoder.ipynb differs from src/03_encoder.py at cell 1")


def test_set_up_cell_sets_the_language_and_explains_a_missing_bertlib():
    for lang in ("en", "zh"):
        scope = {}
        exec(tool.setup_cell(lang), scope)
        assert get_language() == lang
        set_language(None)
        broken = tool.setup_cell(lang).replace("from bertlib.i18n", "from bertlib_missing.i18n")
        with pytest.raises(SystemExit, match="make lab") as err:
            exec(broken, {})
        assert "bertlib" in str(err.value) and "Traceback" not in str(err.value)
    assert "没有安装 bertlib" in tool.MISSING_BERTLIB["zh"]


def test_check_finds_a_source_edited_without_rebuilding(copy):
    src = copy / "src" / "02_input_representation.py"
    text = src.read_text(encoding="utf-8")
    src.write_text(text.replace("# # 02 · Input representation", "# # 02 · Inputs"),
                   encoding="utf-8")
    assert tool.check(copy) == [
        "en/02_input_representation.ipynb differs from src/02_input_representation.py at cell 0 "
        "(markdown: '# 02 · Input representation'): run tools/notebooks.py "
        "02_input_representation"
    ]


def test_check_finds_an_unexecuted_edition(copy):
    def clear(nb):
        _first_code_cell(nb).execution_count = None

    _edit_notebook(copy / "en" / "04_masked_lm.ipynb", clear)
    (problem,) = tool.check(copy)
    assert problem.startswith("en/04_masked_lm.ipynb was not executed top to bottom")


def test_check_finds_missing_and_orphaned_editions(copy):
    (copy / "zh" / "05_next_sentence.ipynb").rename(copy / "zh" / "99_orphan.ipynb")
    assert tool.check(copy) == [
        "zh/05_next_sentence.ipynb is missing: run tools/notebooks.py 05_next_sentence",
        "zh/99_orphan.ipynb has no source in src/",
    ]


@pytest.mark.parametrize(("old", "new", "message"), [
    ('# %% [markdown] lang="zh"\n# 单个句子', '# %% [markdown]\n# 单个句子',
     "markdown cell 7 needs lang"),
    ('# %% [markdown] lang="zh"\n# 单个句子', '# %% [markdown] lang="en"\n# 单个句子',
     "English markdown cell 6 must be followed by its Chinese counterpart"),
    ('# %% [markdown] lang="en"\n# A single sentence', '# %% [markdown] lang="zh"\n# A single',
     "Chinese markdown cell 6 must follow its English counterpart"),
])
def test_sources_must_pair_their_languages(copy, old, new, message):
    src = copy / "src" / "02_input_representation.py"
    text = src.read_text(encoding="utf-8")
    assert old in text
    src.write_text(text.replace(old, new), encoding="utf-8")
    with pytest.raises(tool.SourceError, match=message):
        tool.load_source(src)
    assert any(message in p for p in tool.check(copy))


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
# What a figure or a widget prints where nothing draws it: a picture is missing.
TEXT_INSTEAD_OF_PICTURE = re.compile(r"&lt;\w*Figure size|\b[VH]Box\(children=|\d+%\|")
COMMITTED = sorted(p for lang in ("en", "zh") for p in (NOTEBOOKS / lang).glob("*.ipynb"))


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_a_static_viewer_shows_every_figure_and_widget_as_a_picture(path):
    """What GitHub, nbviewer and a reader who has not run the notebook see: nbconvert's HTML,
    no kernel. Every output that holds a figure, a widget or a progress bar must come out as an
    image, never as its text repr; and no widget state is saved, so nothing waits for
    JavaScript from the internet to draw a widget."""
    from nbconvert import HTMLExporter

    nb = nbformat.read(path, as_version=4)
    assert "widgets" not in nb.metadata, "saved widget state: nbconvert would skip the pictures"
    body, _ = HTMLExporter().from_notebook_node(nb)
    assert not TEXT_INSTEAD_OF_PICTURE.search(body), TEXT_INSTEAD_OF_PICTURE.search(body)[0]
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    widgets = [o for o in outputs if WIDGET_VIEW in o.get("data", {})]
    assert all("image/png" in o.data for o in widgets), "a widget output without its picture"
    pictures = sum("image/png" in o.get("data", {}) for o in outputs)
    assert len(re.findall(r'<img [^>]*src="data:image/png;base64,', body)) == pictures

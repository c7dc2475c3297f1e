"""The three notebook editions are generated from one source each and cannot drift apart."""

import ast
import importlib.util
import itertools
import re
import shutil
import unicodedata
from pathlib import Path

import jupytext
import nbformat
import pytest

from bertlib.classroom.exercises import EXERCISES
from bertlib.support.i18n import get_language, set_language
from bertlib.support.i18n import table as i18n_table

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
_spec = importlib.util.spec_from_file_location("notebooks_tool", ROOT / "tools" / "notebooks.py")
tool = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tool)

SOURCES = sorted((NOTEBOOKS / "src").glob("*.py"))


# That the committed editions match their sources is `make test`'s stage "notebooks --check"
# (tools/notebooks.py --check); the tests of check() below, which want exactly the problems they
# make in a copy, fail too when the committed editions have any other.


@pytest.mark.parametrize("src", SOURCES, ids=lambda p: p.stem)
def test_source_round_trips_through_jupytext(src):
    assert jupytext.writes(jupytext.read(src), "py:percent") == src.read_text(encoding="utf-8")


@pytest.mark.parametrize("src", SOURCES, ids=lambda p: p.stem)
def test_editions_share_code_and_keep_only_their_language(src):
    source = tool.load_source(src)
    code = [c.source for c in source.cells if c.cell_type == "code"]
    for lang in tool.LANGS:
        nb = tool.edition(source, lang)
        assert [source for _, source in tool.shared_code(nb)] == code
        setup = nb.cells[1]  # generated, right after the title
        assert (setup.cell_type, setup.id, setup.source) == ("code", tool.SETUP_ID,
                                                             tool.setup_cell(lang))
        assert setup.source.endswith(f'set_language("{lang}")')
        markdown = [c.source for c in nb.cells if c.cell_type == "markdown"]
        unwrap = tool.unwrap_cjk if lang in ("zh", "ja") else str
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
    assert tool.unwrap_cjk(source).split("\n") == [
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


def test_japanese_paragraphs_are_unwrapped_without_stray_spaces():
    source = "トークンの埋め込みは、\nここで足し合わされ\nます。形は\n`(B, T)` です。"
    assert tool.unwrap_cjk(source) == ("トークンの埋め込みは、ここで足し合わされます。"
                                       "形は `(B, T)` です。")


def test_notebooks_use_exactly_the_exercises_that_exist():
    text = "\n".join(src.read_text(encoding="utf-8") for src in SOURCES)
    assert set(re.findall(r'check_exercise\("(\w+)"', text)) == set(EXERCISES)


# Notebooks whose every numbered exercise gives feedback (issue 38): a check cell names it
# (`answer = None  # your answer to exercise N: ...`, or an implement-it cell whose function's
# docstring starts "Exercise N." and which calls check_implementation), or a worked answer folded
# in <details>, whose <summary> starts with its number, in the notebook's last markdown cell.
COVERED = {src.stem for src in SOURCES} - {"00_index"}  # every notebook but the index
EXERCISES_HEADING = {"en": "## Exercises", "zh": "## 练习", "ja": "## 演習"}
WORKED_HEADING = {"en": "### Worked answers", "zh": "### 参考答案", "ja": "### 解答例"}
WORKED_SUMMARY = {"en": r"<summary>Exercise (\d+): ", "zh": r"<summary>练习 (\d+)：",
                  "ja": r"<summary>演習 (\d+)："}


def exercise_feedback(nb: nbformat.NotebookNode, lang: str) -> tuple[list[int], set[int],
                                                                         set[int]]:
    """The numbers of the exercise list, those a check cell names, those with a worked answer."""
    markdown = [c.source for c in nb.cells if c.cell_type == "markdown"]
    lists = [m.split(EXERCISES_HEADING[lang], 1)[1] for m in markdown
             if EXERCISES_HEADING[lang] in m]
    assert len(lists) == 1, f"{len(lists)} exercise lists"
    numbers = [int(n) for n in re.findall(r"^(\d+)\. ", lists[0], re.M)]
    checked = set()
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        checked |= {int(n) for n in re.findall(r"# your answer to exercise (\d+)\b", cell.source)}
        if "check_implementation(" in cell.source:
            checked |= {int(n) for n in re.findall(r'"""Exercise (\d+)\. ', cell.source)}
    worked = {int(n) for m in markdown for n in re.findall(WORKED_SUMMARY[lang], m)}
    return numbers, checked, worked


@pytest.mark.parametrize(("stem", "lang"), sorted(itertools.product(COVERED, tool.LANGS)))
def test_every_exercise_is_checked_or_has_a_worked_answer(stem, lang):
    nb = nbformat.read(NOTEBOOKS / lang / f"{stem}.ipynb", as_version=4)
    numbers, checked, worked = exercise_feedback(nb, lang)
    assert numbers == list(range(1, len(numbers) + 1)), f"the exercises are numbered {numbers}"
    assert not set(numbers) - checked - worked, (
        f"{lang}/{stem}: exercises {sorted(set(numbers) - checked - worked)} have neither a "
        f"check cell nor a worked answer")
    assert checked | worked <= set(numbers), f"{lang}/{stem}: a check or answer of no exercise"
    if worked:  # one cell at the end, after the exercises and their check cells
        last = [c for c in nb.cells if c.cell_type == "markdown"][-1].source
        assert nb.cells[-1].source == last and last.startswith(WORKED_HEADING[lang])
        assert len(re.findall(WORKED_SUMMARY[lang], last)) == len(worked)
        # JupyterLab renders the markdown inside <details> only with blank lines around it
        assert last.count("<details><summary>") == last.count("</summary>\n\n") \
            == last.count("\n\n</details>") == len(worked)


EXERCISE_REFERENCE = {"en": r"\b[Ee]xercises? (\d+)", "zh": r"练习 ?(\d+)", "ja": r"演習 ?(\d+)"}


@pytest.mark.parametrize(("stem", "lang"), sorted(itertools.product(COVERED, tool.LANGS)))
def test_the_page_names_only_exercises_that_exist(stem, lang):
    """"Exercise 5 asks ..." in a notebook whose list ends at 4 (seen after 09 was split)."""
    nb = nbformat.read(NOTEBOOKS / lang / f"{stem}.ipynb", as_version=4)
    numbers = exercise_feedback(nb, lang)[0]
    named = {int(n) for cell in nb.cells
             for n in re.findall(EXERCISE_REFERENCE[lang], cell.source)}
    assert named <= set(numbers), f"{lang}/{stem} names exercises {sorted(named - set(numbers))}"


def test_exercise_feedback_finds_what_is_missing():
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("## Exercises\n\n1. ★ Count.\n2. ★ Explain.\n3. ★ Write."),
        nbformat.v4.new_code_cell('answer = None  # your answer to exercise 1: an integer\n'
                                  'check_exercise("01_x", answer)'),
        nbformat.v4.new_code_cell('def f():\n    """Exercise 3. Returns."""\n\n\n'
                                  'check_implementation("01_f", f)'),
        nbformat.v4.new_markdown_cell("### Worked answers\n\n<details><summary>Exercise 2: Why"
                                      "</summary>\n\nBecause.\n\n</details>"),
    ])
    assert exercise_feedback(nb, "en") == ([1, 2, 3], {1, 3}, {2})
    nb.cells[2].source = nb.cells[2].source.replace("check_implementation", "print")
    assert exercise_feedback(nb, "en")[1] == {1}


def test_library_code_is_shown_whole_or_by_marked_region():
    """Listings come from bertlib.viz.listing (whole objects or marked regions), never from
    slicing source text at a matched line, which breaks on any reformatting."""
    for src in SOURCES:
        code = src.read_text(encoding="utf-8")
        assert "inspect.getsource" not in code, src.name


def test_index_links_every_notebook_in_every_language():
    index = tool.load_source(NOTEBOOKS / "src" / "00_index.py")
    for lang in tool.LANGS:
        text = "\n".join(c.source for c in tool.edition(index, lang).cells)
        for src in SOURCES:
            assert f"]({src.stem}.ipynb)" in text, (lang, src.stem)


@pytest.fixture
def copy(tmp_path):
    """A copy of notebooks/ (sources and every edition) that a test may break."""
    for sub in ("src", *tool.LANGS):
        shutil.copytree(NOTEBOOKS / sub, tmp_path / sub)
    return tmp_path


def _edit_notebook(path, change):
    nb = nbformat.read(path, as_version=4)
    change(nb)
    nbformat.write(nb, path)


def _first_code_cell(nb):
    """The first code cell both editions share (after the generated set-up cell)."""
    return next(c for c in nb.cells if c.cell_type == "code" and c.id != tool.SETUP_ID)


def test_check_finds_code_edited_in_one_edition(copy):
    def edit(nb):
        _first_code_cell(nb).source += "\nprint('only in Chinese')"

    _edit_notebook(copy / "zh" / "03_encoder.ipynb", edit)
    problems = tool.check(copy)
    assert any(p.startswith("zh/03_encoder.ipynb differs from src/03_encoder.py") for p in problems)
    assert any("the en and zh code cells differ" in p for p in problems)
    assert not any(p.startswith("en/") for p in problems)


def test_check_finds_a_set_up_cell_in_the_wrong_language(copy):
    def english(nb):
        nb.cells[1].source = tool.setup_cell("en")

    _edit_notebook(copy / "zh" / "03_encoder.ipynb", english)
    (problem,) = tool.check(copy)
    assert problem.startswith("zh/03_encoder.ipynb differs from src/03_encoder.py at cell 1")


def test_set_up_cell_sets_the_language_and_explains_a_missing_bertlib():
    for lang in tool.LANGS:
        scope = {}
        exec(tool.setup_cell(lang), scope)
        assert get_language() == lang
        set_language(None)
        broken = tool.setup_cell(lang).replace("from bertlib.support.i18n",
                                               "from bertlib_missing.i18n")
        with pytest.raises(SystemExit, match="make lab") as err:
            exec(broken, {})
        assert "bertlib" in str(err.value) and "Traceback" not in str(err.value)
    assert "没有安装 bertlib" in tool.MISSING_BERTLIB["zh"]
    assert "インストールされていません" in tool.MISSING_BERTLIB["ja"]


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


def test_prose_rewrites_the_markdown_keeps_the_outputs_and_refuses_changed_code(copy):
    src = copy / "src" / "02_input_representation.py"
    text = src.read_text(encoding="utf-8")
    src.write_text(text.replace("# # 02 · Input representation", "# # 02 · Inputs"),
                   encoding="utf-8")
    path = copy / "en" / "02_input_representation.ipynb"
    before = nbformat.read(path, as_version=4)
    assert tool.rewrite_prose(["02_input_representation"], copy) == 0
    after = nbformat.read(path, as_version=4)
    assert after.cells[0].source.startswith("# 02 · Inputs")
    code = [[(c.source, c.outputs, c.execution_count) for c in nb.cells if c.cell_type == "code"]
            for nb in (before, after)]
    assert code[0] == code[1] and after.metadata == before.metadata
    assert not [p for p in tool.check(copy) if "02_input_representation" in p]
    src.write_text(text.replace("import ", "import  ", 1), encoding="utf-8")
    assert tool.rewrite_prose(["02_input_representation"], copy) == 1
    assert nbformat.read(path, as_version=4) == after  # nothing written


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
     r"markdown cell \d+ needs lang"),
    ('# %% [markdown] lang="zh"\n# 单个句子', '# %% [markdown] lang="en"\n# 单个句子',
     r"English markdown cell \d+ must be followed by its counterparts in \['zh', 'ja'\]"),
    ('# %% [markdown] lang="en"\n# A single sentence', '# %% [markdown] lang="zh"\n# A single',
     r"zh markdown cell \d+ must follow its English counterpart"),
])
def test_sources_must_pair_their_languages(copy, old, new, message):
    src = copy / "src" / "02_input_representation.py"
    text = src.read_text(encoding="utf-8")
    assert old in text
    src.write_text(text.replace(old, new), encoding="utf-8")
    with pytest.raises(tool.SourceError, match=message):
        tool.load_source(src)
    assert any(re.search(message, p) for p in tool.check(copy))


@pytest.mark.parametrize("src", SOURCES, ids=lambda p: p.stem)
def test_no_code_cell_holds_a_translation_table(src):
    """Printed text is English in the code, tr("..."), translated in the strings cell."""
    for cell in tool.load_source(src).cells:
        if cell.cell_type != "code":
            continue
        for node in ast.walk(_parse(cell.source)):
            if isinstance(node, ast.Dict):  # {"en": "...", "zh": "..."}
                texts = {k.value for k, v in zip(node.keys, node.values, strict=True)
                         if isinstance(k, ast.Constant) and isinstance(v, ast.Constant)}
                assert not {"en", "zh"} <= texts, f"{src.name}: {ast.unparse(node)[:80]}"
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                assert node.func.id not in ("labels", "label", "text"), src.name


def _replace(path, old, new):
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")


def test_check_finds_a_text_without_translation_and_a_translation_without_text(copy):
    _replace(copy / "src" / "03_encoder.py", 'tr("key j")', 'tr("key jj")')
    problems = tool.check(copy)
    assert "src/03_encoder.py: tr('key jj') has no zh translation in the strings cell" in problems
    assert ("src/03_encoder.py: the strings cell translates 'key j', which no code cell prints"
            in problems)


def test_check_finds_one_text_translated_two_ways(copy):
    _replace(copy / "src" / "01_context.py", 'tr("depends on")', 'tr("key j")')
    for translation in ("依赖于", "依存先"):  # the zh and the ja strings cell
        _replace(copy / "src" / "01_context.py", f'# "depends on"\n# "{translation}"',
                 f'# "key j"\n# "{translation}"')
    problems = tool.check(copy)
    assert any("'key j' is translated" in p and "'依赖于'" in p and "'键 j'" in p
               for p in problems), problems
    _replace(copy / "src" / "01_context.py", '# "key j"\n# "依赖于"', '# "key j"\n# "键 j"')
    _replace(copy / "src" / "01_context.py", '# "not seen"\n# "不可见"', '# "key j"\n# "不可见"')
    with pytest.raises(tool.SourceError, match="'key j' is translated twice"):
        tool.load_source(copy / "src" / "01_context.py")


def test_check_finds_a_stale_catalog_and_a_line_too_long(copy, tmp_path):
    catalog = tmp_path / "notebook_strings.json"
    catalog.write_text('{"zh": {}}', encoding="utf-8")
    assert tool.check(copy, catalog) == [
        "notebook_strings.json does not hold the sources' strings cells: run tools/notebooks.py"]
    _replace(copy / "src" / "03_encoder.py", "# The whole encoder is just this",
             "# " + "长" * 60 + " The whole encoder is just this")
    assert any(re.fullmatch(r"src/03_encoder.py:\d+ is \d{3} columns wide \(at most 100\)", p)
               for p in tool.check(copy))


def test_the_strings_cell_is_pairs_of_json_strings(copy):
    src = copy / "src" / "03_encoder.py"
    _replace(src, '# "key j"\n# "键 j"', '# key j\n# "键 j"')
    with pytest.raises(tool.SourceError, match="the strings cell needs pairs of lines, each a"):
        tool.load_source(src)


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
# What a figure or a widget prints where nothing draws it: a picture is missing.
TEXT_INSTEAD_OF_PICTURE = re.compile(r"&lt;\w*Figure size|\b[VH]Box\(children=|\d+%\|")
COMMITTED = sorted(p for lang in tool.LANGS for p in (NOTEBOOKS / lang).glob("*.ipynb"))


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


CJK = re.compile("[\u3001-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")
# Latin letters that are no English label: special tokens, code names (max_len=64, len(x),
# pred_positions), file names, ln of a formula.
NOT_A_WORD = re.compile(r"<\w+>|\[[A-Z]+\]|\b\w+=\S*|\b[A-Za-z_]\w*\(|\b\w*_\w*\b|\bln\b"
                        r"|\b[A-Za-z_]\w*(?:\.\w+)+"
                        r"|\b[\w-]+\.(?:json|py|png|svg|pdf)\b", re.ASCII)
# Names a Chinese text keeps as they are (GLOSSARY.md): models, methods, a tokenizer.
# Names, and terms the Japanese edition writes in Latin letters (Bag-of-Words).
NAMES = {"MiniLM", "Adam", "WordPiece", "BERT", "base", "large", "dropout", "pooler", "GloVe",
         "word2vec", "ELMo", "GPT", "None", "Bag", "Words"}
QUOTED_DATA = re.compile(r"'[^']*'")  # a token or a string in a printed list or tuple
SENTENCE = re.compile(r"[A-Za-z]+(?:[ ,.]+[A-Za-z]+){2,}")  # data: an English sentence
# Data too: the model's guesses ("when 0.00"), a word with its tag ("maria/人名").
TOKEN_DATA = re.compile(r"\S+ [01]\.\d\d\b|[A-Za-z]+/[\u3040-\u30ff\u4e00-\u9fff]+")
PYTHON_REPR = re.compile(r"\bTrue\b|\bFalse\b|Counter\(|\{'")
GAP = re.compile(r"\S(\s{2,})(?=\S)")  # a column break: two spaces or more


def _width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _stdout(cell) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", [])
                   if o.get("output_type") == "stream" and o.get("name") == "stdout")


def _parse(source: str) -> ast.Module:
    return ast.parse("\n".join("" if line.lstrip()[:1] in "%!" and line.strip() else line
                               for line in source.splitlines()))  # not %magic lines


def _words(texts) -> set[str]:
    return {word for text in texts for word in re.findall(r"[A-Za-z]+", text)}


def _translated(nb) -> list[str]:
    """The English texts the code cells give to tr()."""
    return [node.value for cell in nb.cells if cell.cell_type == "code"
            for call in ast.walk(_parse(cell.source))
            if isinstance(call, ast.Call) and getattr(call.func, "id", None) == "tr"
            for node in ast.walk(call.args[0]) if call.args
            if isinstance(node, ast.Constant) and isinstance(node.value, str)]


def _spelt_and_printed(nb) -> tuple[set[str], set[str]]:
    """The words the code spells (its names, and the strings it hands to functions: example
    sentences, the words a lesson is about) and the words of the English labels it prints as
    they are (print's own string arguments). The English texts given to tr() are neither."""
    spelt, printed, names = [], [], []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        tree = _parse(cell.source)
        translated, labels = set(), set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "tr":
                translated.update(id(n) for n in ast.walk(node.args[0]) if node.args)
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "print":
                for arg in node.args:  # print("label:", x) or print(f"label {x}")
                    parts = arg.values if isinstance(arg, ast.JoinedStr) else [arg]
                    labels.update(id(part) for part in parts if isinstance(part, ast.Constant))
        for node in ast.walk(tree):
            if isinstance(node, ast.Name):
                names.append(node.id)
            elif isinstance(node, ast.Attribute):
                names.append(node.attr)
            elif isinstance(node, ast.keyword | ast.arg) and node.arg:
                names.append(node.arg)
            elif isinstance(node, ast.alias):
                names.append(node.asname or node.name)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                if id(node) in labels and id(node) not in translated:
                    printed.append(node.value)
                elif id(node) not in translated:
                    spelt.append(node.value)
    # A printed label that names a variable ("tokens:", tokens) names code.
    labels = {w for w in _words(NOT_A_WORD.sub(" ", t) for t in printed)
              if len(w) > 1 and not w.isupper()} - _words(names)
    return _words(spelt + names), labels


# A row's label ends at a colon or a wide gap (spaces, or U+3000 that bertlib.support.i18n.table
# pads
# Chinese with).
LABEL_END = re.compile(r"：[\s\u3000]*|:[\s\u3000]+|[\s\u3000]{2,}")


def _label(line: str) -> tuple[bool, int, tuple[int, int]] | None:
    """A table row's label: whether a colon ends it, its length, and what comes before the
    row's values: (wide characters, narrow ones). Rows line up in a terminal and in a browser
    only when both counts agree (a Chinese glyph is not twice a Latin one in a browser)."""
    found = LABEL_END.search(line.lstrip())
    if found is None or found.end() == len(line.lstrip()):
        return None
    prefix = line[:len(line) - len(line.lstrip()) + found.end()]
    wide = sum(unicodedata.east_asian_width(c) in "WF" for c in prefix)
    return found[0].strip() != "", found.start(), (wide, len(prefix) - wide)


def _width_of(label: tuple[bool, int, tuple[int, int]]) -> int:
    return 2 * label[2][0] + label[2][1]


def chinese_output_problems(nb, en_nb=None) -> list[str]:
    """English labels and Python reprs in the printed lines of a Chinese edition, and tables
    out of line: rows that line up by characters but not by display width, and rows whose
    values line up in the English edition (``en_nb``) but not in this one."""
    spelt, printed = _spelt_and_printed(nb)
    templates = _words(_translated(nb))
    # An English label printed as it is, in print("..."), is English in every edition.
    problems = [f"print() spells English ({' '.join(sorted(printed))}): use tr()"] * bool(printed)
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or "show_source(" in cell.source:
            continue  # a listing is code
        lines = _stdout(cell).splitlines()
        # The Japanese edition shows the English edition's examples (the corpus is English and
        # Chinese): a word the English edition prints in this cell, and no text given to tr()
        # spells, is data, not a label left untranslated.
        data = (_words([_stdout(en_nb.cells[index])]) - templates) if en_nb is not None else set()
        for line in lines:
            text = QUOTED_DATA.sub(" ", TOKEN_DATA.sub(" ", NOT_A_WORD.sub(" ", line)))
            text = SENTENCE.sub(" ", text)
            words = [w for w in re.findall(r"[A-Za-z]+", text) if len(w) > 1 and not w.isupper()]
            if "Counter(" in line or (CJK.search(text) and PYTHON_REPR.search(line)):
                problems.append(f"cell {index}: a Python repr: {line!r:.100}")
            if CJK.search(text) and (english := [w for w in words if w not in spelt
                                                 and w not in NAMES and w not in data]):
                problems.append(f"cell {index}: English in a Chinese output "
                                f"({' '.join(english)}): {line!r:.100}")
        if en_nb is not None:
            en_lines = _stdout(en_nb.cells[index]).splitlines()
            for i in range(min(len(lines), len(en_lines)) - 1):
                en_a, en_b = (_label(line) for line in en_lines[i:i + 2])
                zh_a, zh_b = (_label(line) for line in lines[i:i + 2])
                # In English, labels of different lengths padded to one column: a table.
                if (len(lines) == len(en_lines) and en_a and en_b and en_a[0] == en_b[0]
                        and en_a[1] != en_b[1] and _width_of(en_a) == _width_of(en_b)
                        and zh_a and zh_b and zh_a[2] != zh_b[2]):
                    problems.append(f"cell {index}: columns out of line:\n{lines[i]}\n"
                                    f"{lines[i + 1]}")
        # Rows whose columns start at the same character but not at the same display column.
        rows = [(line, [m.end(1) for m in GAP.finditer(line)]) for line in lines]
        for (a, cols_a), (b, cols_b) in itertools.pairwise(rows):
            if (cols_a and cols_a == cols_b and CJK.search(a + b)
                    and [_width(a[:c]) for c in cols_a] != [_width(b[:c]) for c in cols_b]):
                problems.append(f"cell {index}: columns out of line:\n{a}\n{b}")
    return problems


@pytest.mark.parametrize("path", sorted(p for lang in ("zh", "ja")
                                         for p in (NOTEBOOKS / lang).glob("*.ipynb")),
                         ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_chinese_and_japanese_outputs_hold_no_english_label_and_line_up(path):
    english = nbformat.read(NOTEBOOKS / "en" / path.name, as_version=4)
    assert chinese_output_problems(nbformat.read(path, as_version=4), english) == []


def test_the_chinese_output_check_finds_english_reprs_and_misaligned_columns():
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell('print(tr("held out"), value)\nprint("weights on keys:", x)')
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=(
        "留出 accuracy 0.5\n相同：True\nCounter({'en': 3})\nweights on keys: 0\n"
        "模型       0.194  0.343\nbag      0.324  0.593\n"))]
    nb.cells = [cell]
    problems = chinese_output_problems(nb)
    assert any("English in a Chinese output (accuracy)" in p for p in problems)
    assert "print() spells English (keys on weights): use tr()" in problems
    assert any("a Python repr: '相同：True'" in p for p in problems)
    assert any("a Python repr: \"Counter" in p for p in problems)
    assert any("columns out of line" in p for p in problems)
    cell.source = 'print(tr("held out"), value)'
    cell.outputs[0].text = ("模型\u3000\u3000  0.194  0.343\nbag\u3000\u3000  0.324  0.593\n"
                            "value 留出\n位置 5：i went to the bank\n")
    assert chinese_output_problems(nb) == []


def test_the_chinese_output_check_lines_up_columns_for_a_browser_too():
    """Rows the English edition pads to one column must begin their values after as many
    Chinese characters and as many others in the Chinese edition: padding by display width
    alone (a Chinese character as two spaces) lines up in a terminal, not in a browser."""
    def notebook(text):
        nb = nbformat.v4.new_notebook()
        cell = nbformat.v4.new_code_cell("print(table(rows))")
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]
        nb.cells = [cell]
        return nb

    english = notebook("model:          0.194\nbag of words:   0.324\n")
    by_width = notebook("小 BERT（预训练）：  0.194\n词袋：              0.324\n")
    assert any("columns out of line" in p for p in chinese_output_problems(by_width, english))
    by_kind = notebook(i18n_table([["小 BERT（预训练）：", "0.194"], ["词袋：", "0.324"]]) + "\n")
    assert chinese_output_problems(by_kind, english) == []


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_listing_on_the_page_holds_at_most_its_door(path):
    """What a learner reads under show_source(...) is the plain source (tests/viz/test_listing.py
    proves it is the real code): the idea, and at most the one check at the door, in a line or
    two; no raise, no guard of an inner layer."""
    for index, cell in enumerate(nbformat.read(path, as_version=4).cells):
        if cell.cell_type == "code" and "show_source(" in cell.source:
            shown = _stdout(cell)
            assert shown.strip(), f"cell {index} lists nothing"
            assert not re.search(r"\braise\b", shown), f"cell {index} raises: {shown[:200]}"
            guards = [line for line in shown.splitlines()
                      if re.search(r"\bcheck_\w+\(|_check\w*\(|checked_path", line)]
            assert len(guards) <= 2, f"cell {index}: {guards}"


def test_class_time_counts_prose_code_output_widgets_and_run():
    nb = nbformat.v4.new_notebook(metadata={"bert_notebooks": {"run_seconds": 90.0}}, cells=[
        nbformat.v4.new_markdown_cell(" ".join(["word"] * 300)  # 2 min at 150 words a minute
                                      + "\n\n<details><summary>Answer</summary>\n\nnot read "
                                      "in class\n\n</details>"),
        nbformat.v4.new_code_cell(tool.setup_cell("en"), id=tool.SETUP_ID),  # not counted
        nbformat.v4.new_code_cell("a = 1\n\n" * 12, outputs=[  # 12 lines at 5 s: 1 min
            nbformat.v4.new_output("stream", name="stdout", text="x\n" * 19),
            nbformat.v4.new_output("display_data", data={  # a progress bar: one line
                "application/vnd.jupyter.widget-view+json": {"model_id": "m1"},
                "text/plain": "pretraining: 100%|██████████| 300/300"}),
            nbformat.v4.new_output("display_data", data={  # a widget: 4 min
                "application/vnd.jupyter.widget-view+json": {"model_id": "m2"},
                "text/plain": "VBox(children=(Text(value='a'),))", "image/png": "iVBO"}),
            nbformat.v4.new_output("display_data", data={"image/png": "iVBO",
                                                         "text/plain": "<Figure>"}),
        ]),
    ])
    parts = tool.minutes_in_class(nb)
    assert parts == {"reading": 2.0, "code": 1.0, "output": 1.0, "widgets": 4, "run": 1.5,
                     "total": 9.5}
    del nb.metadata["bert_notebooks"]
    assert tool.minutes_in_class(nb)["run"] is None


def test_every_notebook_fits_one_class_period():
    """Issue 38: no notebook over one 45-minute period by the estimate, exercises aside."""
    over = {stem: round(parts["total"]) for stem, parts in tool.estimates().items()
            if parts["total"] > tool.CLASS_MINUTES}
    assert not over, f"over {tool.CLASS_MINUTES} minutes: {over}"


def test_readme_and_index_give_each_notebook_its_estimated_class_time():
    """The minutes the README's table and 00's contents give are tools/notebooks.py --estimate's
    (rounded), in every edition of 00."""
    estimates = tool.estimates()
    assert all(parts["run"] is not None for parts in estimates.values())
    minutes = {stem: round(parts["total"]) for stem, parts in estimates.items()}
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| (\d\d) [^|]* \| (\d+) \|", readme, flags=re.M))
    assert rows == {stem[:2]: str(m) for stem, m in minutes.items()}
    index = tool.load_source(NOTEBOOKS / "src" / "00_index.py")
    for lang, said in (("en", "about {} minutes"), ("zh", "约 {} 分钟"), ("ja", "約 {} 分")):
        text = "\n".join(c.source for c in tool.edition(index, lang).cells
                         if c.cell_type == "markdown")
        text = re.sub(r"\n +", " ", text)  # a list item's wrapped lines as one
        for stem, m in minutes.items():
            link = re.search(rf"\]\({stem}\.ipynb\)[^\n]*", text)
            assert link and said.format(m) in link.group(), (lang, stem, m)

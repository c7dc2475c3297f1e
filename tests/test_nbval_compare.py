"""The browser test's output comparison (tests/e2e/nbval_compare.py) finds what strict nbval
finds, on made-up outputs: no browser, no kernel."""

import ast
import copy
import importlib.util
import inspect
from pathlib import Path

import nbformat
from nbval.plugin import IPyNbFile

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("nbval_compare",
                                               ROOT / "tests" / "e2e" / "nbval_compare.py")
compare = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(compare)

COMMITTED = ROOT / "notebooks" / "en" / "03_encoder.ipynb"


def committed() -> nbformat.NotebookNode:
    return nbformat.read(COMMITTED, as_version=4)


def outputs_of(nb: nbformat.NotebookNode) -> list[list[dict]]:
    """What the page gives: each code cell's outputs as JSON."""
    return [copy.deepcopy([dict(o) for o in c.outputs]) for c in nb.cells
            if c.cell_type == "code"]


def code_cell(outputs: list[nbformat.NotebookNode], source: str = "x") -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(source, execution_count=1)
    cell.outputs = outputs
    return cell


def notebook(*cells: nbformat.NotebookNode) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells = list(cells)
    return nb


def stdout(text: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_output("stream", name="stdout", text=text)


def test_a_committed_notebook_matches_its_own_outputs():
    nb = committed()
    assert compare.mismatches("en/03_encoder.ipynb", nb, outputs_of(nb)) == []


def test_a_changed_number_is_a_mismatch_named_like_nbval():
    nb = committed()
    got = outputs_of(nb)
    number = next(i for i, outputs in enumerate(got) if outputs
                  and outputs[0]["output_type"] == "stream" and "(2, 8, 768)" in outputs[0]["text"])
    got[number][0]["text"] = got[number][0]["text"].replace("(2, 8, 768)", "(2, 8, 769)")
    (problem,) = compare.mismatches("en/03_encoder.ipynb", nb, got)
    assert problem.startswith(f"en/03_encoder.ipynb::Cell {number}: Cell outputs differ\n")
    expected, computed = problem.split("disagrees with newly computed (test) output:")
    assert "mismatch 'stdout'" in expected and "Reference output from ipynb file" in expected
    assert "(2, 8, 768)" in expected and "(2, 8, 769)" not in expected
    assert "(2, 8, 769)" in computed and "(2, 8, 768)" not in computed


def test_streams_are_coalesced_as_nbval_does():
    """One stdout in the saved notebook, the same text in pieces around a display in the run."""
    figure = nbformat.v4.new_output("display_data", data={"text/plain": "<Figure>"})
    nb = notebook(code_cell([stdout("a\nb\n"), figure]))
    assert compare.mismatches("nb", nb, [[stdout("a\n"), figure, stdout("b\n")]]) == []
    assert compare.mismatches("nb", nb, [[stdout("a\n"), figure, stdout("c\n")]]) != []


def test_sanitized_and_skipped_outputs_do_not_count():
    bar = "train: 100%|██████████| 300/300 [00:30<00:00, 10.93step/s, mlm=3.648]"
    saved = nbformat.v4.new_output("display_data", data={
        "text/plain": f"{bar}\n<Foo at 0x7f3a12345678>", "image/png": "iVBORw0KGgo=",
        "application/vnd.jupyter.widget-view+json": {"model_id": "abc", "version_major": 2}},
        metadata={"width": 3})
    run = copy.deepcopy(saved)
    run.data["text/plain"] = f"{bar.replace('00:30', '00:41')}\n<Foo at 0x7f0000000000>"
    run.data["image/png"] = "AAAA"
    run.data["application/vnd.jupyter.widget-view+json"]["model_id"] = "def"
    run.metadata = {}
    nb = notebook(code_cell([saved]))
    assert compare.mismatches("nb", nb, [[run]]) == []
    run.data["text/plain"] = run.data["text/plain"].replace("train", "trained")
    (problem,) = compare.mismatches("nb", nb, [[run]])
    assert "mismatch 'text/plain'" in problem and "PROGRESS" in problem


def test_missing_extra_and_failing_outputs_are_mismatches():
    nb = notebook(code_cell([stdout("a\n")]))
    assert "Missing output fields" in compare.mismatches("nb", nb, [[]])[0]
    extra = [stdout("a\n"), nbformat.v4.new_output("stream", name="stderr", text="warn\n")]
    assert "Unexpected output fields" in compare.mismatches("nb", nb, [extra])[0]
    error = nbformat.v4.new_output("error", ename="ValueError", evalue="bad", traceback=[])
    assert compare.mismatches("nb", nb, [[error]]) == [
        "nb::Cell 0: Cell execution caused an exception: ValueError: bad"]
    assert "2 code cells run" in compare.mismatches("nb", nb, [[], []])[0]


def test_nbval_markers_are_obeyed():
    ignored = code_cell([stdout("a\n")], "# NBVAL_IGNORE_OUTPUT\nprint(now())")
    raises = code_cell([], "raise ValueError")
    raises.metadata["tags"] = ["raises-exception"]
    error = nbformat.v4.new_output("error", ename="ValueError", evalue="", traceback=[])
    nb = notebook(ignored, raises)
    assert compare.mismatches("nb", nb, [[stdout("b\n")], [error]]) != []  # raises: outputs differ
    raises.outputs = [copy.deepcopy(error)]
    assert compare.mismatches("nb", nb, [[stdout("b\n")], [error]]) == []


def test_the_sanitize_rules_are_the_project_file():
    rules = compare.sanitize_patterns()
    assert rules == compare.sanitize_patterns(ROOT / "notebooks" / "sanitize.cfg")
    assert r"\b0x[0-9a-fA-F]{6,16}\b" in rules


def test_what_is_skipped_is_what_nbval_skips():
    """SKIP_COMPARE is nbval's skip_compare, as IPyNbFile.__init__ writes it (no --nbdime)."""
    tree = ast.parse(inspect.getsource(IPyNbFile.__init__).strip())
    skipped = {node.value for assign in ast.walk(tree)
               if isinstance(assign, ast.Assign | ast.AugAssign)
               and "skip_compare" in ast.unparse(assign)
               for node in ast.walk(assign.value)
               if isinstance(node, ast.Constant) and isinstance(node.value, str)}
    assert skipped == set(compare.SKIP_COMPARE)

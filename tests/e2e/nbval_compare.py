"""Strict nbval's output comparison, for outputs a notebook run produced elsewhere.

The JupyterLab end-to-end test runs every notebook once, in the browser; it takes the code
cells' outputs from the page after its run-all and compares them with the committed notebook
here, the way ``pytest --nbval --nbval-sanitize-with notebooks/sanitize.cfg`` does (``make
test-all`` still runs nbval itself). nbval's own code does the work: its cell options (the
``NBVAL_*`` comments and tags), its stream coalescing (every stream of a name joined into one,
``\\r`` and ``\\b`` applied), its sanitizing and its comparison (``IPyNbCell.compare_outputs``,
run on a stand-in for the pytest item). Only the list of what nbval skips is written out here,
as ``IPyNbFile.__init__`` builds it without ``--nbdime``.

Two differences from nbval, both towards the saved notebook: the page applies display updates
and ``clear_output`` as ``tools/notebooks.py`` (nbclient) does when it saves the outputs, where
nbval keeps a display's first state and every cleared output.
"""

from __future__ import annotations

import copy
import warnings
from collections import OrderedDict, defaultdict
from collections.abc import Sequence
from pathlib import Path

import nbformat
from nbval.plugin import (
    IPyNbCell,
    coalesce_streams,
    find_comment_markers,
    find_metadata_tags,
    get_sanitize_patterns,
    nocolors,
)

SANITIZE = Path(__file__).resolve().parents[2] / "notebooks" / "sanitize.cfg"

# What nbval leaves out of the comparison: output keys, and the MIME types of 'data'
# (IPyNbFile.skip_compare in nbval 0.11, without --nbdime).
SKIP_COMPARE = (
    "metadata",
    "traceback",
    "prompt_number",
    "output_type",
    "name",
    "execution_count",
    "application/vnd.jupyter.widget-view+json",  # model ids are random
    "image/png",
    "image/jpeg",
)


def sanitize_patterns(path: Path = SANITIZE) -> OrderedDict[str, str]:
    """The regex -> replacement rules of a sanitize file, as nbval reads them."""
    return OrderedDict(get_sanitize_patterns(path.read_text(encoding="utf-8")))


class _Cell:
    """Stands in for nbval's pytest item, whose comparison methods it borrows. Its
    assertion-repr hook finds nothing, so a mismatch is told as nbval's fallback tells it:
    the reference (committed) output, then the one computed, both sanitized."""

    compare_outputs = IPyNbCell.compare_outputs
    format_output_compare = IPyNbCell.format_output_compare
    sanitize = IPyNbCell.sanitize
    colors = nocolors

    def __init__(self, patterns: OrderedDict[str, str]):
        self.parent = type("File", (), {})()
        self.parent.skip_compare = SKIP_COMPARE
        self.parent.sanitize_patterns = patterns
        self.config = None
        self.ihook = type("Hooks", (), {"pytest_assertrepr_compare": staticmethod(
            lambda **_: [])})()
        self.comparison_traceback: list[str] = []


def cell_options(cell: nbformat.NotebookNode) -> defaultdict[str, bool]:
    """nbval's options for a code cell (strict mode): from its tags and its comments."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # nbval warns of conflicting markers; it uses the last
        options = defaultdict(bool, find_metadata_tags(cell.metadata))
        options.update(dict(find_comment_markers(cell.source)))
    options.setdefault("check", True)
    return options


def mismatches(name: str, committed: nbformat.NotebookNode, outputs: Sequence[Sequence[dict]],
               patterns: OrderedDict[str, str] | None = None) -> list[str]:
    """Where a run's outputs (one list of nbformat outputs per code cell, in order) differ from
    the committed notebook's, as strict nbval finds and words it: "<name>::Cell <n>" (code
    cells counted from 0, as nbval counts them), then what differs. Empty when nbval passes."""
    patterns = sanitize_patterns() if patterns is None else patterns
    cells = [cell for cell in committed.cells if cell.cell_type == "code"]
    if len(cells) != len(outputs):
        return [f"{name}: {len(outputs)} code cells run, the committed notebook has {len(cells)}"]
    problems = []
    for number, (cell, got) in enumerate(zip(cells, outputs, strict=True)):
        options = cell_options(cell)
        if options["skip"]:
            continue
        where = f"{name}::Cell {number}"
        got = coalesce_streams([nbformat.from_dict(copy.deepcopy(dict(o))) for o in got])
        errors = [o for o in got if o.output_type == "error"]
        if errors and not options["check_exception"]:
            problems.append(f"{where}: Cell execution caused an exception: "
                            f"{errors[0].get('ename')}: {errors[0].get('evalue')}")
            continue
        if cell.execution_count is None:
            if cell.outputs:
                problems.append(f"{where}: Unrun reference cell has outputs")
            continue
        if options["check"]:
            compared = _Cell(patterns)
            reference = coalesce_streams(copy.deepcopy(cell.outputs))
            if not compared.compare_outputs(got, reference):
                problems.append(f"{where}: Cell outputs differ\n"
                                + "\n".join(map(str, compared.comparison_traceback)))
    return problems

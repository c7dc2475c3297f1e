"""The package's layout, as docs/layout.md's map states it: one question per module, imports
that only point up the map (so no cycles), and the chapter's small core on top."""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "bertlib"


def layout_map() -> list[str]:
    """Module names (``bertlib.model``, ``bertlib.assets``, ...) in docs/layout.md's table order."""
    layout = (ROOT / "docs" / "layout.md").read_text(encoding="utf-8")
    paths = re.findall(r"^\| `(bertlib/[\w/]+?)(?:\.py|/)` \|", layout, flags=re.M)
    return [path.replace("/", ".") for path in paths]


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def bertlib_imports(path: Path) -> set[str]:
    """The bertlib modules that ``path`` imports, anywhere in the file."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("bertlib"):
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("bertlib")}
    return found


def test_every_module_is_on_the_map_once():
    order = layout_map()
    assert len(order) == len(set(order))
    # their __init__ re-exports the public names or only says what the package holds
    packages = {"bertlib", "bertlib.viz", *(f"bertlib.{p}" for p in SUBPACKAGES)}
    assert set(order) == set(modules()) - packages


def upward_violations(order: list[str], imports: dict[str, set[str]]) -> list[str]:
    """Every import of a module listed at or below the importer (a cycle always has one)."""
    rank = {name: i for i, name in enumerate(order)}
    return [f"{name} imports {imported}" for name in order for imported in sorted(imports[name])
            if rank.get(imported, len(order)) >= rank[name]]


def test_imports_point_only_up_the_map():
    order = layout_map()
    imports = {name: bertlib_imports(modules()[name]) for name in order}
    assert upward_violations(order, imports) == []


def test_the_rule_catches_a_cycle_and_an_unmapped_module():
    order = ["bertlib.model", "bertlib.weights.hf"]
    up = {"bertlib.model": set(), "bertlib.weights.hf": {"bertlib.model"}}
    assert upward_violations(order, up) == []
    cycle = {"bertlib.model": {"bertlib.weights.hf"}, "bertlib.weights.hf": {"bertlib.model"}}
    assert upward_violations(order, cycle) == ["bertlib.model imports bertlib.weights.hf"]
    unmapped = {"bertlib.model": {"bertlib.plots"}, "bertlib.weights.hf": set()}
    assert upward_violations(order, unmapped) == ["bertlib.model imports bertlib.plots"]


# The chapter's code, top to bottom: model, inputs, masking, data, loss, training.
CORE = ["bertlib.model", "bertlib.inputs", "bertlib.masking", "bertlib.data", "bertlib.batches",
        "bertlib.loss", "bertlib.train"]
SUPPORT = ("bertlib.support.", "bertlib.text.")


def test_the_core_sits_at_the_top_and_imports_only_its_support():
    """``ls bertlib/`` shows the small model: the chapter's modules are the only top-level
    ones, and they import torch, one another and the support packages, nothing else of
    bertlib (no speed tricks, figures, analyses or fine-tuning)."""
    top = {name for name in modules() if name.count(".") == 1 and name not in
           {"bertlib.assets", "bertlib.viz", *(f"bertlib.{p}" for p in SUBPACKAGES)}}
    assert top == set(CORE)
    outside = [f"{name} imports {imported}" for name in CORE
               for imported in sorted(bertlib_imports(modules()[name]))
               if imported not in CORE and not imported.startswith(SUPPORT)]
    assert outside == []


SUBPACKAGES = ["support", "text", "weights", "scale", "analysis", "finetuning", "classroom"]


def test_model_py_needs_no_other_bertlib_module():
    assert bertlib_imports(PACKAGE / "model.py") == set()


def test_the_model_knows_nothing_of_hugging_face():
    source = (PACKAGE / "model.py").read_text(encoding="utf-8").lower()
    assert "hugging" not in source and "from_hf" not in source

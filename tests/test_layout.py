"""The package's layout, as docs/layout.md's map states it: one question per module, imports that
only point up the map (so no cycles), and no module past 400 lines."""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "bertlib"
MAX_LINES = 400


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
    packages = {"bertlib", "bertlib.viz"}  # their __init__ only re-exports the public names
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
    order = ["bertlib.model", "bertlib.hf"]
    assert upward_violations(order, {"bertlib.model": set(), "bertlib.hf": {"bertlib.model"}}) == []
    cycle = {"bertlib.model": {"bertlib.hf"}, "bertlib.hf": {"bertlib.model"}}
    assert upward_violations(order, cycle) == ["bertlib.model imports bertlib.hf"]
    unmapped = {"bertlib.model": {"bertlib.plots"}, "bertlib.hf": set()}
    assert upward_violations(order, unmapped) == ["bertlib.model imports bertlib.plots"]


def test_no_module_is_over_the_size_limit():
    long = {name: n for name, path in modules().items()
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}


def test_the_model_knows_nothing_of_hugging_face():
    source = (PACKAGE / "model.py").read_text(encoding="utf-8").lower()
    assert "hugging" not in source and "from_hf" not in source

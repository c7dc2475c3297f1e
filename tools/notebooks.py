"""Build, execute and check the bilingual notebooks.

Each notebook has one source, ``notebooks/src/NN_name.py`` (jupytext percent format): markdown
cells tagged ``lang="en"`` or ``lang="zh"``, each English cell directly followed by its Chinese
counterpart, and code cells shared by both editions (Chinese paragraphs are unwrapped on the
way, see ``unwrap_chinese``). This script writes the two editions,
``notebooks/en/NN_name.ipynb`` and ``notebooks/zh/NN_name.ipynb``, runs them headlessly (kernel
``python3``, working directory = the edition's folder, which is how ``bertlib`` picks the
language of its messages) and saves them with their outputs.

    python tools/notebooks.py                 # build and execute every notebook
    python tools/notebooks.py 03_encoder      # only these notebooks
    python tools/notebooks.py --check         # fast, no execution: editions match sources
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

import jupytext
import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
LANGS = ("en", "zh")
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
CELL_TIMEOUT_S = 120
BUDGET_S = 45  # the most one notebook may take to execute


class SourceError(ValueError):
    """A notebook source breaks the rules of the module docstring."""


def load_source(path: Path) -> nbformat.NotebookNode:
    """Read a jupytext source and check its language tags."""
    nb = jupytext.read(path)
    cells = nb.cells
    langs = [c.metadata.get("lang") if c.cell_type == "markdown" else None for c in cells]
    for i, (cell, lang) in enumerate(zip(cells, langs, strict=True)):
        if cell.cell_type == "markdown" and lang not in LANGS:
            raise SourceError(f"{path.name}: markdown cell {i} needs lang=\"en\" or lang=\"zh\"; "
                              f"got {lang!r}")
    for i, lang in enumerate(langs):
        if lang == "en" and langs[i + 1:i + 2] != ["zh"]:
            raise SourceError(f"{path.name}: English markdown cell {i} must be followed by its "
                              "Chinese counterpart (lang=\"zh\")")
        if lang == "zh" and (i == 0 or langs[i - 1] != "en"):
            raise SourceError(f"{path.name}: Chinese markdown cell {i} must follow its English "
                              "counterpart (lang=\"en\")")
    return nb


# Chinese punctuation (CJK symbols, fullwidth forms, curly quotes, dashes, ellipses) and
# ideographs.
CJK_PUNCT = re.compile(r"[\u2014\u2018-\u201d\u2026\u3000-\u303f\uff00-\uffef]")
CJK_CHAR = re.compile(r"[\u4e00-\u9fff]")
# Lines that open a Markdown block of their own: list items, headings, tables, fences, display
# maths, quotes. They are never joined onto the line before.
OPENS_BLOCK = re.compile(r"\s*([*+-] |\d+\. |#|\||```|\$\$|>)")
# Lines after which a new line must stay a new line.
ENDS_BLOCK = re.compile(r"\s*(#|\||```|\$\$)")


def _glue(left: str, right: str) -> str:
    if CJK_PUNCT.match(left) or CJK_PUNCT.match(right):
        return ""
    return "" if CJK_CHAR.match(left) and CJK_CHAR.match(right) else " "


def unwrap_chinese(markdown: str) -> str:
    """Join the wrapped lines of each paragraph or list item (the sources wrap at 100 columns).

    Browsers render a line break inside a paragraph as a space, which does not belong between
    Chinese characters or next to Chinese punctuation. Joined lines get no space there, and one
    space between Chinese and Latin text. Blank lines, headings, tables, display maths and
    fenced code are kept as they are.
    """
    out: list[str] = []
    in_fence = False
    for line in markdown.split("\n"):
        fence = line.lstrip().startswith("```")
        joinable = (not in_fence and not fence and out and out[-1].strip() and line.strip()
                    and not OPENS_BLOCK.match(line) and not ENDS_BLOCK.match(out[-1]))
        in_fence ^= fence
        if joinable:
            prev, nxt = out[-1].rstrip(), line.strip()
            out[-1] = prev + _glue(prev[-1], nxt[0]) + nxt
        else:
            out.append(line)
    return "\n".join(out)


def edition(source: nbformat.NotebookNode, lang: str) -> nbformat.NotebookNode:
    """The ``lang`` edition of a source: its markdown in that language and every code cell."""
    cells = []
    for cell in source.cells:
        if cell.cell_type == "markdown" and cell.metadata["lang"] != lang:
            continue
        metadata = {k: v for k, v in cell.metadata.items() if k != "lang"}
        if cell.cell_type == "code":
            make, text = nbformat.v4.new_code_cell, cell.source
        else:
            make = nbformat.v4.new_markdown_cell
            text = unwrap_chinese(cell.source) if lang == "zh" else cell.source
        # Stable ids, so that rebuilding a notebook does not rewrite every cell in git.
        cells.append(make(text, metadata=metadata, id=f"cell-{len(cells)}"))
    return nbformat.v4.new_notebook(
        cells=cells, metadata={"kernelspec": KERNELSPEC, "language_info": {"name": "python"}}
    )


def execute(nb: nbformat.NotebookNode, cwd: Path) -> float:
    """Run every cell in place; returns the wall-clock seconds it took."""
    client = NotebookClient(nb, timeout=CELL_TIMEOUT_S, kernel_name=KERNELSPEC["name"],
                            resources={"metadata": {"path": str(cwd)}}, record_timing=False,
                            coalesce_streams=True)
    start = time.perf_counter()
    client.execute()
    return time.perf_counter() - start


def sources(notebooks_dir: Path, names: list[str] | None = None) -> list[Path]:
    found = sorted((notebooks_dir / "src").glob("*.py"))
    if names:
        missing = set(names) - {p.stem for p in found}
        if missing:
            raise SystemExit(f"no source for {sorted(missing)}; have {[p.stem for p in found]}")
        found = [p for p in found if p.stem in names]
    return found


def _cells(nb: nbformat.NotebookNode, cell_type: str | None = None) -> list[tuple[str, str]]:
    return [(c.cell_type, c.source) for c in nb.cells if cell_type in (None, c.cell_type)]


def _first_difference(a: list[tuple[str, str]], b: list[tuple[str, str]]) -> str:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            first_line = (x[1].splitlines() or [""])[0]
            return f"cell {i} ({x[0]}: {first_line[:60]!r})"
    return f"cell count {len(a)} vs {len(b)}"


def check(notebooks_dir: Path = NOTEBOOKS) -> list[str]:
    """Problems with the committed editions, without executing anything (empty = all good).

    Each edition must hold exactly the cells its source generates, executed top to bottom in
    one run; the English and Chinese code cells must be identical; every edition must have a
    source.
    """
    problems = []
    srcs = sources(notebooks_dir)
    for src in srcs:
        try:
            source = load_source(src)
        except SourceError as err:
            problems.append(str(err))
            continue
        committed = {}
        for lang in LANGS:
            path = notebooks_dir / lang / f"{src.stem}.ipynb"
            rel = f"{lang}/{path.name}"
            if not path.exists():
                problems.append(f"{rel} is missing: run tools/notebooks.py {src.stem}")
                continue
            nb = committed[lang] = nbformat.read(path, as_version=4)
            expected = _cells(edition(source, lang))
            if _cells(nb) != expected:
                problems.append(f"{rel} differs from src/{src.name} at "
                                f"{_first_difference(_cells(nb), expected)}: "
                                f"run tools/notebooks.py {src.stem}")
            counts = [c.execution_count for c in nb.cells if c.cell_type == "code"]
            if counts != list(range(1, len(counts) + 1)):
                problems.append(f"{rel} was not executed top to bottom in one run (execution "
                                f"counts {counts}): run tools/notebooks.py {src.stem}")
        if len(committed) == len(LANGS):
            en, zh = (_cells(committed[lang], "code") for lang in LANGS)
            if en != zh:
                problems.append(f"{src.stem}: English and Chinese code cells differ at "
                                f"{_first_difference(en, zh)}")
    stems = {p.stem for p in srcs}
    for lang in LANGS:
        for path in sorted((notebooks_dir / lang).glob("*.ipynb")):
            if path.stem not in stems:
                problems.append(f"{lang}/{path.name} has no source in src/")
    return problems


def build(names: list[str] | None = None, notebooks_dir: Path = NOTEBOOKS) -> int:
    """Generate, execute and write both editions; print the times. Returns an exit code."""
    total, slow = 0.0, []
    for src in sources(notebooks_dir, names):
        source = load_source(src)
        for lang in LANGS:
            folder = notebooks_dir / lang
            folder.mkdir(exist_ok=True)
            nb = edition(source, lang)
            try:
                seconds = execute(nb, folder)
            except CellExecutionError as err:
                print(f"{lang}/{src.stem}.ipynb failed; nothing written for it.\n{err}")
                return 1
            nbformat.write(nb, folder / f"{src.stem}.ipynb")
            total += seconds
            print(f"{lang}/{src.stem}.ipynb  {seconds:5.1f} s", flush=True)
            if seconds > BUDGET_S:
                slow.append(f"{lang}/{src.stem}.ipynb")
    print(f"total  {total:5.1f} s")
    if slow:
        print(f"over the {BUDGET_S} s budget: {', '.join(slow)}")
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="notebook names such as 03_encoder (default: all)")
    parser.add_argument("--check", action="store_true",
                        help="check the committed editions against the sources; run nothing")
    args = parser.parse_args(argv)
    if not args.check:
        return build(args.names)
    problems = check()
    for problem in problems:
        print(problem)
    print(f"{len(problems)} problem(s)" if problems else "notebooks match their sources")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

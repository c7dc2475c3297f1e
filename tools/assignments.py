"""Build autograded assignments in nbgrader's format from the notebooks' sources.

Each language gets a course folder, ``build/assignments/<lang>/`` (an nbgrader course: its
``nbgrader_config.py``, ``source/NN_name/NN_name.ipynb``, and after ``nbgrader
generate_assignment`` the students' version in ``release/``). Each notebook is the edition that
``tools/notebooks.py`` builds for the language, with its exercises turned into nbgrader cells:

* a single answer (``answer = None`` then ``check_exercise``): an answer cell, the answer between
  ``### BEGIN SOLUTION`` and ``### END SOLUTION`` (computed by bertlib), and a locked test cell
  that keeps the in-notebook check and reports the answer as JSON for the grader;
* an implement-it exercise: the function's cell as a solution cell, its body from
  ``tools/assignment_solutions.py`` between the markers, and the check as a locked test cell
  (graded outside the kernel: bertlib.classroom.grading);
* an open exercise (in the list, with no check): a manually graded answer cell, holding the
  worked answer where the notebook has one (folded in ``<details>``, which the students'
  version loses with the rest of the worked answers).

Points: the exercise's stars. The autograder's verdicts come from
``bertlib.classroom.autograde.GradeOutside``, which the course's config puts in nbgrader's
autograde steps.

    python tools/assignments.py                       # every notebook, every edition
    python tools/assignments.py --lang zh 11_tagging_and_qa
    python tools/assignments.py --exercises-only ...  # the exercises and imports only (tests)
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))
from assignment_solutions import SOLUTIONS

from notebooks import LANGS, NOTEBOOKS, ROOT, SETUP_ID, edition, load_source, sources

OUT = ROOT / "build" / "assignments"
CODE_STUB = {"en": "# YOUR CODE HERE", "zh": "# 在这里写你的代码", "ja": "# ここにコードを書く"}
TEXT_STUB = {"en": "YOUR ANSWER HERE", "zh": "在这里写你的答案", "ja": "ここに答えを書いてください"}
OPEN_TITLE = {"en": "**Exercise {n}** — your answer:", "zh": "**练习 {n}** —— 你的答案：",
              "ja": "**演習 {n}** — あなたの答え："}
NO_WORKED = {"en": "(No worked answer in the notebook: grade by the exercise's text.)",
             "zh": "（笔记本中没有参考答案：请按练习的要求评分。）",
             "ja": "（ノートブックに解答例はありません。演習の文に沿って採点してください。）"}
ANSWER_CELL = re.compile(r'answer = None  # (?P<comment>.*)\ncheck_exercise\("(?P<key>\w+)", '
                         r'answer\)\s*\Z')
IMPL_CHECK = re.compile(r'\n+check_implementation\("(?P<key>\w+)", (?P<name>\w+)\)\s*\Z')
RAISE = "    raise NotImplementedError  # replace this line with your code"
EXERCISE_NUMBER = re.compile(r"[Ee]xercise (\d+)")
STARS = re.compile(r"^(\d+)\. (★+)", re.M)
DETAILS = re.compile(r"<details><summary>[^<\d]*(\d+)[^<]*</summary>(.*?)</details>", re.S)
IMPORTS = re.compile(r"^(import|from) \w", re.M)


SOLUTION_MARKERS = re.compile(r"^ *### (BEGIN|END) SOLUTION\n?", re.M)


def solved(nb: nbformat.NotebookNode) -> dict[str, str]:
    """The solution cells of an instructor's version, by grade id, as a student who solved every
    exercise would hand them in: nbgrader's markers taken out."""
    return {c.metadata["nbgrader"]["grade_id"]: SOLUTION_MARKERS.sub("", c.source)
            for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")}


def _nbgrader(cell, grade_id: str, *, grade: bool, solution: bool, locked: bool,
              points: int = 0):
    cell.metadata["nbgrader"] = {"grade": grade, "solution": solution, "locked": locked,
                                 "grade_id": grade_id, "schema_version": 3, "task": False}
    if grade:
        cell.metadata["nbgrader"]["points"] = points
    return cell


def _code(text: str, **meta):
    return _nbgrader(nbformat.v4.new_code_cell(text), **meta)


def assignment(source: nbformat.NotebookNode, lang: str,
               exercises_only: bool = False) -> nbformat.NotebookNode:
    """The ``lang`` edition of ``source`` as an nbgrader source notebook."""
    from bertlib.classroom.exercises import EXERCISES

    nb = edition(source, lang)
    markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    stars = {int(n): len(s) for n, s in STARS.findall(markdown)}
    worked = {int(n): body.strip() for n, body in DETAILS.findall(markdown)}
    checked: set[int] = set()
    cells = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            cell.source = DETAILS.sub("", cell.source).rstrip()
            if cell.source and (not exercises_only or i == 0 or STARS.search(cell.source)):
                cells.append(cell)
            continue
        number = EXERCISE_NUMBER.search(cell.source)
        points = stars.get(int(number.group(1)), 1) if number else 1
        if (found := ANSWER_CELL.match(cell.source)) is not None:
            key = found["key"]
            checked.add(int(number.group(1)))
            cells.append(_code(f"answer = None  # {found['comment']}\n### BEGIN SOLUTION\n"
                               f"answer = {EXERCISES[key]()!r}\n### END SOLUTION",
                               grade_id=key, grade=False, solution=True, locked=False))
            cells.append(_code(f'check_exercise("{key}", answer)  # feedback while you work\n'
                               "from bertlib.classroom.grading import report_answer\n"
                               "report_answer(answer)  # graded outside this notebook",
                               grade_id=f"bertlib-answer-{key}", grade=True, solution=False,
                               locked=True, points=points))
        elif (found := IMPL_CHECK.search(cell.source)) is not None and RAISE in cell.source:
            key, definition = found["key"], cell.source[:found.start()]
            checked.add(int(number.group(1)))
            body = textwrap.indent(SOLUTIONS[key], "    ")
            cells.append(_code(definition.replace(RAISE, "    ### BEGIN SOLUTION\n" + body
                                                  + "\n    ### END SOLUTION"),
                               grade_id=key, grade=False, solution=True, locked=False))
            cells.append(_code(found.group(0).strip(), grade_id=f"bertlib-impl-{key}",
                               grade=True, solution=False, locked=True, points=points))
        elif not exercises_only or cell.get("id") == SETUP_ID or IMPORTS.search(cell.source):
            cells.append(nbformat.v4.new_code_cell(cell.source, metadata=cell.metadata))
    for n in sorted(set(stars) - checked):
        title = nbformat.v4.new_markdown_cell(OPEN_TITLE[lang].format(n=n))
        cells.append(_nbgrader(title, f"open-exercise-{n}-title", grade=False, solution=False,
                               locked=True))
        answer = "### BEGIN SOLUTION\n" + worked.get(n, NO_WORKED[lang]) + "\n### END SOLUTION"
        cells.append(_nbgrader(nbformat.v4.new_markdown_cell(answer), f"open-exercise-{n}",
                               grade=True, solution=True, locked=False, points=stars[n]))
    for j, cell in enumerate(cells):
        cell.id = f"cell-{j}"
    nb.cells = cells
    return nb


CONFIG = '''\
# nbgrader's settings for the {lang} edition (written by tools/assignments.py).
c = get_config()  # noqa: F821
c.CourseDirectory.course_id = "bert-notebooks-{lang}"
c.ClearSolutions.code_stub = {{"python": {stub!r}}}
c.ClearSolutions.text_stub = {text!r}
c.Execute.timeout = 300  # seconds a cell may run
# The grades of bertlib's test cells are decided outside the student's kernel.
from bertlib.classroom.autograde import autograde_preprocessors  # noqa: E402
c.Autograde.autograde_preprocessors = autograde_preprocessors()
c.GradeOutside.lang = {lang!r}
'''


def nbgrader(course: Path, *args: str) -> subprocess.CompletedProcess:
    """``nbgrader args`` in the course folder (the nbgrader of this Python's environment)."""
    command = [sys.executable, "-m", "nbgrader", *args]
    # nbgrader runs alembic, its database tool, from PATH: this environment's.
    env = os.environ | {"PATH": f"{Path(sys.executable).parent}{os.pathsep}"
                                f"{os.environ.get('PATH', '')}"}
    return subprocess.run(command, cwd=course, capture_output=True, text=True, check=False,
                          env=env)


def build(out: Path = OUT, langs: tuple[str, ...] = LANGS, names: list[str] | None = None,
          exercises_only: bool = False, notebooks_dir: Path = NOTEBOOKS) -> int:
    """Write each language's course and generate the students' version of each notebook."""
    for lang in langs:
        course = out / lang
        course.mkdir(parents=True, exist_ok=True)
        (course / "nbgrader_config.py").write_text(CONFIG.format(
            lang=lang, stub=CODE_STUB[lang], text=TEXT_STUB[lang]), "utf-8")
        for src in sources(notebooks_dir, names):
            folder = course / "source" / src.stem
            folder.mkdir(parents=True, exist_ok=True)
            nb = assignment(load_source(src), lang, exercises_only)
            nbformat.write(nb, folder / f"{src.stem}.ipynb")
            done = nbgrader(course, "generate_assignment", src.stem, "--force")
            if done.returncode:
                print(done.stdout + done.stderr)
                return 1
            print(f"{lang}: release/{src.stem}/{src.stem}.ipynb")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="notebooks such as 11_tagging_and_qa")
    parser.add_argument("--lang", action="append", choices=LANGS, help="default: every edition")
    parser.add_argument("--out", type=Path, default=OUT, help=f"default: {OUT}")
    parser.add_argument("--exercises-only", action="store_true",
                        help="keep the imports and the exercises only (a quick course)")
    args = parser.parse_args(argv)
    return build(args.out, tuple(args.lang or LANGS), args.names or None, args.exercises_only)


if __name__ == "__main__":
    sys.exit(main())

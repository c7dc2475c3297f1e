"""How long nbgrader takes to grade a class: one notebook's assignment, N students who handed
in the reference solutions, `nbgrader autograde` as the instructor runs it (every submission
executed in a kernel of its own, one after another, then bertlib's cells graded outside it by
GradeOutside). Prints the time for the class and per submission, and the load on the machine.

    python benchmarks/bench_grading.py [--name 11_tagging_and_qa] [--students 30] [--lang en]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import assignments  # noqa: E402


def solved(course: Path, name: str) -> nbformat.NotebookNode:
    """The students' version with every solution cell filled in from the instructor's."""
    answers = assignments.solved(
        nbformat.read(course / "source" / name / f"{name}.ipynb", as_version=4))
    nb = nbformat.read(course / "release" / name / f"{name}.ipynb", as_version=4)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in answers:
            cell.source = answers[grade_id]
    return nb


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--name", default="11_tagging_and_qa")
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--lang", default="en")
    parser.add_argument("--exercises-only", action="store_true")
    args = parser.parse_args()
    out = Path(tempfile.mkdtemp(prefix="bench-grading-"))
    assert assignments.build(out, (args.lang,), [args.name], args.exercises_only) == 0
    course = out / args.lang
    nb = solved(course, args.name)
    for i in range(1, args.students + 1):
        folder = course / "submitted" / f"student{i:02d}" / args.name
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / f"{args.name}.ipynb")
    load = os.getloadavg()[0]
    start = time.perf_counter()
    done = assignments.nbgrader(course, "autograde", args.name)
    seconds = time.perf_counter() - start
    if done.returncode:
        print(done.stdout + done.stderr)
        return 1
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        scores = [gb.find_submission_notebook(args.name, args.name, f"student{i:02d}").score
                  for i in range(1, args.students + 1)]
        full = gb.find_notebook(args.name, args.name).max_code_score
    print(f"{args.students} submissions of {args.name} ({args.lang}"
          f"{', exercises only' if args.exercises_only else ''}) graded in "
          f"{seconds / 60:.1f} min on {os.cpu_count()} cores: {seconds / args.students:.1f} s "
          f"each; scores {min(scores)}-{max(scores)}"
          f" of {full}; load average "
          f"{load:.2f} before, {os.getloadavg()[0]:.2f} after (1 min)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

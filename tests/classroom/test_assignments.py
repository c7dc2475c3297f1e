"""The autograded assignments (tools/assignments.py, bertlib.classroom.grading): the whole loop
on a course built from notebook 11's exercises (two implement-it exercises and a single answer):
the students' version, the reference solutions filled in as a student would, the blank version
and four cheats, autograded by nbgrader; then the instructor's path through nbgrader's exchange
(release, fetch, submit, collect, autograde, feedback) for a Chinese and a Japanese course.
Needs the ``grading`` extra (nbgrader)."""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

nbgrader = pytest.importorskip("nbgrader")
import nbformat  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import assignments  # noqa: E402
from assignment_solutions import SOLUTIONS  # noqa: E402

NAME = "11_tagging_and_qa"
IMPL = {"11_tagging_loss": "tagging_loss(Y_hat, labels)",
        "11_best_span": "best_span(scores, allowed, max_answer_len)"}
FULL = 1 + 2 + 2  # the stars of exercises 1, 2 and 3


def _def(key: str, body: str) -> str:
    return f"def {IMPL[key]}:\n" + "\n".join("    " + line for line in body.splitlines())


# Each cheat: the cells a student would write, by grade id; the rest left blank.
CHEATS = {
    # bertlib's own functions, imported plainly and by a name put together at run time.
    "calls_bertlib": {
        "11_tagging_loss": _def("11_tagging_loss", "from bertlib.finetuning import task_loss\n"
                                "return task_loss(Y_hat, labels)"),
        "11_best_span": _def("11_best_span", "import importlib\nlib = importlib.import_module("
                             "'bert' + 'lib.finetuning.finetune')\n"
                             "return lib.best_span(scores, allowed, max_answer_len)"),
    },
    # The expected value read from the frames of whoever called (the checker).
    "reads_frames": {
        "11_frozen_trainable": "import sys\nanswer = None\nframe = sys._getframe()\n"
                               "while frame is not None:\n"
                               "    answer = frame.f_locals.get('expected', answer)\n"
                               "    frame = frame.f_back",
        "11_tagging_loss": _def("11_tagging_loss", "import sys\nframe = sys._getframe(1)\n"
                                "while frame is not None:\n"
                                "    if 'expected' in frame.f_locals:\n"
                                "        return frame.f_locals['expected']\n"
                                "    frame = frame.f_back\nreturn torch.tensor(0.0)"),
    },
    # An int and a tensor that say they equal anything.
    "forges_equality": {
        "11_frozen_trainable": "class Forged(int):\n    def __eq__(self, other):\n"
                               "        return True\n    __hash__ = int.__hash__\n"
                               "answer = Forged(0)",
        "11_tagging_loss": "class Equal(torch.Tensor):\n"
                           "    @classmethod\n"
                           "    def __torch_function__(cls, func, types, args=(), kwargs=None):\n"
                           "        if func.__name__ in ('isclose', 'eq', '__eq__', 'ne'):\n"
                           "            return torch.tensor(func.__name__ != 'ne')\n"
                           "        return super().__torch_function__(func, types, args,"
                           " kwargs or {})\n\n"
                           + _def("11_tagging_loss", "return torch.zeros(()).as_subclass(Equal)"),
    },
    # torch.isclose and the checks patched in the kernel, and every error swallowed.
    "patches_kernel": {
        "11_frozen_trainable": "import bertlib.classroom.exercises as ex\n"
                               "ex.is_correct = lambda key, answer: True\n"
                               "get_ipython().set_custom_exc((BaseException,),"
                               " lambda *args, **kwargs: None)\nanswer = 0",
        "11_tagging_loss": "import torch\n"
                           "torch.isclose = lambda a, b, **k: torch.ones(torch.broadcast_shapes("
                           "a.shape, b.shape), dtype=torch.bool)\n\n"
                           + _def("11_tagging_loss", "return torch.tensor(0.0)"),
    },
}


def _cells(nb) -> dict:
    return {c.metadata["nbgrader"]["grade_id"]: c for c in nb.cells
            if "nbgrader" in c.metadata}


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("course")
    assert assignments.build(out, ("en",), [NAME], exercises_only=True) == 0
    return out / "en"


def _submit(course: Path, student: str, cells: dict[str, str]) -> None:
    nb = nbformat.read(course / "release" / NAME / f"{NAME}.ipynb", as_version=4)
    by_id = _cells(nb)
    for grade_id, source in cells.items():
        by_id[grade_id].source = source
    folder = course / "submitted" / student / NAME
    folder.mkdir(parents=True)
    nbformat.write(nb, folder / f"{NAME}.ipynb")


def _reference_cells(course: Path, name: str = NAME) -> dict[str, str]:
    """The instructor's solution cells, as a student who solved everything would write them."""
    return assignments.solved(nbformat.read(course / "source" / name / f"{name}.ipynb", 4))


@pytest.fixture(scope="module")
def graded(course: Path) -> dict[str, tuple[float, dict[str, str]]]:
    """Each student's score and, per graded cell, its feedback, after nbgrader autograde."""
    _submit(course, "reference", _reference_cells(course))
    _submit(course, "blank", {})
    for student, cells in CHEATS.items():
        _submit(course, student, cells)
    done = assignments.nbgrader(course, "autograde", NAME, "--force")
    assert done.returncode == 0, done.stdout + done.stderr
    from nbgrader.api import Gradebook
    results = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for student in ["reference", "blank", *CHEATS]:
            submission = gb.find_submission_notebook(NAME, NAME, student)
            nb = nbformat.read(course / "autograded" / student / NAME / f"{NAME}.ipynb", 4)
            feedback = {grade_id: "".join(o.get("text", "") or o.get("evalue", "")
                                          for o in cell.outputs)
                        for grade_id, cell in _cells(nb).items()
                        if grade_id.startswith("bertlib-")}
            results[student] = (submission.score, feedback)
    return results


def test_the_students_version_holds_no_solution(course: Path) -> None:
    released = (course / "release" / NAME / f"{NAME}.ipynb").read_text("utf-8")
    for key in IMPL:
        for line in SOLUTIONS[key].splitlines():
            assert line.strip() not in released, line
    assert "BEGIN SOLUTION" not in released
    from bertlib.classroom.exercises import EXERCISES
    assert f"answer = {EXERCISES['11_frozen_trainable']()}" not in released
    assert "<details>" not in released  # the worked answers


@pytest.mark.slow
def test_the_reference_solutions_get_full_marks(graded) -> None:
    score, feedback = graded["reference"]
    assert score == FULL, feedback
    assert all(text.startswith("✓") for text in feedback.values()), feedback


@pytest.mark.slow
def test_the_blank_version_gets_nothing_and_says_why(graded) -> None:
    score, feedback = graded["blank"]
    assert score == 0
    assert "No answer was recorded" in feedback["bertlib-answer-11_frozen_trainable"]
    assert "should be Tensor" in feedback["bertlib-impl-11_tagging_loss"], feedback


@pytest.mark.slow
@pytest.mark.parametrize("cheat", CHEATS)
def test_a_cheat_gets_nothing(graded, cheat: str) -> None:
    score, feedback = graded[cheat]
    assert score == 0, feedback


# ---------------------------------------------------------------- the instructor's path
# A student's server on JupyterHub's Docker images: the user jovyan, the student's name in
# JUPYTERHUB_USER, which nbgrader then names the submission after.
AS_JOVYAN = ("import sys, nbgrader.utils as u; u.get_osusername = lambda: 'jovyan'; "
             "from nbgrader.apps.nbgraderapp import main; sys.exit(main())")


def _student(course_id: str, exchange: Path, folder: Path, student: str, *args: str):
    """``nbgrader args`` as ``student`` in their home folder, as on a JupyterHub server (where
    nbgrader also keeps its cache of the student's submissions)."""
    folder.mkdir(parents=True, exist_ok=True)
    env = os.environ | {"JUPYTERHUB_USER": student, "HOME": str(folder)}
    done = subprocess.run([sys.executable, "-c", AS_JOVYAN, *args, "--course", course_id,
                           f"--Exchange.root={exchange}"], cwd=folder, capture_output=True,
                          text=True, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def _flat(text: str) -> str:
    """Feedback text without the line breaks that fill() and HTML put in."""
    return re.sub(r"\s+", "", html.unescape(re.sub(r"<[^>]+>", "", text)))


@pytest.mark.slow
@pytest.mark.parametrize("lang, name", [("zh", "05_next_sentence"), ("ja", "03_encoder")])
def test_the_instructors_path_through_the_exchange(tmp_path: Path, lang: str, name: str) -> None:
    from bertlib.support.i18n import text
    assert assignments.build(tmp_path / "courses", (lang,), [name], exercises_only=True) == 0
    course, exchange = tmp_path / "courses" / lang, tmp_path / "exchange"
    exchange.mkdir()
    course_id = f"bert-notebooks-{lang}"
    setting = f"--Exchange.root={exchange}"
    assert assignments.nbgrader(course, "release_assignment", name, setting).returncode == 0
    answers = {"reference": _reference_cells(course, name), "blank": {}}
    for student, cells in answers.items():
        home = tmp_path / "students" / student
        _student(course_id, exchange, home, student, "fetch_assignment", name)
        path = home / name / f"{name}.ipynb"
        nb = nbformat.read(path, as_version=4)
        for grade_id, source in cells.items():
            _cells(nb)[grade_id].source = source
        nbformat.write(nb, path)
        _student(course_id, exchange, home, student, "submit", name)
    for args in (["collect", name, setting], ["autograde", name, "--force"],
                 ["generate_feedback", name, "--force"], ["release_feedback", name, setting]):
        done = assignments.nbgrader(course, *args)
        assert done.returncode == 0, done.stdout + done.stderr
    released = nbformat.read(course / "release" / name / f"{name}.ipynb", as_version=4)
    full = sum(c.metadata["nbgrader"]["points"] for c in released.cells
               if c.metadata.get("nbgrader", {}).get("grade_id", "").startswith("bertlib-"))
    assert full >= 3  # the notebook's implement-it exercise and single answers
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        scores = {s: gb.find_submission_notebook(name, name, s).score for s in answers}
    assert scores == {"reference": full, "blank": 0}
    for student in answers:
        home = tmp_path / "students" / student
        _student(course_id, exchange, home, student, "fetch_feedback", name)
        pages = list((home / name / "feedback").rglob("*.html"))
        assert len(pages) == 1, pages
        feedback = _flat(pages[0].read_text("utf-8"))
        expected = ("ex_correct", "grade_passed") if student == "reference" else (
            "grade_no_answer",)
        for key in expected:  # the verdicts, in the edition's language
            assert _flat(text(key, lang)) in feedback, (student, key)

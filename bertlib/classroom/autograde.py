"""nbgrader's side of :mod:`bertlib.classroom.grading` (needs the ``grading`` extra: nbgrader).

:class:`GradeOutside` runs in ``nbgrader autograde`` right after the notebook was executed, in
the grader's process. For every autograded test cell of ours (grade id ``bertlib-answer-<key>``
or ``bertlib-impl-<key>``) it throws away what the learner's kernel printed there, grades the
exercise outside that kernel, and leaves only the verdict: a line of feedback when right, an
error output when wrong, which nbgrader's own rule (``determine_grade``) turns into full or no
points. Whatever the learner's code did in the kernel (patched torch, swallowed errors, printed
✓) changes nothing but the JSON answers it reported, which are compared here.
"""

from __future__ import annotations

import re

import nbformat
from nbgrader.preprocessors import Execute, NbGraderPreprocessor
from traitlets import Unicode

from bertlib.classroom.grading import MIME, grade_answer, grade_implementation

ANSWER, IMPL = "bertlib-answer-", "bertlib-impl-"


def _grade_id(cell) -> str:
    return cell.metadata.get("nbgrader", {}).get("grade_id", "")


class GradeOutside(NbGraderPreprocessor):
    """Sets the outputs of our test cells to the verdict computed outside the kernel."""

    lang = Unicode("en", help="The edition's language, for the feedback.").tag(config=True)

    def preprocess(self, nb, resources):
        cells = {_grade_id(c): c for c in nb.cells if _grade_id(c)}
        for cell in nb.cells:
            grade_id = _grade_id(cell)
            if cell.cell_type != "code" or not grade_id.startswith((ANSWER, IMPL)):
                continue
            if grade_id.startswith(ANSWER):
                key = grade_id[len(ANSWER):]
                reported = [o for o in cell.outputs if o.get("output_type") == "display_data"
                            and MIME in o.get("data", {})]
                payload = reported[-1]["data"][MIME] if reported else None
                ok, message = grade_answer(key, payload, self.lang)
            else:
                key = grade_id[len(IMPL):]
                # The test cell is locked (nbgrader restored its source): it names the function.
                called = re.search(rf'check_implementation\("{key}", (\w+)', cell.source)
                solution = cells.get(key)
                source = solution.source if solution is not None else ""
                ok, message = grade_implementation(key, source, called.group(1) if called
                                                   else "", self.lang)
            self.log.info("%s: %s", grade_id, "passed" if ok else "failed")
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=message + "\n")
                            if ok else nbformat.v4.new_output(
                                "error", ename="NotGraded", evalue=message,
                                traceback=[message])]
        return nb, resources


def autograde_preprocessors() -> list:
    """nbgrader's autograde steps with :class:`GradeOutside` right after the execution."""
    from nbgrader.converters import Autograde
    steps = list(Autograde.class_traits()["autograde_preprocessors"].default())
    at = steps.index(Execute) + 1
    return [*steps[:at], GradeOutside, *steps[at:]]

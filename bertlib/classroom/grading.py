"""Graded work, compared outside the learner's process.

The in-notebook checks (:mod:`~bertlib.classroom.exercises`, :mod:`~bertlib.classroom.implement`)
run in the learner's kernel, where the learner's code can patch anything; they are feedback.
For grades, only plain values cross from the learner's side, and the expected values and the
comparison stay in the grader's process:

* a single answer: the assignment's locked test cell calls :func:`report_answer`, which shows the
  answer as JSON (an int or a float; a subclass of a number or a tensor is named, not run) under
  :data:`MIME`. The grader reads that JSON from the executed notebook and compares it with the
  answer bertlib computes in the grader's process (:func:`grade_answer`).
* an implement-it exercise: the grader takes the text of the learner's cell from the submitted
  notebook and runs it in a fresh ``python -I -S`` process (``_sandbox.py``) that can import torch
  but not bertlib, on cases the grader draws and sends as JSON; the results come back as JSON
  (plain lists, numbers, strings) and are compared with bertlib's reference in the grader's
  process (:func:`grade_implementation`). The learner's kernel plays no part in it.

:class:`bertlib.classroom.autograde.GradeOutside` applies both in ``nbgrader autograde``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

from bertlib.classroom.exercises import is_correct
from bertlib.classroom.implement import _difference, fresh_seed
from bertlib.classroom.implement_cases import IMPLEMENTATIONS
from bertlib.support.i18n import fill, text

MIME = "application/vnd.bertlib.answer+json"
SANDBOX = Path(__file__).with_name("_sandbox.py")
# The implement-it exercises whose arguments are plain values and tensors, so that they can be
# sent to the sandbox as JSON (03's takes an attention module, 05's calls bertlib's
# get_next_sentence: graded by hand for now).
SANDBOXED = ("02_tokens_and_segments", "02_wordpiece", "04_mlm_gather", "06_mlm_loss",
             "11_tagging_loss", "11_best_span")
TIMEOUT_S = 60


# ---------------------------------------------------------------- single answers
def plain_number(answer) -> dict:
    """``{"value": ...}`` for an int or a float (or an exact torch.Tensor or numpy number
    holding one), else ``{"value": None, "type": name}``. Nothing of a subclass is run."""
    kind = type(answer)
    if kind in (int, float):
        return {"value": answer}
    if kind is torch.Tensor and torch.Tensor.numel(answer) == 1 \
            and not torch.Tensor.is_complex(answer):
        value = torch.Tensor.item(answer)
        return {"value": value if type(value) in (int, float) else None}
    if kind.__module__ == "numpy" and kind.__name__ in {
            "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
            "float16", "float32", "float64"}:
        return {"value": answer.item()}
    return {"value": None, "type": None if answer is None else kind.__qualname__}


def report_answer(answer) -> None:
    """Kernel side, in the assignment's test cell: show ``answer`` as JSON for the grader."""
    from IPython.display import display
    display({MIME: plain_number(answer), "text/plain": ""}, raw=True)


def grade_answer(key: str, payload: dict | None, lang: str) -> tuple[bool, str]:
    """Whether the reported answer is exercise ``key``'s, and what to tell the learner (the
    expected answer never)."""
    value = payload.get("value") if isinstance(payload, dict) else None
    if type(value) not in (int, float):
        kind = payload.get("type") if isinstance(payload, dict) else None
        if kind:
            return False, fill(text("grade_not_plain", lang, name=str(kind)[:80]))
        return False, fill(text("grade_no_answer", lang))
    if is_correct(key, value):
        return True, text("ex_correct", lang)
    return False, fill(text("ex_wrong", lang, hint=text(f"ex_hint_{key}", lang)))


# ---------------------------------------------------------------- implement-it exercises
def encode(x):
    """The cases' arguments as JSON (the sandbox's ``decode`` reads them)."""
    if isinstance(x, torch.Tensor):
        return {"__tensor__": x.tolist(), "dtype": str(x.dtype).split(".")[1],
                "shape": list(x.shape)}
    if isinstance(x, (set, frozenset)):
        return {"__set__": sorted(x)}
    if isinstance(x, tuple):
        return {"__tuple__": [encode(v) for v in x]}
    if isinstance(x, list):
        return [encode(v) for v in x]
    if x is None or type(x) in (int, float, bool, str):
        return x
    raise TypeError(f"cannot send a {type(x).__name__} to the sandbox")


def _decode_result(x):
    """A sandbox result as plain Python values and exact torch.Tensors."""
    if isinstance(x, list):
        return [_decode_result(v) for v in x]
    if isinstance(x, dict) and "__tensor__" in x and x.get("dtype") in _DTYPES:
        return torch.tensor(x["__tensor__"], dtype=getattr(torch, x["dtype"])).reshape(
            x["shape"])
    return x


_DTYPES = {"float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64",
           "uint8", "bool"}


def _torch_paths() -> list[str]:
    """The folders the sandbox may import from: torch's and its dependencies' (the
    site-packages folder that holds torch), and the standard library's (already on -I -S's
    path)."""
    return sorted({str(Path(torch.__file__).resolve().parents[1])}
                  | {p for p in sys.path if p and "site-packages" not in p
                     and "dist-packages" not in p and Path(p).is_dir()
                     and not (Path(p) / "bertlib").exists()})


def run_sandboxed(source: str, name: str, cases: list, timeout: float = TIMEOUT_S) -> dict:
    """The sandbox's answer for ``source``'s function ``name`` on ``cases`` (encoded)."""
    request = json.dumps({"paths": _torch_paths(), "source": source, "name": name,
                          "cases": cases})
    env = {"PATH": os.environ.get("PATH", ""), "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "LANG": "C.UTF-8"}
    try:
        done = subprocess.run([sys.executable, "-I", "-S", str(SANDBOX)], input=request,
                              capture_output=True, text=True, timeout=timeout, env=env,
                              cwd=tempfile.gettempdir())
    except subprocess.TimeoutExpired:
        return {"kind": "timeout"}
    try:
        answer = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        tail = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        return {"kind": "crashed", "error": tail[:300]}
    return answer if isinstance(answer, dict) else {"kind": "crashed", "error": "no answer"}


_USES_BERTLIB = re.compile(r"bertlib|__editable__")


def grade_implementation(key: str, source: str, name: str, lang: str,
                         seed: int | None = None) -> tuple[bool, str]:
    """Whether the function ``name`` of the learner's cell ``source`` agrees with bertlib's
    reference on exercise ``key``'s cases (drawn from ``seed``, by default a fresh one), run in
    the sandbox; and what to tell the learner."""
    exercise = IMPLEMENTATIONS[key]
    if _USES_BERTLIB.search(source):
        return False, fill(text("grade_bertlib", lang))
    seed = fresh_seed() if seed is None else seed
    cases = exercise.cases(seed)
    answer = run_sandboxed(source, name, [encode(list(args)) for _, args in cases])
    kind = answer.get("kind")
    if kind == "bertlib":
        return False, fill(text("grade_bertlib", lang))
    if kind == "timeout":
        return False, fill(text("grade_timeout", lang, seconds=TIMEOUT_S))
    if kind == "no_function":
        return False, fill(text("grade_no_function", lang, name=name))
    results = answer.get("results")
    if kind is not None or not isinstance(results, list) or len(results) != len(cases):
        return False, fill(text("grade_crashed", lang, error=str(answer.get("error", ""))[:300]))
    for (names, _), got, (_, args) in zip(cases, results, exercise.cases(seed), strict=True):
        case = names[lang]
        if isinstance(got, dict) and "__raised__" in got:
            if got["__raised__"] == "NotImplementedError":
                return False, fill(text("ex_impl_missing", lang))
            return False, fill(text("ex_impl_raised", lang, case=case,
                                    error=str(got.get("message", got["__raised__"]))))
        if isinstance(got, dict) and "__not_plain__" in got:
            return False, fill(text("ex_impl_plain", lang, name=str(got["__not_plain__"])[:80]))
        expected = exercise.reference(*args)  # in this process, on cases built anew
        problem = _difference(expected, _decode_result(got), text("ex_impl_result", lang), lang)
        if problem is not None:
            return False, fill(text("ex_impl_case", lang, case=case, problem=problem))
    return True, text("grade_passed", lang)

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
  but not bertlib, on cases the grader draws and sends as JSON (a module as its attributes and
  its layers' weights); the results come back as JSON (plain lists, numbers, strings) and are
  compared with bertlib's reference in the grader's process (:func:`grade_implementation`). A
  bertlib function the exercise hands out (05's ``get_next_sentence``) is run by the grader when
  the cell calls it. The learner's kernel plays no part in it.

:class:`bertlib.classroom.autograde.GradeOutside` applies both in ``nbgrader autograde``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

import torch
import torch.nn as nn

from bertlib.classroom.exercises import is_correct
from bertlib.classroom.implement import _difference, fresh_seed
from bertlib.classroom.implement_cases import IMPLEMENTATIONS
from bertlib.support.i18n import fill, text

MIME = "application/vnd.bertlib.answer+json"
SANDBOX = Path(__file__).with_name("_sandbox.py")
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
    """The cases' arguments as JSON (the sandbox's ``decode`` reads them). A module is sent as
    its plain attributes and its layers' weights, so that the learner's function can use
    ``attention.W_q`` but not bertlib's forward."""
    if isinstance(x, torch.Tensor):
        x = x.detach()
        return {"__tensor__": x.tolist(), "dtype": str(x.dtype).split(".")[1],
                "shape": list(x.shape)}
    if isinstance(x, nn.Linear):
        return {"__module__": {"class": "Linear", "weight": encode(x.weight),
                               "bias": None if x.bias is None else encode(x.bias)}}
    if isinstance(x, nn.Module):
        attributes = {k: v for k, v in vars(x).items() if not k.startswith("_")
                      and k != "training" and type(v) in (int, float, bool, str)}
        children = {k: encode(child)["__module__"] for k, child in x.named_children()}
        return {"__module__": {"class": type(x).__name__, "attributes": attributes,
                               "children": children, "training": x.training}}
    if isinstance(x, torch.Generator):
        return {"__generator__": x.get_state().tolist()}
    if isinstance(x, (set, frozenset)):
        return {"__set__": sorted(x)}
    if isinstance(x, tuple):
        return {"__tuple__": [encode(v) for v in x]}
    if isinstance(x, list):
        return [encode(v) for v in x]
    if x is None or type(x) in (int, float, bool, str):
        return x
    raise TypeError(f"cannot send a {type(x).__name__} to the sandbox")


def _from_sandbox(x):
    """What the sandbox sent (a result, a handed-out function's arguments) as plain Python
    values, exact torch.Tensors and generators."""
    if isinstance(x, list):
        return [_from_sandbox(v) for v in x]
    if isinstance(x, dict) and "__tensor__" in x and x.get("dtype") in _DTYPES:
        return torch.tensor(x["__tensor__"], dtype=getattr(torch, x["dtype"])).reshape(
            x["shape"])
    if isinstance(x, dict) and "__generator__" in x:
        g = torch.Generator()
        g.set_state(torch.tensor(x["__generator__"], dtype=torch.uint8))
        return g
    return x


_DTYPES = {"float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64",
           "uint8", "bool"}


def _run_handout(functions: dict[str, Callable], call: dict) -> dict:
    """bertlib's handed-out function on the arguments the learner's cell passed, and the
    generators' states after it."""
    try:
        function = functions[call["call"]]
        args = _from_sandbox(call.get("args", []))
        kwargs = {k: _from_sandbox(v) for k, v in call.get("kwargs", {}).items()}
        result = function(*args, **kwargs)
    except Exception as err:  # the learner's arguments: the cell gets the error to raise
        return {"raised": type(err).__name__, "message": f"{type(err).__name__}: {err}"[:300]}
    generators = [g for g in [*args, *kwargs.values()] if isinstance(g, torch.Generator)]
    return {"result": encode(result), "generators": [g.get_state().tolist() for g in generators]}


def _torch_paths() -> list[str]:
    """The folders the sandbox may import from: torch's and its dependencies' (the
    site-packages folder that holds torch), and the standard library's (already on -I -S's
    path)."""
    return sorted({str(Path(torch.__file__).resolve().parents[1])}
                  | {p for p in sys.path if p and "site-packages" not in p
                     and "dist-packages" not in p and Path(p).is_dir()
                     and not (Path(p) / "bertlib").exists()})


def run_sandboxed(source: str, name: str, cases: list, handouts: tuple[Callable, ...] = (),
                  timeout: float = TIMEOUT_S) -> dict:
    """The sandbox's answer for ``source``'s function ``name`` on ``cases`` (encoded); the
    ``handouts`` are run here when the cell calls them."""
    functions = {f.__name__: f for f in handouts}
    request = {"paths": _torch_paths(), "bertlib": str(Path(__file__).resolve().parents[1]),
               "source": source, "name": name, "cases": cases, "handouts": list(functions)}
    env = {"PATH": os.environ.get("PATH", ""), "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "LANG": "C.UTF-8"}
    timed_out = threading.Event()
    with tempfile.TemporaryFile("w+") as errors, subprocess.Popen(
            [sys.executable, "-I", "-S", str(SANDBOX)], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=errors, text=True, env=env,
            cwd=tempfile.gettempdir()) as process:
        timer = threading.Timer(timeout, lambda: (timed_out.set(), process.kill()))
        timer.start()
        answer = None
        try:
            process.stdin.write(json.dumps(request) + "\n")
            process.stdin.flush()
            for line in process.stdout:
                message = json.loads(line)
                if not isinstance(message, dict) or "call" not in message:
                    answer = message
                    break
                process.stdin.write(json.dumps(_run_handout(functions, message)) + "\n")
                process.stdin.flush()
        except (OSError, ValueError):  # the sandbox died, or wrote what is not JSON
            answer = None
        finally:
            timer.cancel()
            process.kill()
        if timed_out.is_set():
            return {"kind": "timeout"}
        if not isinstance(answer, dict):
            process.wait()
            errors.seek(0)
            tail = (errors.read().strip().splitlines()
                    or [f"exit status {process.returncode}"])[-1]
            return {"kind": "crashed", "error": tail[:300]}
        return answer


def grade_implementation(key: str, source: str, name: str, lang: str,
                         seed: int | None = None) -> tuple[bool, str]:
    """Whether the function ``name`` of the learner's cell ``source`` agrees with bertlib's
    reference on exercise ``key``'s cases (drawn from ``seed``, by default a fresh one), run in
    the sandbox; and what to tell the learner."""
    exercise = IMPLEMENTATIONS[key]
    seed = fresh_seed() if seed is None else seed
    cases = exercise.cases(seed)
    answer = run_sandboxed(source, name, [encode(list(args)) for _, args in cases],
                           exercise.allowed)
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
    for (names, args), got in zip(cases, results, strict=True):
        case = names[lang]
        if isinstance(got, dict) and "__raised__" in got:
            if got["__raised__"] == "NotImplementedError":
                return False, fill(text("ex_impl_missing", lang))
            return False, fill(text("ex_impl_raised", lang, case=case,
                                    error=str(got.get("message", got["__raised__"]))))
        if isinstance(got, dict) and "__not_plain__" in got:
            return False, fill(text("ex_impl_plain", lang, name=str(got["__not_plain__"])[:80]))
        expected = exercise.reference(*args)  # in this process: the sandbox had a JSON copy
        problem = _difference(expected, _from_sandbox(got), text("ex_impl_result", lang), lang)
        if problem is not None:
            return False, fill(text("ex_impl_case", lang, case=case, problem=problem))
    return True, text("grade_passed", lang)

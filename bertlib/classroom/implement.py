"""Implement-it exercises: ``check_implementation(key, function)`` runs a learner's version of
one of the chapter's functions against bertlib's own on the cases of
:mod:`bertlib.classroom.implement_cases` and says, in the notebook's language, which case failed
and how. Calling bertlib's own is refused (it would teach nothing); hints come in stages. Any
error ends in a verdict (``sys.exit`` too); an endless loop is stopped with Interrupt.
"""

from __future__ import annotations

import _thread
import concurrent.futures
import functools
import inspect
import math
import multiprocessing.process
import numbers
import os
import secrets
import subprocess
import sys
import threading
import types
from collections.abc import Callable
from pathlib import Path

import torch

from bertlib.classroom.implement_cases import IMPLEMENTATIONS, Implementation
from bertlib.support.checks import check_choice
from bertlib.support.i18n import STRINGS, fill, resolve_language, text


# ---------------------------------------------------------------- comparing two results
def _describe(x) -> str:
    """A result's type and size, language-neutral (and a tensor's layout or meta device)."""
    if isinstance(x, torch.Tensor):
        unusual = "" if x.layout == torch.strided else f", layout={x.layout}"
        unusual += ", device=meta" if x.is_meta else ""
        return f"Tensor(shape={tuple(x.shape)}, dtype={x.dtype}{unusual})"
    if isinstance(x, (list, tuple)):
        return f"{type(x).__name__}(len={len(x)})"
    return type(x).__name__


def _same_kind(expected, got) -> bool:
    if isinstance(expected, torch.Tensor):  # dense, with values (not on the meta device)
        return (isinstance(got, torch.Tensor) and got.layout == torch.strided
                and not got.is_meta)
    if isinstance(expected, (list, tuple)):
        return isinstance(got, (list, tuple))  # a list where a tuple is expected is fine
    if isinstance(expected, bool) or isinstance(got, bool):
        return isinstance(expected, bool) and isinstance(got, bool)
    if isinstance(expected, numbers.Integral):
        return isinstance(got, numbers.Integral)
    if isinstance(expected, numbers.Real):
        return isinstance(got, numbers.Real)
    return type(got) is type(expected)


def _difference(expected, got, where: str, lang: str) -> str | None:
    """How ``got`` differs from ``expected`` (``where``: e.g. ``the result[1]``), None if alike."""
    if not _same_kind(expected, got) or (isinstance(expected, (list, tuple))
                                         and len(got) != len(expected)):
        return text("ex_impl_type", lang, where=where, expected=_describe(expected),
                    got=_describe(got))
    if isinstance(expected, (list, tuple)):
        for i, (e, g) in enumerate(zip(expected, got, strict=True)):
            if (problem := _difference(e, g, f"{where}[{i}]", lang)) is not None:
                return problem
        return None
    if isinstance(expected, torch.Tensor):
        if tuple(got.shape) != tuple(expected.shape):
            return text("ex_impl_shape", lang, where=where, expected=tuple(expected.shape),
                        got=tuple(got.shape))
        if got.dtype != expected.dtype:
            return text("ex_impl_dtype", lang, where=where, expected=expected.dtype,
                        got=got.dtype)
        got = got.detach().cpu()
        floats = expected.is_floating_point()
        differs = ~torch.isclose(got, expected, rtol=1e-4, atol=1e-5) if floats else got != expected
        wrong = differs.nonzero()
        if len(wrong) == 0:
            return None
        index = tuple(wrong[0].tolist())  # the first value that differs, and where
        return text("ex_impl_value" if floats else "ex_impl_item", lang,
                    where=f"{where}[{', '.join(map(str, index))}]",
                    expected=expected[index].item(), got=got[index].item())
    if isinstance(expected, numbers.Real) and not isinstance(expected, numbers.Integral):
        if math.isclose(got, expected, rel_tol=1e-4, abs_tol=1e-5):
            return None
        return text("ex_impl_value", lang, where=where, expected=expected, got=got)
    if got != expected:
        return text("ex_impl_item", lang, where=where, expected=repr(expected), got=repr(got))
    return None


# ---------------------------------------------------------------- running the learner's code
_BERTLIB = str(Path(__file__).resolve().parent.parent)  # bertlib's own folder
# Routes out of sight: code run in another thread or process, or the watch turned off.
_ELSEWHERE = {f.__code__: f for f in (
    threading.Thread.start, concurrent.futures.Executor.submit, concurrent.futures.Executor.map,
    concurrent.futures.ThreadPoolExecutor.submit, concurrent.futures.ProcessPoolExecutor.submit,
    concurrent.futures.ProcessPoolExecutor.map, multiprocessing.process.BaseProcess.start,
    subprocess.Popen.__init__)}
_ELSEWHERE_C = {_thread.start_new_thread, os.fork, os.system}
_UNWATCH_C = {sys.setprofile, sys.settrace, threading.setprofile, threading.settrace}


@functools.lru_cache(maxsize=4096)  # the watch asks again at every call of the same code
def _fingerprint(code: types.CodeType) -> tuple:
    """What a copy of a function keeps however it was made (exec of its source, a renamed code
    object): its names, local variables and constants, the docstring among them. (Not its
    bytecode, which another compile of the same source may spell otherwise.)"""
    consts = tuple(_fingerprint(c) if isinstance(c, types.CodeType) else repr(c)
                   for c in code.co_consts)
    return code.co_names, code.co_varnames, consts


def _name(code: types.CodeType) -> str:
    return getattr(code, "co_qualname", code.co_name)  # Python 3.10 has no co_qualname


@functools.cache
def _bertlib_fingerprints() -> dict[tuple, str]:
    """The fingerprint of every documented function of bertlib's loaded modules (one with no
    docstring may be as short as a learner's own)."""
    found = {}
    for name, module in list(sys.modules.items()):
        if name.split(".")[0] != "bertlib" or module is None:
            continue
        for value in vars(module).values():
            for item in (value, *vars(value).values()) if isinstance(value, type) else (value,):
                function = inspect.unwrap(getattr(item, "__func__", item)) if callable(item) \
                    else None
                code = getattr(function, "__code__", None)
                if (isinstance(code, types.CodeType) and code.co_filename.startswith(_BERTLIB)
                        and function.__doc__ and code.co_consts[:1] == (function.__doc__,)):
                    found.setdefault(_fingerprint(code), _name(code))
    return found


@functools.cache
def _forbidden_codes(exercise: Implementation) -> dict[types.CodeType, Callable]:
    """The code objects of an exercise's forbidden Python functions (methods of its classes
    too), each with its function."""
    items = [m for f in exercise.forbidden
             for m in (vars(f).values() if isinstance(f, type) else (f,))]
    return {item.__code__: item for item in (getattr(m, "__func__", m) for m in items)
            if hasattr(item, "__code__")}


@functools.cache
def _forbidden_classes(exercise: Implementation) -> tuple[type, ...]:
    return tuple(f for f in exercise.forbidden if isinstance(f, type))


def _route(frame, event: str, arg, exercise: Implementation) -> tuple[str, ...] | None:
    """``(message key, name[, library])`` when this profiler event is a way round the work."""
    if event == "call":
        code = frame.f_code
        if code.co_filename.startswith(_BERTLIB):
            return "ex_impl_reference", _name(code)
        function = _ELSEWHERE.get(code)
        if function is not None:
            return "ex_impl_elsewhere", function.__qualname__
        if code.co_name in {"getsource", "getsourcelines", "findsource"} and \
                code.co_filename == inspect.__file__:
            return "ex_impl_copy", "inspect." + code.co_name
        copied = _bertlib_fingerprints().get(_fingerprint(code))
        if copied is not None:
            return "ex_impl_copy", copied
        library = _forbidden_codes(exercise).get(code)
        if library is not None:
            return "ex_impl_library", library.__qualname__, library.__module__.split(".")[0]
    elif event == "c_call":
        if arg in _UNWATCH_C:
            return "ex_impl_unwatch", f"{arg.__module__}.{arg.__name__}"
        if arg in _ELSEWHERE_C:
            return "ex_impl_elsewhere", f"{arg.__module__}.{arg.__name__}"
        if arg in exercise.forbidden or isinstance(getattr(arg, "__self__", None),
                                                   _forbidden_classes(exercise)):
            owner = getattr(arg, "__self__", None)  # e.g. tokenizers.Tokenizer.encode's
            module = type(owner).__module__ if owner is not None else arg.__module__
            return "ex_impl_library", arg.__qualname__, module.split(".")[0]
    return None


def _run_watching(function: Callable, args: tuple, exercise: Implementation | None,
                  ) -> tuple[object, tuple[str, ...] | None, BaseException | None]:
    """``function(*args)`` as ``(result, route, error)``: the first way round the work it took
    at any depth (:func:`_route`; none is looked for without an exercise), and what it raised
    (SystemExit too; only KeyboardInterrupt goes on). Inside an allowed bertlib function
    nothing is looked for."""
    allowed = {f.__code__ for f in exercise.allowed} if exercise else set()
    routes, inside, over = [], [], []

    def watch(frame, event, arg):
        if routes or over or exercise is None:
            return
        if inside:
            if event == "return" and frame is inside[-1]:
                inside.pop()
            return
        if event == "call" and frame.f_code in allowed:
            inside.append(frame)
        elif (route := _route(frame, event, arg, exercise)) is not None:
            routes.append(route)

    before = sys.getprofile()
    sys.setprofile(watch)
    got, error = None, None
    try:
        with torch.no_grad():
            got = function(*args)
    except KeyboardInterrupt:
        raise
    except BaseException as err:  # the learner's code may fail in any way: say how
        error = err
    finally:
        over.append(True)  # the check's own call that follows is not the learner's
        sys.setprofile(before)
    return got, (routes[0] if routes else None), error


class _NotPlain(Exception):
    """A result that is not made of plain values: a tensor or number of a subclass, which
    could answer a comparison however it likes."""


def _plain(x):
    """``x`` rebuilt from plain values (a strided tensor, int, float, bool, str, None, lists and
    tuples of them), so that nothing of the learner's code runs while it is compared."""
    if type(x) in (int, float, bool, str, type(None)):
        return x
    if type(x) in (list, tuple):
        return type(x)(_plain(v) for v in x)
    if type(x) in (torch.Tensor, torch.nn.Parameter):
        if x.layout != torch.strided or x.is_meta:
            return x  # described as such by _difference
        return torch.Tensor.clone(torch.Tensor.detach(x)).cpu()
    raise _NotPlain(type(x).__qualname__)


def _error_text(err: BaseException) -> str:
    """``"Type: message"``, cut to a line or two, unprintable characters escaped."""
    message = str(err).encode("utf-8", "backslashreplace").decode("utf-8")
    shown = f"{type(err).__name__}: {message}" if message else type(err).__name__
    return shown if len(shown) <= 300 else shown[:299] + "…"


def implementation_problem(key: str, function: Callable,
                           lang: str | None = None) -> str | None:
    """None when ``function`` agrees with bertlib's own on every case of exercise ``key``, else
    what is wrong, in ``lang``: a way round the work (bertlib's own or a copy of it, another
    library's, another thread or process, the watch turned off, a result that is not plain
    values), or the first case that failed and how. The cases come from a fresh seed; each
    expected value is computed after the learner's function has returned, from cases built
    anew, so that its code can neither read nor change them."""
    check_choice("key", key, IMPLEMENTATIONS)
    if not callable(function):
        raise ValueError(f"function must be a function; got {type(function).__name__}")
    lang = resolve_language(lang)
    exercise = IMPLEMENTATIONS[key]
    seed = fresh_seed()
    for i, (names, args) in enumerate(exercise.cases(seed)):
        case = names[lang]
        got, route, error = _run_watching(function, args, exercise)
        if route is not None:  # refused first: a failure after it is not the lesson
            message, name, *library = route
            return text(message, lang, name=name, library=library[0] if library else "")
        if isinstance(error, NotImplementedError):
            return text("ex_impl_missing", lang)
        if error is not None:  # its message is the learner's code too: it may fail or hang
            shown, _, failed = _run_watching(_error_text, (error,), None)
            return text("ex_impl_raised", lang, case=case, error=type(error).__name__
                        if failed else shown) + _SPACE[lang] + text("ex_impl_stuck", lang)
        try:
            got = _plain(got)
        except _NotPlain as err:
            return text("ex_impl_plain", lang, name=str(err))
        _, reference_args = exercise.cases(seed)[i]  # built anew: out of the learner's reach
        expected = exercise.reference(*reference_args)
        problem = _difference(expected, got, text("ex_impl_result", lang), lang)
        if problem is not None:
            return (text("ex_impl_case", lang, case=case, problem=problem) + _SPACE[lang]
                    + text("ex_impl_stuck", lang))
    return None


_SPACE = {"en": " ", "zh": "", "ja": ""}  # between two sentences


def fresh_seed() -> int:
    """A seed for one check's cases, from the operating system (torch's and Python's global
    random states are not touched)."""
    return secrets.randbelow(2**31 - 1) + 1


def hints(key: str, lang: str | None = None) -> list[str]:
    """Exercise ``key``'s hints in ``lang``, the first pointing the way, the last the recipe."""
    found = []
    while f"impl_hint_{key}_{len(found) + 1}" in STRINGS:
        found.append(text(f"impl_hint_{key}_{len(found) + 1}", lang))
    return found


def check_implementation(key: str, function: Callable, lang: str | None = None, *,
                         hint: int = 0) -> None:
    """Print ✓ or what :func:`implementation_problem` finds; with ``hint=k``, the k-th hint."""
    problem = implementation_problem(key, function, lang)  # checks key and function
    staged = hints(key, lang)
    if isinstance(hint, bool) or not isinstance(hint, int) or not 0 <= hint <= len(staged):
        raise ValueError(f"hint must be an int from 0 (none) to {len(staged)}; got {hint!r:.40}")
    if problem and hint:  # the hint follows: no need to say how to ask for one
        problem = problem.removesuffix(_SPACE[resolve_language(lang)] + text("ex_impl_stuck", lang))
    print(fill(problem or text("ex_impl_correct", lang, count=len(IMPLEMENTATIONS[key].cases(0)))))
    if hint:
        more = text("ex_impl_next_hint", lang, next=hint + 1) if hint < len(staged) else ""
        print(fill(text("ex_impl_hint", lang, stage=hint, count=len(staged),
                        hint=staged[hint - 1]) + (" " + more if more else "")))

"""Implement-it exercises: ``check_implementation(key, function)`` runs a learner's version of
one of the chapter's functions against bertlib's own on the cases of
:mod:`bertlib.classroom.implement_cases` and says, in the notebook's language, which case failed
and how. Calling bertlib's own is refused (it would teach nothing); hints come in stages. Any
error ends in a verdict (``sys.exit`` too); an endless loop is stopped with Interrupt.
"""

from __future__ import annotations

import copy
import math
import numbers
import sys
from collections.abc import Callable

import torch

from bertlib.classroom.implement_cases import IMPLEMENTATIONS
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
def _run_watching(function: Callable, args: tuple, forbidden: tuple[Callable | type, ...],
                  ) -> tuple[object, Callable | None, BaseException | None]:
    """``function(*args)`` as ``(result, called, error)``: the first of ``forbidden`` it called
    at any depth, and what it raised (SystemExit too; only KeyboardInterrupt goes on)."""
    classes = tuple(f for f in forbidden if isinstance(f, type))
    codes = {getattr(f, "__code__", None): f for f in forbidden if f not in classes}
    methods = (getattr(m, "__func__", m) for c in classes for m in vars(c).values())  # unwrap
    codes.update({method.__code__: method for method in methods if hasattr(method, "__code__")})
    called = []

    def watch(frame, event, arg):
        if called:
            return
        if event == "call" and frame.f_code in codes:
            called.append(codes[frame.f_code])
        elif event == "c_call" and isinstance(getattr(arg, "__self__", None), classes):
            called.append(arg)  # a method of a compiled class, e.g. tokenizers.Tokenizer.encode

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
        sys.setprofile(before)
    return got, (called[0] if called else None), error


def _error_text(err: BaseException) -> str:
    """``"Type: message"``, cut to a line or two, unprintable characters escaped."""
    message = str(err).encode("utf-8", "backslashreplace").decode("utf-8")
    shown = f"{type(err).__name__}: {message}" if message else type(err).__name__
    return shown if len(shown) <= 300 else shown[:299] + "…"


def implementation_problem(key: str, function: Callable,
                           lang: str | None = None) -> str | None:
    """None when ``function`` agrees with bertlib's own on every case of exercise ``key``, else
    what is wrong, in ``lang``: a call of bertlib's own, or the first case that failed and how."""
    check_choice("key", key, IMPLEMENTATIONS)
    if not callable(function):
        raise ValueError(f"function must be a function; got {type(function).__name__}")
    lang = resolve_language(lang)
    exercise = IMPLEMENTATIONS[key]
    for names, args in exercise.cases():
        case = names[lang]
        expected = exercise.reference(*copy.deepcopy(args))
        # copies: the cases stay intact
        got, called, error = _run_watching(function, copy.deepcopy(args), exercise.forbidden)
        if called is not None:  # refused first: a failure after it is not the lesson
            owner = getattr(called, "__self__", None)  # a compiled library's method has one
            if owner is None:
                return text("ex_impl_reference", lang, name=called.__qualname__)
            return text("ex_impl_library", lang, name=called.__qualname__,
                        library=type(owner).__module__.split(".")[0])
        if isinstance(error, NotImplementedError):
            return text("ex_impl_missing", lang)
        if error is not None:  # its message is the learner's code too: it may fail or hang
            shown, _, failed = _run_watching(_error_text, (error,), ())
            return text("ex_impl_raised", lang, case=case,
                        error=type(error).__name__ if failed else shown)
        problem, _, error = _run_watching(
            _difference, (expected, got, text("ex_impl_result", lang), lang), ())
        if error is not None:  # a result that fails when read, e.g. a list whose len() raises
            problem = text("ex_impl_type", lang, where=text("ex_impl_result", lang),
                           expected=_describe(expected), got=type(got).__name__)
        if problem is not None:
            return text("ex_impl_case", lang, case=case, problem=problem)
    return None


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
    count = len(IMPLEMENTATIONS[key].cases())
    print(fill(problem or text("ex_impl_correct", lang, count=count)))
    if hint:
        more = text("ex_impl_next_hint", lang, next=hint + 1) if hint < len(staged) else ""
        print(fill(text("ex_impl_hint", lang, stage=hint, count=len(staged),
                        hint=staged[hint - 1]) + (" " + more if more else "")))

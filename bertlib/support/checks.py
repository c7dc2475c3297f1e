"""Early input checks: a ``ValueError`` naming the argument, the value and what is allowed,
instead of an error from deep inside torch. English, like Python's; those a learner meets in
the notebooks are :class:`InputError`, which also speaks the reader's language."""

from __future__ import annotations

import functools
import math
import numbers
import os
import re
import string
from collections.abc import Sequence

import numpy as np
import torch

from bertlib.support.i18n import STRINGS, text


class InputError(ValueError):
    """A refused input whose message is in ``strings.json``: ``str(err)`` is English,
    :meth:`message` the reader's language (what notebooks and widgets show)."""

    def __init__(self, key: str, **params) -> None:
        super().__init__(text(key, "en", **params))
        self.key, self.params = key, params

    def message(self, lang: str | None = None) -> str:
        """The message in ``lang`` (None: the language set by ``set_language``)."""
        return text(self.key, lang, **self.params)


def error_message(err: ValueError, lang: str | None = None) -> str:
    """``"ValueError: ..."`` in ``lang`` when the message is one of ``strings.json``'s errors
    (an :class:`InputError`, or its English text raised by ``model.py``), else as it is."""
    if isinstance(err, InputError):
        return f"ValueError: {err.message(lang)}"
    for key, pattern in _error_patterns().items():
        if (found := pattern.fullmatch(str(err))) is not None:
            return f"ValueError: {text(key, lang, **found.groupdict())}"
    return f"ValueError: {err}"


@functools.cache
def _error_patterns() -> dict[str, re.Pattern]:
    """Each error of ``strings.json`` as a pattern of its English text, fields as groups."""
    patterns = {}
    for key, texts in STRINGS.items():
        if not key.startswith("error_"):
            continue
        regex, seen = "", set()
        for literal, field, _, _ in string.Formatter().parse(texts["en"]):
            regex += re.escape(literal)
            if field is not None:
                regex += f"(?P={field})" if field in seen else f"(?P<{field}>.+?)"
                seen.add(field)
        patterns[key] = re.compile(regex, re.DOTALL)
    return patterns


def check_positive_int(name: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer; got {value!r}")


def check_dropout(name: str, value: float) -> None:
    if not _is_real(value) or not 0.0 <= value < 1.0:
        raise ValueError(f"{name} must be a number in [0, 1); got {value!r}")


def check_positive_float(name: str, value: float) -> None:
    if not _is_real(value) or not 0.0 < value < math.inf:
        raise ValueError(f"{name} must be a positive finite number; got {value!r}")


def check_bool(name: str, value: bool) -> None:
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False; got {value!r}")


def check_choice(name: str, value, allowed) -> None:
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{name} must be one of {sorted(allowed)}; got {value!r}")


def _is_real(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def check_tokens(name: str, tokens) -> None:
    """A list of token strings, not a text (which would be taken apart into characters)."""
    if isinstance(tokens, str):
        raise ValueError(f"{name} must be a list of token strings, not a text: tokenize it "
                         f"first (tokenizer.tokenize(text) or text.split()); got {tokens!r}")
    if not isinstance(tokens, Sequence) or not _all_strings(tokens):
        raise ValueError(f"{name} must be a list of token strings; got {tokens!r}")


def _all_strings(items: Sequence) -> bool:
    """Whether every item is a str, at C speed (the data path asks it for every sentence pair):
    ``str.join`` takes strings only."""
    try:
        "".join(items)
    except TypeError:
        return False
    return True


def check_integer_dtype(name: str, t: torch.Tensor) -> None:
    """torch's index dtypes: uint8 and bool index as masks, nn.Embedding refuses int16, int8."""
    if t.dtype not in (torch.int64, torch.int32):
        raise ValueError(f"{name} must hold integers of dtype torch.int64 or torch.int32; got "
                         f"dtype {t.dtype}")


def check_finite(name: str, t: torch.Tensor, error: type[ValueError] = ValueError) -> None:
    if not t.dtype.is_floating_point:
        raise ValueError(f"{name} must hold floating-point numbers; got dtype {t.dtype}")
    if not bool(torch.isfinite(t).all()):
        raise error(f"{name} must be finite; it holds NaN or infinite values")


def check_divisible(num_hiddens: int, num_heads: int) -> None:
    if num_hiddens % num_heads:
        raise ValueError(
            f"num_hiddens must be divisible by num_heads so each head gets an equal slice; "
            f"got num_hiddens={num_hiddens}, num_heads={num_heads}"
        )


def check_ndim(name: str, t: torch.Tensor, ndim: int, shape_doc: str) -> None:
    if not isinstance(t, torch.Tensor):
        raise ValueError(f"{name} must be a torch.Tensor of shape {shape_doc}; got {type(t)}")
    if t.dim() != ndim:
        raise ValueError(f"{name} must have shape {shape_doc}; got shape {tuple(t.shape)}")


def check_range(name: str, t: torch.Tensor, low: int, high: int, allowed: str) -> None:
    """``low <= t <= high`` element-wise; the first offending entry reported."""
    bad = (t < low) | (t > high)
    if bool(bad.any()):
        idx = tuple(int(i) for i in bad.nonzero()[0])
        value = t[idx].item()
        where = f" at index {idx}" if t.dim() else ""
        raise ValueError(f"{name} must be {allowed}; got {value}{where}")


def check_pred_positions(pred_positions: torch.Tensor, batch: int, seq_len: int,
                         valid_lens: torch.Tensor | None = None) -> None:
    """Prediction positions (batch, num_preds) in [0, seq_len - 1]; with ``valid_lens``, at real
    tokens, not at padding."""
    check_ndim("pred_positions", pred_positions, 2, "(batch, num_preds)")
    check_integer_dtype("pred_positions", pred_positions)
    if pred_positions.shape[0] != batch:
        raise ValueError(
            f"pred_positions must have one row per sequence (batch={batch}); "
            f"got {pred_positions.shape[0]} rows"
        )
    high = seq_len - 1 if valid_lens is None else int(valid_lens.max()) - 1
    check_range("pred_positions", pred_positions, 0, high, f"in [0, {high}]")
    if valid_lens is not None and bool((outside := pred_positions >= valid_lens[:, None]).any()):
        row, col = (int(i) for i in outside.nonzero()[0])
        raise ValueError(f"pred_positions must point at real tokens, in [0, valid_lens[i] - 1]; "
                         f"got {int(pred_positions[row, col])} in sequence {row}, whose "
                         f"valid_lens is {int(valid_lens[row])}")


def check_seed(name: str, value: int) -> None:
    """An integer in [0, 2**63 - 1]: a float would be cut to another seed silently."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) \
            or not 0 <= value <= 2**63 - 1:
        raise ValueError(f"{name} must be an integer in [0, 2**63 - 1]; got {value!r:.80}")


def check_instance(name: str, value, cls: type | tuple[type, ...], what: str) -> None:
    """``value`` must be a ``cls``; ``what`` says what that is (and how to get one)."""
    if not isinstance(value, cls):
        raise ValueError(f"{name} must be {what}; got {type(value).__name__} {value!r:.80}")


def check_int_in(name: str, value: int, low: int, high: int | None = None,
                 why: str = "") -> None:
    """An integer (not a bool) in ``[low, high]`` (None: no bound); ``why`` explains it."""
    if (isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low
            or (high is not None and value > high)):
        allowed = f"in [{low}, {high}]" if high is not None else f">= {low}"
        raise ValueError(f"{name} must be an integer {allowed}{why}; got {value!r:.80}")


def check_str(name: str, value: str) -> None:
    check_instance(name, value, str, "a string")


def number_array(name: str, value) -> np.ndarray:
    """``value`` (array-like or tensor) as a numpy array of numbers, floats keeping their dtype:
    bools, strings and ragged nestings are refused (numpy would fail later, naming nothing)."""
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu()
        value = (value.float() if value.dtype == torch.bfloat16 else value).numpy()
    try:
        array = np.asarray(value)
    except ValueError:
        raise ValueError(f"{name} must be a rectangular array of numbers; got "
                         f"{value!r:.80}") from None
    if array.dtype.kind not in "iuf":
        raise ValueError(f"{name} must hold numbers (not bools, strings or objects); got "
                         f"dtype {array.dtype}: {value!r:.80}")
    return array if array.dtype.kind == "f" else array.astype(float)


def check_path(name: str, value) -> None:
    """A file system path: a ``str`` or ``os.PathLike`` (a ``pathlib.Path``)."""
    if not isinstance(value, (str, os.PathLike)):
        raise ValueError(f"{name} must be a path (str or pathlib.Path); got {value!r:.80}")


def check_sized(name: str, value, what: str) -> None:
    """A list, tuple, range, tensor or array: an iterator could be endless."""
    if isinstance(value, (str, bytes)) or not isinstance(
            value, (Sequence, torch.Tensor, np.ndarray)):
        raise ValueError(f"{name} must be {what}; got {value!r:.80} (an iterator, generator "
                         "or set is refused: it could be endless or unordered; pass a list)")


class NonFiniteError(ValueError):
    """Values that must be finite hold NaN or an infinity (in training: a run that diverged)."""


def check_all_finite(name: str, t: torch.Tensor) -> None:
    check_finite(name, t, NonFiniteError)


def check_inputs_on_device(device: torch.device, **inputs) -> None:
    """The tensors of ``inputs`` on the model's ``device``, before their values are read (meta
    has none); torch's own message names neither."""
    for name, t in inputs.items():
        if isinstance(t, torch.Tensor) and t.device != device:
            raise ValueError(f"{name} must be on the model's device {device}; got a tensor on "
                             f"{t.device} (move it with .to({str(device)!r}))")


def check_vocab_fits(name: str, num_tokens: int, vocab_size: int, model: str = "model") -> None:
    """A vocabulary of ``num_tokens`` for a ``model`` of ``vocab_size`` (another: wrong ids)."""
    if num_tokens != vocab_size:
        raise ValueError(f"{name} has {num_tokens} tokens but the {model}'s vocab_size is "
                         f"{vocab_size}; give the {model} the tokenizer it was trained with")


def check_top_k(k: int, vocab_size: int) -> None:
    check_int_in("k", k, 1, vocab_size, " (at most the vocabulary size)")


def check_targets(mlm_labels: torch.Tensor, mlm_weights: torch.Tensor,
                  nsp_labels: torch.Tensor, slots: tuple[int, int], vocab_size: int) -> None:
    """A pretraining loss's targets for ``slots = (B, P)``: class ids, and weights finite, >= 0
    and not all zero (the MLM loss is a mean over the weighted slots)."""
    check_ndim("mlm_labels", mlm_labels, 2, "(B, P)")
    check_ndim("mlm_weights", mlm_weights, 2, "(B, P)")
    check_ndim("nsp_labels", nsp_labels, 1, "(B,)")
    if mlm_labels.shape != slots or mlm_weights.shape != slots:
        raise ValueError(
            "mlm_Y_hat (B, P, V), mlm_labels (B, P) and mlm_weights (B, P) must agree on B and "
            f"P = {slots}; got mlm_labels {tuple(mlm_labels.shape)}, mlm_weights "
            f"{tuple(mlm_weights.shape)}")
    if nsp_labels.shape[0] != slots[0]:
        raise ValueError(f"nsp_labels must hold one label per sequence (B = {slots[0]}); got "
                         f"shape {tuple(nsp_labels.shape)}")
    for name, labels, high in (("mlm_labels", mlm_labels, vocab_size - 1),
                               ("nsp_labels", nsp_labels, 1)):
        check_integer_dtype(name, labels)
        check_range(name, labels, 0, high, f"class ids in [0, {high}]")
    check_finite("mlm_weights", mlm_weights)
    check_range("mlm_weights", mlm_weights, 0, math.inf, "weights >= 0")
    if not bool((mlm_weights > 0).any()):
        raise ValueError("mlm_weights are all 0: there is no real prediction slot to compute "
                         "the MLM loss over")

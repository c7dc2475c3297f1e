"""Early, readable input checks.

Every public entry point validates its arguments here first, so a mistake is reported as a
``ValueError`` that names the argument, the offending value and what is allowed, instead of an
index error from deep inside torch.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path

import torch


def check_positive_int(name: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer; got {value!r}")


def check_dropout(name: str, value: float) -> None:
    if not 0.0 <= float(value) < 1.0:
        raise ValueError(f"{name} must be in [0, 1); got {value!r}")


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
    """Require ``low <= t <= high`` element-wise; report the first offending entry."""
    if t.numel() == 0:
        return
    bad = (t < low) | (t > high)
    if bool(bad.any()):
        idx = tuple(int(i) for i in bad.nonzero()[0])
        value = t[idx].item()
        where = f" at index {idx}" if t.dim() else ""
        raise ValueError(f"{name} must be {allowed}; got {value}{where}")


def check_token_inputs(
    tokens: torch.Tensor,
    segments: torch.Tensor,
    valid_lens: torch.Tensor | None,
    vocab_size: int,
    max_len: int,
) -> None:
    """Validate the three inputs of a BERT forward pass.

    tokens, segments: ``(batch, seq_len)`` integer ids; valid_lens: ``(batch,)`` or None.
    """
    check_ndim("tokens", tokens, 2, "(batch, seq_len)")
    check_ndim("segments", segments, 2, "(batch, seq_len)")
    if tokens.shape != segments.shape:
        raise ValueError(
            "tokens and segments must have the same shape (one segment id per token); "
            f"got tokens {tuple(tokens.shape)} and segments {tuple(segments.shape)}"
        )
    seq_len = tokens.shape[1]
    if seq_len > max_len:
        raise ValueError(
            f"sequence length {seq_len} exceeds max_len={max_len}, the number of learned "
            f"position embeddings; truncate the input to at most {max_len} tokens"
        )
    check_range("tokens", tokens, 0, vocab_size - 1, f"token ids in [0, {vocab_size - 1}]")
    check_range("segments", segments, 0, 1, "0 (sentence A) or 1 (sentence B)")
    if valid_lens is not None:
        check_ndim("valid_lens", valid_lens, 1, "(batch,)")
        if valid_lens.shape[0] != tokens.shape[0]:
            raise ValueError(
                f"valid_lens must have one entry per sequence (batch={tokens.shape[0]}); "
                f"got {valid_lens.shape[0]} entries"
            )
        check_range("valid_lens", valid_lens, 1, seq_len, f"in [1, seq_len={seq_len}]")


def check_pred_positions(pred_positions: torch.Tensor, batch: int, seq_len: int) -> None:
    check_ndim("pred_positions", pred_positions, 2, "(batch, num_preds)")
    if pred_positions.shape[0] != batch:
        raise ValueError(
            f"pred_positions must have one row per sequence (batch={batch}); "
            f"got {pred_positions.shape[0]} rows"
        )
    check_range("pred_positions", pred_positions, 0, seq_len - 1, f"in [0, {seq_len - 1}]")


def checked_file(directory: str | Path, name: str, max_bytes: int | None) -> Path:
    """``directory / name`` when it is a regular file of at most ``max_bytes`` (None: any size).

    A checkpoint is untrusted input: a name that is a FIFO would block a read forever, and a
    link to a device such as ``/dev/zero`` never ends, so only regular files are read, and a
    file meant to be small must be small.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise ValueError(f"directory must be an existing folder; got {str(directory)!r}")
    path = directory / name
    try:
        info = path.stat()  # follows links: what matters is what would be read
    except FileNotFoundError:
        raise ValueError(f"{directory} has no {name}") from None
    if not stat.S_ISREG(info.st_mode):
        raise ValueError(f"{path} must be a regular file; it is a "
                         f"{'folder' if stat.S_ISDIR(info.st_mode) else 'device, pipe or socket'}")
    if max_bytes is not None and info.st_size > max_bytes:
        raise ValueError(f"{path} has {info.st_size:,} bytes; a {name} may have at most "
                         f"{max_bytes:,}")
    return path


def read_json(path: Path) -> dict:
    """A JSON object from a file that :func:`checked_file` let through."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"{path} must hold JSON; {err}") from None
    if not isinstance(value, dict):
        raise ValueError(f"{path} must hold a JSON object; got {type(value).__name__}")
    return value

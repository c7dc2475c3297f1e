"""Snapshots of a model's weights during training, for watching a model learn: taken by a
``train_bert`` callback, saved with the run's losses to one safetensors file in fp16 (half the
size; a picture needs no more precision), as ``scripts/pretrain_small.py`` does."""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import save_file

from bertlib.assets import SMALL_BERT_DIR
from bertlib.model import BERTModel
from bertlib.support.checks import check_sized
from bertlib.support.files import atomic_write, checked_file
from bertlib.weights.checkpoint import opened

SNAPSHOTS_FILE = "snapshots.safetensors"
SNAPSHOTS_MAX_BYTES = 64 << 20  # the shipped file is under 10 MB
# The small BERT's snapshot steps, from the first to the last (3000): the MLM loss falls fastest
# early and the NSP loss leaves ln 2 between steps 150 and 300, so the steps are dense early.
SMALL_BERT_STEPS = (0, 50, 150, 300, 900, 3000)


class SnapshotRecorder:
    """A ``train_bert`` callback: ``recorder(history)`` after step s copies the weights when s
    is one of ``steps`` (0, the weights before training, is taken at once)."""

    def __init__(self, model: BERTModel, steps: Sequence[int]):
        check_sized("steps", steps, "a list of training steps, integers >= 0")
        self.model, self.steps = model, frozenset(steps)
        self.snapshots: dict[int, dict[str, torch.Tensor]] = {}
        self._take(0)

    def _take(self, step: int) -> None:
        if step in self.steps:
            self.snapshots[step] = {name: value.detach().to("cpu", copy=True)
                                    for name, value in self.model.state_dict().items()}

    def __call__(self, history) -> None:
        self._take(len(history.mlm))  # the steps taken so far


@dataclass
class Snapshots:
    """A run's snapshots, ``{step: state_dict}`` in step order, and its losses (step s at s-1)."""

    weights: dict[int, dict[str, torch.Tensor]]
    mlm_loss: list[float]
    nsp_loss: list[float]


def save_snapshots(snapshots: Snapshots, path: str | Path) -> None:
    """Write the snapshots (``"<step>/<name>"``, the losses as metadata), the file whole."""
    tensors = {f"{step}/{name}": value.to(torch.float16).contiguous()
               for step, state in snapshots.weights.items() for name, value in state.items()}
    losses = {"mlm_loss": json.dumps(snapshots.mlm_loss),
              "nsp_loss": json.dumps(snapshots.nsp_loss)}
    try:
        atomic_write(path, lambda tmp: save_file(tensors, tmp, metadata=losses))
    except (OSError, SafetensorError) as err:
        raise ValueError(f"cannot save the snapshots to {str(path)!r}: {err}") from None


def load_snapshots(directory: str | Path = SMALL_BERT_DIR) -> Snapshots:
    """The snapshots in ``directory``'s ``snapshots.safetensors``, as float32."""
    path = checked_file(directory, SNAPSHOTS_FILE, SNAPSHOTS_MAX_BYTES)
    weights: dict[int, dict[str, torch.Tensor]] = {}
    with opened(path) as f:
        for key in f.keys():  # noqa: SIM118 (a safe_open is not iterable itself)
            step, _, name = key.partition("/")
            if not step.isdigit() or not name:
                raise ValueError(f"{path}: {key!r} is not a snapshot entry <step>/<name>")
            weights.setdefault(int(step), {})[name] = f.get_tensor(key).float()
        losses = f.metadata() or {}
    try:
        mlm, nsp = (json.loads(losses[key]) for key in ("mlm_loss", "nsp_loss"))
    except (KeyError, json.JSONDecodeError, RecursionError) as err:
        raise ValueError(f"{path} lacks the run's losses in its metadata: {err!r:.200}") from None
    for name, losses in (("mlm_loss", mlm), ("nsp_loss", nsp)):
        if not isinstance(losses, list) or not all(
                isinstance(x, numbers.Real) and not isinstance(x, bool) and math.isfinite(x)
                for x in losses):
            raise ValueError(f"{path}'s {name} must be a list of finite numbers, one per step; "
                             f"got {losses!r:.80}")
    return Snapshots(dict(sorted(weights.items())), mlm, nsp)

"""Pretraining BERT with MLM + NSP: one step, the loop, and held-out evaluation.

Shapes: B = batch, T = sequence length, P = prediction slots per sequence.
"""

from __future__ import annotations

import numbers
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch
from torch import nn
from torch.utils.data import DataLoader

from bertlib.batches import make_loader, trim_padding
from bertlib.data import PretrainBatch, check_nonempty_batch
from bertlib.inputs import check_device, eval_mode, model_device
from bertlib.loss import BERTLoss, chapter_loss
from bertlib.model import BERTConfig, BERTModel
from bertlib.support.checks import (
    NonFiniteError,
    check_all_finite,
    check_instance,
    check_positive_int,
)
from bertlib.support.i18n import text
from bertlib.support.progress import ProgressBar
from bertlib.support.rng import own_global_rng

LossFn = Callable[..., BERTLoss]


def train_step(model: BERTModel, optimizer: torch.optim.Optimizer,
               batch: Sequence[torch.Tensor], loss_fn: LossFn = chapter_loss) -> BERTLoss:
    """One optimisation step on the seven batch tensors; returns the (detached) losses.

    A loss that is NaN or infinite raises :class:`~bertlib.support.checks.NonFiniteError` before
    anything is changed."""
    optimizer.zero_grad(set_to_none=True)
    loss = loss_fn(model, *batch)
    check_all_finite("the loss", loss.total)
    loss.total.backward()
    optimizer.step()
    return BERTLoss(*(t.detach() for t in loss))


# Past this Adam's steps are so large that training diverges at once: a typo, not a choice.
LR_MAX = 10.0


def check_lr(name: str, value: float) -> None:
    """A learning rate in (0, LR_MAX]: what every optimizer bertlib makes takes."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 < value <= LR_MAX:
        raise ValueError(f"{name} must be a number in (0, {LR_MAX:g}] (Adam's usual range is "
                         f"1e-5 to 1e-2); got {value!r:.80}")


def make_optimizer(model: nn.Module, lr: float) -> torch.optim.Adam:
    """Adam (``fused``: one kernel for all parameters) at ``lr`` over the trainable parameters.
    The first optimizer of a process, of any kind, imports ``torch._inductor``, which sets
    ``TORCHINDUCTOR_CACHE_DIR`` and adds a warnings filter (tests/test_train.py measures it)."""
    check_lr("lr", lr)
    return torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=lr, fused=True)


def init_model(config: BERTConfig, seed: int) -> BERTModel:
    """A fresh model, its initial weights from ``seed`` alone (the global random state kept)."""
    with own_global_rng(seed):
        return BERTModel.from_config(config)


@dataclass
class TrainHistory:
    """Per-step losses of :func:`train_bert`."""

    mlm: list[float] = field(default_factory=list)
    nsp: list[float] = field(default_factory=list)
    pairs: int = 0  # sentence pairs processed
    seconds: float = 0.0  # wall-clock time of the steps
    num_steps: int = 0  # the steps asked for, so that a callback knows the last one

    @property
    def pairs_per_sec(self) -> float:
        return self.pairs / self.seconds if self.seconds else 0.0


def default_device(device: torch.device | str | int | None = None) -> torch.device:
    """``device`` if this machine has it (:func:`~bertlib.inputs.check_device`), else the first
    GPU when there is one, else the CPU. (The chapter's ``try_all_gpus`` spreads a batch over
    every GPU; bertlib trains on one device: for several, see ``torch.distributed``.)"""
    if device is not None:
        return check_device("device", device)
    return torch.device("cuda:0" if torch.cuda.is_available() else "cpu")


class DivergedError(ValueError):
    """Training stopped at step ``step``, whose loss or gradients are NaN or infinite, before
    that step changed a weight (a ``ValueError``: the usual cause is too large a learning rate)."""

    def __init__(self, message: str, step: int) -> None:
        super().__init__(message)
        self.step = step


def _refuse_non_finite(optimizer: torch.optim.Optimizer, *_) -> None:
    """An optimizer's pre-step hook: raise before it can apply a NaN or infinite gradient. Such
    a gradient makes its tensor's sum NaN or infinite, and one sum per tensor is about ten
    times as quick as ``isfinite().all()`` (0.3 against 3 ms a step for the shipped model)."""
    sums = [p.grad.sum(dtype=torch.promote_types(p.grad.dtype, torch.float32))
            for group in optimizer.param_groups for p in group["params"] if p.grad is not None]
    if sums and not bool(torch.stack(sums).sum().isfinite()):
        raise NonFiniteError("a gradient holds NaN or infinite values")


def run_steps(model: nn.Module, optimizer: torch.optim.Optimizer, loader: DataLoader,
              num_steps: int, step: Callable[[list[torch.Tensor]], dict[str, str]], *, seed: int,
              device: torch.device, desc: str, progress: bool, lang: str | None = None) -> None:
    """The loop that pretraining and fine-tuning share: ``num_steps`` mini-batches from
    ``loader`` (cycling over it), each moved to ``device`` and given to ``step(batch)``, which
    takes one step of ``optimizer`` and returns the progress bar's postfix (names in ``lang``).
    The model trains during the loop and is in eval mode after it (in the caller's mode after an
    error). ``seed`` fixes the dropout draws; the caller's global random state is kept. A NaN or
    infinite loss (``step``'s check) or gradient (a hook run before ``optimizer.step()``) stops
    the loop with a :class:`DivergedError` naming the step, before the step changes a weight."""
    hook = optimizer.register_step_pre_hook(_refuse_non_finite)
    bar = ProgressBar(total=num_steps, disable=not progress, desc=desc,
                      unit=text("progress_unit", lang))
    done, caller_mode, finished = 0, model.training, False
    try:
        with own_global_rng(seed):  # dropout draws from the global generator
            model.train()
            while done < num_steps:
                for batch in loader:
                    try:
                        postfix = step([t.to(device) for t in batch])
                    except NonFiniteError as err:
                        model.zero_grad(set_to_none=True)
                        raise DivergedError(
                            f"training diverged at step {done + 1} of {num_steps}: {err}. The "
                            f"step was not taken: the model keeps its weights after step {done}. "
                            "A smaller lr usually helps", done + 1) from err
                    bar.set_postfix(postfix, refresh=False)
                    bar.update(1)
                    done += 1
                    if done == num_steps:
                        break
        finished = True
    finally:
        hook.remove()
        bar.close()
        model.train(caller_mode and not finished)  # a run that fails leaves the caller's mode


def train_bert(model: BERTModel, data: PretrainBatch, *, num_steps: int, batch_size: int = 128,
               lr: float = 1e-3, seed: int = 0, progress: bool = True,
               callback: Callable[[TrainHistory], None] | None = None,
               loss_fn: LossFn = chapter_loss, group_by_length: bool = False,
               device: torch.device | str | None = None) -> TrainHistory:
    """Train ``model`` with Adam for ``num_steps`` mini-batches (cycling over ``data``) on
    ``device`` (default: :func:`default_device`), where the model stays. ``seed`` fixes the
    batch order and the dropout draws; torch's global random state is kept. Each mini-batch is
    padded only to its longest pair (:func:`~bertlib.batches.trim_padding`); with
    ``group_by_length`` it holds pairs of similar length, padded even less (off by default:
    where length goes with something else, in the shipped corpus the language, such batches
    learn more slowly per step, as notebook 07 measures). ``callback(history)`` runs after every
    step (e.g. ``bertlib.viz.LossPlot().update``). A NaN or infinite loss or gradient raises
    :class:`DivergedError` before its step changes a weight."""
    check_instance("model", model, BERTModel, "a BERTModel")  # not load_small_bert()'s pair
    check_nonempty_batch(data)  # the values: the model's forward and the loss check them
    check_positive_int("num_steps", num_steps)
    device = default_device(device)
    loader = make_loader(data, batch_size, seed=seed,  # checks batch_size and seed
                         lengths=data.valid_lens if group_by_length else None)
    model.to(device)
    optimizer = make_optimizer(model, lr)
    history = TrainHistory(num_steps=num_steps)
    names = [text(key) for key in ("progress_mlm", "progress_nsp", "progress_pairs_s")]

    def step(batch: list[torch.Tensor]) -> dict[str, str]:
        start = time.perf_counter()
        loss = train_step(model, optimizer, trim_padding(batch), loss_fn)
        history.seconds += time.perf_counter() - start
        history.pairs += len(batch[0])
        history.mlm.append(loss.mlm.item())
        history.nsp.append(loss.nsp.item())
        if callback is not None:
            callback(history)
        values = (f"{history.mlm[-1]:.3f}", f"{history.nsp[-1]:.3f}",
                  f"{history.pairs_per_sec:.0f}")
        return dict(zip(names, values, strict=True))

    run_steps(model, optimizer, loader, num_steps, step, seed=seed, device=device,
              desc=text("progress_pretraining"), progress=progress)
    return history


def evaluate_pretraining(model: BERTModel, data: PretrainBatch,
                         batch_size: int = 512) -> dict[str, float]:
    """NSP and MLM top-1 accuracy on ``data``, next to their baselines: a ``*_majority_baseline``
    is the accuracy of always giving ``data``'s most frequent label (the best any constant guess
    can do). The NSP accuracy is also given per class: a head that favours one answer shows it."""
    check_instance("model", model, BERTModel, "a BERTModel")  # not load_small_bert()'s pair
    check_nonempty_batch(data)  # the values: the model's forward and the loss check them
    mlm_hits = 0
    nsp_hits = torch.zeros(2, dtype=torch.long)  # right answers per label [NotNext, IsNext]
    device = model_device(model)
    with eval_mode(model):
        for batch in make_loader(data, batch_size, seed=0, shuffle=False):
            batch = [t.to(device) for t in trim_padding(batch)]
            tokens, segments, valid_lens, pred_positions, weights, labels, nsp_labels = batch
            _, mlm_Y_hat, nsp_Y_hat = model(tokens, segments, valid_lens, pred_positions)
            right = nsp_Y_hat.argmax(1) == nsp_labels
            nsp_hits += nsp_labels[right].bincount(minlength=2).cpu()
            real = weights > 0
            mlm_hits += int((mlm_Y_hat.argmax(2)[real] == labels[real]).sum())
    real_labels = data.mlm_labels[data.mlm_weights > 0]
    n_slots, n_pairs = len(real_labels), len(data)
    pairs_by_label = data.nsp_labels.bincount(minlength=2)
    not_next, is_next = (nsp_hits.double() / pairs_by_label.clamp_min(1)).tolist()
    return {"pairs": n_pairs, "mlm_slots": n_slots,
            "nsp_accuracy": int(nsp_hits.sum()) / n_pairs,
            "nsp_accuracy_is_next": is_next, "nsp_accuracy_not_next": not_next,
            "nsp_chance": 0.5, "nsp_majority_baseline": int(pairs_by_label.max()) / n_pairs,
            "mlm_accuracy": mlm_hits / n_slots,
            "mlm_majority_baseline": int(real_labels.bincount().max()) / n_slots}

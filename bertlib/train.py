"""Pretraining BERT with MLM + NSP: one step, the loop, and held-out evaluation.

Shapes: B = batch, T = sequence length, P = prediction slots per sequence.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch
from torch import nn
from torch.utils.data import DataLoader

from bertlib.batches import make_loader, trim_padding
from bertlib.checks import (
    check_bool,
    check_instance,
    check_positive_float,
    check_positive_int,
    check_seed,
)
from bertlib.data import PretrainBatch, check_batch, check_nonempty_batch
from bertlib.fast import fast_loss
from bertlib.i18n import text
from bertlib.inputs import eval_mode, model_device
from bertlib.loss import BERTLoss, check_targets
from bertlib.model import BERTConfig, BERTModel
from bertlib.progress import ProgressBar
from bertlib.rng import own_global_rng

LossFn = Callable[..., BERTLoss]


def train_step(model: BERTModel, optimizer: torch.optim.Optimizer,
               batch: Sequence[torch.Tensor], loss_fn: LossFn = fast_loss) -> BERTLoss:
    """One optimisation step on the seven batch tensors; returns the (detached) losses."""
    optimizer.zero_grad(set_to_none=True)
    loss = loss_fn(model, *batch)
    loss.total.backward()
    optimizer.step()
    return BERTLoss(*(t.detach() for t in loss))


def make_optimizer(model: nn.Module, lr: float) -> torch.optim.Adam:
    """Adam at learning rate ``lr`` over ``model``'s parameters, as pretraining uses it.

    ``fused=True`` updates every parameter in one kernel instead of a dozen small operations
    per parameter tensor: the same update to float rounding, and for the shipped model's size
    on 2 CPU cores 0.4 instead of 1.6 ms per step (benchmarks/README.md).
    """
    return torch.optim.Adam(model.parameters(), lr=lr, fused=True)


def init_model(config: BERTConfig, seed: int) -> BERTModel:
    """A fresh model whose initial weights depend only on ``seed`` (torch's global random
    state is left as it was)."""
    check_instance("config", config, BERTConfig, "a BERTConfig")
    check_seed("seed", seed)
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


def default_device() -> torch.device:
    """The first GPU when there is one, else the CPU.

    The chapter's ``try_all_gpus`` spreads a batch over every GPU with ``nn.DataParallel``;
    bertlib trains on one device (for several, see ``torch.distributed``).
    """
    return torch.device("cuda:0" if torch.cuda.is_available() else "cpu")


# Past this Adam's steps are so large that training diverges at once: a typo, not a choice.
MAX_LR = 10.0


def _device(device: torch.device | str | None) -> torch.device:
    """``device`` as a torch.device that exists here (None: :func:`default_device`)."""
    if device is None:
        return default_device()
    try:
        device = torch.device(device)
    except (RuntimeError, TypeError):
        raise ValueError(f"device must be a torch.device or a name such as 'cpu' or 'cuda'; got "
                         f"{device!r:.80}") from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device is {str(device)!r} but no CUDA device is available here; use "
                         "'cpu' or leave device=None")
    return device


def _check_model_and_data(model: BERTModel, data: PretrainBatch) -> None:
    """A BERTModel and non-empty data whose ids it can read and whose MLM/NSP labels are in
    range with at least one real prediction slot: one vectorised pass over the data."""
    check_instance("model", model, BERTModel, "a BERTModel")
    check_nonempty_batch(data)
    check_batch(data, model.config.vocab_size)
    check_targets(data.mlm_labels, data.mlm_weights, data.nsp_labels,
                  tuple(data.pred_positions.shape), model.config.vocab_size)


def run_steps(model: nn.Module, loader: DataLoader, num_steps: int,
              step: Callable[[list[torch.Tensor]], dict[str, str]], *, seed: int,
              device: torch.device, desc: str, progress: bool, lang: str | None = None) -> None:
    """The training loop that pretraining and fine-tuning share: ``num_steps`` mini-batches
    from ``loader`` (cycling over it), each moved to ``device`` and given to
    ``step(batch)``, which takes one optimisation step and returns the progress bar's
    postfix, its names in ``lang``. The model is in training mode during the loop and in eval
    mode after it.

    ``seed`` fixes the dropout draws, which come from torch's global generator; the caller's
    global random state is left as it was.
    """
    with own_global_rng(seed):  # dropout draws from the global generator
        model.train()
        bar = ProgressBar(total=num_steps, disable=not progress, desc=desc,
                   unit=text("progress_unit", lang))
        done = 0
        while done < num_steps:
            for batch in loader:
                postfix = step([t.to(device) for t in batch])
                bar.set_postfix(postfix, refresh=False)
                bar.update(1)
                done += 1
                if done == num_steps:
                    break
    bar.close()
    model.eval()


def train_bert(model: BERTModel, data: PretrainBatch, *, num_steps: int, batch_size: int = 128,
               lr: float = 1e-3, seed: int = 0, progress: bool = True,
               callback: Callable[[TrainHistory], None] | None = None,
               loss_fn: LossFn = fast_loss, group_by_length: bool = False,
               device: torch.device | str | None = None) -> TrainHistory:
    """Train ``model`` with Adam for ``num_steps`` mini-batches (cycling over ``data``).

    The model moves to ``device`` (default: :func:`default_device`) and stays there; each
    batch follows it.

    ``seed`` fixes both the batch order and the dropout draws, so the same model, data and
    seed give the same losses; torch's global random state is left as it was.

    Each mini-batch is padded only to its longest pair (:func:`~bertlib.batches.trim_padding`),
    not to ``max_len``. With ``group_by_length`` a mini-batch holds pairs of similar length
    (:class:`~bertlib.batches.LengthGroupedSampler`), so it is padded even less; it is off by
    default because where length goes with something else (in the shipped corpus, with the
    language) such batches learn more slowly per step (notebook 06 measures it).
    ``callback(history)`` runs after every step (e.g. ``bertlib.viz.LossPlot().update``). The
    progress bar shows the MLM and NSP losses and pairs/s.
    """
    _check_model_and_data(model, data)
    check_positive_int("num_steps", num_steps)
    check_positive_float("lr", lr)
    if lr > MAX_LR:
        raise ValueError(f"lr must be at most {MAX_LR} (Adam's usual range is 1e-5 to 1e-2); "
                         f"got {lr!r}")
    check_bool("progress", progress)
    check_bool("group_by_length", group_by_length)
    if callback is not None and not callable(callback):
        raise ValueError(f"callback must be a function of the history, or None; got "
                         f"{callback!r:.80}")
    if not callable(loss_fn):
        raise ValueError(f"loss_fn must be a function such as fast_loss or chapter_loss; got "
                         f"{loss_fn!r:.80}")
    device = _device(device)
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

    run_steps(model, loader, num_steps, step, seed=seed, device=device,
              desc=text("progress_pretraining"), progress=progress)
    return history


def evaluate_pretraining(model: BERTModel, data: PretrainBatch,
                         batch_size: int = 512) -> dict[str, float]:
    """NSP accuracy and MLM top-1 accuracy on ``data``, next to their baselines.

    ``mlm_majority_baseline`` is the accuracy of always predicting the most frequent label of
    ``data`` itself (the best any constant guess can do); ``nsp_majority_baseline`` likewise.
    The NSP accuracy is also given per class: a head that favours one answer shows it there.
    """
    _check_model_and_data(model, data)
    check_positive_int("batch_size", batch_size)
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
    return {
        "pairs": n_pairs,
        "mlm_slots": n_slots,
        "nsp_accuracy": int(nsp_hits.sum()) / n_pairs,
        "nsp_accuracy_is_next": is_next,
        "nsp_accuracy_not_next": not_next,
        "nsp_chance": 0.5,
        "nsp_majority_baseline": int(pairs_by_label.max()) / n_pairs,
        "mlm_accuracy": mlm_hits / n_slots,
        "mlm_majority_baseline": int(real_labels.bincount().max()) / n_slots,
    }

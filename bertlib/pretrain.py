"""Pretraining BERT with MLM + NSP: data loader, a fast training step, ``train_bert``,
evaluation, ``get_bert_encoding`` and the shipped small checkpoint.

Shapes: B = batch, T = sequence length, H = num_hiddens, P = prediction slots per sequence,
K = real (unpadded) prediction slots in the batch, V = vocabulary size.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
from tqdm.auto import tqdm

from bertlib.checkpoint import load_pretrained
from bertlib.checks import check_positive_int, check_pred_positions
from bertlib.data import PretrainBatch, make_nsp_pairs, make_pretrain_examples, pad_bert_inputs
from bertlib.i18n import resolve_language, text
from bertlib.loss import BERTLoss, bert_loss
from bertlib.masking import make_generator
from bertlib.model import BERTConfig, BERTModel, get_tokens_and_segments
from bertlib.tokenizer import WordPieceTokenizer
from bertlib.vocab import Vocab

SMALL_BERT_DIR = Path(__file__).resolve().parent / "assets" / "small_bert"
METRICS_FILE = "metrics.json"

# ---------------------------------------------------------------------------------- data


def make_pretrain_data(paragraphs: Sequence[list[list[str]]], vocab: Vocab, max_len: int, *,
                       seed: int, rounds: int = 1, max_preds: int | None = None,
                       groups: Sequence[str] | None = None) -> PretrainBatch:
    """NSP pairs + MLM masking over tokenized ``paragraphs``, padded to ``max_len``.

    ``rounds`` > 1 repeats pairing and masking with fresh draws, so that the same sentence is
    seen with different partners and different masked positions ("dynamic masking"). Pairs
    longer than ``max_len`` are truncated.

    ``groups`` (one label per paragraph, such as its language) draws each NotNext partner from
    a paragraph of the same group. In a bilingual corpus a partner in the other language would
    let NSP be solved by telling the languages apart.
    """
    check_positive_int("rounds", rounds)
    if groups is None:
        groups = [""] * len(paragraphs)
    if len(groups) != len(paragraphs):
        raise ValueError(f"groups must give one label per paragraph: {len(paragraphs)} "
                         f"paragraphs, {len(groups)} labels")
    by_group: dict[str, list[list[list[str]]]] = {}
    for paragraph, group in zip(paragraphs, groups, strict=True):
        by_group.setdefault(group, []).append(paragraph)
    small = {group: len(members) for group, members in by_group.items() if len(members) < 2}
    if not paragraphs or small:
        raise ValueError(f"every group needs at least 2 paragraphs, so that NotNext partners "
                         f"can come from another one; got {len(paragraphs)} paragraphs"
                         + (f", too few in groups {small}" if small else ""))
    g = make_generator(seed=seed)
    examples = []
    for _ in range(rounds):
        for members in by_group.values():
            pairs = make_nsp_pairs(members, max_len, generator=g).pairs
            examples += make_pretrain_examples(pairs, vocab, generator=g)
    return pad_bert_inputs(examples, max_len, vocab, max_preds)


def make_loader(data: PretrainBatch, batch_size: int, *, seed: int,
                shuffle: bool = True) -> DataLoader:
    """Mini-batches of the seven PretrainBatch tensors, shuffled by a generator seeded with
    ``seed`` (so two loaders with the same seed give the same batches)."""
    check_positive_int("batch_size", batch_size)
    return DataLoader(TensorDataset(*data.tensors()), batch_size=batch_size, shuffle=shuffle,
                      generator=make_generator(seed=seed))


# ---------------------------------------------------------------------------------- speed


def keep_freed_memory() -> bool:
    """Tell glibc's malloc to keep freed large buffers instead of returning them to the OS.

    By default every buffer above a threshold is mmap-ed and unmapped again on free, so each
    training step page-faults and zero-fills its activations afresh; keeping them mapped made
    the chapter's step 1.3-1.45x faster on 2 cores (benchmarks/bench_pretrain.py). Results are
    unchanged; the cost is that the process keeps its peak memory. Returns False (and does
    nothing) where glibc is not the allocator.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    m_trim_threshold, m_mmap_max = -1, -4
    # No mmap-ed chunks at all (the mmap threshold is capped at 32 MB, below the MLM logits)
    # and never trim the heap top.
    return bool(mallopt(m_mmap_max, 0)) and bool(mallopt(m_trim_threshold, 2**31 - 1))


class _LinearCrossEntropy(torch.autograd.Function):
    """Weighted mean cross-entropy of ``X @ W.T + b`` without keeping logits *and*
    log-probabilities: the backward pass turns the saved logits into the softmax in place."""

    @staticmethod
    def forward(ctx, X, W, b, labels, weights):
        logits = torch.addmm(b, X, W.t())  # (K, V)
        lse = torch.logsumexp(logits, dim=1)  # (K,)
        per_slot = lse - logits.gather(1, labels[:, None]).squeeze(1)
        wsum = weights.sum().clamp_min(torch.finfo(weights.dtype).tiny)
        ctx.save_for_backward(X, W, logits, lse, labels, weights, wsum)
        ctx.used = False
        return (per_slot * weights).sum() / wsum

    @staticmethod
    def backward(ctx, grad):
        if ctx.used:
            raise RuntimeError("linear_cross_entropy's backward reuses its buffers in place "
                               "and can run only once (no retain_graph)")
        ctx.used = True
        X, W, logits, lse, labels, weights, wsum = ctx.saved_tensors
        # d loss / d logits = (softmax - onehot) * weight / sum(weights)
        dlogits = logits.sub_(lse[:, None]).exp_()
        dlogits[torch.arange(len(labels)), labels] -= 1.0
        dlogits.mul_((grad * weights / wsum)[:, None])
        dX = dlogits @ W if ctx.needs_input_grad[0] else None
        dW = dlogits.t() @ X if ctx.needs_input_grad[1] else None
        db = dlogits.sum(0) if ctx.needs_input_grad[2] else None
        return dX, dW, db, None, None


def linear_cross_entropy(X: torch.Tensor, W: torch.Tensor, b: torch.Tensor,
                         labels: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """Same value and gradients as ``sum(w * cross_entropy(X @ W.T + b, labels)) / sum(w)``.

    X: (K, H); W: (V, H); b: (V,); labels, weights: (K,).
    """
    return _LinearCrossEntropy.apply(X, W, b, labels, weights.to(X.dtype))


def chapter_loss(model: BERTModel, tokens, segments, valid_lens, pred_positions, mlm_weights,
                 mlm_labels, nsp_labels) -> BERTLoss:
    """The chapter's straightforward loss: MLM logits for all B x P slots, padding included,
    then the weighted cross-entropy of ``bert_loss``."""
    _, mlm_Y_hat, nsp_Y_hat = model(tokens, segments, valid_lens, pred_positions)
    return bert_loss(mlm_Y_hat, mlm_labels, mlm_weights, nsp_Y_hat, nsp_labels)


def fast_loss(model: BERTModel, tokens, segments, valid_lens, pred_positions, mlm_weights,
              mlm_labels, nsp_labels) -> BERTLoss:
    """The same losses (and gradients) as :func:`chapter_loss`, computed faster.

    Only the K slots with a non-zero weight go through the MLM head (the padded slots are about
    a third of the B x P in the chapter's setting), and the cross-entropy over V classes is
    fused with the output layer (:func:`linear_cross_entropy`).
    """
    encoded_X, _, nsp_Y_hat = model(tokens, segments, valid_lens)
    B, T, H = encoded_X.shape
    check_pred_positions(pred_positions, B, T)
    real = mlm_weights > 0  # (B, P)
    rows = torch.arange(B, device=tokens.device)[:, None] * T + pred_positions  # (B, P)
    X = encoded_X.reshape(B * T, H).index_select(0, rows[real])  # (K, H)
    *body, out = model.mlm.mlp
    hidden = X
    for layer in body:
        hidden = layer(hidden)
    mlm = linear_cross_entropy(hidden, out.weight, out.bias, mlm_labels[real], mlm_weights[real])
    nsp = F.cross_entropy(nsp_Y_hat, nsp_labels)
    return BERTLoss(mlm, nsp, mlm + nsp)


LossFn = Callable[..., BERTLoss]


def train_step(model: BERTModel, optimizer: torch.optim.Optimizer,
               batch: Sequence[torch.Tensor], loss_fn: LossFn = fast_loss) -> BERTLoss:
    """One optimisation step on the seven batch tensors; returns the (detached) losses."""
    optimizer.zero_grad(set_to_none=True)
    loss = loss_fn(model, *batch)
    loss.total.backward()
    optimizer.step()
    return BERTLoss(*(t.detach() for t in loss))


# ---------------------------------------------------------------------------------- training


def init_model(config: BERTConfig, seed: int) -> BERTModel:
    """A fresh model whose initial weights depend only on ``seed``."""
    torch.manual_seed(seed)
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


def train_bert(model: BERTModel, data: PretrainBatch, *, num_steps: int, batch_size: int = 128,
               lr: float = 1e-3, seed: int = 0, progress: bool = True,
               callback: Callable[[TrainHistory], None] | None = None,
               loss_fn: LossFn = fast_loss) -> TrainHistory:
    """Train ``model`` with Adam for ``num_steps`` mini-batches (cycling over ``data``).

    ``seed`` fixes both the batch order and the dropout draws, so the same model, data and
    seed give the same losses. ``callback(history)`` runs after every step (e.g.
    ``LossPlot().update``). The progress bar shows the MLM and NSP losses and pairs/s.
    """
    check_positive_int("num_steps", num_steps)
    keep_freed_memory()
    loader = make_loader(data, batch_size, seed=seed)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    torch.manual_seed(seed)  # dropout draws from the global generator
    model.train()
    history = TrainHistory(num_steps=num_steps)
    bar = tqdm(total=num_steps, disable=not progress, desc="pretraining")
    while len(history.mlm) < num_steps:
        for batch in loader:
            start = time.perf_counter()
            loss = train_step(model, optimizer, batch, loss_fn)
            history.seconds += time.perf_counter() - start
            history.pairs += len(batch[0])
            history.mlm.append(loss.mlm.item())
            history.nsp.append(loss.nsp.item())
            bar.set_postfix(mlm=f"{history.mlm[-1]:.3f}", nsp=f"{history.nsp[-1]:.3f}",
                            pairs_s=f"{history.pairs_per_sec:.0f}", refresh=False)
            bar.update(1)
            if callback is not None:
                callback(history)
            if len(history.mlm) == num_steps:
                break
    bar.close()
    model.eval()
    return history


class LossPlot:
    """A matplotlib figure of the MLM and NSP losses, redrawn in place while training.

    ``train_bert(..., callback=LossPlot().update)``; in a notebook the figure appears once and
    is updated every ``every`` steps and after the last one. Its labels are in ``lang``
    (default: the notebook's language, see :func:`bertlib.i18n.detect_language`).
    """

    def __init__(self, every: int = 10, lang: str | None = None):
        import matplotlib.pyplot as plt

        from bertlib.fonts import use_cjk_font  # imports matplotlib: only when plotting

        check_positive_int("every", every)
        self.every = every
        self.lang = resolve_language(lang)
        use_cjk_font()
        self.fig, self.ax = plt.subplots(figsize=(5, 3))
        plt.close(self.fig)  # shown only through the display handle, not again at cell end
        self.lines = {name: self.ax.plot([], [], label=text(f"train_{name}_loss", self.lang))[0]
                      for name in ("mlm", "nsp")}
        self.ax.set_xlabel(text("train_step", self.lang))
        self.ax.set_ylabel(text("train_loss", self.lang))
        self.ax.legend()
        self._handle = None

    def update(self, history: TrainHistory) -> None:
        steps = len(history.mlm)
        if steps % self.every and steps != history.num_steps:
            return
        for name, line in self.lines.items():
            line.set_data(range(1, steps + 1), getattr(history, name))
        self.ax.relim()
        self.ax.autoscale_view()
        from IPython.display import display

        if self._handle is None:
            self._handle = display(self.fig, display_id=True)
        else:
            self._handle.update(self.fig)


# ---------------------------------------------------------------------------------- using it


@torch.no_grad()
def evaluate_pretraining(model: BERTModel, data: PretrainBatch,
                         batch_size: int = 512) -> dict[str, float]:
    """NSP accuracy and MLM top-1 accuracy on ``data``, next to their baselines.

    ``mlm_majority_baseline`` is the accuracy of always predicting the most frequent label of
    ``data`` itself (the best any constant guess can do); ``nsp_majority_baseline`` likewise.
    The NSP accuracy is also given per class: a head that favours one answer shows it there.
    """
    was_training = model.training
    model.eval()
    mlm_hits = 0
    nsp_hits = torch.zeros(2, dtype=torch.long)  # right answers per label [NotNext, IsNext]
    for batch in make_loader(data, batch_size, seed=0, shuffle=False):
        tokens, segments, valid_lens, pred_positions, weights, labels, nsp_labels = batch
        _, mlm_Y_hat, nsp_Y_hat = model(tokens, segments, valid_lens, pred_positions)
        right = nsp_Y_hat.argmax(1) == nsp_labels
        nsp_hits += nsp_labels[right].bincount(minlength=2)
        real = weights > 0
        mlm_hits += int((mlm_Y_hat.argmax(2)[real] == labels[real]).sum())
    model.train(was_training)
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


@torch.no_grad()
def get_bert_encoding(model: BERTModel, tokenizer: WordPieceTokenizer, text_a: str,
                      text_b: str | None = None) -> torch.Tensor:
    """BERT's representation of ``<cls> a <sep>`` or ``<cls> a <sep> b <sep>``: (1, T, H).

    Runs in eval mode (and restores the model's mode afterwards). The chapter's version calls
    the network in training mode, so dropout stays on and the same text gets a slightly
    different encoding on every call; here it is deterministic.
    """
    specials = tokenizer.vocab.specials
    tokens_b = None if text_b is None else tokenizer.tokenize(text_b)
    tokens, segments = get_tokens_and_segments(tokenizer.tokenize(text_a), tokens_b,
                                               cls_token=specials.cls, sep_token=specials.sep)
    was_training = model.training
    model.eval()
    encoded_X, _, _ = model(torch.tensor([tokenizer.vocab[tokens]]), torch.tensor([segments]))
    model.train(was_training)
    return encoded_X


def load_small_bert(directory: str | Path = SMALL_BERT_DIR) -> tuple[BERTModel,
                                                                      WordPieceTokenizer]:
    """The shipped small bilingual BERT (eval mode) and its tokenizer."""
    return load_pretrained(directory), WordPieceTokenizer.from_directory(directory)

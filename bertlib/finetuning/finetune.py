"""Fine-tuning: a new output layer on the pretrained encoder, the loop, held-out accuracy.

The original BERT is pretrained once and then fine-tuned for each task: the MLM and NSP heads
are dropped, a small output layer is added, and every parameter is trained a little further on
the task's labelled data. :class:`BERTClassifier` is the chapter's (one label per text or text
pair, from the ``<cls>`` representation); :class:`BERTTagger` gives one label per token;
:class:`BERTQuestionAnswerer` finds the answer to a question as a span of the text's tokens.

Shapes: B = batch, T = sequence length, H = num_hiddens, C = classes (or tags).
"""

import copy
import math
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from jaxtyping import Bool, Float, Int
from torch import Tensor, nn

from bertlib.batches import make_loader
from bertlib.finetuning.tasks import IGNORE, TaskData
from bertlib.inputs import eval_mode, model_device
from bertlib.model import BERTModel, checked, key_padding_mask
from bertlib.support.checks import check_all_finite, check_int_in, check_positive_int, check_range
from bertlib.support.i18n import text
from bertlib.support.rng import own_global_rng
from bertlib.train import check_lr, default_device, run_steps


def _new_linear(bert: BERTModel, num_outputs: int, seed: int,
                name: str = "num_classes") -> nn.Linear:
    """A freshly initialised output layer on ``bert``'s outputs, on its device and in its dtype,
    whose weights depend only on ``seed``: the one place the heads' sizes are checked."""
    check_int_in(name, num_outputs, 2, None, " (a choice needs two classes)")
    like = bert.encoder.token_embedding.weight
    with own_global_rng(seed):
        return nn.Linear(bert.config.num_hiddens, num_outputs).to(like.device, like.dtype)


class BERTClassifier(nn.Module):
    """The chapter's classifier: the pretrained encoder and its ``hidden`` layer (Linear + Tanh
    on ``<cls>``, the pooler), then a new output layer with ``num_classes`` outputs.

    For a text pair, ``<cls> A <sep> B <sep>`` with its segment ids goes in unchanged: the
    chapter fine-tunes the same class for natural language inference. The encoder and hidden
    layer are copies, so fine-tuning leaves ``bert`` as it was; the output layer's initial
    weights depend only on ``seed``.
    """

    def __init__(self, bert: BERTModel, num_classes: int, *, seed: int = 0):
        super().__init__()
        self.encoder = copy.deepcopy(bert.encoder)
        self.hidden = copy.deepcopy(bert.hidden)
        self.output = _new_linear(bert, num_classes, seed)

    def forward(self, tokens, segments, valid_lens=None):
        """tokens, segments: (B, T); valid_lens: (B,) or None. Returns logits (B, C)."""
        encoded_X = self.encoder(tokens, segments, valid_lens)  # (B, T, H)
        return self.output(self.hidden(encoded_X[:, 0, :]))


class BERTTagger(nn.Module):
    """One label per token (the chapter's tagging): the pretrained encoder, a new output layer."""

    def __init__(self, bert: BERTModel, num_tags: int, *, seed: int = 0):
        super().__init__()
        self.encoder = copy.deepcopy(bert.encoder)
        self.output = _new_linear(bert, num_tags, seed, "num_tags")

    def forward(self, tokens, segments, valid_lens=None):
        """tokens, segments: (B, T); valid_lens: (B,) or None. Returns logits (B, T, C)."""
        return self.output(self.encoder(tokens, segments, valid_lens))


class BERTQuestionAnswerer(nn.Module):
    """Question answering as in the BERT paper: ``<cls> question <sep> text <sep>`` in, and for
    every token two scores, for being the answer's first token and for being its last. The
    new layer is a Linear(H, 2): its two rows are the paper's start and end vectors."""

    def __init__(self, bert: BERTModel, *, seed: int = 0):
        super().__init__()
        self.encoder = copy.deepcopy(bert.encoder)
        self.output = _new_linear(bert, 2, seed)

    def forward(self, tokens, segments, valid_lens=None):
        """tokens, segments: (B, T); valid_lens: (B,) or None. Returns scores (B, 2, T): row 0
        for the first token of the answer, row 1 for the last, over the T positions. Read as
        logits of a T-way classification, they make :func:`task_loss` the paper's loss."""
        scores = self.output(self.encoder(tokens, segments, valid_lens)).transpose(1, 2)
        if valid_lens is None:
            return scores
        # Padding is never an answer: a score of -inf gives it probability 0.
        padding = torch.arange(tokens.shape[1], device=tokens.device) >= valid_lens[:, None]
        return scores.masked_fill(padding[:, None, :], float("-inf"))


class BagOfWords(nn.Module):
    """The baseline: a linear classifier on the share of each vocabulary entry among a text's
    tokens. No order and no context, and nothing pretrained."""

    def __init__(self, vocab_size: int, num_classes: int, *, seed: int = 0):
        super().__init__()
        with own_global_rng(seed):
            self.weights = nn.Embedding(vocab_size, num_classes)  # one row per vocabulary entry
        self.bias = nn.Parameter(torch.zeros(num_classes))

    @checked
    def forward(self, tokens: Int[Tensor, "B T"], segments: Int[Tensor, "B T"],
                valid_lens: Int[Tensor, " B"] | None = None) -> Float[Tensor, "B C"]:
        """valid_lens: None for no padding; ``segments`` is ignored (taken for a uniform call)."""
        B, T = tokens.shape
        if valid_lens is None:
            valid_lens = torch.full((B,), T, device=tokens.device)
        real = torch.arange(T, device=tokens.device)[None, :] < valid_lens[:, None]  # (B, T)
        summed = (self.weights(tokens) * real[..., None]).sum(1)  # (B, C)
        return summed / valid_lens[:, None] + self.bias


@checked
def task_loss(Y_hat: Float[Tensor, "B *T C"],  # *T: none, or (T,)
              labels: Int[Tensor, "B *T"]) -> Float[Tensor, ""]:  # noqa: F821
    """Mean cross-entropy over the labelled positions: ``Y_hat`` (B, C) with ``labels`` (B,), or
    (B, T, C) with (B, T), ``IGNORE`` (``<cls>``, ``<sep>``, padding) counting for nothing. The
    mean is over the whole batch's labelled tokens: each weighs the same, whatever its sentence."""
    C = Y_hat.shape[-1]
    check_range("labels", labels[labels != IGNORE], 0, C - 1, f"in [0, {C - 1}] or IGNORE")
    return F.cross_entropy(Y_hat.reshape(-1, C), labels.reshape(-1), ignore_index=IGNORE)


def freeze_layers(model: BERTClassifier | BERTTagger, *, trainable_blocks: int) -> int:
    """Freeze the embeddings and all but the top ``trainable_blocks`` encoder blocks (0: all),
    not the layers above; returns the trainable parameter count. Frozen parameters get no
    gradient, which saves the backward pass below the lowest trainable block."""
    blocks = len(model.encoder.blks)
    check_int_in("trainable_blocks", trainable_blocks, 0, blocks)
    trainable = set(model.encoder.blks[blocks - trainable_blocks:].parameters())
    encoder = set(model.encoder.parameters())
    for p in model.parameters():
        p.requires_grad_(p not in encoder or p in trainable)
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def check_data(data: TaskData) -> None:
    """The door of fine-tuning, prediction, scoring: an example at least (``select`` may give 0)."""
    if len(data) == 0:
        raise ValueError("data must hold at least one example; got an empty TaskData")


def check_fits(model: nn.Module, data: TaskData) -> torch.Size:
    """Non-empty data whose labels are among the model's outputs: a classifier with 2 outputs
    trained on 6 topics would run, and learn nothing about 4 of them. Returns the outputs'
    shape for all of ``data``, (N, C) or (N, T, C), from a forward pass on its first example."""
    check_data(data)
    with eval_mode(model):
        Y_hat = model(*(t[:1].to(model_device(model)) for t in data.tensors()[:3]))
    shape = torch.Size((len(data), *Y_hat.shape[1:]))
    if data.labels.shape != shape[:-1]:
        raise ValueError(f"labels must have shape {tuple(shape[:-1])} (the outputs' without "
                         f"their last dimension); got {tuple(data.labels.shape)}")
    C = shape[-1]
    check_range("labels", data.labels[data.labels != IGNORE], 0, C - 1,
                f"class ids in [0, {C - 1}] (the model has {C} outputs) or IGNORE")
    return shape


@dataclass
class FineTuneHistory:
    """Per-step losses of :func:`fine_tune`."""

    loss: list[float] = field(default_factory=list)
    examples: int = 0  # texts or text pairs processed
    seconds: float = 0.0  # wall-clock time of the steps


def fine_tune(model: nn.Module, data: TaskData, *, num_steps: int, batch_size: int = 32,
              lr: float = 1e-4, seed: int = 0, progress: bool = True,
              device: torch.device | str | None = None,
              lang: str | None = None) -> FineTuneHistory:
    """Train the parameters of ``model`` that require a gradient (see :func:`freeze_layers`)
    with Adam and :func:`task_loss` for ``num_steps`` mini-batches of ``data``, in the pretraining
    loop (:func:`bertlib.train.run_steps`): ``seed`` fixes batch order and dropout, torch's global
    random state is left as it was, the progress bar (in ``lang``) shows loss and examples/s."""
    check_positive_int("num_steps", num_steps)
    check_lr("lr", lr)
    device = default_device(device)
    check_fits(model, data)
    loader = make_loader(data, batch_size, seed=seed)  # refuses a bad batch_size or seed
    model.to(device)
    optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=lr)
    history = FineTuneHistory()
    loss_name, rate_name = text("progress_loss", lang), text("progress_examples_s", lang)

    def step(batch: list[torch.Tensor]) -> dict[str, str]:
        start = time.perf_counter()
        tokens, segments, valid_lens, labels = batch
        optimizer.zero_grad(set_to_none=True)
        loss = task_loss(model(tokens, segments, valid_lens), labels)
        check_all_finite("the loss", loss)  # run_steps stops there: DivergedError
        loss.backward()
        optimizer.step()
        history.seconds += time.perf_counter() - start
        history.examples += len(tokens)
        history.loss.append(loss.item())
        return {loss_name: f"{history.loss[-1]:.3f}",
                rate_name: f"{history.examples / history.seconds:.0f}"}

    run_steps(model, optimizer, loader, num_steps, step, seed=seed, device=device,
              desc=text("finetune_progress", lang), progress=progress, lang=lang)
    return history


def _outputs(model: nn.Module, data: TaskData, batch_size: int) -> Iterator[tuple[list, Tensor]]:
    """Each batch of ``data`` in order and ``model``'s outputs for it (eval mode, its device)."""
    check_data(data)  # make_loader checks batch_size
    device = model_device(model)
    with eval_mode(model):
        for batch in make_loader(data, batch_size, seed=0, shuffle=False):
            yield batch, model(*(t.to(device) for t in batch[:3]))


def predict(model: nn.Module, data: TaskData, batch_size: int = 256) -> torch.Tensor:
    """The most probable class (N,) or tag (N, T) of each example, in eval mode, on the CPU."""
    return torch.cat([Y_hat.argmax(-1).cpu() for _, Y_hat in _outputs(model, data, batch_size)])


@dataclass(frozen=True)
class Accuracy:
    """``hits`` right answers out of ``n``, with a 95% Wilson confidence interval."""

    hits: int
    n: int

    def __post_init__(self) -> None:
        check_int_in("hits", self.hits, 0, self.n, " (right answers out of n)")

    @property
    def value(self) -> float:
        return self.hits / self.n if self.n else math.nan

    @property
    def interval(self) -> tuple[float, float]:
        """The Wilson score interval: unlike value ± 1.96 standard errors, it stays in [0, 1]
        and is not empty when every answer is right."""
        if not self.n:
            return math.nan, math.nan
        z2, p, n = 1.96**2, self.value, self.n
        centre = (p + z2 / (2 * n)) / (1 + z2 / n)
        half = math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) * math.sqrt(z2) / (1 + z2 / n)
        return max(0.0, centre - half), min(1.0, centre + half)

    def __str__(self) -> str:
        low, high = self.interval
        return f"{self.value:.3f} [{low:.3f}, {high:.3f}]"


@checked
def best_span(scores: Float[Tensor, "B 2 T"], allowed: Bool[Tensor, "B T"],
              max_answer_len: int) -> Int[Tensor, "B 2"]:
    """The first and last token i <= j of a span at most ``max_answer_len`` tokens long, both
    ``allowed`` (B, T), that maximise ``scores[b, 0, i] + scores[b, 1, j]`` (scores (B, 2, T)
    from :class:`BERTQuestionAnswerer`): (B, 2) long, i and j of each example."""
    check_positive_int("max_answer_len", max_answer_len)
    T = scores.shape[2]
    both = scores[:, 0, :, None] + scores[:, 1, None, :]  # (B, T, T): span from i to j
    i = torch.arange(T, device=scores.device)
    length = i[None, :] - i[:, None]  # (T, T): j - i
    valid = (length >= 0) & (length < max_answer_len)  # (T, T)
    valid = valid & allowed[:, :, None] & allowed[:, None, :]  # (B, T, T)
    best = both.masked_fill(~valid, float("-inf")).flatten(1).argmax(1)  # (B,)
    return torch.stack([best // T, best % T], dim=1)


def predict_spans(model: nn.Module, data: TaskData, max_answer_len: int = 8,
                  batch_size: int = 256) -> torch.Tensor:
    """The first and last token (N, 2) of ``model``'s answer to each question of ``data``, by
    :func:`best_span` among the text's tokens (segment B, not its <sep>), in eval mode, on CPU."""
    out = []  # best_span checks max_answer_len
    for (tokens, segments, valid_lens, _), scores in _outputs(model, data, batch_size):
        in_text = (segments == 1) & key_padding_mask(valid_lens - 1, tokens.shape[1])  # not <sep>
        out.append(best_span(scores.cpu(), in_text, max_answer_len))
    return torch.cat(out)


def span_accuracy(model: nn.Module, data: TaskData, max_answer_len: int = 8) -> Accuracy:
    """The share of ``data``'s questions whose answer ``model`` finds exactly: first and last
    token right (the exact match of SQuAD, counted in tokens)."""
    if data.labels.shape != (len(data), 2):
        raise ValueError(f"data.labels must be answer spans, shape {(len(data), 2)} (from "
                         f"span_data()); got {tuple(data.labels.shape)}")
    found = predict_spans(model, data, max_answer_len)
    return Accuracy(int((found == data.labels).all(1).sum()), len(data))


@dataclass(frozen=True)
class TaskScore:
    """Held-out accuracy over every labelled example or token, and per class (the share of each
    class's examples or tokens that got their own label)."""

    overall: Accuracy
    per_class: tuple[Accuracy, ...]


def evaluate_task(model: nn.Module, data: TaskData, num_classes: int,
                  batch_size: int = 256) -> TaskScore:
    """Accuracy of ``model`` on ``data``, overall and per class, ``IGNORE`` positions left out.
    ``num_classes`` must be the model's number of outputs, and every label one of them."""
    if (outputs := check_fits(model, data)[-1]) != num_classes:
        raise ValueError(f"num_classes must be the model's number of outputs, {outputs}; got "
                         f"{num_classes}")
    predicted = predict(model, data, batch_size)
    labelled = data.labels != IGNORE
    labels, right = data.labels[labelled], (predicted == data.labels)[labelled]
    per_class = tuple(Accuracy(int(right[labels == c].sum()), int((labels == c).sum()))
                      for c in range(num_classes))
    return TaskScore(Accuracy(int(right.sum()), len(labels)), per_class)

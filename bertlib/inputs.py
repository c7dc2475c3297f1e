"""From text to what the model reads: ``<cls> A <sep> B <sep>``, segment ids, tensors.

One path serves everything that feeds text to a model: :func:`encode_pair` tokenizes,
truncates and adds the special tokens; :meth:`EncodedInput.tensors` and :func:`stack_inputs`
turn the result into a batch. Shapes: B = batch, T = sequence length, H = num_hiddens.
"""

from __future__ import annotations

import contextlib
import numbers
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

import torch
from torch import nn

from bertlib.model import BERTModel
from bertlib.support.checks import check_instance, check_int_in, check_vocab_fits
from bertlib.text.tokenizer import WordPieceTokenizer
from bertlib.text.vocab import check_word_tokens


def get_tokens_and_segments(tokens_a: list[str], tokens_b: list[str] | None = None, *,
                            cls_token: str = "<cls>", sep_token: str = "<sep>") -> tuple:
    """Build BERT's input sequence: ``<cls> A <sep>`` or ``<cls> A <sep> B <sep>``.

    Returns the tokens and their segment ids (0 for ``<cls>``, A and its ``<sep>``; 1 for B and
    its ``<sep>``).
    """
    check_word_tokens("tokens_a", tokens_a)  # a text where a list belongs is named here
    if tokens_b is not None:
        check_word_tokens("tokens_b", tokens_b)
    tokens = [cls_token, *tokens_a, sep_token]
    segments = [0] * len(tokens)
    if tokens_b is not None:
        tokens += [*tokens_b, sep_token]
        segments += [1] * (len(tokens_b) + 1)
    return tokens, segments


def truncate_pair(a: list[str], b: list[str], max_tokens: int) -> tuple[list[str], list[str]]:
    """Trim the longer sentence from its end until both fit in ``max_tokens``."""
    a, b = list(a), list(b)
    while len(a) + len(b) > max_tokens:
        (a if len(a) >= len(b) else b).pop()
    return a, b


class EmptyTextError(ValueError):
    """A text that gives no token; ``which`` is ``"a"`` or ``"b"``."""

    def __init__(self, which: str):
        super().__init__(f"text_{which} must contain at least one token")
        self.which = which


@dataclass(frozen=True)
class EncodedInput:
    """``<cls> A <sep> [B <sep>]`` as tokens, ids and segments, after truncation; boundary: the
    first sentence-B token's index (None without B); total: the tokens before truncation;
    unknown: how many tokens are the vocabulary's unknown token."""

    tokens: list[str]
    ids: list[int]
    segments: list[int]
    boundary: int | None
    total: int
    unknown: int

    @property
    def truncated(self) -> bool:
        return self.total > len(self.tokens)

    def tensors(self, device: torch.device | str | None = None) -> tuple:
        """A batch of one on ``device`` (default: the CPU): tokens and segments, each (1, T)."""
        device = None if device is None else check_device("device", device)
        return (torch.tensor([self.ids], device=device),
                torch.tensor([self.segments], device=device))

    def masked(self, positions: Sequence[int], mask_id: int) -> EncodedInput:
        """This input with the id ``mask_id`` at ``positions`` (the tokens left as they were)."""
        return replace(self, ids=[mask_id if i in positions else t for i, t in enumerate(self.ids)])


def encode_pair(tokenizer: WordPieceTokenizer, text_a: str, text_b: str | None = None,
                max_len: int | None = None, *, require_b: bool = False) -> EncodedInput:
    """Tokenize A (and B when it is not blank) and build ``<cls> A <sep> [B <sep>]``, cut to
    ``max_len`` tokens if given, specials included (the longer sentence loses its last tokens
    first, and each keeps at least one). Raises :class:`EmptyTextError` when A (or a required
    B) gives no token, an :class:`~bertlib.support.checks.InputError` for text not valid Unicode."""
    a = tokenizer.encode(text_a, "text_a").tokens
    b = tokenizer.encode(text_b, "text_b").tokens if text_b is not None else None
    b = b or None  # a blank B is no B
    if max_len is not None:  # <cls> a <sep>, or <cls> a <sep> b <sep>: a token of each text
        check_int_in("max_len", max_len, 3 if b is None else 5,
                     why=" (<cls>, <sep> and a token of each text)")
    if not a:
        raise EmptyTextError("a")
    if require_b and not b:
        raise EmptyTextError("b")
    total = len(a) + 2 + (len(b) + 1 if b else 0)
    if max_len is not None and total > max_len:
        if b:
            a, b = truncate_pair(a, b, max_len - 3)
        else:
            a = a[: max_len - 2]
    specials = tokenizer.vocab.specials
    tokens, segments = get_tokens_and_segments(a, b, cls_token=specials.cls,
                                               sep_token=specials.sep)
    return EncodedInput(tokens, tokenizer.vocab[tokens], segments,
                        len(a) + 2 if b else None, total, tokens.count(specials.unk))


def stack_inputs(inputs: Sequence[EncodedInput], pad_id: int) -> tuple:
    """Several inputs as one padded batch: tokens and segments (B, T), valid_lens (B,)."""
    T = max(len(x.ids) for x in inputs)
    tokens = torch.full((len(inputs), T), pad_id)
    segments = torch.zeros((len(inputs), T), dtype=torch.long)
    for i, x in enumerate(inputs):
        tokens[i, : len(x.ids)] = torch.tensor(x.ids)
        segments[i, : len(x.ids)] = torch.tensor(x.segments)
    return tokens, segments, torch.tensor([len(x.ids) for x in inputs])


def available_devices() -> list[str]:
    """The devices this machine has: 'cpu', then 'cuda:0', 'cuda:1', ... and 'mps'."""
    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    mps = torch.backends.mps.is_available()
    return ["cpu", *(f"cuda:{i}" for i in range(gpus)), *(["mps"] if mps else [])]


def check_device(name: str, value) -> torch.device:
    """``value`` (a name such as 'cuda:1', a torch.device or a GPU index) as a device this
    machine has: torch would take 'cuda' without a GPU and fail only at the first tensor."""
    index = isinstance(value, numbers.Integral) and not isinstance(value, bool)
    try:
        device = torch.device(f"cuda:{value}" if index else value)
    except (RuntimeError, TypeError):  # 'banana', 'cuda:x', -1, 1.5
        device = None
    aliases = {"cpu:0": "cpu", "cuda": "cuda:0", "mps:0": "mps"}  # "cuda": the current GPU
    available = available_devices()
    if device is None or aliases.get(str(device), str(device)) not in available:
        raise ValueError(f"{name} must be a device this machine has, one of {available} (a "
                         f"name, a torch.device or a GPU index); got {value!r:.80}")
    return device


def model_device(model: nn.Module) -> torch.device:
    """Where the model's parameters live; its inputs must go there too."""
    return next(model.parameters()).device


@contextlib.contextmanager
def eval_mode(model: nn.Module) -> Iterator[nn.Module]:
    """Eval mode (dropout off) and no gradients inside the block; the model's own mode after.
    Use it wherever a representation must not depend on chance: the same text, the same vector."""
    # Each submodule's own mode, not one for all: a classifier may train its head while its
    # frozen encoder stays in eval mode.
    modes = [(m, m.training) for m in model.modules()]
    model.eval()
    try:
        with torch.no_grad():
            yield model
    finally:
        for m, training in modes:
            m.training = training


def check_model_and_tokenizer(model: BERTModel, tokenizer: WordPieceTokenizer) -> None:
    """A BERTModel and the tokenizer it was trained with (swapped or mismatched, each named)."""
    check_instance("model", model, BERTModel, "a BERTModel (load_small_bert() gives one)")
    check_instance("tokenizer", tokenizer, WordPieceTokenizer,
                   "a bertlib WordPieceTokenizer (load_small_bert() gives one with its model)")
    check_vocab_fits("tokenizer", len(tokenizer.vocab), model.config.vocab_size)


def get_bert_encoding(model: BERTModel, tokenizer: WordPieceTokenizer, text_a: str,
                      text_b: str | None = None) -> torch.Tensor:
    """BERT's representation of ``<cls> a <sep>`` or ``<cls> a <sep> b <sep>``: (1, T, H).

    Runs in eval mode (and restores the model's mode afterwards). The chapter's version calls
    the network in training mode, so dropout stays on and the same text gets a slightly
    different encoding on every call; here it is deterministic.
    """
    check_model_and_tokenizer(model, tokenizer)
    encoded = encode_pair(tokenizer, text_a, text_b)
    with eval_mode(model):
        encoded_X, _, _ = model(*encoded.tensors(model_device(model)))
    return encoded_X

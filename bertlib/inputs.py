"""From text to what the model reads: ``<cls> A <sep> B <sep>``, segment ids, tensors.

One path serves everything that feeds text to a model (the widgets, the context-sensitivity
tables, ``get_bert_encoding``): :func:`encode_pair` tokenizes, truncates and adds the special
tokens; :meth:`EncodedInput.tensors` and :func:`stack_inputs` turn the result into a batch.

Shapes: B = batch, T = sequence length, H = num_hiddens.
"""

from __future__ import annotations

import contextlib
import numbers
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import torch
from torch import nn

from bertlib.model import BERTModel
from bertlib.support.checks import (
    check_instance,
    check_int_in,
    check_positive_int,
    check_vocab_fits,
)
from bertlib.text.tokenizer import WordPieceTokenizer
from bertlib.text.vocab import check_int_list, check_word_tokens


def get_tokens_and_segments(
    tokens_a: list[str],
    tokens_b: list[str] | None = None,
    *,
    cls_token: str = "<cls>",
    sep_token: str = "<sep>",
) -> tuple[list[str], list[int]]:
    """Build BERT's input sequence: ``<cls> A <sep>`` or ``<cls> A <sep> B <sep>``.

    Returns the tokens and their segment ids (0 for ``<cls>``, A and its ``<sep>``; 1 for B and
    its ``<sep>``).
    """
    check_word_tokens("tokens_a", tokens_a)  # a str where a list belongs is named here
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
    """``<cls> A <sep> [B <sep>]`` as tokens, ids and segments, after truncation.

    boundary: index of the first sentence-B token, None without B; total: the number of tokens
    before truncation; unknown: how many tokens are the vocabulary's unknown token.
    """

    tokens: list[str]
    ids: list[int]
    segments: list[int]
    boundary: int | None
    total: int
    unknown: int

    @property
    def truncated(self) -> bool:
        return self.total > len(self.tokens)

    def tensors(self, device: torch.device | str | None = None
                ) -> tuple[torch.Tensor, torch.Tensor]:
        """A batch of one on ``device`` (default: the CPU): tokens and segments, each (1, T)."""
        if device is not None:
            device = check_device("device", device)
        return (torch.tensor([self.ids], device=device),
                torch.tensor([self.segments], device=device))


def encode_pair(tokenizer: WordPieceTokenizer, text_a: str, text_b: str | None = None,
                max_len: int | None = None, *, require_b: bool = False) -> EncodedInput:
    """Tokenize A (and B when it is not blank) and build ``<cls> A <sep> [B <sep>]``.

    With ``max_len``, the pair is cut to ``max_len`` tokens, specials included (the longer
    sentence loses its last tokens first, and each keeps at least one). Raises
    :class:`EmptyTextError` when A (or a required B) gives no token, and an
    :class:`~bertlib.support.checks.InputError` for text that is not valid Unicode.
    """
    check_instance("tokenizer", tokenizer, WordPieceTokenizer,
                   "a bertlib WordPieceTokenizer (load_small_bert() gives one)")
    a = tokenizer.encode(text_a, "text_a").tokens
    b = tokenizer.encode(text_b, "text_b").tokens if text_b is not None else None
    b = b or None  # a blank B is no B
    if max_len is not None:  # <cls> a <sep>, or <cls> a <sep> b <sep>: a token of each text
        check_positive_int("max_len", max_len)
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


def stack_inputs(inputs: Sequence[EncodedInput],
                 pad_id: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
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
    """``value`` (a torch.device, a name such as 'cpu', 'cuda', 'cuda:1' or 'mps', or a GPU
    index) as a torch.device that this machine has; a ValueError naming the ones it has
    otherwise (torch would accept 'cuda' without a GPU and fail at the first tensor)."""
    available = available_devices()
    index = isinstance(value, numbers.Integral) and not isinstance(value, bool)
    device = None
    if isinstance(value, (str, torch.device)) or index:
        with contextlib.suppress(RuntimeError, ValueError):  # 'banana', 'cuda:x', -1
            device = torch.device(f"cuda:{value}" if index else value)
    # the same devices by other names; "cuda" is the current GPU
    aliases = {"cpu:0", *(["cuda"] if "cuda:0" in available else []),
               *(["mps:0"] if "mps" in available else [])}
    if device is None or str(device) not in {*available, *aliases}:
        raise ValueError(f"{name} must be a device this machine has, one of {available} (a "
                         f"name, a torch.device or a GPU index); got {value!r:.80}")
    return device


def model_device(model: nn.Module) -> torch.device:
    """Where the model's parameters live; its inputs must go there too."""
    first = next(model.parameters(), None)
    if first is None:
        raise ValueError(f"model must have parameters; {type(model).__name__} has none")
    return first.device


def check_weights_loaded(model: nn.Module) -> None:
    """Refuse a model any of whose weights are on the ``meta`` device: shapes without values
    (``with torch.device("meta")`` builds such a model to count or plan, not to compute)."""
    check_instance("model", model, nn.Module, "a torch module such as a BERTModel")
    meta = [name for name, p in model.named_parameters() if p.is_meta]
    if meta:
        raise ValueError(f"model's weights are on the meta device ({len(meta)} of them, "
                         f"{meta[0]} first): they have shapes but no values, so there is "
                         "nothing to compute or train with. Load or initialise them first "
                         "(init_model(config, seed), or model.to_empty(device='cpu') and a "
                         "checkpoint)")


@contextlib.contextmanager
def eval_mode(model: nn.Module) -> Iterator[nn.Module]:
    """Eval mode (dropout off) and no gradients inside the block; the model's own mode after.

    Use it wherever a representation must not depend on chance: the same text, the same vector.
    """
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
    """A model with its weights, and the tokenizer it was trained with: another vocabulary
    would give ids the model never learnt, refused only deep inside its embedding."""
    check_instance("model", model, BERTModel, "a BERTModel (load_small_bert() gives one)")
    check_weights_loaded(model)
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


def check_segment_ids(name: str, values) -> None:
    """A 1-d list of segment ids, each 0 (sentence A) or 1 (sentence B): the segment embedding
    has two rows, and a pair built by hand could hold anything."""
    check_int_list(name, values)
    bad = [int(s) for s in values if int(s) not in (0, 1)]
    if bad:
        raise ValueError(f"{name} must hold 0 (sentence A) or 1 (sentence B); got {bad[0]} in "
                         f"{list(values)!r:.80}")

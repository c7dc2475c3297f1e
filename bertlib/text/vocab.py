"""A vocabulary: tokens to ids and back, with BERT's reserved tokens."""

from __future__ import annotations

import collections
import numbers
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, fields

import torch

from bertlib.support.checks import (
    check_positive_int,
    check_sized,
    check_str,
    check_tokens,
)


@dataclass(frozen=True)
class SpecialTokens:
    """The spelling of BERT's reserved tokens: the chapter's ``<cls>``, checkpoints' ``[CLS]``."""

    pad: str = "<pad>"
    unk: str = "<unk>"
    cls: str = "<cls>"
    sep: str = "<sep>"
    mask: str = "<mask>"

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            if not isinstance(value, str) or value.split() != [value]:  # one token
                raise ValueError(f"SpecialTokens.{field.name} must be a non-empty string "
                                 f"without spaces; got {value!r:.80}")
        if len(set(self.as_list())) < len(self.as_list()):
            raise ValueError(f"SpecialTokens must be five different strings; got {self.as_list()}")

    def as_list(self) -> list[str]:
        return [self.pad, self.unk, self.cls, self.sep, self.mask]


HF_SPECIAL_TOKENS = SpecialTokens("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


class Vocab:
    """Tokens to ids (unknown: ``<unk>``'s) and back. ``Vocab(tokens, min_freq)`` counts a flat
    or nested list of tokens: ids 0-4 are the reserved tokens, then the others by falling
    frequency. ``Vocab.from_list`` keeps a given order (a checkpoint's ``vocab.txt``)."""

    def __init__(self, tokens: Sequence = (), min_freq: int = 1,
                 specials: SpecialTokens = SpecialTokens()):
        check_positive_int("min_freq", min_freq)
        check_specials(specials)
        counter = collections.Counter(_flatten("tokens", tokens))
        reserved = specials.as_list()
        ordered = sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))
        words = [tok for tok, freq in ordered if freq >= min_freq and tok not in reserved]
        self._init(reserved + words, specials)

    @classmethod
    def from_list(cls, idx_to_token: Sequence[str],
                  specials: SpecialTokens = SpecialTokens()) -> Vocab:
        check_word_tokens("idx_to_token", idx_to_token)
        check_specials(specials)
        vocab = cls.__new__(cls)
        vocab._init(list(idx_to_token), specials)
        return vocab

    def _init(self, idx_to_token: list[str], specials: SpecialTokens) -> None:
        self.token_to_idx = {tok: i for i, tok in enumerate(idx_to_token)}
        if len(self.token_to_idx) != len(idx_to_token):
            dup = collections.Counter(idx_to_token).most_common(1)[0][0]
            raise ValueError(f"vocabulary tokens must be unique; {dup!r} appears twice")
        missing = [t for t in specials.as_list() if t not in self.token_to_idx]
        if missing:
            raise ValueError(f"vocabulary lacks the reserved tokens {missing}")
        self.idx_to_token = idx_to_token
        self.specials = specials
        self.pad_id, self.unk_id, self.cls_id, self.sep_id, self.mask_id = (
            self.token_to_idx[t] for t in specials.as_list()
        )
        # Tokens that mark structure rather than words: never masked, never a random draw.
        self.structural_ids = frozenset({self.pad_id, self.cls_id, self.sep_id, self.mask_id})
        reserved = {self.unk_id, *self.structural_ids}
        # Ordinary words: what MLM's "replace with a random token" draws from.
        self.word_ids = [i for i in range(len(idx_to_token)) if i not in reserved]

    def __len__(self) -> int:
        return len(self.idx_to_token)

    def __getitem__(self, tokens: str | Sequence[str]) -> int | list[int]:
        """The id of a token (``<unk>``'s when unknown), or the ids of a list of tokens."""
        if isinstance(tokens, str):
            return self.token_to_idx.get(tokens, self.unk_id)
        check_tokens("vocab[...]", tokens)
        return [self.token_to_idx.get(t, self.unk_id) for t in tokens]

    def to_tokens(self, indices: int | Sequence[int]) -> str | list[str]:
        """The token of an id (an integer, not a float), or the tokens of a list of ids."""
        index = _as_id(indices)
        if index is not None:
            if not 0 <= index < len(self):
                raise ValueError(f"token id must be in [0, {len(self) - 1}]; got {index}")
            return self.idx_to_token[index]
        check_sized("indices", indices, "an integer token id or a list of them")
        if getattr(indices, "ndim", 1) != 1:  # a 2-d tensor or array holds rows, not ids
            raise ValueError(f"indices must be an integer token id or a list of them, 1-d; got "
                             f"shape {tuple(indices.shape)}")
        tokens = []
        for i, value in enumerate(indices):
            if _as_id(value) is None:
                raise ValueError(f"indices[{i}] must be an integer token id; got {value!r:.80}")
            tokens.append(self.to_tokens(value))
        return tokens


def _as_id(value) -> int | None:
    """``value`` as a token id when it is an integer (not a bool) or a 0-d integer tensor."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value)
    if (isinstance(value, torch.Tensor) and value.dim() == 0 and value.dtype != torch.bool
            and not value.dtype.is_floating_point and not value.dtype.is_complex):
        return int(value)
    return None


def check_specials(specials: SpecialTokens) -> None:
    if not isinstance(specials, SpecialTokens):
        raise ValueError(f"specials must be a SpecialTokens (e.g. bertlib.HF_SPECIAL_TOKENS); "
                         f"got {specials!r:.80}")


def _flatten(name: str, tokens: Sequence) -> Iterator[str]:
    """The token strings of a flat or nested list; a text, an iterator or a token with spaces is
    refused (it would become characters, might never end, or become one token)."""
    if isinstance(tokens, (str, bytes)) or not isinstance(tokens, Sequence):
        raise ValueError(f"{name} must be a list of token strings (or of lists of them), not a "
                         f"text, an iterator or a set: tokenize it first, pass list(...); got "
                         f"{tokens!r:.80}")
    if all(isinstance(t, str) for t in tokens):
        check_word_tokens(name, tokens)
        yield from tokens
        return
    for i, t in enumerate(tokens):
        if isinstance(t, str):
            check_word_token(f"{name}[{i}]", t)
            yield t
        else:
            yield from _flatten(f"{name}[{i}]", t)


def check_word_token(name: str, token: str) -> None:
    """One token: a non-empty string without whitespace (a sentence would be one unknown token)."""
    check_str(name, token)
    if token.split() != [token]:
        raise ValueError(f"{name} must be one token, non-empty and without spaces: split the "
                         f"text first; got {token!r:.80}")


def check_word_tokens(name: str, tokens) -> None:
    check_tokens(name, tokens)
    # Joined and split again, a list comes back unchanged exactly when no token is empty or
    # holds whitespace: the common case at C speed.
    if " ".join(tokens).split() != list(tokens):
        i = next(i for i, t in enumerate(tokens) if t.split() != [t])
        check_word_token(f"{name}[{i}]", tokens[i])


def check_word_paragraphs(name: str, paragraphs) -> None:
    """Paragraphs as lists of tokenized sentences, tokens as :func:`check_word_token` wants."""
    if isinstance(paragraphs, str) or not isinstance(paragraphs, Sequence):
        raise ValueError(f"{name} must be a list of paragraphs; got {type(paragraphs).__name__}")
    for p, paragraph in enumerate(paragraphs):
        if isinstance(paragraph, str) or not isinstance(paragraph, Sequence):
            raise ValueError(f"{name}[{p}] must be a paragraph, a list of tokenized sentences; "
                             f"got {paragraph!r:.60}")
        for s, sentence in enumerate(paragraph):
            check_word_tokens(f"{name}[{p}][{s}]", sentence)


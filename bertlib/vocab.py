"""A vocabulary: tokens to ids and back, with BERT's reserved tokens."""

from __future__ import annotations

import collections
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class SpecialTokens:
    """The spelling of BERT's reserved tokens. The chapter writes ``<cls>``; Hugging Face
    checkpoints write ``[CLS]``."""

    pad: str = "<pad>"
    unk: str = "<unk>"
    cls: str = "<cls>"
    sep: str = "<sep>"
    mask: str = "<mask>"

    def as_list(self) -> list[str]:
        return [self.pad, self.unk, self.cls, self.sep, self.mask]


HF_SPECIAL_TOKENS = SpecialTokens("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


class Vocab:
    """Maps tokens to ids and back. Unknown tokens map to ``<unk>``.

    ``Vocab(tokens, min_freq)`` counts a corpus (a flat or nested list of tokens) and gives ids
    0-4 to ``<pad> <unk> <cls> <sep> <mask>``, then the other tokens by falling frequency.
    ``Vocab.from_list`` keeps a given id order, e.g. a checkpoint's ``vocab.txt``.
    """

    def __init__(self, tokens: Iterable = (), min_freq: int = 1,
                 specials: SpecialTokens = SpecialTokens()):
        counter = collections.Counter(_flatten(tokens))
        reserved = specials.as_list()
        ordered = sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))
        words = [tok for tok, freq in ordered if freq >= min_freq and tok not in reserved]
        self._init(reserved + words, specials)

    @classmethod
    def from_list(cls, idx_to_token: Sequence[str],
                  specials: SpecialTokens = SpecialTokens()) -> Vocab:
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
        if isinstance(tokens, str):
            return self.token_to_idx.get(tokens, self.unk_id)
        return [self[t] for t in tokens]

    def to_tokens(self, indices: int | Sequence[int]) -> str | list[str]:
        if isinstance(indices, int):
            if not 0 <= indices < len(self):
                raise ValueError(f"token id must be in [0, {len(self) - 1}]; got {indices}")
            return self.idx_to_token[indices]
        return [self.to_tokens(int(i)) for i in indices]


def _flatten(tokens: Iterable) -> Iterable[str]:
    for t in tokens:
        if isinstance(t, str):
            yield t
        else:
            yield from _flatten(t)

"""Masked language modelling: choose positions to predict and corrupt them 80/10/10."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from bertlib.support.checks import check_instance
from bertlib.support.rng import make_generator
from bertlib.text.vocab import Vocab


class Fate(enum.IntEnum):
    """What happened to a token chosen for prediction."""

    MASK = 0  # replaced by <mask> (80%)
    RANDOM = 1  # replaced by a random word (10%)
    KEEP = 2  # left as it was (10%)


@dataclass(frozen=True)
class MaskedTokens:
    """The result of :func:`mask_tokens`; ``positions``, ``labels`` and ``fates`` align."""

    masked_ids: list[int]  # the corrupted input sequence, same length as the original
    positions: list[int]  # sorted indices of the positions to predict
    labels: list[int]  # the original ids at those positions (the MLM targets)
    fates: list[Fate]  # how each of those positions was corrupted
    num_candidates: int  # the maskable positions the choice was made from


def check_replacement_words(vocab: Vocab) -> None:
    """The 10% random replacements are drawn from the vocabulary's ordinary words: refuse a
    vocabulary that has none (one of special tokens only)."""
    check_instance("vocab", vocab, Vocab, "a bertlib.text.vocab.Vocab")
    if not vocab.word_ids:
        raise ValueError("vocab has no ordinary words to draw the 10% random replacements from; "
                         f"it holds only {vocab.to_tokens(list(range(len(vocab))))}")


def _take_words(groups: list[list[int]], order: list[int], budget: int) -> list[int]:
    """Whole groups, in ``order``, while they fit in ``budget`` positions; a first word longer
    than the whole budget is taken alone, so that something is always predicted."""
    chosen: list[int] = []
    for i in order:
        if len(chosen) + len(groups[i]) <= budget:
            chosen += groups[i]
        if len(chosen) == budget:
            break
    return chosen or groups[order[0]]


def mask_tokens(token_ids: Sequence[int], vocab: Vocab, *, mask_ratio: float = 0.15,
                generator: torch.Generator | None = None, seed: int | None = None,
                words: Sequence[int | None] | None = None) -> MaskedTokens:
    """Choose ``max(1, round(mask_ratio * n))`` positions, ``n`` the length of the sequence
    with its ``<cls>`` and ``<sep>`` (not its padding), as the chapter and the original BERT do
    (``round`` sends halves to the even number), uniformly among the maskable ones (all but
    ``<pad> <cls> <sep> <mask>``), all of them when there are fewer. Each is corrupted to
    ``<mask>`` with probability 0.8, to a random word with 0.1, and left unchanged with 0.1.

    Whole-word masking: with ``words``, the word of each token (None for the special tokens;
    :func:`bertlib.text.words.word_ids` gives them), whole words are chosen in random order while
    they fit in that budget, as the original BERT's data script does.
    """
    check_replacement_words(vocab)
    if not isinstance(mask_ratio, (int, float)) or not 0.0 < mask_ratio <= 1.0:
        raise ValueError(f"mask_ratio must be in (0, 1]; got {mask_ratio!r}")
    ids = token_ids.tolist() if isinstance(token_ids, torch.Tensor) else list(token_ids)
    size = len(vocab)
    bad = [t for t in ids if type(t) is not int or not 0 <= t < size]  # a bool is no id
    if bad:
        raise ValueError(f"token_ids must be a list of integer ids in [0, {size - 1}] "
                         f"(vocab[tokens]); got {bad[0]!r} in {token_ids!r:.80}")
    candidates = [i for i, t in enumerate(ids) if t not in vocab.structural_ids]
    if not candidates:
        raise ValueError(
            "token_ids must hold at least one maskable token (one not in "
            f"{[vocab.to_tokens(i) for i in sorted(vocab.structural_ids)]}); got "
            f"{f'{ids!r:.80}' if ids else 'an empty sequence'}"
        )
    if words is not None and len(words) != len(ids):
        raise ValueError(f"words must give the word of each of the {len(ids)} tokens; got "
                         f"{words!r:.80}")
    g = make_generator(generator, seed)
    by_word: dict[int, list[int]] = {}  # the maskable positions by word (each alone without)
    for i in candidates:
        by_word.setdefault(i if words is None else words[i], []).append(i)
    groups = list(by_word.values())
    # <listing: recipe>
    length = len(ids) - ids.count(vocab.pad_id)  # <cls> and <sep> count, padding does not
    num_preds = max(1, round(mask_ratio * length))  # all candidates, if there are fewer
    order = torch.randperm(len(groups), generator=g).tolist()  # words in random order
    positions = sorted(_take_words(groups, order, num_preds))
    num_preds = len(positions)
    u = torch.rand(num_preds, generator=g).tolist()
    words = torch.randint(len(vocab.word_ids), (num_preds,), generator=g).tolist()

    masked = list(ids)
    fates = []
    for pos, ui, wi in zip(positions, u, words, strict=True):
        if ui < 0.8:
            fate, masked[pos] = Fate.MASK, vocab.mask_id
        elif ui < 0.9:
            fate, masked[pos] = Fate.RANDOM, vocab.word_ids[wi]
        else:
            fate = Fate.KEEP
        fates.append(fate)
    return MaskedTokens(masked, positions, [ids[p] for p in positions], fates, len(candidates))
    # </listing>

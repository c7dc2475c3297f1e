"""Masked language modelling: choose positions to predict and corrupt them 80/10/10."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from bertlib.rng import make_generator
from bertlib.vocab import Vocab


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


def mask_tokens(
    token_ids: Sequence[int],
    vocab: Vocab,
    *,
    mask_ratio: float = 0.15,
    generator: torch.Generator | None = None,
    seed: int | None = None,
) -> MaskedTokens:
    """Choose ``max(1, round(mask_ratio * n))`` of the ``n`` maskable positions (everything but
    ``<pad> <cls> <sep> <mask>``) uniformly at random; corrupt each to ``<mask>`` with
    probability 0.8, to a random word with 0.1, and leave it unchanged with 0.1.
    """
    if not 0.0 < mask_ratio <= 1.0:
        raise ValueError(f"mask_ratio must be in (0, 1]; got {mask_ratio!r}")
    g = make_generator(generator, seed)
    ids = [int(t) for t in token_ids]
    bad = [t for t in ids if not 0 <= t < len(vocab)]
    if bad:
        raise ValueError(f"token_ids must be in [0, {len(vocab) - 1}]; got {bad[0]}")
    candidates = [i for i, t in enumerate(ids) if t not in vocab.structural_ids]
    if not candidates:
        raise ValueError(
            "cannot mask a sequence with no maskable token: every token is one of "
            f"{[vocab.to_tokens(i) for i in sorted(vocab.structural_ids)]}"
        )
    if not vocab.word_ids:
        raise ValueError("vocab has no ordinary words to draw the 10% random replacements from")
    # <listing: recipe>
    num_preds = max(1, round(mask_ratio * len(candidates)))
    chosen = torch.randperm(len(candidates), generator=g)[:num_preds]
    positions = sorted(candidates[i] for i in chosen.tolist())
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

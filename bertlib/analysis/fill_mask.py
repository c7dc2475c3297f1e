"""What does the model predict at the masked positions? (MLM at work, one sequence.)"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from bertlib.inputs import EncodedInput, eval_mode, model_device
from bertlib.masking import MaskedTokens
from bertlib.model import BERTModel
from bertlib.support.checks import check_instance, check_int_in, check_top_k, check_vocab_fits
from bertlib.text.vocab import Vocab


@dataclass(frozen=True)
class Guess:
    """The model's ``k`` most probable tokens at one prediction position."""

    position: int
    original: str  # the token that was there before masking (the MLM target)
    tokens: list[str]  # most probable first
    probabilities: list[float]

    @property
    def rank(self) -> int | None:
        """Where the original token is among the guesses (0 = first), None if absent."""
        return self.tokens.index(self.original) if self.original in self.tokens else None


def fill_mask(model: BERTModel, vocab: Vocab, enc: EncodedInput, masked: MaskedTokens,
              k: int = 5) -> list[Guess]:
    """Run ``model`` once on the corrupted sequence ``masked.masked_ids`` (with ``enc``'s
    segments) and return its top ``k`` tokens at each of ``masked.positions``."""
    check_instance("vocab", vocab, Vocab, "a bertlib Vocab (tokenizer.vocab)")
    check_vocab_fits("vocab", len(vocab), model.config.vocab_size)
    check_top_k(k, len(vocab))
    if len(masked.masked_ids) != len(enc.ids):
        raise ValueError(f"masked has {len(masked.masked_ids)} tokens but enc has "
                         f"{len(enc.ids)}: mask the ids of this enc")
    for pos in masked.positions:
        check_int_in("masked.positions[i]", pos, 0, len(enc.ids) - 1, " (a token index)")
    if not masked.positions:  # nothing was masked (a text of unknown tokens): nothing to guess
        return []
    device = model_device(model)
    tokens = torch.tensor([masked.masked_ids], device=device)
    segments = torch.tensor([enc.segments], device=device)
    positions = torch.tensor([masked.positions], device=device)
    with eval_mode(model):
        _, mlm_Y_hat, _ = model(tokens, segments, None, positions)  # (1, P, V)
    top = mlm_Y_hat[0].softmax(dim=-1).topk(k, dim=-1)
    return [Guess(pos, vocab.to_tokens(label), vocab.to_tokens(ids), probs)
            for pos, label, ids, probs in zip(masked.positions, masked.labels,
                                              top.indices.tolist(), top.values.tolist(),
                                              strict=True)]

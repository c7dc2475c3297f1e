"""Watching a model learn: each snapshot's attention, guesses and P(IsNext) on one masked pair
(:func:`snapshot_outputs`, for :class:`bertlib.viz.TimeLapseWidget`), and where one model's
heads look and what it guesses on many pairs (:func:`snapshot_stats`).

Shapes: S = snapshots, L = layers (blocks), nh = heads, T = tokens, P = masked positions,
k = guesses per position, K = real prediction slots of a data set.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch.func import functional_call

from bertlib.analysis.fill_mask import Guess
from bertlib.batches import make_loader, trim_padding
from bertlib.data import PretrainBatch, check_nonempty_batch
from bertlib.inputs import EncodedInput, eval_mode, model_device
from bertlib.model import BERTModel, key_padding_mask
from bertlib.support.checks import check_int_in, check_top_k, check_vocab_fits
from bertlib.text.vocab import Vocab

StateDict = Mapping[str, torch.Tensor]


@dataclass(frozen=True)
class SnapshotOutputs:
    """What each snapshot makes of one pair, in step order: attentions (S, L, nh, T, T),
    guesses[s][p] at masked position p, original_probabilities (S, P), is_next (S,)."""

    steps: tuple[int, ...]
    tokens: list[str]
    positions: tuple[int, ...]
    attentions: np.ndarray
    guesses: list[list[Guess]]
    original_probabilities: np.ndarray
    is_next: np.ndarray


def snapshot_outputs(model: BERTModel, weights: Mapping[int, StateDict], enc: EncodedInput,
                     positions: Sequence[int], vocab: Vocab, k: int = 3) -> SnapshotOutputs:
    """``model`` with each snapshot's weights, ``{step: state_dict}``, on ``enc`` masked at
    ``positions``, in eval mode; its own weights untouched (``functional_call``)."""
    check_vocab_fits("vocab", len(vocab), model.config.vocab_size)
    check_top_k(k, len(vocab))
    check_snapshots(weights, model)
    for pos in positions:
        check_int_in("positions[i]", pos, 0, len(enc.ids) - 1, " (a token index)")
    positions = tuple(sorted(positions))
    masked = enc.masked(positions, vocab.mask_id)
    device = model_device(model)
    tokens, segments = masked.tensors(device)
    where = torch.tensor([positions], device=device)
    attentions, probabilities, is_next = [], [], []
    with eval_mode(model):
        for state in weights.values():
            _, mlm_Y_hat, nsp_Y_hat, blocks = functional_call(
                model, dict(state), (tokens, segments, None, where),
                {"return_attention": True})
            attentions.append(torch.cat(blocks))  # (L, nh, T, T)
            probabilities.append(mlm_Y_hat[0].softmax(dim=-1))  # (P, V)
            is_next.append(nsp_Y_hat[0].softmax(dim=-1)[1])
    probabilities = torch.stack(probabilities)  # (S, P, V)
    top = probabilities.topk(k, dim=-1)
    originals = [enc.ids[p] for p in positions]
    original = probabilities[:, range(len(positions)), originals]  # (S, P)
    guesses = [[Guess(pos, enc.tokens[pos], vocab.to_tokens(ids), probs)
                for pos, ids, probs in zip(positions, step_ids, step_probs, strict=True)]
               for step_ids, step_probs in zip(top.indices.tolist(), top.values.tolist(),
                                               strict=True)]
    return SnapshotOutputs(
        steps=tuple(weights), tokens=vocab.to_tokens(masked.ids), positions=positions,
        attentions=torch.stack(attentions).cpu().numpy(), guesses=guesses,
        original_probabilities=original.cpu().numpy().astype(float),
        is_next=torch.stack(is_next).cpu().numpy().astype(float))


def check_snapshots(weights: Mapping[int, StateDict], model: BERTModel,
                    name: str = "weights") -> None:
    """At least one snapshot, each with exactly the model's tensor names (a missing one keeps
    the model's) and shapes (another size would fail deep inside torch)."""
    if not isinstance(weights, Mapping) or not weights:
        raise ValueError(f"{name} must hold at least one snapshot, {{step: state_dict}} (a "
                         f"SnapshotRecorder takes them as train_bert reaches its steps); got "
                         f"{weights!r:.80}")
    shapes = {key: tuple(v.shape) for key, v in model.state_dict().items()}
    for step, state in weights.items():
        if set(state) != set(shapes):
            raise ValueError(f"{name}[{step}] must have the model's tensor names; missing "
                             f"{sorted(set(shapes) - set(state))[:5]}, unexpected "
                             f"{sorted(set(state) - set(shapes))[:5]}")
        wrong = next((key for key, v in state.items() if tuple(v.shape) != shapes[key]), None)
        if wrong is not None:
            raise ValueError(f"the snapshot of step {step} does not fit model (a model of "
                             f"another size?): {wrong!r} has shape {tuple(state[wrong].shape)}, "
                             f"the model's {shapes[wrong]}")


@dataclass(frozen=True)
class SnapshotStats:
    """Where a model's heads look on a set of pairs: each (L, nh), the mean over real queries of
    the weight on the token before, the token after, ``<sep>`` and the other sentence; and its
    top ``guesses`` (K,) at the real prediction slots, in the data's order."""

    previous: torch.Tensor
    next: torch.Tensor
    sep: torch.Tensor
    other_segment: torch.Tensor
    guesses: torch.Tensor


def snapshot_stats(model: BERTModel, data: PretrainBatch, sep_id: int,
                   batch_size: int = 256) -> SnapshotStats:
    """:class:`SnapshotStats` of ``model`` (eval mode) on ``data``, ``batch_size`` pairs a pass."""
    check_nonempty_batch(data)  # make_loader checks batch_size
    cfg = model.config
    sums = torch.zeros(4, cfg.num_blks, cfg.num_heads, dtype=torch.float64)
    counts = torch.zeros(3)  # queries with a previous token, with a next one, all
    guesses = []
    device = model_device(model)
    with eval_mode(model):
        for batch in make_loader(data, batch_size, seed=0, shuffle=False):
            tokens, segments, valid_lens, pred_positions, weights, _, _ = (
                t.to(device) for t in trim_padding(batch))
            _, mlm_Y_hat, _, blocks = model(tokens, segments, valid_lens, pred_positions,
                                            return_attention=True)
            guesses.append(mlm_Y_hat.argmax(-1)[weights > 0].cpu())
            real = key_padding_mask(valid_lens, tokens.shape[1])  # (B, T)
            has_next = real[:, 1:]  # query i has a token i + 1
            other = segments[:, :, None] != segments[:, None, :]  # (B, T, T)
            is_sep = tokens == sep_id
            for layer, A in enumerate(blocks):  # (B, nh, T, T)
                q = real[:, None, :].to(A.dtype)  # real queries
                shares = (A.diagonal(-1, -2, -1) * has_next[:, None, :],  # i + 1 on i
                          A.diagonal(1, -2, -1) * has_next[:, None, :],  # i on i + 1
                          (A * is_sep[:, None, None, :]).sum(-1) * q,
                          (A * other[:, None]).sum(-1) * q)
                for which, share in enumerate(shares):
                    sums[which, layer] += share.sum(dim=(0, 2)).double().cpu()
            counts += torch.tensor([has_next.sum(), has_next.sum(), real.sum()]).cpu()
    means = sums / counts[[0, 1, 2, 2], None, None].double()
    return SnapshotStats(*means.float(), guesses=torch.cat(guesses))

"""BERT's pretraining loss: weighted MLM cross-entropy plus NSP cross-entropy.

Shapes: B = batch, P = prediction slots per sequence, V = vocabulary size.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
import torch.nn.functional as F

from bertlib.checks import (
    check_all_finite,
    check_finite,
    check_integer_dtype,
    check_ndim,
    check_range,
)
from bertlib.model import BERTModel


class BERTLoss(NamedTuple):
    mlm: torch.Tensor  # scalar: mean cross-entropy over the real prediction slots
    nsp: torch.Tensor  # scalar: mean cross-entropy over the sequences
    total: torch.Tensor  # mlm + nsp


def check_targets(mlm_labels: torch.Tensor, mlm_weights: torch.Tensor,
                  nsp_labels: torch.Tensor, slots: tuple[int, int], vocab_size: int) -> None:
    """The targets of a pretraining loss, for ``slots = (B, P)`` prediction slots and
    ``vocab_size`` classes: labels are class ids (int32 or int64), weights finite, non-negative
    and not all zero (the MLM loss is a mean over the weighted slots)."""
    check_ndim("mlm_labels", mlm_labels, 2, "(B, P)")
    check_ndim("mlm_weights", mlm_weights, 2, "(B, P)")
    check_ndim("nsp_labels", nsp_labels, 1, "(B,)")
    if mlm_labels.shape != slots or mlm_weights.shape != slots:
        raise ValueError(
            "mlm_Y_hat (B, P, V), mlm_labels (B, P) and mlm_weights (B, P) must agree on B and "
            f"P = {slots}; got mlm_labels {tuple(mlm_labels.shape)}, mlm_weights "
            f"{tuple(mlm_weights.shape)}")
    if nsp_labels.shape[0] != slots[0]:
        raise ValueError(f"nsp_labels must hold one label per sequence (B = {slots[0]}); got "
                         f"shape {tuple(nsp_labels.shape)}")
    for name, labels, high in (("mlm_labels", mlm_labels, vocab_size - 1),
                               ("nsp_labels", nsp_labels, 1)):
        check_integer_dtype(name, labels)
        check_range(name, labels, 0, high, f"class ids in [0, {high}]")
    check_finite("mlm_weights", mlm_weights)
    check_range("mlm_weights", mlm_weights, 0, math.inf, "weights >= 0")
    if not bool((mlm_weights > 0).any()):
        raise ValueError("mlm_weights are all 0: there is no real prediction slot to compute "
                         "the MLM loss over")


def bert_loss(
    mlm_Y_hat: torch.Tensor,
    mlm_labels: torch.Tensor,
    mlm_weights: torch.Tensor,
    nsp_Y_hat: torch.Tensor,
    nsp_labels: torch.Tensor,
) -> BERTLoss:
    """mlm_Y_hat: (B, P, V) logits; mlm_labels, mlm_weights: (B, P); nsp_Y_hat: (B, 2);
    nsp_labels: (B,).

    Each prediction slot's cross-entropy is multiplied by its weight (0 for padded slots) and
    the sum divided by the sum of the weights. The reduction must be ``'none'`` for this to
    work: with a mean-reduced loss, as in the chapter's PyTorch training code, the product with
    the weights is a scalar times a matrix and padded slots still count (d2l-en issue #2582).

    The weights are first divided by the largest: a weighted mean does not change when every
    weight is scaled, and weights in (0, 1] can neither underflow (1e-40 each) nor overflow
    (3e38 each) when they are summed. Logits that are NaN or infinite raise
    :class:`~bertlib.checks.NonFiniteError`. Labels may be int32 or int64.
    """
    check_ndim("mlm_Y_hat", mlm_Y_hat, 3, "(B, P, V)")
    check_ndim("nsp_Y_hat", nsp_Y_hat, 2, "(B, 2)")
    B, P, V = mlm_Y_hat.shape
    if nsp_Y_hat.shape != (B, 2):
        raise ValueError(f"nsp_Y_hat must be (B, 2) with the B = {B} of mlm_Y_hat; got "
                         f"{tuple(nsp_Y_hat.shape)}")
    check_targets(mlm_labels, mlm_weights, nsp_labels, (B, P), V)
    check_all_finite("mlm_Y_hat", mlm_Y_hat)
    check_all_finite("nsp_Y_hat", nsp_Y_hat)
    mlm_labels, nsp_labels = mlm_labels.long(), nsp_labels.long()  # cross_entropy's dtype
    # <listing: loss>
    per_slot = F.cross_entropy(mlm_Y_hat.flatten(0, 1), mlm_labels.flatten(), reduction="none")
    w = (mlm_weights / mlm_weights.max()).flatten().to(per_slot.dtype)  # in (0, 1]: see above
    mlm = (per_slot * w).sum() / w.sum()
    nsp = F.cross_entropy(nsp_Y_hat, nsp_labels)
    return BERTLoss(mlm, nsp, mlm + nsp)
    # </listing>


def chapter_loss(model: BERTModel, tokens, segments, valid_lens, pred_positions, mlm_weights,
                 mlm_labels, nsp_labels) -> BERTLoss:
    """The chapter's straightforward loss: MLM logits for all B x P slots, padding included,
    then the weighted cross-entropy of ``bert_loss``."""
    _, mlm_Y_hat, nsp_Y_hat = model(tokens, segments, valid_lens, pred_positions)
    return bert_loss(mlm_Y_hat, mlm_labels, mlm_weights, nsp_Y_hat, nsp_labels)

"""BERT's pretraining loss: weighted MLM cross-entropy plus NSP cross-entropy.

Shapes: B = batch, P = prediction slots per sequence, V = vocabulary size.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
import torch.nn.functional as F

from bertlib.checks import check_finite, check_integer_dtype, check_range
from bertlib.model import BERTModel


class BERTLoss(NamedTuple):
    mlm: torch.Tensor  # scalar: mean cross-entropy over the real prediction slots
    nsp: torch.Tensor  # scalar: mean cross-entropy over the sequences
    total: torch.Tensor  # mlm + nsp


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
    """
    if mlm_Y_hat.shape[:2] != mlm_labels.shape or mlm_labels.shape != mlm_weights.shape:
        raise ValueError(
            "mlm_Y_hat (B, P, V), mlm_labels (B, P) and mlm_weights (B, P) must agree on B and "
            f"P; got {tuple(mlm_Y_hat.shape)}, {tuple(mlm_labels.shape)}, "
            f"{tuple(mlm_weights.shape)}"
        )
    if nsp_Y_hat.shape != (nsp_labels.shape[0], 2) or nsp_labels.dim() != 1:
        raise ValueError(
            f"nsp_Y_hat must be (B, 2) and nsp_labels (B,); got {tuple(nsp_Y_hat.shape)} and "
            f"{tuple(nsp_labels.shape)}"
        )
    V = mlm_Y_hat.shape[-1]
    for name, labels, high in (("mlm_labels", mlm_labels, V - 1), ("nsp_labels", nsp_labels, 1)):
        check_integer_dtype(name, labels)
        check_range(name, labels, 0, high, f"class ids in [0, {high}]")
    check_finite("mlm_weights", mlm_weights)
    check_range("mlm_weights", mlm_weights, 0, math.inf, "weights >= 0")
    per_slot = F.cross_entropy(mlm_Y_hat.flatten(0, 1), mlm_labels.flatten(), reduction="none")
    w = mlm_weights.flatten().to(per_slot.dtype)
    mlm = (per_slot * w).sum() / w.sum().clamp_min(torch.finfo(w.dtype).tiny)
    nsp = F.cross_entropy(nsp_Y_hat, nsp_labels)
    return BERTLoss(mlm, nsp, mlm + nsp)


def chapter_loss(model: BERTModel, tokens, segments, valid_lens, pred_positions, mlm_weights,
                 mlm_labels, nsp_labels) -> BERTLoss:
    """The chapter's straightforward loss: MLM logits for all B x P slots, padding included,
    then the weighted cross-entropy of ``bert_loss``."""
    _, mlm_Y_hat, nsp_Y_hat = model(tokens, segments, valid_lens, pred_positions)
    return bert_loss(mlm_Y_hat, mlm_labels, mlm_weights, nsp_Y_hat, nsp_labels)

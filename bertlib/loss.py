"""BERT's pretraining loss: weighted MLM cross-entropy plus NSP cross-entropy.

Shapes: B = batch, P = prediction slots per sequence, V = vocabulary size.
"""

from typing import NamedTuple

import torch
import torch.nn.functional as F
from jaxtyping import Float, Int
from torch import Tensor

from bertlib.model import BERTModel, checked
from bertlib.support.checks import check_range


class BERTLoss(NamedTuple):
    mlm: torch.Tensor  # scalar: mean cross-entropy over the real prediction slots
    nsp: torch.Tensor  # scalar: mean cross-entropy over the sequences
    total: torch.Tensor  # mlm + nsp


@checked
def bert_loss(
    mlm_Y_hat: Float[Tensor, "B P V"],
    mlm_labels: Int[Tensor, "B P"],
    mlm_weights: Float[Tensor, "B P"],
    nsp_Y_hat: Float[Tensor, "B 2"],
    nsp_labels: Int[Tensor, " B"],
) -> BERTLoss:
    """The two losses and their sum, from the logits of both heads and their labels.

    Each prediction slot's cross-entropy is multiplied by its weight (0 for padded slots) and
    the sum divided by the sum of the weights. The reduction must be ``'none'`` for this to
    work: with a mean-reduced loss, as in the chapter's PyTorch training code, the product with
    the weights is a scalar times a matrix and padded slots still count (d2l-en issue #2582).
    Labels may be int32 or int64.
    """
    # The values a shape cannot show: Hugging Face's -100 "ignore" label would count as a slot.
    check_range("mlm_labels", mlm_labels, 0, mlm_Y_hat.shape[-1] - 1, "token ids in [0, V - 1]")
    check_range("nsp_labels", nsp_labels, 0, 1, "0 (NotNext) or 1 (IsNext)")
    if not (mlm_weights > 0).any():
        raise ValueError("mlm_weights must mark at least one real prediction slot; all are 0")
    mlm_labels, nsp_labels = mlm_labels.long(), nsp_labels.long()  # cross_entropy's dtype
    # <listing: loss>
    per_slot = F.cross_entropy(mlm_Y_hat.flatten(0, 1), mlm_labels.flatten(), reduction="none")
    w = mlm_weights.flatten().to(per_slot.dtype)  # 1 for a real slot, 0 for padding
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

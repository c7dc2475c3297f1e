"""Speed tricks for pretraining, kept out of the teaching path: same numbers, less time.

* :func:`fast_loss` computes exactly what :func:`bertlib.loss.chapter_loss` computes, but runs
  the MLM head only on the real prediction slots and fuses the output layer with the
  cross-entropy (:func:`linear_cross_entropy`). ``train_bert`` uses it by default.

Shapes: B = batch, T = sequence length, H = num_hiddens, P = prediction slots per sequence,
K = real (unpadded) prediction slots in the batch, V = vocabulary size.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from bertlib.checks import check_positions_in_text, check_pred_positions
from bertlib.loss import BERTLoss, check_targets
from bertlib.model import BERTModel


class _LinearCrossEntropy(torch.autograd.Function):
    """Weighted mean cross-entropy of ``X @ W.T + b`` without keeping logits *and*
    log-probabilities: the backward pass turns the saved logits into the softmax in place."""

    @staticmethod
    def forward(ctx, X, W, b, labels, weights):
        logits = torch.addmm(b, X, W.t())  # (K, V)
        lse = torch.logsumexp(logits, dim=1)  # (K,)
        per_slot = lse - logits.gather(1, labels[:, None]).squeeze(1)
        wsum = weights.sum().clamp_min(torch.finfo(weights.dtype).tiny)
        ctx.save_for_backward(X, W, logits, lse, labels, weights, wsum)
        ctx.used = False
        return (per_slot * weights).sum() / wsum

    @staticmethod
    def backward(ctx, grad):
        if ctx.used:
            raise RuntimeError("linear_cross_entropy's backward reuses its buffers in place "
                               "and can run only once (no retain_graph)")
        ctx.used = True
        X, W, logits, lse, labels, weights, wsum = ctx.saved_tensors
        # d loss / d logits = (softmax - onehot) * weight / sum(weights)
        dlogits = logits.sub_(lse[:, None]).exp_()
        dlogits[torch.arange(len(labels), device=labels.device), labels] -= 1.0
        dlogits.mul_((grad * weights / wsum)[:, None])
        dX = dlogits @ W if ctx.needs_input_grad[0] else None
        dW = dlogits.t() @ X if ctx.needs_input_grad[1] else None
        db = dlogits.sum(0) if ctx.needs_input_grad[2] else None
        return dX, dW, db, None, None


def linear_cross_entropy(X: torch.Tensor, W: torch.Tensor, b: torch.Tensor,
                         labels: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """Same value and gradients as ``sum(w * cross_entropy(X @ W.T + b, labels)) / sum(w)``.

    X: (K, H); W: (V, H); b: (V,); labels, weights: (K,).
    """
    return _LinearCrossEntropy.apply(X, W, b, labels, weights.to(X.dtype))


def fast_loss(model: BERTModel, tokens, segments, valid_lens, pred_positions, mlm_weights,
              mlm_labels, nsp_labels) -> BERTLoss:
    """The same losses (and gradients) as :func:`chapter_loss`, computed faster.

    Only the K slots with a non-zero weight go through the MLM head (the padded slots are about
    a third of the B x P in the chapter's setting), and the cross-entropy over V classes is
    fused with the output layer (:func:`linear_cross_entropy`).
    """
    encoded_X, _, nsp_Y_hat = model(tokens, segments, valid_lens)
    B, T, H = encoded_X.shape
    if valid_lens is None:
        check_pred_positions(pred_positions, B, T)
    else:  # what the model checks in chapter_loss, which passes it pred_positions
        check_positions_in_text(pred_positions, valid_lens)
    *body, out = model.mlm.mlp
    check_targets(mlm_labels, mlm_weights, nsp_labels, tuple(pred_positions.shape),
                  out.weight.shape[0])
    real = mlm_weights > 0  # (B, P)
    rows = torch.arange(B, device=tokens.device)[:, None] * T + pred_positions  # (B, P)
    X = encoded_X.reshape(B * T, H).index_select(0, rows[real])  # (K, H)
    hidden = X
    for layer in body:
        hidden = layer(hidden)
    mlm = linear_cross_entropy(hidden, out.weight, out.bias, mlm_labels[real], mlm_weights[real])
    nsp = F.cross_entropy(nsp_Y_hat, nsp_labels)
    return BERTLoss(mlm, nsp, mlm + nsp)

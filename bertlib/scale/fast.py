"""Speed tricks for pretraining, kept out of the teaching path: same numbers, less time.
:func:`fast_loss` (``train_bert``'s default) is :func:`bertlib.loss.chapter_loss` on the real
tokens and prediction slots only, with the output layer fused into the cross-entropy;
:func:`dropout` draws a quarter of ``F.dropout``'s random numbers.

Shapes: B = batch, T = sequence length, H = num_hiddens, nh = heads, hs = H // nh, N = real
tokens in the batch, P = prediction slots per sequence, K = real slots, V = vocabulary size.
"""


import torch
import torch.nn.functional as F
from jaxtyping import Float, Int
from torch import Tensor

from bertlib.loss import BERTLoss
from bertlib.model import (
    AddNorm,
    BERTEncoder,
    BERTModel,
    check_token_inputs,
    checked,
    key_padding_mask,
)
from bertlib.support.checks import (
    NonFiniteError,
    check_all_finite,
    check_bool,
    check_dropout,
    check_inputs_on_device,
    check_pred_positions,
    check_targets,
)


class _LinearCrossEntropy(torch.autograd.Function):
    """Weighted mean cross-entropy of ``X @ W.T + b`` without keeping logits *and*
    log-probabilities: the backward pass turns the saved logits into the softmax in place."""

    @staticmethod
    def forward(ctx, X, W, b, labels, weights):
        logits = torch.addmm(b, X, W.t())  # (K, V)
        lse = torch.logsumexp(logits, dim=1)  # (K,)
        per_slot = lse - logits.gather(1, labels[:, None]).squeeze(1)
        wsum = weights.sum()
        ctx.save_for_backward(X, W, logits, lse, labels, weights, wsum)
        ctx.used = False
        loss = (per_slot * weights).sum() / wsum
        if not bool(loss.isfinite()):
            raise NonFiniteError(f"the MLM loss is {loss.item()}: X (the hidden states), W or b "
                                 "hold NaN or infinite values, or values that overflow")
        return loss

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


@checked
def linear_cross_entropy(X: Float[Tensor, "K H"], W: Float[Tensor, "V H"], b: Float[Tensor, " V"],
                         labels: Int[Tensor, " K"], weights: Float[Tensor, " K"]) -> Tensor:
    """``sum(w * cross_entropy(X @ W.T + b, labels)) / sum(w)`` and its gradients (the targets
    checked by ``fast_loss``); a result that is not finite raises NonFiniteError."""
    return _LinearCrossEntropy.apply(X, W, b, labels.long(), weights.to(X.dtype))


def _heads(Y: torch.Tensor, rows: torch.Tensor, B: int, T: int, nh: int) -> torch.Tensor:
    """(N, H) rows of the real tokens -> (B, nh, T, hs), zero at the padding."""
    padded = Y.new_zeros(B * T, Y.shape[1]).index_copy(0, rows, Y)
    return padded.view(B, T, nh, -1).transpose(1, 2)


# Dropout decides keep-or-drop from 16 random bits: the drop probability is rounded to a
# multiple of 2**-16 (0.1 -> 0.100006), and the kept values are scaled by the rounded keep
# probability, so the expected value stays exact.
_LANE_LEVELS = 2**16


def dropout(X: torch.Tensor, p: float, training: bool = True) -> torch.Tensor:
    """``F.dropout(X, p, training)`` in distribution. On a CPU torch draws 32 bits per element,
    one at a time (a fifth of a pretraining step); one 64-bit draw for four elements makes the
    mask about three times as cheap. Other devices draw in parallel: ``F.dropout`` itself."""
    check_dropout("p", p)
    check_bool("training", training)
    if not training or p == 0.0 or X.device.type != "cpu":
        return F.dropout(X, p, training)
    dropped = min(round(p * _LANE_LEVELS), _LANE_LEVELS - 1)  # lanes below this are dropped
    n = X.numel()
    bits = torch.empty((n + 3) // 4, dtype=torch.int64, device=X.device)
    lanes = bits.random_(-(2**63), 2**63 - 1).view(torch.int16)[:n].view(X.shape)  # uniform
    keep = lanes >= dropped - _LANE_LEVELS // 2  # int16 lanes run from -2**15 to 2**15 - 1
    return X * torch.where(keep, _LANE_LEVELS / (_LANE_LEVELS - dropped), 0.0).to(X.dtype)


def _attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor,
               p: float) -> torch.Tensor:
    """softmax(q k^T / sqrt(hs), padded keys masked) v, dropout ``p`` on the weights; mask:
    (B, 1, 1, T). On a CPU with dropout, written out so that :func:`dropout` draws (torch's
    fused kernel takes the same path there)."""
    if p == 0.0 or q.device.type != "cpu":
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p)
    scores = (q @ k.transpose(-2, -1)).mul_(q.shape[-1] ** -0.5)  # (B, nh, T, T)
    weights = scores.masked_fill_(~mask, float("-inf")).softmax(dim=-1)
    return dropout(weights, p) @ v  # (B, nh, T, hs)


def _addnorm(addnorm: AddNorm, X: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
    """``addnorm(X, Y)`` with :func:`dropout`: LayerNorm(dropout(Y) + X)."""
    return addnorm.ln(dropout(Y, addnorm.dropout.p, addnorm.training) + X)


def _embed(encoder: BERTEncoder, tokens: torch.Tensor, segments: torch.Tensor,
           rows: torch.Tensor) -> torch.Tensor:
    """``encoder.embed(tokens, segments)`` at the real tokens, at ``rows`` of the B x T: (N, H)."""
    T = tokens.shape[1]
    X = (encoder.token_embedding(tokens.reshape(-1)[rows])
         + encoder.segment_embedding(segments.reshape(-1)[rows])
         + encoder.pos_embedding[0].index_select(0, rows % T))  # index_add backward
    if encoder.config.embedding_norm:
        X = dropout(encoder.embedding_ln(X), encoder.embedding_dropout.p, encoder.training)
    return X


@checked
def unpadded_encode(encoder: BERTEncoder, tokens: Int[Tensor, "B T"], segments: Int[Tensor, "B T"],
                    valid_lens: Int[Tensor, " B"] | None) -> tuple:
    """``encoder(tokens, segments, valid_lens)`` at the real tokens, (N, H) in order, and the row
    where each sequence starts, (B,). Token-wise layers skip the padding (a third of the
    shipped corpus' batches); attention scatters to (B, nh, T, hs) and gathers back. Equal to
    the padded encoder's to rounding, though dropout draws other masks."""
    cfg = encoder.config
    check_inputs_on_device(encoder.pos_embedding.device, tokens=tokens, segments=segments,
                           valid_lens=valid_lens)
    check_token_inputs(tokens, segments, valid_lens, cfg)  # the encoder's own door
    B, T = tokens.shape
    if valid_lens is None:
        valid_lens = torch.full((B,), T, device=tokens.device)
    mask = key_padding_mask(valid_lens, T)  # (B, T)
    rows = mask.reshape(-1).nonzero().squeeze(1)  # (N,) real positions among the B * T
    X = _embed(encoder, tokens, segments, rows)  # (N, H)
    for blk in encoder.blks:
        attention = blk.attention
        q, k, v = (_heads(W(X), rows, B, T, attention.num_heads)
                   for W in (attention.W_q, attention.W_k, attention.W_v))
        out = _attention(q, k, v, mask[:, None, None, :],
                         attention.dropout if attention.training else 0.0)  # (B, nh, T, hs)
        out = out.transpose(1, 2).reshape(B * T, -1).index_select(0, rows)  # (N, H)
        Y = _addnorm(blk.addnorm1, X, attention.W_o(out))
        X = _addnorm(blk.addnorm2, Y, blk.ffn(Y))
    return X, valid_lens.cumsum(0) - valid_lens


def fast_loss(model: BERTModel, tokens, segments, valid_lens, pred_positions, mlm_weights,
              mlm_labels, nsp_labels) -> BERTLoss:
    """:func:`chapter_loss`'s losses and gradients, faster: the encoder on the real tokens, the
    MLM head on the K real slots (a third of the B x P are padding), the output layer fused
    with the cross-entropy. Equal in distribution with dropout on; NonFiniteError as there."""
    X, starts = unpadded_encode(model.encoder, tokens, segments, valid_lens)  # (N, H), (B,)
    B, T = tokens.shape
    check_pred_positions(pred_positions, B, T, valid_lens)  # as the model checks them
    *body, out = model.mlm.mlp
    check_targets(mlm_labels, mlm_weights, nsp_labels, tuple(pred_positions.shape),
                  out.weight.shape[0])
    nsp_Y_hat = model.nsp(model.hidden(X.index_select(0, starts)))  # <cls> opens each sequence
    real = mlm_weights > 0  # (B, P)
    hidden = X.index_select(0, (starts[:, None] + pred_positions)[real])  # (K, H)
    for layer in body:
        hidden = layer(hidden)
    mlm = linear_cross_entropy(hidden, out.weight, out.bias, mlm_labels[real], mlm_weights[real])
    check_all_finite("nsp_Y_hat", nsp_Y_hat)
    nsp = F.cross_entropy(nsp_Y_hat, nsp_labels.long())
    return BERTLoss(mlm, nsp, mlm + nsp)

"""Attention next to evidence: what a head does to the model's answers, not only where it looks:
switching heads off (their output before ``W_o`` zeroed, as in the BERT paper's ablations),
norm-based weights (Kobayashi et al., 2020: a large weight on a tiny vector moves nothing) and
attention rollout (Abnar & Zuidema, 2020: all layers multiplied, the residual path as half).

Shapes: B = batch, L = layers (blocks), nh = heads, T = tokens, hs = head size, P = positions.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass

import torch
from jaxtyping import Float, Int, Shaped
from torch import Tensor

from bertlib.data import IS_NEXT
from bertlib.inputs import eval_mode
from bertlib.model import BERTEncoder, BERTModel, checked
from bertlib.support.checks import check_range


def _encoder(model: BERTModel | BERTEncoder) -> BERTEncoder:
    return model.encoder if isinstance(model, BERTModel) else model


@contextmanager
def heads_switched_off(model: BERTModel | BERTEncoder, keep: torch.Tensor) -> Iterator[None]:
    """Inside the block, head h of layer l passes nothing on (its output zeroed before ``W_o``)
    for example b where ``keep[b, l, h]`` is 0; ``keep``: (B, L, nh) or (L, nh)."""
    encoder = _encoder(model)
    cfg = encoder.config
    if not isinstance(keep, torch.Tensor) or keep.shape[-2:] != (cfg.num_blks, cfg.num_heads) \
            or keep.dim() not in (2, 3):
        raise ValueError(f"keep must be a tensor of shape (batch, {cfg.num_blks}, "
                         f"{cfg.num_heads}) or ({cfg.num_blks}, {cfg.num_heads}), one number per "
                         f"layer and head; got {getattr(keep, 'shape', type(keep).__name__)}")
    keep = keep if keep.dim() == 3 else keep[None]  # (B or 1, L, nh)

    def hook(layer: int):
        def switch_off(module, args):
            (heads,) = args  # (B, T, H): the heads' outputs side by side, W_o's input
            B, T, H = heads.shape
            k = keep[:, layer].to(heads)  # (B or 1, nh)
            kept = heads.view(B, T, cfg.num_heads, -1) * k[:, None, :, None]  # (B, T, nh, hs)
            return (kept.view(B, T, H),)  # W_o's new input
        return switch_off

    with ExitStack() as hooks:  # a hook's handle removes it on exit
        for layer, blk in enumerate(encoder.blks):
            hooks.enter_context(blk.attention.W_o.register_forward_pre_hook(hook(layer)))
        yield


@dataclass(frozen=True)
class HeadEffects:
    """The answers for one input with each head off in turn: token_prob (L, nh, P), the original
    tokens' probabilities, and is_next (L, nh), P(IsNext); the base_ ones with every head on."""

    token_prob: torch.Tensor
    base_token_prob: torch.Tensor
    is_next: torch.Tensor
    base_is_next: float


@checked
def head_effects(model: BERTModel, tokens: Int[Tensor, "1 T"], segments: Int[Tensor, "1 T"],
                 pred_positions: Int[Tensor, " P"], targets: Shaped[Tensor, " P"]
                 ) -> HeadEffects:
    """Each head switched off in turn, for one (masked) input, ``targets`` the original tokens
    at ``pred_positions``: all L * nh ablations and the whole model in one batched pass."""
    T, V = tokens.shape[1], model.config.vocab_size
    check_range("pred_positions", pred_positions, 0, T - 1, f"in [0, {T - 1}]")
    check_range("targets", targets, 0, V - 1, f"token ids in [0, {V - 1}]")
    L, nh = model.config.num_blks, model.config.num_heads
    keep = torch.ones(1 + L * nh, L, nh)
    keep[1:].view(L * nh, L * nh).fill_diagonal_(0)  # copy 1 + l * nh + h: head (l, h) off
    copies = keep.shape[0]
    with eval_mode(model), heads_switched_off(model, keep):
        _, mlm_Y_hat, nsp_Y_hat = model(tokens.expand(copies, -1), segments.expand(copies, -1),
                                        pred_positions=pred_positions.expand(copies, -1))
    targets = targets.long().expand(copies, -1)  # torch.tensor([]) is float32: no position
    token_prob = mlm_Y_hat.softmax(-1).gather(2, targets[..., None])[..., 0]
    is_next = nsp_Y_hat.softmax(-1)[:, IS_NEXT]  # (copies,)
    return HeadEffects(token_prob[1:].view(L, nh, -1), token_prob[0], is_next[1:].view(L, nh),
                       float(is_next[0]))


def attention_norms(model: BERTModel | BERTEncoder, tokens: torch.Tensor,
                    segments: torch.Tensor, valid_lens: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, torch.Tensor]:
    """(weights, norms), each (B, L, nh, T, T): ``‖α_ij f_h(x_j)‖``, ``f_h(x_j)`` being token j's
    value vector through head h's part of ``W_o``, what query i receives from key j."""
    encoder = _encoder(model)
    inputs = []  # each block's input X (B, T, H), recorded on the way up
    with ExitStack() as hooks, eval_mode(encoder):
        for blk in encoder.blks:
            hooks.enter_context(blk.register_forward_pre_hook(
                lambda module, args: inputs.append(args[0])))
        _, weights = encoder(tokens, segments, valid_lens, return_attention=True)
        norms = []
        for X, blk, alpha in zip(inputs, encoder.blks, weights, strict=True):
            attention = blk.attention
            v = attention._split_heads(attention.W_v(X))  # (B, nh, T, hs)
            hs = v.shape[-1]
            W_o = attention.W_o.weight.view(-1, attention.num_heads, hs)  # (H, nh, hs)
            f = torch.einsum("bntd,hnd->bnth", v, W_o)  # (B, nh, T, H): f_h(x_j)
            norms.append(alpha * f.norm(dim=-1)[:, :, None, :])  # (B, nh, T, T)
    return torch.stack(weights, 1), torch.stack(norms, 1)


@checked
def attention_rollout(weights: Float[Tensor, "B L nh T T"]) -> Float[Tensor, "B L T T"]:
    """How much each input reaches each position after every layer (B, L, T, T), heads averaged,
    the residual path as half of each layer: row i sums to 1."""
    T = weights.shape[-1]
    A = 0.5 * weights.mean(2) + 0.5 * torch.eye(T, dtype=weights.dtype)  # (B, L, T, T)
    A = A / A.sum(-1, keepdim=True)
    rollout = [A[:, 0]]
    for layer in range(1, A.shape[1]):
        rollout.append(A[:, layer] @ rollout[-1])
    return torch.stack(rollout, 1)


@checked
def attention_on_neighbours(weights: Float[Tensor, "B L nh T T"],
                            pred_positions: Int[Tensor, "B P"],
                            mlm_weights: Float[Tensor, "B P"]) -> Float[Tensor, "L nh"]:
    """(L, nh): the mean over real prediction slots (``mlm_weights`` > 0) of the weights a
    masked token gives the tokens just before and after it (real ones: <cls>, <sep> at ends)."""
    B, T = weights.shape[0], weights.shape[-1]
    check_range("pred_positions", pred_positions, 0, T - 1, f"in [0, {T - 1}]")
    batch = torch.arange(B)[:, None].expand_as(pred_positions)  # (B, P)
    rows = weights[batch, :, :, pred_positions]  # (B, P, L, nh, T): each slot's query row

    def weight_on(positions: torch.Tensor) -> torch.Tensor:  # (B, P) -> (B, P, L, nh)
        index = positions.clamp(0, T - 1)[..., None, None, None]  # padded slots: any column
        return rows.gather(-1, index.expand(*rows.shape[:-1], 1))[..., 0]

    both = weight_on(pred_positions - 1) + weight_on(pred_positions + 1)
    return both[mlm_weights > 0].mean(0)

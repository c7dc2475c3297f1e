"""Attention next to evidence: ablations against forward passes written out by hand, the
norm-based weights against their defining identity, rollout against a product by hand."""

import pytest
import torch
from jaxtyping import TypeCheckError

from bertlib.analysis.evidence import (
    attention_norms,
    attention_on_neighbours,
    attention_rollout,
    head_effects,
    heads_switched_off,
)


def _inputs(B: int = 2, T: int = 7, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    tokens = torch.randint(5, 50, (B, T), generator=g)
    segments = torch.zeros(B, T, dtype=torch.long)
    segments[:, T // 2:] = 1
    return tokens, segments


def _attention_io(model, tokens, segments, valid_lens=None):
    """Each block's input and its attention sublayer's output (after W_o), recorded by hooks."""
    inputs, outputs = [], []
    handles = [h for blk in model.encoder.blks for h in (
        blk.register_forward_pre_hook(lambda m, args: inputs.append(args[0])),
        blk.attention.register_forward_hook(lambda m, args, out: outputs.append(out[0])))]
    with torch.no_grad():
        model.encoder(tokens, segments, valid_lens)
    for h in handles:
        h.remove()
    return inputs, outputs


def test_nothing_switched_off_gives_exactly_the_normal_outputs(small_model):
    tokens, segments = _inputs()
    positions = torch.tensor([[1, 3], [2, 4]])
    with torch.no_grad():
        normal = small_model(tokens, segments, torch.tensor([7, 5]), positions)
        with heads_switched_off(small_model, torch.ones(2, 4)):
            kept = small_model(tokens, segments, torch.tensor([7, 5]), positions)
    assert all(torch.equal(a, b) for a, b in zip(normal, kept, strict=True))
    assert not small_model.encoder.blks[0].attention.W_o._forward_pre_hooks  # hooks removed


def test_a_head_switched_off_changes_only_what_passes_through_it(small_model):
    """Head 2 of layer 1 off: layer 0 and layer 1's input are untouched, and layer 1's
    attention output drops by exactly that head's part, α_h v_h W_o[:, head 2]^T, computed
    here from the weights and W_v by hand."""
    tokens, segments = _inputs()
    keep = torch.ones(2, 4)
    keep[1, 2] = 0
    inputs, outputs = _attention_io(small_model, tokens, segments)
    with heads_switched_off(small_model, keep):
        inputs_off, outputs_off = _attention_io(small_model, tokens, segments)
    assert torch.equal(inputs[0], inputs_off[0]) and torch.equal(outputs[0], outputs_off[0])
    assert torch.equal(inputs[1], inputs_off[1])
    attention = small_model.encoder.blks[1].attention
    with torch.no_grad():
        _, alpha = attention(inputs[1], None, need_weights=True)  # (B, nh, T, T)
        v = attention.W_v(inputs[1]).view(2, 7, 4, 8)[:, :, 2]  # head 2's values (B, T, hs)
        part = (alpha[:, 2] @ v) @ attention.W_o.weight[:, 16:24].T  # (B, T, H)
    assert torch.allclose(outputs[1] - outputs_off[1], part, atol=1e-5)


def test_a_whole_layer_switched_off_leaves_its_residual_path_alone(small_model):
    """Every head of layer 0 off: the attention sublayer gives only W_o's bias, so the block
    is AddNorm(X, bias) and then the FFN."""
    tokens, segments = _inputs()
    keep = torch.ones(2, 4)
    keep[0] = 0
    with heads_switched_off(small_model, keep):
        inputs, outputs = _attention_io(small_model, tokens, segments)
    blk = small_model.encoder.blks[0]
    assert torch.allclose(outputs[0], blk.attention.W_o.bias.expand_as(outputs[0]))
    with torch.no_grad():
        Y = blk.addnorm1.ln(inputs[0] + blk.attention.W_o.bias)
        by_hand = blk.addnorm2.ln(Y + blk.ffn(Y))
    assert torch.allclose(inputs[1], by_hand, atol=1e-6)


def test_switching_off_per_example_is_the_same_as_one_pass_per_mask(small_model):
    tokens, segments = _inputs(B=3)
    keep = torch.ones(3, 2, 4)
    keep[1, 0, 1] = 0
    keep[2, 1] = 0
    with torch.no_grad(), heads_switched_off(small_model, keep):
        batched = small_model.encoder(tokens, segments)
    for b in range(3):
        with torch.no_grad(), heads_switched_off(small_model, keep[b]):
            alone = small_model.encoder(tokens[b:b + 1], segments[b:b + 1])
        assert torch.allclose(batched[b], alone[0], atol=1e-6)


def test_head_effects_runs_every_ablation_in_one_pass_and_matches_them_one_by_one(small_model):
    tokens, segments = _inputs(B=1, T=9)
    tokens[0, [2, 6]] = 4  # <mask>
    positions, targets = torch.tensor([2, 6]), torch.tensor([11, 23])
    calls = []
    hook = small_model.encoder.register_forward_hook(lambda m, args, out: calls.append(1))
    effects = head_effects(small_model, tokens, segments, positions, targets)
    hook.remove()
    assert len(calls) == 1 and effects.token_prob.shape == (2, 4, 2)
    for layer in range(2):
        for head in range(4):
            keep = torch.ones(2, 4)
            keep[layer, head] = 0
            with torch.no_grad(), heads_switched_off(small_model, keep):
                _, mlm, nsp = small_model(tokens, segments, pred_positions=positions[None])
            p = mlm.softmax(-1)[0, [0, 1], targets]
            assert torch.allclose(effects.token_prob[layer, head], p, atol=1e-6)
            assert effects.is_next[layer, head] == pytest.approx(float(nsp.softmax(-1)[0, 1]),
                                                                 abs=1e-6)
    with torch.no_grad():
        _, mlm, nsp = small_model(tokens, segments, pred_positions=positions[None])
    assert torch.allclose(effects.base_token_prob, mlm.softmax(-1)[0, [0, 1], targets])
    assert effects.base_is_next == pytest.approx(float(nsp.softmax(-1)[0, 1]), abs=1e-6)
    assert not small_model.training


def test_norm_weights_add_up_to_what_each_head_passes_on(small_model):
    """Σ_j α_ij f_h(x_j) is head h's part of the attention output (before W_o's bias), and
    each norm-based weight is α_ij times the norm of f_h(x_j), recomputed by loops."""
    tokens, segments = _inputs()
    valid_lens = torch.tensor([7, 4])
    weights, norms = attention_norms(small_model, tokens, segments, valid_lens)
    assert weights.shape == norms.shape == (2, 2, 4, 7, 7)
    inputs, outputs = _attention_io(small_model, tokens, segments, valid_lens)
    for layer, blk in enumerate(small_model.encoder.blks):
        attention = blk.attention
        with torch.no_grad():
            V = attention.W_v(inputs[layer]).view(2, 7, 4, 8)  # (B, T, nh, hs)
            total = 0
            for h in range(4):
                f = V[:, :, h] @ attention.W_o.weight[:, 8 * h:8 * h + 8].T  # (B, T, H)
                alpha = weights[:, layer, h]  # (B, T, T)
                assert torch.allclose(norms[:, layer, h], alpha * f.norm(dim=-1)[:, None, :],
                                      atol=1e-6)
                total = total + alpha @ f
        assert torch.allclose(total + attention.W_o.bias, outputs[layer], atol=1e-5)
    assert (norms[1, :, :, :, 4:] == 0).all()  # padded keys pass nothing on


def test_rollout_is_the_product_of_the_averaged_layers_with_the_residual():
    g = torch.Generator().manual_seed(0)
    weights = torch.rand(1, 3, 2, 4, 4, generator=g)
    weights = weights / weights.sum(-1, keepdim=True)
    rollout = attention_rollout(weights)
    A = [(0.5 * weights[0, layer].mean(0) + 0.5 * torch.eye(4)) for layer in range(3)]
    A = [a / a.sum(-1, keepdim=True) for a in A]
    assert torch.allclose(rollout[0, 0], A[0])
    assert torch.allclose(rollout[0, 2], A[2] @ A[1] @ A[0])
    assert torch.allclose(rollout.sum(-1), torch.ones(1, 3, 4))
    identity = torch.eye(4).expand(1, 2, 3, 4, 4)
    assert torch.allclose(attention_rollout(identity), torch.eye(4).expand(1, 2, 4, 4))


@pytest.mark.parametrize("keep, message", [
    (torch.ones(3, 4), r"keep must be a tensor of shape \(batch, 2, 4\) or \(2, 4\)"),
    ([[1, 1, 1, 1]] * 2, "keep must be a tensor"),
])
def test_bad_masks_are_refused(small_model, keep, message):
    with pytest.raises(ValueError, match=message), heads_switched_off(small_model, keep):
        pass


def test_attention_on_neighbours_averages_the_two_weights_beside_each_real_slot():
    g = torch.Generator().manual_seed(3)
    weights = torch.rand(2, 1, 2, 6, 6, generator=g).softmax(-1)
    positions = torch.tensor([[2, 4], [1, 0]])
    slots = torch.tensor([[1.0, 1.0], [1.0, 0.0]])  # the last slot is padding
    got = attention_on_neighbours(weights, positions, slots)
    by_hand = (weights[0, :, :, 2, 1] + weights[0, :, :, 2, 3] + weights[0, :, :, 4, 3]
               + weights[0, :, :, 4, 5] + weights[1, :, :, 1, 0] + weights[1, :, :, 1, 2]) / 3
    assert got.shape == (1, 2) and torch.allclose(got, by_hand)


def test_head_effects_checks_what_it_reads(small_model):
    tokens, segments = _inputs(B=1)
    positions = torch.tensor([1, 2])
    for args, name in [
        ((small_model, tokens, None, positions, positions), "segments"),
        ((small_model, tokens.expand(2, -1), segments.expand(2, -1), positions, positions),
         "tokens"),  # one input only
        ((small_model, tokens, segments, positions, torch.tensor([5])), "targets"),
    ]:
        with pytest.raises(TypeCheckError, match=f"parameter '{name}'"):
            head_effects(*args)


@pytest.mark.parametrize("weights", [torch.ones(1, 1, 1, 2, 2, dtype=torch.long),
                                     torch.ones(1, 1, 1, 2, 3), torch.ones(1, 2, 2)])
def test_rollout_takes_square_maps_of_every_layer_and_head(weights):
    with pytest.raises(TypeCheckError, match="parameter 'weights'"):
        attention_rollout(weights)


@pytest.mark.parametrize(("positions", "slots", "name"), [
    (torch.tensor([[1.0]]), torch.tensor([[1.0]]), "pred_positions"),
    (None, None, "pred_positions"),
    (torch.tensor([[1, 2]]), torch.tensor([[1.0]]), "mlm_weights"),
])
def test_attention_on_neighbours_checks_its_slots(positions, slots, name):
    with pytest.raises(TypeCheckError, match=f"parameter '{name}'"):
        attention_on_neighbours(torch.rand(1, 2, 2, 5, 5), positions, slots)


def test_positions_past_the_input_and_targets_past_the_vocab_are_named(small_model):
    tokens, segments = _inputs(B=1)
    with pytest.raises(ValueError, match=r"pred_positions must be in \[0, 6\]; got 99"):
        head_effects(small_model, tokens, segments, torch.tensor([99]), torch.tensor([5]))
    with pytest.raises(ValueError, match="targets must be token ids"):
        head_effects(small_model, tokens, segments, torch.tensor([1]), torch.tensor([10**6]))
    with pytest.raises(ValueError, match=r"pred_positions must be in \[0, 4\]; got 9"):
        attention_on_neighbours(torch.rand(1, 2, 2, 5, 5), torch.tensor([[9]]), torch.ones(1, 1))

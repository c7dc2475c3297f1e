"""The fast loss gives the chapter's numbers."""

import math

import pytest
import torch
import torch.nn.functional as F
from jaxtyping import TypeCheckError

from bertlib.loss import chapter_loss
from bertlib.scale.fast import (
    _attention,
    dropout,
    fast_loss,
    linear_cross_entropy,
    unpadded_encode,
)
from bertlib.support.checks import NonFiniteError


def random_batch(vocab_size, B=6, T=16, P=4, seed=0):
    """A batch with random valid lengths and some padded prediction slots."""
    g = torch.Generator().manual_seed(seed)
    valid_lens = torch.randint(P + 2, T + 1, (B,), generator=g)
    tokens = torch.randint(5, vocab_size, (B, T), generator=g)
    segments = (torch.arange(T) >= valid_lens[:, None] // 2).long()
    pred_positions = torch.randint(1, P + 1, (B, P), generator=g)
    weights = (torch.rand(B, P, generator=g) < 0.6).float()
    weights[0] = 1.0  # at least one real slot
    labels = torch.randint(5, vocab_size, (B, P), generator=g)
    nsp = torch.randint(0, 2, (B,), generator=g)
    return tokens, segments, valid_lens, pred_positions * weights.long(), weights, labels, nsp


ORIGINAL = {"hidden_act": "gelu", "embedding_norm": True, "tie_mlm_decoder": True,
            "layer_norm_eps": 1e-12}


@pytest.mark.parametrize(("options", "fractional"), [({}, False), ({"tie_mlm_decoder": True},
                                                     False), (ORIGINAL, False), ({}, True)])
def test_fast_loss_matches_chapter_loss_and_gradients(options, fractional, toy_model):
    # Dropout off: the fast loss draws its masks for the real tokens only (tested below).
    model = toy_model(40, **options).eval()
    batch = random_batch(40)
    if fractional:  # weights other than 0 and 1 must count as weights, not as "real or not"
        weights = batch[4] * torch.linspace(0.25, 3.0, batch[4].numel()).view_as(batch[4])
        batch = (*batch[:4], weights, *batch[5:])
    results = []
    for loss_fn in (chapter_loss, fast_loss):
        model.zero_grad()
        torch.manual_seed(7)
        loss = loss_fn(model, *batch)
        loss.total.backward()
        results.append((loss, {n: p.grad.clone() for n, p in model.named_parameters()}))
    (ref, ref_grads), (fast, fast_grads) = results
    for a, b in zip(ref, fast, strict=True):
        torch.testing.assert_close(a, b)
    for name, grad in ref_grads.items():
        torch.testing.assert_close(fast_grads[name], grad, msg=name)


@pytest.mark.parametrize("options", [{}, ORIGINAL])
@pytest.mark.parametrize("all_real", [False, True])
def test_unpadded_encode_is_the_encoder_at_the_real_tokens(options, all_real, toy_model):
    encoder = toy_model(40, **options).encoder.eval()
    tokens, segments, valid_lens, *_ = random_batch(40, B=5, T=12)
    if all_real:
        valid_lens = None
    rows, starts = unpadded_encode(encoder, tokens, segments, valid_lens)
    padded = encoder(tokens, segments, valid_lens)  # (B, T, H)
    lengths = [12] * 5 if all_real else valid_lens.tolist()
    expected = torch.cat([padded[b, :n] for b, n in enumerate(lengths)])
    torch.testing.assert_close(rows, expected)
    assert starts.tolist() == [sum(lengths[:b]) for b in range(5)]


def test_fast_loss_with_dropout_draws_fresh_masks_with_the_chapters_mean(toy_model):
    """With dropout on, the masks are drawn for the real tokens only, so a draw differs from
    the chapter's; over many draws the two losses agree in mean."""
    model = toy_model(40).train()  # dropout 0.2
    batch = random_batch(40)
    draws = {}
    for loss_fn in (chapter_loss, fast_loss):
        losses = []
        for seed in range(60):
            torch.manual_seed(seed)
            losses.append(loss_fn(model, *batch).total.item())
        draws[loss_fn.__name__] = torch.tensor(losses)
    torch.manual_seed(3)
    again = fast_loss(model, *batch).total.item()
    assert again == draws["fast_loss"][3].item()  # seeded: the same draws again
    with torch.no_grad():
        off = fast_loss(model.eval(), *batch).total.item()
    fast, chapter = draws["fast_loss"], draws["chapter_loss"]
    assert fast.std() > 0 and not torch.isclose(fast, torch.tensor(off)).all()  # dropout acts
    stderr = (fast.var() / len(fast) + chapter.var() / len(chapter)).sqrt()
    assert abs(fast.mean() - chapter.mean()) < 4 * stderr


def test_attention_with_dropout_is_the_fused_attention_in_mean():
    """With dropout on the weights, attention is written out (the weights' dropout is ours);
    over many draws its mean is the fused kernel's attention without dropout, and padded keys
    get no weight in any draw."""
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(3, 2, 6, 4, generator=g, dtype=torch.float64) for _ in range(3))
    mask = (torch.arange(6) < torch.tensor([6, 4, 2])[:, None])[:, None, None, :]
    v = v.masked_fill(~mask.transpose(-1, -2), 1e6)  # any weight on a padded key shows
    clean = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    torch.manual_seed(0)
    draws = torch.stack([_attention(q, k, v, mask, 0.5) for _ in range(4000)])
    assert draws.abs().max() < 1e3  # padded keys: weight 0 in every draw
    assert (draws.std(0) > 0.05).all()  # dropout acts on every output
    stderr = draws.std(0) / len(draws) ** 0.5
    assert ((draws.mean(0) - clean).abs() < 5 * stderr).all()
    torch.testing.assert_close(_attention(q, k, v, mask, 0.0), clean)


@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_dropout_drops_a_fraction_p_and_keeps_the_expected_value(p):
    X = torch.full((1000, 1000), 2.0)
    torch.manual_seed(0)
    Y = dropout(X, p)
    dropped = (Y == 0).double().mean().item()
    n = X.numel()
    assert abs(dropped - p) < 5 * (p * (1 - p) / n) ** 0.5
    # kept values are scaled by the keep probability rounded as the drop decision is
    kept = Y[Y != 0]
    assert torch.all(kept == kept[0])
    assert kept[0].item() == pytest.approx(2.0 / (1 - p), rel=1e-4)
    assert Y.mean().item() == pytest.approx(2.0, abs=5 * 2.0 * (p / (1 - p) / n) ** 0.5)


def test_dropout_decisions_are_independent_and_seeded():
    """Four decisions come from one 64-bit draw: neighbours must still be independent, and the
    draws come from torch's global generator, so a seed repeats them."""
    X = torch.ones(4_000_000)
    torch.manual_seed(1)
    Y = dropout(X, 0.5)
    drops = (Y == 0).view(-1, 4).double()  # the four lanes of each draw
    both = drops.T @ drops / len(drops)  # P(lane i and lane j dropped)
    assert torch.allclose(both, torch.full((4, 4), 0.25).double() + torch.eye(4) * 0.25,
                          atol=3e-3)
    torch.manual_seed(1)
    assert torch.equal(dropout(X, 0.5), Y)
    assert not torch.equal(dropout(X, 0.5), Y)  # the generator moved on


def test_dropout_off_and_at_its_ends():
    X = torch.randn(5, 7, dtype=torch.float64)
    assert torch.equal(dropout(X, 0.3, training=False), X)
    assert torch.equal(dropout(X, 0.0), X)
    assert dropout(X, 0.5).dtype == torch.float64
    X.requires_grad_(True)
    torch.manual_seed(2)
    Y = dropout(X, 0.5)
    Y.sum().backward()
    assert torch.equal(X.grad, Y.detach() / X.detach())  # gradient: the same mask and scale


def test_linear_cross_entropy_against_torch_with_weights():
    g = torch.Generator().manual_seed(0)
    X = torch.randn(7, 5, generator=g, dtype=torch.float64, requires_grad=True)
    W = torch.randn(11, 5, generator=g, dtype=torch.float64, requires_grad=True)
    b = torch.randn(11, generator=g, dtype=torch.float64, requires_grad=True)
    labels = torch.randint(11, (7,), generator=g)
    w = torch.tensor([1.0, 0.5, 2.0, 0.0, 1.0, 3.0, 0.25], dtype=torch.float64)
    ref = (F.cross_entropy(X @ W.T + b, labels, reduction="none") * w).sum() / w.sum()
    ref_grads = torch.autograd.grad(ref, (X, W, b))
    out = linear_cross_entropy(X, W, b, labels, w)
    torch.testing.assert_close(out, ref)
    for g_out, g_ref in zip(torch.autograd.grad(out, (X, W, b)), ref_grads, strict=True):
        torch.testing.assert_close(g_out, g_ref)


def test_linear_cross_entropy_backward_runs_once():
    X = torch.randn(3, 4, requires_grad=True)
    out = linear_cross_entropy(X, torch.randn(6, 4), torch.zeros(6), torch.tensor([0, 1, 2]),
                               torch.ones(3))
    out.backward(retain_graph=True)
    with pytest.raises(RuntimeError, match="only once"):
        out.backward()








def test_int32_labels_give_the_int64_losses_in_the_fast_loss(toy_model):
    """Before: int32 labels (as int32 token ids make them) were refused."""
    model = toy_model(40).eval()
    batch = random_batch(40)
    as_int32 = [t.int() if i in (5, 6) else t for i, t in enumerate(batch)]
    for a, b in zip(fast_loss(model, *as_int32), fast_loss(model, *batch), strict=True):
        assert torch.equal(a, b)


@pytest.mark.parametrize(("change", "parameter"), [
    ({"W": torch.randn(6, 5)}, "W"),
    ({"b": torch.zeros(5)}, "b"),
    ({"labels": torch.tensor([0, 1])}, "labels"),
    ({"labels": torch.tensor([0.0, 1.0, 2.0])}, "labels"),
])
def test_linear_cross_entropy_names_a_shape_or_dtype_that_disagrees(change, parameter):
    """Its shapes are in its signature (K slots, V classes, H features), checked at the call."""
    args = {"X": torch.randn(3, 4), "W": torch.randn(6, 4), "b": torch.zeros(6),
            "labels": torch.tensor([0, 1, 2]), "weights": torch.ones(3)} | change
    with pytest.raises(TypeCheckError, match=f"parameter '{parameter}'"):
        linear_cross_entropy(**args)


def test_linear_cross_entropy_stops_on_a_loss_that_is_not_finite():
    X = torch.full((3, 4), math.inf)
    with pytest.raises(NonFiniteError, match="the MLM loss is nan: X .*NaN or infinite"):
        linear_cross_entropy(X, torch.randn(6, 4), torch.zeros(6), torch.tensor([0, 1, 2]),
                             torch.ones(3))


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"p": 1.0}, r"p must be a number in \[0, 1\); got 1.0"),
    ({"p": -0.1}, r"p must be a number in \[0, 1\); got -0.1"),
    ({"p": math.nan}, r"p must be a number in \[0, 1\); got nan"),
    ({"p": 0.1, "training": "yes"}, "training must be True or False; got 'yes'"),
])
def test_dropout_refuses_a_bad_p_or_training_before_drawing(kwargs, message):
    """Before: p=1.0 and p=-0.1 were accepted, NaN failed inside round(), and training='yes'
    dropped; the last two drew from torch's global generator."""
    state = torch.get_rng_state()
    with pytest.raises(ValueError, match=message):
        dropout(torch.ones(3), **kwargs)
    assert torch.equal(torch.get_rng_state(), state)


def test_unpadded_encode_names_an_encoder_that_is_not_one():
    """Before: AttributeError: 'str' object has no attribute 'config'."""
    tokens = torch.tensor([[2, 5, 3]])
    with pytest.raises(TypeCheckError, match="parameter 'encoder'"):
        unpadded_encode("x", tokens, torch.zeros_like(tokens), None)

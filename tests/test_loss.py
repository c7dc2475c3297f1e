import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from bertlib import bert_loss
from bertlib.checks import NonFiniteError


def _ce(logits, label):
    return math.log(sum(math.exp(v) for v in logits)) - logits[label]


def test_loss_equals_hand_computed_cross_entropy():
    mlm_logits = [[[1.0, 2.0, 0.5], [0.0, 0.0, 3.0]], [[2.0, -1.0, 0.0], [9.0, 9.0, 9.0]]]
    labels = [[1, 2], [0, 1]]
    weights = [[1.0, 1.0], [1.0, 0.0]]  # the last slot is padding
    nsp_logits = [[0.3, -0.2], [1.5, 0.5]]
    nsp_labels = [1, 0]
    loss = bert_loss(torch.tensor(mlm_logits), torch.tensor(labels), torch.tensor(weights),
                     torch.tensor(nsp_logits), torch.tensor(nsp_labels))
    mlm = (_ce(mlm_logits[0][0], 1) + _ce(mlm_logits[0][1], 2) + _ce(mlm_logits[1][0], 0)) / 3
    nsp = (_ce(nsp_logits[0], 1) + _ce(nsp_logits[1], 0)) / 2
    assert loss.mlm.item() == pytest.approx(mlm, rel=1e-6)
    assert loss.nsp.item() == pytest.approx(nsp, rel=1e-6)
    assert loss.total.item() == pytest.approx(mlm + nsp, rel=1e-6)


def test_padded_prediction_slots_do_not_change_the_mlm_loss():
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(4, 5, 30, generator=g)
    labels = torch.randint(0, 30, (4, 5), generator=g)
    weights = torch.tensor([[1.0] * 5, [1, 1, 1, 0, 0], [1, 0, 0, 0, 0], [1, 1, 0, 0, 0]])
    nsp = torch.randn(4, 2, generator=g)
    nsp_labels = torch.tensor([0, 1, 1, 0])
    before = bert_loss(logits, labels, weights, nsp, nsp_labels)
    padded = weights == 0
    logits2 = logits.clone()
    logits2[padded] = torch.randn(int(padded.sum()), 30, generator=g) * 10
    labels2 = labels.masked_fill(padded, 7)
    after = bert_loss(logits2, labels2, weights, nsp, nsp_labels)
    torch.testing.assert_close(before.mlm, after.mlm)
    # and the padded slots are really excluded: the loss is the mean over the 11 real slots
    real = torch.nn.functional.cross_entropy(logits[~padded], labels[~padded])
    torch.testing.assert_close(before.mlm, real)


def test_chapter_mean_reduced_loss_masks_nothing():
    """What d2l-en issue #2582 describes: reduction='mean' then * weights ignores the weights."""
    g = torch.Generator().manual_seed(1)
    logits = torch.randn(2, 3, 10, generator=g)
    labels = torch.randint(0, 10, (2, 3), generator=g)
    weights = torch.tensor([[1.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    mean_loss = torch.nn.functional.cross_entropy(logits.reshape(-1, 10), labels.reshape(-1))
    chapter = (mean_loss * weights.reshape(-1)).sum() / (weights.sum() + 1e-8)
    ours = bert_loss(logits, labels, weights, torch.zeros(2, 2), torch.tensor([0, 1])).mlm
    torch.testing.assert_close(chapter, mean_loss)  # the weights cancel out
    assert not torch.isclose(chapter, ours)


def test_bad_loss_input():
    with pytest.raises(ValueError, match="must agree on B and P"):
        bert_loss(torch.zeros(2, 3, 5), torch.zeros(2, 2, dtype=torch.long), torch.zeros(2, 2),
                  torch.zeros(2, 2), torch.zeros(2, dtype=torch.long))
    with pytest.raises(ValueError, match=r"nsp_Y_hat must be \(B, 2\)"):
        bert_loss(torch.zeros(2, 3, 5), torch.zeros(2, 3, dtype=torch.long), torch.zeros(2, 3),
                  torch.zeros(2, 3), torch.zeros(2, dtype=torch.long))


def _loss_inputs():
    g = torch.Generator().manual_seed(0)
    return (torch.randn(2, 3, 5, generator=g), torch.randint(5, (2, 3), generator=g),
            torch.ones(2, 3), torch.randn(2, 2, generator=g), torch.tensor([0, 1]))


def _with(i, value):
    args = list(_loss_inputs())
    args[i] = value(args[i]) if callable(value) else value
    return args


@pytest.mark.parametrize(("args", "message"), [
    # a 0-d nsp_labels used to reach an IndexError
    (_with(4, torch.tensor(1)), r"nsp_labels must have shape \(B,\); got shape \(\)"),
    (_with(3, lambda t: t[:1]), r"nsp_Y_hat must be \(B, 2\) with the B = 2"),
    (_with(4, torch.tensor([0, 1, 1])), "nsp_labels must hold one label per sequence"),
    (_with(0, lambda t: t.long()), "mlm_Y_hat must hold floating-point numbers"),
    (_with(1, lambda t: t.tolist()), r"mlm_labels must be a torch.Tensor of shape \(B, P\)"),
    (_with(0, lambda t: t.index_fill(2, torch.tensor([1]), math.nan)),
     "mlm_Y_hat must be finite"),
    (_with(3, lambda t: t.index_fill(1, torch.tensor([0]), math.inf)),
     "nsp_Y_hat must be finite"),
    (_with(2, lambda t: t * 0), "mlm_weights are all 0: there is no real prediction slot"),
    (_with(2, lambda t: t.index_fill(1, torch.tensor([0]), -1.0)), "weights >= 0; got -1"),
    (_with(2, lambda t: t.index_fill(1, torch.tensor([0]), math.nan)), "mlm_weights must be fin"),
    (_with(1, lambda t: t.float()), "mlm_labels must hold integers of dtype torch.int64 or "),
    (_with(1, lambda t: t + 5), r"mlm_labels must be class ids in \[0, 4\]"),
    (_with(4, torch.tensor([0, 5])), r"nsp_labels must be class ids in \[0, 1\]; got 5"),
    (_with(0, lambda t: t[0]), r"mlm_Y_hat must have shape \(B, P, V\); got shape \(3, 5\)"),
    (_with(3, lambda t: t[None]), r"nsp_Y_hat must have shape \(B, 2\); got shape \(1, 2, 2\)"),
])
def test_bad_loss_inputs_are_named(args, message):
    """Before: NaN losses or a 0.0 MLM loss silently, or raw torch errors."""
    with pytest.raises(ValueError, match=message):
        bert_loss(*args)


def test_double_weights_give_the_same_loss_in_the_logits_dtype():
    """Weights built as doubles weigh the slots as float weights do, and the loss keeps the
    logits' dtype."""
    args = _with(2, torch.tensor([[1, 1, 0], [1, 0, 0]], dtype=torch.float64))
    reference = _with(2, torch.tensor([[1.0, 1.0, 0.0], [1.0, 0.0, 0.0]]))
    loss = bert_loss(*args)
    assert loss.mlm.dtype == torch.float32
    torch.testing.assert_close(loss.mlm, bert_loss(*reference).mlm)


def _reference_mlm(logits: torch.Tensor, labels: torch.Tensor, weights: torch.Tensor) -> float:
    """The weighted mean cross-entropy in float64, written out: the independent reference."""
    log_p = logits.double().log_softmax(-1).gather(-1, labels.long()[..., None]).squeeze(-1)
    w = weights.double()
    return float(-(log_p * w).sum() / w.sum())


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31), exponent=st.integers(-300, 300),
       dtype=st.sampled_from([torch.float32, torch.float64]))
def test_the_mlm_loss_is_a_weighted_mean_whatever_the_weights_scale(seed, exponent, dtype):
    """Before: weights of 1e-40 each gave 0.17 instead of 3.36 (the sum underflowed), weights
    of 3e38 gave NaN (it overflowed). Scaling every weight by 10**k changes nothing, down to
    float32's smallest subnormals and up to its largest numbers (float64's, for its weights)."""
    info = torch.finfo(dtype)  # k from 2 decades into the subnormals to the largest decade
    k = min(max(exponent, math.floor(math.log10(info.smallest_normal)) - 2),
            math.floor(math.log10(info.max)))
    g = torch.Generator().manual_seed(seed)
    B, P, V = 3, 4, 7
    logits = torch.randn(B, P, V, generator=g) * 3
    labels = torch.randint(V, (B, P), generator=g)
    weights = (0.1 + 0.9 * torch.rand(B, P, generator=g, dtype=torch.float64)) \
        * (torch.rand(B, P, generator=g) < 0.7)  # in [0.1, 1], or 0 at padded slots
    weights[0, 0] = 1.0
    scaled = (weights * 10.0**k).to(dtype)
    assert bool((scaled[weights > 0] > 0).all()) and bool(scaled.isfinite().all())
    loss = bert_loss(logits, labels, scaled, torch.zeros(B, 2), torch.zeros(B, dtype=torch.long))
    # subnormal float32 weights keep only a few bits: the reference reads the same values
    assert loss.mlm.item() == pytest.approx(_reference_mlm(logits, labels, scaled), rel=1e-5)


def test_the_issues_weights_give_the_mean_of_unit_weights():
    g = torch.Generator().manual_seed(0)
    logits, labels = torch.randn(2, 5, 30, generator=g), torch.randint(30, (2, 5), generator=g)
    expected = _reference_mlm(logits, labels, torch.ones(2, 5))
    for w in (1e-40, 1e-45, 3e38, torch.finfo(torch.float32).max):
        loss = bert_loss(logits, labels, torch.full((2, 5), w), torch.zeros(2, 2),
                         torch.zeros(2, dtype=torch.long))
        assert loss.mlm.item() == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize("which", [0, 3])
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_logits_raise_a_non_finite_error(which, bad):
    args = list(_loss_inputs())
    args[which] = args[which].clone().index_fill(-1, torch.tensor([1]), bad)
    name = "mlm_Y_hat" if which == 0 else "nsp_Y_hat"
    with pytest.raises(NonFiniteError, match=f"^{name} must be finite; it holds NaN"):
        bert_loss(*args)


def test_int32_labels_give_the_int64_losses():
    """Before: int32 labels were refused (cross_entropy takes int64 only); token ids could
    already be int32, so labels made from them were refused."""
    args = _loss_inputs()
    as_int32 = [t.int() if i in (1, 4) else t for i, t in enumerate(args)]
    for a, b in zip(bert_loss(*as_int32), bert_loss(*args), strict=True):
        assert torch.equal(a, b)

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from jaxtyping import TypeCheckError

from bertlib import bert_loss


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


def _loss_inputs():
    g = torch.Generator().manual_seed(0)
    return (torch.randn(2, 3, 5, generator=g), torch.randint(5, (2, 3), generator=g),
            torch.ones(2, 3), torch.randn(2, 2, generator=g), torch.tensor([0, 1]))


def _with(i, value):
    args = list(_loss_inputs())
    args[i] = value(args[i]) if callable(value) else value
    return args


@pytest.mark.parametrize(("args", "name"), [
    (_with(4, torch.tensor(1)), "nsp_labels"),  # 0-d
    (_with(3, lambda t: t[:1]), "nsp_Y_hat"),  # B = 1 against 2
    (_with(4, torch.tensor([0, 1, 1])), "nsp_labels"),  # B = 3
    (_with(0, lambda t: t.long()), "mlm_Y_hat"),  # integer logits
    (_with(1, lambda t: t.float()), "mlm_labels"),  # float labels
    (_with(2, lambda t: t[:, :2]), "mlm_weights"),  # P = 2 against 3
    (_with(0, lambda t: t[0]), "mlm_Y_hat"),  # (P, V)
])
def test_bad_loss_shapes_and_dtypes_are_named(args, name):
    """Before: NaN losses or raw torch errors; now the signature's shapes name the argument."""
    with pytest.raises(TypeCheckError, match=f"parameter '{name}'"):
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


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31))
def test_the_mlm_loss_is_the_weighted_mean_of_the_slots(seed):
    """Σ l·w / Σ w against a float64 reference written out, padded slots weighing 0."""
    g = torch.Generator().manual_seed(seed)
    B, P, V = 3, 4, 7
    logits = torch.randn(B, P, V, generator=g) * 3
    labels = torch.randint(V, (B, P), generator=g)
    weights = (torch.rand(B, P, generator=g) < 0.7).float()
    weights[0, 0] = 1.0
    loss = bert_loss(logits, labels, weights, torch.zeros(B, 2), torch.zeros(B, dtype=torch.long))
    assert loss.mlm.item() == pytest.approx(_reference_mlm(logits, labels, weights), rel=1e-5)


def test_int32_labels_give_the_int64_losses():
    """Before: int32 labels were refused (cross_entropy takes int64 only); token ids could
    already be int32, so labels made from them were refused."""
    args = _loss_inputs()
    as_int32 = [t.int() if i in (1, 4) else t for i, t in enumerate(args)]
    for a, b in zip(bert_loss(*as_int32), bert_loss(*args), strict=True):
        assert torch.equal(a, b)


@pytest.mark.parametrize(("i", "value", "message"), [
    (1, torch.tensor([[1, 2, -100], [0, 0, 0]]), r"mlm_labels must be token ids in \[0, V - 1\]; "
                                                 r"got -100"),
    (1, torch.tensor([[1, 2, 5], [0, 0, 0]]), r"mlm_labels .*got 5"),
    (4, torch.tensor([0, 2]), r"nsp_labels must be 0 \(NotNext\) or 1 \(IsNext\); got 2"),
    (2, torch.zeros(2, 3), "mlm_weights must mark at least one real prediction slot"),
])
def test_label_values_a_shape_cannot_show_are_named(i, value, message):
    """Before: Hugging Face's -100 label counted as a slot with loss 0, silently; weights all 0
    gave NaN."""
    with pytest.raises(ValueError, match=message):
        bert_loss(*_with(i, value))

import math

import pytest
import torch

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

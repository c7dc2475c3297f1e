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

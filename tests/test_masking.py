import math

import pytest
import torch

from bertlib import Fate, Vocab, mask_tokens

N_WORDS = 100


@pytest.fixture(scope="module")
def big_vocab() -> Vocab:
    return Vocab([f"w{i}" for i in range(N_WORDS)])


def _sequence(vocab: Vocab) -> list[int]:
    # <cls> w0..w99 <sep>: 100 maskable tokens, so exactly 15 are chosen every time
    return [vocab.cls_id, *vocab[[f"w{i}" for i in range(N_WORDS)]], vocab.sep_id]


def _within(observed: float, p: float, n: int, k: float = 4.0) -> bool:
    return abs(observed - p) <= k * math.sqrt(p * (1 - p) / n)


def test_masking_statistics(big_vocab):
    """Over 51,000 selections: 15% chosen, uniformly over positions; 80/10/10 fates."""
    ids = _sequence(big_vocab)
    g = torch.Generator().manual_seed(1234)
    runs = 3400
    per_position = torch.zeros(len(ids))
    fates = {f: 0 for f in Fate}
    for _ in range(runs):
        m = mask_tokens(ids, big_vocab, generator=g)
        assert len(m.positions) == 15
        per_position[m.positions] += 1
        for pos, label, fate in zip(m.positions, m.labels, m.fates, strict=True):
            fates[fate] += 1
            assert label == ids[pos]
            new = m.masked_ids[pos]
            if fate is Fate.MASK:
                assert new == big_vocab.mask_id
            elif fate is Fate.KEEP:
                assert new == ids[pos]
            else:
                assert new in big_vocab.word_ids
        unchosen = set(range(len(ids))) - set(m.positions)
        assert all(m.masked_ids[i] == ids[i] for i in unchosen)
    selections = runs * 15
    assert selections >= 50_000
    # special tokens are never chosen
    assert per_position[0] == 0 and per_position[-1] == 0
    # every ordinary position is chosen with probability 0.15
    for count in per_position[1:-1].tolist():
        assert _within(count / runs, 0.15, runs)
    assert _within(fates[Fate.MASK] / selections, 0.8, selections)
    assert _within(fates[Fate.RANDOM] / selections, 0.1, selections)
    assert _within(fates[Fate.KEEP] / selections, 0.1, selections)


def test_random_replacements_are_uniform_over_words(big_vocab):
    ids = _sequence(big_vocab)
    g = torch.Generator().manual_seed(7)
    drawn = []
    while len(drawn) < 20_000:
        m = mask_tokens(ids, big_vocab, mask_ratio=1.0, generator=g)
        drawn += [m.masked_ids[p] for p, f in zip(m.positions, m.fates, strict=True)
                  if f is Fate.RANDOM]
    counts = torch.bincount(torch.tensor(drawn), minlength=len(big_vocab)).float()
    assert counts[:5].sum() == 0  # never a reserved token
    expected = len(drawn) / N_WORDS
    chi2 = float(((counts[5:] - expected) ** 2 / expected).sum())
    # chi-square with 99 degrees of freedom: mean 99, sd 14; 4 sd above the mean is 155
    assert chi2 < 155


def test_number_of_predictions_rounds_15_percent_with_at_least_one(vocab):
    for n, expected in [(1, 1), (3, 1), (7, 1), (10, 2), (20, 3), (40, 6)]:
        ids = [vocab.cls_id] + [vocab["cat"]] * n + [vocab.sep_id]
        assert len(mask_tokens(ids, vocab, seed=0).positions) == expected


def test_same_seed_same_result_and_global_rng_untouched(vocab):
    ids = [vocab.cls_id] + vocab["the cat sat on a mat and the dog ran".split()] + [vocab.sep_id]
    state = torch.get_rng_state()
    a = mask_tokens(ids, vocab, seed=3)
    b = mask_tokens(ids, vocab, generator=torch.Generator().manual_seed(3))
    assert a == b
    assert torch.equal(state, torch.get_rng_state())
    others = {tuple(mask_tokens(ids, vocab, seed=s).positions) for s in range(20)}
    assert len(others) > 1


def test_padding_and_mask_tokens_are_never_chosen(vocab):
    ids = [vocab.cls_id, vocab["cat"], vocab.mask_id, vocab.sep_id, vocab.pad_id, vocab.pad_id]
    for seed in range(50):
        assert mask_tokens(ids, vocab, seed=seed).positions == [1]


def test_bad_masking_input(vocab):
    with pytest.raises(ValueError, match="no maskable token"):
        mask_tokens([vocab.cls_id, vocab.sep_id], vocab, seed=0)
    with pytest.raises(ValueError, match="exactly one of generator"):
        mask_tokens([vocab["cat"]], vocab)
    with pytest.raises(ValueError, match=r"mask_ratio must be in \(0, 1\]"):
        mask_tokens([vocab["cat"]], vocab, seed=0, mask_ratio=0)
    with pytest.raises(ValueError, match=r"token_ids must be in \[0, "):
        mask_tokens([len(vocab)], vocab, seed=0)


def test_a_random_replacement_is_a_fresh_draw_not_the_original(big_vocab):
    """A RANDOM slot equals its original token only when the draw happens to pick it again,
    1 time in N_WORDS; a replacement that kept the token would do so every time."""
    ids = _sequence(big_vocab)
    g = torch.Generator().manual_seed(11)
    same = total = 0
    while total < 5_000:
        m = mask_tokens(ids, big_vocab, mask_ratio=1.0, generator=g)
        for p, f in zip(m.positions, m.fates, strict=True):
            if f is Fate.RANDOM:
                total += 1
                same += m.masked_ids[p] == ids[p]
    assert same / total < 4 / N_WORDS

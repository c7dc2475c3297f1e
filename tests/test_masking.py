import math
from decimal import ROUND_HALF_EVEN, Decimal

import pytest
import torch

from bertlib import Fate, Vocab, mask_tokens
from bertlib.masking import check_replacement_words

N_WORDS = 100


@pytest.fixture(scope="module")
def big_vocab() -> Vocab:
    return Vocab([f"w{i}" for i in range(N_WORDS)])


def _sequence(vocab: Vocab) -> list[int]:
    # <cls> w0..w99 <sep>: 102 tokens, so exactly round(15.3) = 15 are chosen every time
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


def _chapter_count(length: int, ratio: str = "0.15") -> int:
    """The chapter's ``max(1, round(0.15 * len(tokens)))`` in exact decimal arithmetic, a half
    going to the even neighbour, independently of the float product bertlib computes."""
    exact = (Decimal(ratio) * length).quantize(Decimal(1), rounding=ROUND_HALF_EVEN)
    return max(1, int(exact))


@pytest.mark.parametrize(("words", "expected"), [
    (1, 1), (3, 1),  # 3 and 5 tokens: 0.45 and 0.75, at least 1
    (8, 2),  # 10 tokens: 1.5, a tie, goes to the even 2
    (28, 4),  # 30 tokens: 4.5, a tie, goes to the even 4, not 5
    (48, 8),  # 50 tokens: 7.5 -> 8; counting only the 48 words would give 7
    (68, 10),  # 70 tokens: 10.5 -> 10
    (40, 6), (60, 9), (99, 15), (118, 18),
])
def test_number_of_predictions_is_15_percent_of_the_whole_sequence(vocab, words, expected):
    """<cls> and <sep> count in the length, as in the chapter and the original BERT."""
    ids = [vocab.cls_id] + [vocab["cat"]] * words + [vocab.sep_id]
    assert expected == _chapter_count(len(ids))
    assert len(mask_tokens(ids, vocab, seed=0).positions) == expected


@pytest.mark.parametrize("ratio", ["0.15", "0.3", "0.5"])
def test_number_of_predictions_for_pairs_and_other_ratios(vocab, ratio):
    """A pair's three special tokens count too; padding does not; never more than the
    maskable tokens."""
    for a in range(1, 40):
        b = 40 - a
        ids = [vocab.cls_id, *[vocab["cat"]] * a, vocab.sep_id, *[vocab["sat"]] * b,
               vocab.sep_id]
        got = len(mask_tokens(ids + [vocab.pad_id] * a, vocab, seed=a,
                              mask_ratio=float(ratio)).positions)
        assert got == min(40, _chapter_count(len(ids), ratio))
    few = [vocab.cls_id, vocab["cat"], vocab.sep_id]  # 3 tokens, 1 maskable
    assert len(mask_tokens(few, vocab, seed=0, mask_ratio=1.0).positions) == 1


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
    with pytest.raises(ValueError, match=r"token_ids must hold at least one maskable token "
                                         r".*; got \[2, 3\]"):
        mask_tokens([vocab.cls_id, vocab.sep_id], vocab, seed=0)
    with pytest.raises(ValueError, match="token_ids must hold .*; got an empty sequence"):
        mask_tokens([], vocab, seed=0)
    with pytest.raises(ValueError, match="exactly one of generator"):
        mask_tokens([vocab["cat"]], vocab)
    with pytest.raises(ValueError, match=r"mask_ratio must be in \(0, 1\]"):
        mask_tokens([vocab["cat"]], vocab, seed=0, mask_ratio=0)
    with pytest.raises(ValueError, match=r"token_ids must be a list of integer ids in \[0, 19\] "
                                         r"\(vocab\[tokens\]\); got 20 in \[20\]"):
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


def _words_of(lengths: list[int]) -> list[int | None]:
    """<cls>, then words of the given lengths in tokens, then <sep>: the word of each token."""
    return [None, *(w for w, n in enumerate(lengths) for _ in range(n)), None]


def test_whole_word_masking_takes_every_piece_of_a_chosen_word(big_vocab):
    lengths = [1, 2, 3, 1, 4, 2, 1, 1, 3, 2] * 4  # 80 tokens in 40 words
    words = _words_of(lengths)
    ids = [big_vocab.cls_id, *big_vocab[[f"w{i}" for i in range(80)]], big_vocab.sep_id]
    chosen_words = []
    for seed in range(300):
        out = mask_tokens(ids, big_vocab, seed=seed, words=words)
        picked = {words[p] for p in out.positions}
        # All pieces of each chosen word, within the budget round(0.15 * 82) = 12 tokens.
        assert out.positions == sorted(i for i, w in enumerate(words) if w in picked)
        assert len(out.positions) <= 12
        assert out.labels == [ids[p] for p in out.positions]
        chosen_words += picked
    # Every word is as likely to come first; later ones must fit what is left, so a 4-piece
    # word is chosen less often than a 1-piece one, but both are chosen.
    counts = [chosen_words.count(w) for w in range(40)]
    one_piece = [c for c, n in zip(counts, lengths, strict=True) if n == 1]
    four_piece = [c for c, n in zip(counts, lengths, strict=True) if n == 4]
    assert min(four_piece) > 0 and sum(four_piece) / 4 < sum(one_piece) / len(one_piece)


def test_whole_word_masking_corrupts_each_piece_80_10_10(big_vocab):
    words = _words_of([2] * 50)
    ids = _sequence(big_vocab)
    fates = []
    for seed in range(400):
        fates += mask_tokens(ids, big_vocab, seed=seed, words=words).fates
    n = len(fates)
    for fate, p in [(Fate.MASK, 0.8), (Fate.RANDOM, 0.1), (Fate.KEEP, 0.1)]:
        assert _within(fates.count(fate) / n, p, n)


def test_one_token_words_give_the_same_draw_as_no_words(big_vocab):
    ids = _sequence(big_vocab)
    for seed in range(20):
        assert mask_tokens(ids, big_vocab, seed=seed, words=_words_of([1] * N_WORDS)) == \
            mask_tokens(ids, big_vocab, seed=seed)


def test_whole_word_budget_counts_the_whole_sequence(big_vocab):
    """24 words of 2 pieces between <cls> and <sep>: 50 tokens, a budget of round(7.5) = 8
    pieces, so 4 whole words every time (counting only the 48 pieces would allow 3)."""
    words = _words_of([2] * 24)
    ids = [big_vocab.cls_id, *big_vocab[[f"w{i}" for i in range(48)]], big_vocab.sep_id]
    for seed in range(50):
        out = mask_tokens(ids, big_vocab, seed=seed, words=words)
        assert len(out.positions) == _chapter_count(len(ids)) == 8
        assert len({words[p] for p in out.positions}) == 4


def test_a_word_longer_than_the_budget_is_predicted_whole(vocab):
    ids = [vocab.cls_id] + [vocab["cat"]] * 5 + [vocab.sep_id]  # budget: max(1, round(1.05))
    out = mask_tokens(ids, vocab, seed=0, words=_words_of([5]))
    assert out.positions == [1, 2, 3, 4, 5]


@pytest.mark.parametrize("words", ["0 1 2", [None, 0, 1]])
def test_words_for_another_sequence_are_named(vocab, words):
    ids = [vocab.cls_id, vocab["cat"], vocab["sat"], vocab.sep_id]
    with pytest.raises(ValueError, match="words must give the word of each of the 4 tokens"):
        mask_tokens(ids, vocab, seed=0, words=words)


@pytest.mark.parametrize(("vocab", "kwargs", "message"), [
    (None, {"seed": 0}, "vocab must be a bertlib.text.vocab.Vocab; got NoneType"),
    ([f"w{i}" for i in range(9)], {"seed": 0},
     "vocab must be a bertlib.text.vocab.Vocab; got list"),
    ("big", {"generator": "g"}, "generator must be a torch.Generator; got str 'g'"),
    ("big", {"seed": 1.9}, r"seed must be an integer in \[0, 2\*\*63 - 1\]; got 1.9"),
    ("big", {"seed": "7"}, "seed must be an integer"),
])
def test_bad_vocab_and_random_source_are_named(vocab, kwargs, message, big_vocab):
    """Before: seed=1.9 silently drew with seed 1; a list vocab gave a misleading range."""
    vocab = big_vocab if vocab == "big" else vocab
    with pytest.raises(ValueError, match=message):
        mask_tokens([5, 6, 7], vocab, **kwargs)


def test_check_replacement_words_takes_a_vocab_only():
    """Before: AttributeError: 'NoneType' object has no attribute 'word_ids'."""
    for bad in (None, ["the", "cat"]):
        with pytest.raises(ValueError, match="vocab must be a bertlib.text.vocab.Vocab"):
            check_replacement_words(bad)

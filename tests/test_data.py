import math

import pytest
import torch
from helpers import within  # a hang fails its test, not the run

from bertlib import (
    HF_SPECIAL_TOKENS,
    IS_NEXT,
    NOT_NEXT,
    PretrainExample,
    Vocab,
    make_nsp_pairs,
    make_pretrain_data,
    make_pretrain_examples,
    pad_bert_inputs,
)

MAX_LEN = 16  # conftest's toy_data is padded to this
WORDS = "the cat sat on a mat and dog ran to park it was sunny day".split()  # the toy vocab


def _corpus(n_paragraphs=200, n_sentences=10):
    # each sentence is unique and says where it came from: "p{paragraph}s{sentence}"
    return [[[f"p{p}s{s}", "x"] for s in range(n_sentences)] for p in range(n_paragraphs)]


def _where(sentence):
    p, s = sentence[0][1:].split("s")
    return int(p), int(s)


def _split_pair(tokens, segments):
    a = [t for t, s in zip(tokens, segments, strict=True) if s == 0][1:-1]
    b = [t for t, s in zip(tokens, segments, strict=True) if s == 1][:-1]
    return a, b


def test_nsp_pairs_half_true_and_negatives_from_other_paragraphs():
    result = make_nsp_pairs(_corpus(), max_len=16, seed=0)
    n = len(result.pairs)
    assert n == 200 * 9
    assert result.truncated == result.dropped == 0
    n_next = 0
    for pair in result.pairs:
        a, b = _split_pair(pair.tokens, pair.segments)
        (pa, sa), (pb, sb) = _where(a), _where(b)
        if pair.is_next == IS_NEXT:
            n_next += 1
            assert (pb, sb) == (pa, sa + 1)
        else:
            assert pair.is_next == NOT_NEXT
            assert pb != pa
    assert abs(n_next / n - 0.5) <= 4 * math.sqrt(0.25 / n)


def test_overlong_pairs_are_truncated_or_dropped_and_counted():
    paragraphs = [[["a"] * 10, ["b"] * 2, ["c"]], [["d"], ["e"]]]
    truncated = make_nsp_pairs(paragraphs, max_len=8, seed=0)
    assert truncated.truncated >= 1 and truncated.dropped == 0
    assert all(len(p.tokens) <= 8 for p in truncated.pairs)
    assert len(truncated.pairs) == 3
    dropped = make_nsp_pairs(paragraphs, max_len=8, overflow="drop", seed=0)
    assert dropped.dropped == truncated.truncated
    assert len(dropped.pairs) == 3 - dropped.dropped


def test_truncation_trims_the_longer_sentence():
    paragraphs = [[["a"] * 10, ["b"] * 2], [["c"], ["d"]]]
    for seed in range(10):
        pair = make_nsp_pairs(paragraphs, max_len=9, seed=seed).pairs[0]
        a, b = _split_pair(pair.tokens, pair.segments)
        assert len(a) + len(b) == 6
        if pair.is_next == IS_NEXT:
            assert (a, b) == (["a"] * 4, ["b"] * 2)


def test_pretrain_examples_and_padded_batch():
    corpus = _corpus(4, 4)
    vocab = Vocab(corpus)
    pairs = make_nsp_pairs(corpus, max_len=12, seed=0).pairs
    examples = make_pretrain_examples(pairs, vocab, seed=0)
    batch = pad_bert_inputs(examples, max_len=12, vocab=vocab)
    n = len(examples)
    assert batch.tokens.shape == (n, 12) and batch.segments.shape == (n, 12)
    assert batch.pred_positions.shape == batch.mlm_weights.shape == (n, 2)  # round(0.15 * 12)
    for i, ex in enumerate(examples):
        length = len(ex.token_ids)
        assert batch.valid_lens[i] == length == 7  # <cls> 2 <sep> 2 <sep>
        assert batch.tokens[i, 0] == vocab.cls_id
        assert torch.all(batch.tokens[i, length:] == vocab.pad_id)
        k = len(ex.pred_positions)
        assert k == 1  # round(0.15 * 4 words)
        assert batch.mlm_weights[i].tolist() == [1.0] * k + [0.0] * (2 - k)
        assert batch.mlm_labels[i, :k].tolist() == ex.mlm_labels
        original = vocab[pairs[i].tokens[ex.pred_positions[0]]]
        assert ex.mlm_labels[0] == original
        assert batch.nsp_labels[i] == pairs[i].is_next
    assert len(batch[:2]) == 2


def test_bad_data_input():
    with pytest.raises(ValueError, match="at least 2 paragraphs"):
        make_nsp_pairs([[["a"], ["b"]]], max_len=10, seed=0)
    with pytest.raises(ValueError, match="overflow must be 'truncate' or 'drop'"):
        make_nsp_pairs(_corpus(2, 2), max_len=10, overflow="cut", seed=0)
    corpus = _corpus(2, 2)
    vocab = Vocab(corpus)
    examples = make_pretrain_examples(make_nsp_pairs(corpus, 12, seed=0).pairs, vocab, seed=0)
    with pytest.raises(ValueError, match="max_len is 5"):
        pad_bert_inputs(examples, max_len=5, vocab=vocab)


def test_pairs_follow_the_vocabulary_spelling_of_special_tokens():
    corpus = _corpus(3, 3)
    words = sorted({w for p in corpus for s in p for w in s})
    vocab = Vocab.from_list(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words],
                            HF_SPECIAL_TOKENS)
    pairs = make_nsp_pairs(corpus, 12, specials=HF_SPECIAL_TOKENS, seed=0).pairs
    assert pairs[0].tokens[0] == "[CLS]" and pairs[0].tokens[3] == "[SEP]"
    examples = make_pretrain_examples(pairs, vocab, seed=0)
    assert all(ex.token_ids[0] == vocab.cls_id for ex in examples)
    assert vocab.unk_id not in {t for ex in examples for t in ex.token_ids}


def test_make_pretrain_data_shapes_and_rounds(toy_paragraphs, vocab, toy_data):
    one_round = make_pretrain_data(toy_paragraphs, vocab, MAX_LEN, seed=0)
    n_pairs = sum(len(p) - 1 for p in toy_paragraphs)
    assert len(one_round) == n_pairs
    assert len(toy_data) == 2 * n_pairs  # rounds=2: fresh pairs and masks for every sentence
    assert toy_data.tokens.shape == (2 * n_pairs, MAX_LEN)
    assert toy_data.pred_positions.shape == (2 * n_pairs, round(0.15 * MAX_LEN))
    # The second round draws its own NSP partners / masks, not a copy of the first.
    assert not torch.equal(toy_data.tokens[:n_pairs], toy_data.tokens[n_pairs:])


def test_groups_keep_notnext_partners_within_a_group(toy_paragraphs, vocab):
    """Paragraphs in two disjoint 'languages': with groups, no pair mixes them; without, many
    NotNext pairs do."""
    half = len(WORDS) // 2
    lang = ["x" if i % 2 else "y" for i in range(len(toy_paragraphs))]
    paragraphs = [[[w for w in s if (WORDS.index(w) < half) == (g == "x")] or [WORDS[0 if g == "x"
                   else -1]] for s in p] for p, g in zip(toy_paragraphs, lang, strict=True)]
    vocab_x = torch.tensor(vocab[WORDS[:half]])

    def mixed(data) -> torch.Tensor:
        """Per pair: do its two segments come from different halves of WORDS?"""
        # Undo the masking first: a random replacement may come from the other half. (Padded
        # slots write <pad> at position 0, over <cls>: harmless.)
        tokens = data.tokens.scatter(1, data.pred_positions, data.mlm_labels)
        words = tokens >= 5  # ids 0-4 are the specials
        in_x = torch.isin(tokens, vocab_x)
        side = [(in_x & words & (data.segments == s)).any(1) for s in (0, 1)]
        return side[0] != side[1]

    grouped = make_pretrain_data(paragraphs, vocab, MAX_LEN, seed=0, rounds=3, groups=lang)
    ungrouped = make_pretrain_data(paragraphs, vocab, MAX_LEN, seed=0, rounds=3)
    assert len(grouped) == len(ungrouped)
    assert not mixed(grouped).any()
    assert mixed(ungrouped).sum() > len(ungrouped) / 8  # ~1/4: half of the NotNext pairs
    assert 0.4 < grouped.nsp_labels.float().mean() < 0.6
    with pytest.raises(ValueError, match="one label per paragraph"):
        make_pretrain_data(paragraphs, vocab, MAX_LEN, seed=0, groups=lang[:-1])
    with pytest.raises(ValueError, match="^group 'z': paragraphs must hold at least 2 paragraphs"):
        make_pretrain_data(paragraphs, vocab, MAX_LEN, seed=0, groups=[*lang[:-1], "z"])
    with pytest.raises(ValueError, match="at least 2 paragraphs.*got 0 paragraphs"):
        make_pretrain_data([], vocab, MAX_LEN, seed=0)


@pytest.mark.parametrize("mask_ratio", [0.15, 0.5, 1.0])
def test_pretrain_examples_follow_the_mask_ratio(vocab, mask_ratio):
    pairs = make_nsp_pairs([[WORDS[:8], WORDS[8:]], [WORDS[2:9], WORDS[:5]]], 20, seed=0).pairs
    for pair, example in zip(pairs, make_pretrain_examples(pairs, vocab, mask_ratio=mask_ratio,
                                                           seed=0), strict=True):
        maskable = len(pair.tokens) - 3  # all but <cls> and the two <sep>
        # The count is over the whole sequence, <cls> and <sep> included, as in the chapter.
        expected = min(maskable, max(1, round(mask_ratio * len(pair.tokens))))
        assert len(example.pred_positions) == expected


_PARAS = [[["the", "cat"], ["sat", "on"]], [["a", "mat"], ["dog", "ran"]]]
_EX = {"token_ids": [2, 5, 3], "segments": [0, 0, 0], "pred_positions": [1],
       "mlm_labels": [6], "is_next": 1}


@pytest.mark.parametrize(("call", "message"), [
    (lambda v: make_nsp_pairs([[["a"], ["b"]], []], 16, seed=0),
     r"each with a sentence, .*; got 2 paragraphs of \[2, 0\]"),
    (lambda v: make_nsp_pairs(_PARAS, float("nan"), seed=0), "max_len must be an integer >= 5"),
    (lambda v: make_nsp_pairs(_PARAS, 4, seed=0), r"max_len must be an integer >= 5 \(<cls> a "),
    (lambda v: make_nsp_pairs(_PARAS, 16, seed=1.5), "seed must be an integer"),
    (lambda v: pad_bert_inputs([], -1, v), "max_len must be a positive integer; got -1"),
    (lambda v: pad_bert_inputs([], 16, v, max_preds=2.5), r"max_preds must be an integer in \[1"),
    (lambda v: pad_bert_inputs([], 16, v, max_preds=-2), r"max_preds must be an integer in \[1"),
    (lambda v: pad_bert_inputs([PretrainExample(**_EX)], 16, v, max_preds=0),
     r"max_preds must be an integer in \[1, 16\]"),
    (lambda v: pad_bert_inputs([], 16, v), "examples must hold at least one PretrainExample; "
                                           "got an empty list"),
    (lambda v: pad_bert_inputs([PretrainExample(**_EX | {"pred_positions": [4]})], 16, v),
     r"example 0's pred_positions must point at its 3 tokens, .*got pred_positions \[4\]"),
    (lambda v: pad_bert_inputs([PretrainExample(**_EX | {"mlm_labels": [6, 7]})], 16, v),
     r"with one of mlm_labels each; got pred_positions \[1\], mlm_labels \[6, 7\]"),
    (lambda v: make_pretrain_data(_PARAS, v, 16, seed=0.5), "seed must be an integer"),
    (lambda v: make_pretrain_data(_PARAS, v, 16, seed=0, rounds=0), "rounds must be a positive"),
])
def test_bad_pretraining_data_is_named(call, message, vocab):
    """Before: raw torch errors, or floats cut to ints."""
    with pytest.raises(ValueError, match=message):
        call(vocab)


def test_the_result_of_make_nsp_pairs_is_taken_whole(vocab):
    pairs = make_nsp_pairs(_PARAS, 16, seed=0)
    assert make_pretrain_examples(pairs, vocab, seed=1) == \
        make_pretrain_examples(pairs.pairs, vocab, seed=1)


@pytest.mark.parametrize(("call", "why"), [
    (lambda v: make_nsp_pairs([[["the", "cat"]], [["a", "dog"]]], 16, seed=0),
     "^paragraphs give no NSP pair: every paragraph has one sentence"),
    (lambda v: make_nsp_pairs([[["the"] * 9, ["cat"] * 9], [["a"], ["dog"]]], 8,
                              overflow="drop", seed=0),
     r"^paragraphs give no NSP pair: all 2 pairs are longer than max_len and overflow='drop'"),
    (lambda v: make_nsp_pairs([[[], []], [[], []]], 16, seed=0),
     "^paragraphs give no NSP pair: every pair of consecutive sentences holds an empty "),
    (lambda v: make_pretrain_data([[["the", "cat"]], [["a", "dog"]]], v, 16, seed=0),
     "^paragraphs give no NSP pair: every paragraph has one sentence"),
    (lambda v: make_pretrain_data([*_PARAS, [["sat"]], [["on"]]], v, 16, seed=0,
                                  groups=["en", "en", "zh", "zh"]),
     "^group 'zh': paragraphs give no NSP pair: every paragraph has one sentence"),
])
def test_paragraphs_that_give_no_pair_are_refused_with_the_reason(vocab, call, why):
    """Before: an empty NSPPairs and an empty PretrainBatch, without a word."""
    with pytest.raises(ValueError, match=why):
        call(vocab)


@pytest.mark.parametrize(("call", "message"), [
    (lambda v: make_nsp_pairs([[["the cat"], ["sat"]], [["a"], ["dog"]]], 16, seed=0),
     r"paragraphs\[0\]\[0\]\[0\] must be one token"),
    (lambda v: make_pretrain_data([[["the"], [""]], [["a"], ["dog"]]], v, 16, seed=0),
     r"paragraphs\[0\]\[1\]\[0\] must be one token"),
])
def test_tokens_with_spaces_or_nothing_are_named(vocab, call, message):
    """Before: a token 'the cat' became <unk>."""
    with pytest.raises(ValueError, match=message):
        call(vocab)


@pytest.mark.parametrize(("call", "message"), [
    (lambda v: pad_bert_inputs([PretrainExample(**_EX)], 10**12, v),
     # 24 bytes a token slot (two int64 tensors and a list), 20 a prediction slot
     r"padding 1 examples to max_len=1,000,000,000,000 and max_preds=150,000,000,000 would "
     r"need 25,145.7 GiB of memory \(at most 2 GiB\)"),
    (lambda v: pad_bert_inputs([PretrainExample(**_EX)] * 100, 10**9, v),
     "would need 2,514.6 GiB"),
    (lambda v: pad_bert_inputs([PretrainExample(**_EX)], 16, v, max_preds=10**12),
     r"max_preds must be an integer in \[1, 16\] \(at most one per token"),
    (lambda v: make_pretrain_data(_PARAS, v, 10**12, seed=0), "max_len=1,000,000,000,000 would"),
    (lambda v: make_pretrain_data(_PARAS, v, 16, seed=0, rounds=10**12),
     r"2,000,000,000,000 examples \(1000000000000 rounds\) of max_len=16 would need"),
])
def test_sizes_that_cannot_fit_are_refused_before_allocating(vocab, call, message):
    """Before: MemoryError from the allocator, or (rounds) a loop of 10**12 rounds."""
    with within(10), pytest.raises(ValueError, match=message):
        call(vocab)

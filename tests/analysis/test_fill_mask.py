"""fill_mask: the model's top guesses at the masked positions."""

import dataclasses

import pytest
import torch

from bertlib import load_small_bert, mask_tokens
from bertlib.analysis.fill_mask import fill_mask
from bertlib.inputs import encode_pair
from bertlib.masking import MaskedTokens
from bertlib.text.vocab import Vocab


@pytest.fixture(scope="module")
def small():
    return load_small_bert()


def test_guesses_are_the_model_distribution_at_each_masked_position(small):
    model, tokenizer = small
    vocab = tokenizer.vocab
    enc = encode_pair(tokenizer, "When Peter woke up on Friday, it was raining hard.",
                      "The plan to walk in the park had to wait.")
    masked = mask_tokens(enc.ids, vocab, seed=4, mask_ratio=0.3)
    guesses = fill_mask(model, vocab, enc, masked, k=3)
    # Reference: scores at every position of the sequence, then the rows of the masked ones.
    T = len(enc.ids)
    with torch.no_grad():
        _, every, _ = model(torch.tensor([masked.masked_ids]), torch.tensor([enc.segments]),
                            None, torch.arange(T)[None])
    assert [g.position for g in guesses] == masked.positions
    for g in guesses:
        p = every[0, g.position].softmax(-1)
        best = p.argsort(descending=True)[:3].tolist()
        assert g.tokens == vocab.to_tokens(best)
        assert g.probabilities == pytest.approx(p[best].tolist(), rel=1e-5)
        assert g.original == vocab.to_tokens(enc.ids[g.position])
        assert g.rank == (g.tokens.index(g.original) if g.original in g.tokens else None)
    assert not model.training


def test_the_pretrained_model_finds_most_masked_words_of_a_corpus_sentence(small):
    """The shipped model's held-out MLM top-1 accuracy is 0.76; on a sentence of its corpus,
    over many draws, the original should be in its top 5 far more often than not."""
    model, tokenizer = small
    enc = encode_pair(tokenizer, "后来小明抓住机会，为球队得了分。")
    found = total = 0
    for seed in range(30):
        masked = mask_tokens(enc.ids, tokenizer.vocab, seed=seed)
        guesses = fill_mask(model, tokenizer.vocab, enc, masked)
        found += sum(g.rank is not None for g in guesses)
        total += len(guesses)
    assert found / total > 0.6


def test_bad_fill_mask_input_is_named(small):
    model, tokenizer = small
    enc = encode_pair(tokenizer, "It was raining hard.")
    masked = mask_tokens(enc.ids, tokenizer.vocab, seed=0)
    for k in (0, len(tokenizer.vocab) + 1, 10**9):  # the model guesses among its vocabulary
        with pytest.raises(ValueError, match=rf"k must be an integer in \[1, "
                                             rf"{len(tokenizer.vocab)}\].*got {k}"):
            fill_mask(model, tokenizer.vocab, enc, masked, k=k)
    other = encode_pair(tokenizer, "It was raining hard on Friday.")
    with pytest.raises(ValueError, match="masked has 7 tokens but enc has 9"):
        fill_mask(model, tokenizer.vocab, other, masked)
    past = dataclasses.replace(masked, positions=[99])
    with pytest.raises(ValueError, match=r"masked.positions\[i\] must be an integer in \[0, 6\]"):
        fill_mask(model, tokenizer.vocab, enc, past)


def test_every_argument_of_the_wrong_kind_is_named(small):
    model, tokenizer = small
    enc = encode_pair(tokenizer, "It was raining hard.")
    masked = mask_tokens(enc.ids, tokenizer.vocab, seed=0)
    with pytest.raises(ValueError, match="vocab must be a bertlib Vocab"):
        fill_mask(model, tokenizer, enc, masked)  # the tokenizer, not its vocab
    assert fill_mask(model, tokenizer.vocab, enc, MaskedTokens(list(enc.ids), [], [], [], 0)) == []


def test_a_vocab_the_model_was_not_trained_with_is_refused_up_front(small):
    model, tokenizer = small
    enc = encode_pair(tokenizer, "It was raining hard.")
    masked = mask_tokens(enc.ids, tokenizer.vocab, seed=0)
    other = Vocab(["a", "b"])  # with the reserved tokens <pad>, <unk>, ...: 7 in all
    with pytest.raises(ValueError, match=rf"vocab has {len(other)} tokens but the model's "
                                         rf"vocab_size is {model.config.vocab_size}; give the "
                                         "model the tokenizer it was trained with"):
        fill_mask(model, other, enc, masked)

import itertools

import numpy as np
import pytest
import torch
from helpers import within

from bertlib import HF_SPECIAL_TOKENS, SpecialTokens, Vocab


def test_reserved_tokens_come_first_and_pad_is_zero():
    vocab = Vocab([["b", "a", "b"], ["c", "b", "a"]])
    assert vocab.idx_to_token[:5] == ["<pad>", "<unk>", "<cls>", "<sep>", "<mask>"]
    assert vocab.pad_id == 0
    # then by falling frequency: b (3), a (2), c (1)
    assert vocab.idx_to_token[5:] == ["b", "a", "c"]
    assert vocab.word_ids == [5, 6, 7]
    assert vocab.structural_ids == {0, 2, 3, 4}


def test_round_trip_and_unknown_tokens():
    vocab = Vocab(["x", "y"])
    ids = vocab[["<cls>", "x", "zzz", "<sep>"]]
    assert ids == [2, vocab.token_to_idx["x"], vocab.unk_id, 3]
    assert vocab.to_tokens(ids) == ["<cls>", "x", "<unk>", "<sep>"]


def test_min_freq_drops_rare_tokens():
    vocab = Vocab(["a", "a", "b"], min_freq=2)
    assert "a" in vocab.token_to_idx
    assert "b" not in vocab.token_to_idx


def test_from_list_keeps_checkpoint_order_and_spelling():
    tokens = ["[PAD]", "hello", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "world"]
    vocab = Vocab.from_list(tokens, HF_SPECIAL_TOKENS)
    assert vocab["world"] == 6
    assert (vocab.pad_id, vocab.unk_id, vocab.cls_id, vocab.sep_id, vocab.mask_id) == (
        0, 2, 3, 4, 5)
    assert vocab.word_ids == [1, 6]


def test_bad_vocab_input():
    with pytest.raises(ValueError, match="lacks the reserved tokens"):
        Vocab.from_list(["[PAD]", "a"], HF_SPECIAL_TOKENS)
    with pytest.raises(ValueError, match="'a' appears twice"):
        Vocab.from_list(["<pad>", "<unk>", "<cls>", "<sep>", "<mask>", "a", "a"])
    with pytest.raises(ValueError, match=r"token id must be in \[0, 5\]; got 6"):
        Vocab(["a"]).to_tokens([6])


@pytest.mark.parametrize("token", ["a b", "", "a\tb", "\u3000"])
def test_from_list_refuses_what_vocab_refuses(token):
    """A checkpoint's token list holds tokens as Vocab makes them: one word piece each."""
    with pytest.raises(ValueError, match=r"idx_to_token\[5\] must be one token, non-empty and "
                                         "without spaces"):
        Vocab.from_list(["<pad>", "<unk>", "<cls>", "<sep>", "<mask>", token])
    with pytest.raises(ValueError, match="must be one token, non-empty and without spaces"):
        Vocab([[token]])


WORDS = [["the", "cat"], ["the", "dog"]]


@pytest.mark.parametrize(("make", "message"), [
    (lambda: Vocab("the cat sat"), "tokens must be a list of token strings .*not a text"),
    (lambda: Vocab(["the cat", "a dog"]), r"tokens\[0\] must be one token.*'the cat'"),
    (lambda: Vocab([1, 2, 3]), r"tokens\[0\] must be a list of token strings.*got 1"),
    (lambda: Vocab([["a", None]]), r"tokens\[0\]\[1\] must be a list of token strings"),
    (lambda: Vocab([""]), r"tokens\[0\] must be one token, non-empty"),
    (lambda: Vocab(WORDS, min_freq=0), "min_freq must be a positive integer; got 0"),
    (lambda: Vocab(WORDS, min_freq=-1), "min_freq must be a positive integer; got -1"),
    (lambda: Vocab(WORDS, min_freq=1.5), "min_freq must be a positive integer; got 1.5"),
    (lambda: Vocab(WORDS, min_freq=float("nan")), "min_freq must be a positive integer; got nan"),
    (lambda: Vocab(WORDS, min_freq="2"), "min_freq must be a positive integer; got '2'"),
    (lambda: Vocab(WORDS, specials=("<pad>", "<unk>", "<cls>", "<sep>", "<mask>")),
     "specials must be a SpecialTokens"),
    (lambda: Vocab.from_list(["<pad>", "<unk>", "<cls>", "<sep>", "<mask>", 5, None]),
     "idx_to_token must be a list of token strings"),
    (lambda: Vocab.from_list("<pad><unk>"), "idx_to_token must be a list of token strings, not"),
    (lambda: SpecialTokens(pad=""), "SpecialTokens.pad must be a non-empty string without spaces"),
    (lambda: SpecialTokens(cls=5), "SpecialTokens.cls must be a non-empty .*; got 5"),
    (lambda: SpecialTokens(pad="<sep>"), "SpecialTokens must be five different strings"),
])
def test_bad_construction_is_named(make, message):
    with pytest.raises(ValueError, match=message):
        make()


@pytest.mark.parametrize(("indices", "message"), [
    ([1.7, 2.9], r"indices\[0\] must be an integer token id; got 1.7"),
    (True, "indices must be an integer token id or a list of them; got True"),
    (1.7, "indices must be an integer token id or a list of them; got 1.7"),
    ("abc", "indices must be an integer token id or a list of them; got 'abc'"),
    ([[1, 2]], r"indices\[0\] must be an integer token id; got \[1, 2\]"),
    (torch.tensor([1.5]), r"indices\[0\] must be an integer token id"),
    (torch.tensor([[1, 2]]), "indices must be an integer token id or a list"),
    ([True], r"indices\[0\] must be an integer token id; got True"),
])
def test_to_tokens_takes_integer_ids_only(indices, message):
    with pytest.raises(ValueError, match=message):
        Vocab(WORDS).to_tokens(indices)


def test_to_tokens_takes_numpy_and_torch_integers():
    vocab = Vocab(WORDS)
    assert vocab.to_tokens(np.int64(5)) == vocab.to_tokens(torch.tensor(5)) == "the"
    assert vocab.to_tokens(torch.tensor([2, 5])) == vocab.to_tokens(np.array([2, 5])) == [
        "<cls>", "the"]


@pytest.mark.parametrize("key", [5, None, b"the", [1], ["the", 2]])
def test_getitem_takes_tokens_only(key):
    with pytest.raises(ValueError, match=r"vocab\[...\] must be a list of token strings"):
        Vocab(WORDS)[key]


@pytest.mark.parametrize(("call", "message"), [
    (lambda v: v.to_tokens(itertools.count()), "indices must be an integer token id or a list"),
    (lambda v: v.to_tokens(iter([5, 6])), "an iterator, generator or set is refused"),
    (lambda v: v.to_tokens({5, 6}), "an iterator, generator or set is refused"),
    (lambda v: v.to_tokens({5: 6}), "indices must be an integer token id or a list"),
    (lambda v: Vocab(itertools.repeat("the")), "tokens must be a list of token strings"),
    (lambda v: Vocab(t for t in WORDS), "not a text, an iterator or a set"),
    (lambda v: Vocab([iter(WORDS)]), r"tokens\[0\] must be a list of token strings"),
])
def test_an_iterator_is_refused_not_read_forever(call, message):
    with within(5), pytest.raises(ValueError, match=message):
        call(Vocab(WORDS))


def test_nested_lists_of_tokens_are_counted():
    assert Vocab([[[["the", "cat"]]]]).idx_to_token[5:] == ["cat", "the"]


@pytest.mark.parametrize("tokens", [["the", ["cat"], "a b"], [["the"], "", ["cat"]]])
def test_a_token_beside_lists_is_checked_too(tokens):
    with pytest.raises(ValueError, match=r"tokens\[\d\] must be one token, non-empty and "
                                         "without spaces"):
        Vocab(tokens)


def test_special_tokens_are_single_tokens():
    with pytest.raises(ValueError, match="SpecialTokens.mask must be a non-empty string without "
                                         "spaces; got '<my mask>'"):
        SpecialTokens(mask="<my mask>")

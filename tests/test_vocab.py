import pytest

from bertlib import HF_SPECIAL_TOKENS, Vocab


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

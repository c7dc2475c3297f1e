"""Which tokens make one word: WordPiece pieces and Chinese words from jieba."""

import pytest

from bertlib import load_small_bert, mask_tokens
from bertlib.text.words import segment, word_ids


@pytest.fixture(scope="module")
def tokenizer():
    return load_small_bert()[1]


def test_segment_cuts_chinese_into_words_and_keeps_every_character():
    text = "我买了去北京的车票。"
    words = segment(text)
    assert "".join(words) == text
    assert "北京" in words and "车票" in words  # words any reader of Chinese sees


def test_chinese_characters_of_one_word_share_an_id(tokenizer):
    text = "我买了去北京的车票"
    tokens = tokenizer.tokenize(text)
    assert len(tokens) == len(text)  # one token per character
    ids = word_ids(tokenizer, text, ["我", "买", "了", "去", "北京", "的", "车票"])
    assert ids == [0, 1, 2, 3, 4, 4, 5, 6, 6]


def test_wordpiece_pieces_join_the_word_before_them(tokenizer):
    text = "raining unbelievable"
    tokens = tokenizer.tokenize(text)
    ids = word_ids(tokenizer, text)
    assert len(ids) == len(tokens)
    for i, token in enumerate(tokens):
        assert (i > 0 and ids[i] == ids[i - 1]) == token.startswith("##")
    assert ids[-1] == 1  # two words


def test_the_default_segmentation_is_jiebas(tokenizer):
    text = "后来小明抓住机会，为球队得了分。"
    assert word_ids(tokenizer, text) == word_ids(tokenizer, text, segment(text))


def test_whole_word_masking_of_a_chinese_sentence_masks_whole_words(tokenizer):
    text = "我买了去北京的车票"
    vocab = tokenizer.vocab
    ids = [vocab.cls_id, *vocab[tokenizer.tokenize(text)], vocab.sep_id]
    words = [None, *word_ids(tokenizer, text), None]
    masked_whole = set()
    for seed in range(40):
        out = mask_tokens(ids, vocab, seed=seed, mask_ratio=0.3, words=words)
        masked_whole.add(tuple(out.positions))
        for p in out.positions:  # 北 is never predicted without 京, nor 车 without 票
            assert all(q in out.positions for q, w in enumerate(words) if w == words[p])
    assert any({5, 6} <= set(chosen) for chosen in masked_whole)  # 北京, whole


@pytest.mark.parametrize(("text", "words", "message"), [
    (["我"], None, "text must be a str"),
    ("车票", "车票", "words must be a list of words"),
    ("车票", ["车"], "words must be a list of words .str. that, joined, give text back"),
])
def test_bad_word_input_is_named(tokenizer, text, words, message):
    with pytest.raises(ValueError, match=message):
        word_ids(tokenizer, text, words)


@pytest.mark.parametrize(("call", "message"), [
    (lambda t: word_ids(None, "车票"), "tokenizer must be a bertlib WordPieceTokenizer"),
    (lambda t: word_ids(t, "车票", iter(["车", "票"])), "words must be a list of words"),
    (lambda t: word_ids(t, "12", [1, 2]), r"words must be a list of words \(str\)"),
    (lambda t: word_ids(t, "车\ud800票"), "text is not valid text: the character"),
    (lambda t: word_ids(t, "车\ud800票", ["车\ud800票"]), "text is not valid text"),
    (lambda t: segment("车\ud800票"), "text is not valid text"),
])
def test_bad_word_input_is_named_not_raised_from_inside(tokenizer, call, message):
    """Before: AttributeError ('backend'), IndexError, TypeError from str.join, and
    TextInputSequence must be str from tokenizers."""
    with pytest.raises(ValueError, match=message):
        call(tokenizer)

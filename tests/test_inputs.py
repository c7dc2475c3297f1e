"""From text to the model's input: one path for every caller."""

import pytest
import torch

from bertlib import (
    BERTModel,
    Vocab,
    eval_mode,
    get_bert_encoding,
    get_tokens_and_segments,
    load_small_bert,
)
from bertlib.inputs import EmptyTextError, encode_pair, stack_inputs, truncate_pair
from bertlib.support.checks import InputError


def test_get_tokens_and_segments_pair_and_single():
    tokens, segments = get_tokens_and_segments(["a", "b"], ["c"])
    assert tokens == ["<cls>", "a", "b", "<sep>", "c", "<sep>"]
    assert segments == [0, 0, 0, 0, 1, 1]
    tokens, segments = get_tokens_and_segments(["a"])
    assert tokens == ["<cls>", "a", "<sep>"]
    assert segments == [0, 0, 0]
    tokens, _ = get_tokens_and_segments(["a"], cls_token="[CLS]", sep_token="[SEP]")
    assert tokens == ["[CLS]", "a", "[SEP]"]


def test_get_bert_encoding_is_deterministic_and_restores_mode():
    model, tokenizer = load_small_bert()
    model.train()
    a = get_bert_encoding(model, tokenizer, "the train was crowded .", "她 坐 火 车 。")
    b = get_bert_encoding(model, tokenizer, "the train was crowded .", "她 坐 火 车 。")
    assert model.training
    assert a.shape == (1, 1 + 5 + 1 + 5 + 1, model.config.num_hiddens)
    torch.testing.assert_close(a, b, rtol=0, atol=0)
    ids = tokenizer.vocab[["<cls>", "the", "train", "was", "crowded", ".", "<sep>"]]
    reference = model.eval().encoder(torch.tensor([ids]), torch.zeros(1, 7, dtype=torch.long))
    torch.testing.assert_close(get_bert_encoding(model, tokenizer, "The train was crowded."),
                               reference)


def test_encode_pair_builds_the_chapter_sequence_from_text():
    _, tokenizer = load_small_bert()
    enc = encode_pair(tokenizer, "The train was crowded.", "she took a taxi")
    a, b = tokenizer.tokenize("The train was crowded."), tokenizer.tokenize("she took a taxi")
    assert enc.tokens == ["<cls>", *a, "<sep>", *b, "<sep>"]
    assert enc.segments == [0] * (len(a) + 2) + [1] * (len(b) + 1)
    assert enc.ids == tokenizer.vocab[enc.tokens]
    assert enc.boundary == len(a) + 2 and enc.total == len(enc.tokens)
    assert not enc.truncated and enc.unknown == 0
    tokens, segments = enc.tensors()
    assert tokens.tolist() == [enc.ids] and segments.tolist() == [enc.segments]
    # A blank B is no B.
    single = encode_pair(tokenizer, "The train was crowded.", "  ")
    assert single.tokens == ["<cls>", *a, "<sep>"] and single.boundary is None


def test_encode_pair_truncates_the_longer_sentence_and_counts_unknowns():
    _, tokenizer = load_small_bert()
    a, b = "the train was crowded . " * 4, "she took a taxi"
    enc = encode_pair(tokenizer, a, b, max_len=12)
    pieces_a, pieces_b = tokenizer.tokenize(a), tokenizer.tokenize(b)
    assert len(enc.tokens) == 12 and enc.truncated
    assert enc.total == len(pieces_a) + len(pieces_b) + 3
    kept_a, kept_b = truncate_pair(pieces_a, pieces_b, 9)
    assert enc.tokens == ["<cls>", *kept_a, "<sep>", *kept_b, "<sep>"]
    alone = encode_pair(tokenizer, a, max_len=5)
    assert alone.tokens == ["<cls>", *pieces_a[:3], "<sep>"]
    unk = encode_pair(tokenizer, "the ☃ train ☃")
    assert unk.unknown == unk.tokens.count("<unk>") == 2


def test_empty_texts_are_named():
    _, tokenizer = load_small_bert()
    with pytest.raises(EmptyTextError, match="text_a") as err:
        encode_pair(tokenizer, "   ", "b")
    assert err.value.which == "a" and isinstance(err.value, ValueError)
    with pytest.raises(EmptyTextError, match="text_b"):
        encode_pair(tokenizer, "a train", "", require_b=True)


def test_stack_inputs_pads_to_the_longest_and_gives_valid_lens():
    _, tokenizer = load_small_bert()
    long, short = (encode_pair(tokenizer, t) for t in ("the train was crowded", "the train"))
    tokens, segments, valid_lens = stack_inputs([long, short], pad_id=0)
    T = len(long.ids)
    assert tokens.shape == segments.shape == (2, T)
    assert valid_lens.tolist() == [T, len(short.ids)]
    assert tokens[1].tolist() == short.ids + [0] * (T - len(short.ids))


@pytest.mark.parametrize("training", [True, False])
def test_eval_mode_switches_dropout_and_gradients_off_and_restores_the_mode(training):
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.5)).train(training)
    x = torch.ones(1, 4)
    with eval_mode(model):
        assert not model.training and not torch.is_grad_enabled()
        torch.testing.assert_close(model(x), model(x), rtol=0, atol=0)
    assert model.training is training and torch.is_grad_enabled()
    with pytest.raises(RuntimeError), eval_mode(model):
        raise RuntimeError  # restored on the way out of an error too
    assert model.training is training


def test_truncation_keeps_the_beginning_of_each_sentence():
    a, b = [f"a{i}" for i in range(10)], ["b0", "b1", "b2"]
    assert truncate_pair(a, b, 7) == (a[:4], b)  # the longer one loses its end first
    assert truncate_pair(a, b, 4) == (a[:2], b[:2])  # then both, alternately
    assert truncate_pair(a, b, 20) == (a, b)


def test_get_bert_encoding_gives_sentence_b_segment_one():
    model, tokenizer = load_small_bert()
    a, b = tokenizer.tokenize("the train was crowded ."), tokenizer.tokenize("she took a taxi")
    ids = tokenizer.vocab[["<cls>", *a, "<sep>", *b, "<sep>"]]
    segments = [0] * (len(a) + 2) + [1] * (len(b) + 1)
    with eval_mode(model):
        reference = model.encoder(torch.tensor([ids]), torch.tensor([segments]))
        all_zero = model.encoder(torch.tensor([ids]), torch.zeros(1, len(ids), dtype=torch.long))
    encoded = get_bert_encoding(model, tokenizer, "the train was crowded .", "she took a taxi")
    torch.testing.assert_close(encoded, reference)
    assert not torch.allclose(encoded, all_zero)


@pytest.fixture(scope="module")
def small_bert():
    return load_small_bert()


@pytest.mark.parametrize(("call", "message"), [
    (lambda m, t: get_bert_encoding(m, t, None), "text_a must be a string; got NoneType None"),
    (lambda m, t: get_bert_encoding(m, t, 123), "text_a must be a string; got int 123"),
    (lambda m, t: get_bert_encoding(m, t, ["the", "cat"]), "text_a must be a string"),
    (lambda m, t: get_bert_encoding(m, t, "x", 42), "text_b must be a string; got int 42"),
    (lambda m, t: get_bert_encoding(t, m, "x"), "model must be a BERTModel .*; got WordPieceToken"),
    (lambda m, t: get_bert_encoding(m, m, "x"), "tokenizer must be a bertlib WordPieceTokenizer"),
    (lambda m, t: encode_pair(t, "x", max_len=2.5), r"max_len must be an integer >= 3"),
])
def test_bad_text_inputs_are_named(call, message, small_bert):
    """Before: TypeErrors and AttributeErrors from deep inside (text_b.strip, model.training)."""
    with pytest.raises(ValueError, match=message):
        call(*small_bert)


@pytest.mark.parametrize(("tokens_a", "tokens_b", "specials", "name", "bad"), [
    (["the cat"], None, {}, r"tokens_a\[0\]", "'the cat'"),
    (["the", ""], None, {}, r"tokens_a\[1\]", "''"),
    (["the"], ["sat", "on\tit"], {}, r"tokens_b\[1\]", r"'on\\tit'"),
    (["the"], ["\u3000"], {}, r"tokens_b\[0\]", r"'\\u3000'"),
])
def test_tokens_holding_spaces_or_nothing_are_refused_as_vocab_refuses_them(
        tokens_a, tokens_b, specials, name, bad):
    """One check for both: before, get_tokens_and_segments built ['<cls>', 'the cat', ...]."""
    message = f"{name} must be one token, non-empty and without spaces: split the text " \
              f"first; got {bad}"
    with pytest.raises(ValueError, match=message):
        get_tokens_and_segments(tokens_a, tokens_b, **specials)
    with pytest.raises(ValueError, match="must be one token, non-empty and without spaces: "
                                         f"split the text first; got {bad}"):
        Vocab([*tokens_a, *(tokens_b or []), *specials.values()])


def test_max_len_keeps_a_token_of_each_text(small_bert):
    """max_len=4 cut sentence A away silently; max_len=1 raised IndexError from list.pop."""
    _, tokenizer = small_bert
    for max_len, b, least in [(4, "a dog", 5), (1, "a dog", 5), (2, None, 3), (4, "  ", 3)]:
        message = fr"max_len must be an integer >= {least} \(<cls>, <sep> and a token of " \
                  fr"each text\); got {max_len}"
        if max_len < least:
            with pytest.raises(ValueError, match=message):
                encode_pair(tokenizer, "the cat sat", b, max_len=max_len)
        else:
            assert encode_pair(tokenizer, "the cat sat", b, max_len=max_len).tokens == [
                "<cls>", "the", "cat", "<sep>"]
    assert encode_pair(tokenizer, "the cat sat", "a dog", max_len=5).tokens == [
        "<cls>", "the", "<sep>", "a", "<sep>"]


@pytest.mark.parametrize(("text_a", "text_b", "name"), [
    ("the \ud800 cat", None, "text_a"), ("the cat", "\udbff", "text_b")])
def test_a_lone_surrogate_is_an_input_error(small_bert, text_a, text_b, name):
    """Before: TypeError: TextInputSequence must be str, from inside tokenizers."""
    model, tokenizer = small_bert
    for call in (lambda: encode_pair(tokenizer, text_a, text_b),
                 lambda: get_bert_encoding(model, tokenizer, text_a, text_b)):
        with pytest.raises(InputError, match=f"{name} is not valid text") as err:
            call()
        assert err.value.key == "error_not_utf8" and name in err.value.message("zh")


@pytest.mark.parametrize("device", ["banana", "cuda", "mps", 0, True, "meta"])
def test_encoded_inputs_go_only_to_a_device_this_machine_has(device, small_bert, monkeypatch):
    """Before: torch's errors ("Expected one of cpu, cuda, ...", "Torch not compiled with
    CUDA enabled")."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    encoded = encode_pair(small_bert[1], "the train")
    with pytest.raises(ValueError, match=r"^device must be a device this machine has, one of "
                                         r"\['cpu'\]"):
        encoded.tensors(device)
    assert [t.device.type for t in encoded.tensors("cpu")] == ["cpu", "cpu"]


def test_get_bert_encoding_wants_the_tokenizer_the_model_was_trained_with(small_bert):
    """Before: "tokens must be token ids in [0, 49]; got 606", which names neither."""
    _, tokenizer = small_bert
    other = BERTModel(vocab_size=50, num_hiddens=16, ffn_num_hiddens=32, num_heads=2,
                      num_blks=1, dropout=0.0, max_len=32)
    with pytest.raises(ValueError, match=rf"tokenizer has {len(tokenizer.vocab)} tokens but the "
                                         "model's vocab_size is 50; give the model the tokenizer"):
        get_bert_encoding(other, tokenizer, "the cat sat")
    with pytest.raises(ValueError, match="tokenizer must be a bertlib WordPieceTokenizer"):
        get_bert_encoding(other, "a tokenizer", "the cat sat")

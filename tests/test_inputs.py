"""From text to the model's input: one path for every caller."""

import torch

from bertlib import get_bert_encoding, get_tokens_and_segments, load_small_bert


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

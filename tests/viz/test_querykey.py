"""The query-key view: one query's attention in one head, step by step."""

import numpy as np
import pytest
import torch

from bertlib import load_small_bert
from bertlib.i18n import text
from bertlib.model import BERTModel, key_padding_mask
from bertlib.viz import AttentionWidget
from bertlib.viz.querykey import plot_query_key, query_key_steps


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    return BERTModel(30, 16, 32, 2, 2, 0.0, max_len=12).eval()


def block_inputs(model, tokens, segments, valid_lens):
    """What each block reads, by BERTEncoder.forward written out."""
    mask = key_padding_mask(valid_lens, tokens.shape[1])
    X, inputs = model.encoder.embed(tokens, segments), []
    for blk in model.encoder.blks:
        inputs.append(X)
        X, _ = blk(X, mask)
    return inputs, mask


def test_the_steps_give_the_model_attention_and_output(model):
    tokens = torch.tensor([[2, 5, 6, 7, 3, 8, 9, 3, 0, 0]])
    segments = torch.tensor([[0, 0, 0, 0, 0, 1, 1, 1, 0, 0]])
    valid_lens = torch.tensor([8])
    with torch.no_grad():
        _, attentions = model.encoder(tokens, segments, valid_lens, return_attention=True)
        inputs, mask = block_inputs(model, tokens, segments, valid_lens)
    names = [str(t) for t in tokens[0].tolist()]
    for layer, blk in enumerate(model.encoder.blks):
        for query in (0, 4, 7):
            steps = [query_key_steps(blk.attention, inputs[layer][0], names, head, query,
                                     valid_len=8) for head in range(2)]
            for head, s in enumerate(steps):
                np.testing.assert_allclose(s.weights, attentions[layer][0, head, query],
                                           atol=1e-6)
                assert s.mask.tolist() == [True] * 8 + [False] * 2
                assert (s.weights[8:] == 0).all()
                real = np.exp(s.scores[:8] - s.scores[:8].max())
                np.testing.assert_allclose(s.weights[:8], real / real.sum(), rtol=1e-5)
            # The heads' outputs, side by side and through W_o, are the attention's output.
            joined = torch.tensor(np.concatenate([s.output for s in steps]))
            with torch.no_grad():
                expected = blk.attention(inputs[layer], mask)[0][0, query]
                torch.testing.assert_close(blk.attention.W_o(joined), expected, atol=1e-5,
                                           rtol=1e-5)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"head": 2}, r"head must be in \[0, 1\]; got 2"),
    ({"query": 10}, r"query must be a token index in \[0, 9\]; got 10"),
    ({"tokens": ["a"]}, "tokens must name the 10 positions of X; got 1"),
])
def test_bad_steps_arguments_are_named(model, kwargs, message):
    args = {"attention": model.encoder.blks[0].attention, "X": torch.zeros(10, 16),
            "tokens": list("abcdefghij"), "head": 0, "query": 0, **kwargs}
    with pytest.raises(ValueError, match=message):
        query_key_steps(**args)


def test_the_figure_speaks_the_language(model):
    steps = query_key_steps(model.encoder.blks[1].attention, torch.randn(10, 16),
                            list("abcdefghij"), 1, 3)
    fig = plot_query_key(steps, 1, "zh")
    assert fig._suptitle.get_text() == text("qk_title", "zh", layer=1, head=1, token="d")


def test_the_widget_shows_one_query_step_by_step():
    model, tokenizer = load_small_bert()
    w = AttentionWidget(model, tokenizer, "zh")
    w.view.value = "querykey"
    w.query.value = 2
    assert w.steps.query == 2 and w.steps.head == 0
    np.testing.assert_allclose(w.steps.weights, w.attentions[0, 0, 2], atol=1e-6)
    assert w.steps_image.layout.display is None and w.image.layout.display == "none"
    w.layer.value, w.head.value = 1, 1
    np.testing.assert_allclose(w.steps.weights, w.attentions[1, 1, 2], atol=1e-6)
    assert w.shown_figure() is w.steps_plot
    w.head.value = -1  # the mean over heads has no single query and key
    assert w.message.endswith(text("qk_mean_head", "zh"))

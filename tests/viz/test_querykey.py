"""The query-key view: one query's attention in one head, step by step."""

import itertools
import math
import threading

import numpy as np
import pytest
import torch

from bertlib import load_small_bert
from bertlib.model import BERTModel, key_padding_mask
from bertlib.support.i18n import set_language, text
from bertlib.viz import AttentionWidget
from bertlib.viz._widget import InputNotice
from bertlib.viz.querykey import (
    QueryKeyPlot,
    plot_query_key,
    query_key_steps,
    temperature_stops,
)


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    return BERTModel(30, 16, 32, 2, 2, 0.0, max_len=12).eval()


@pytest.fixture(scope="module")
def small():
    return load_small_bert()


def block_inputs(model, tokens, segments, valid_lens):
    """What each block reads, by BERTEncoder.forward written out."""
    mask = key_padding_mask(valid_lens, tokens.shape[1])
    X, inputs = model.encoder.embed(tokens, segments), []
    for blk in model.encoder.blks:
        inputs.append(X)
        X, _ = blk(X, mask)
    return inputs, mask


def independent_steps(attention, X, head, query, valid_len, temperature=None):
    """softmax(q·k/τ + mask) and weights @ v for one head, from the weights themselves; τ = √d
    unless ``temperature`` says otherwise."""
    d = X.shape[1] // attention.num_heads
    cols = slice(head * d, (head + 1) * d)
    q, k, v = (torch.nn.functional.linear(X, W.weight, W.bias)[:, cols]
               for W in (attention.W_q, attention.W_k, attention.W_v))
    scores = (q[query] * k).sum(-1) / (d ** 0.5 if temperature is None else temperature)
    mask = torch.where(torch.arange(len(X)) < valid_len, 0.0, -math.inf)
    weights = torch.softmax(scores + mask, dim=0)
    return scores, weights, v, (weights[:, None] * v).sum(0)


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


@pytest.mark.parametrize("valid_len", [10, 7, 1])
def test_each_step_on_a_padded_input_is_the_formula(model, valid_len):
    X = torch.randn(10, 16, generator=torch.Generator().manual_seed(valid_len))
    attention = model.encoder.blks[1].attention
    for head, query in ((0, 0), (1, valid_len - 1)):
        s = query_key_steps(attention, X, list("abcdefghij"), head, query, valid_len)
        scores, weights, values, output = (t.detach().numpy() for t in independent_steps(
            attention, X, head, query, valid_len))
        np.testing.assert_allclose(s.scores, scores, rtol=1e-5, atol=1e-6)  # padded keys too
        np.testing.assert_allclose(s.weights, weights, rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(s.values, values, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(s.output, output, rtol=1e-5, atol=1e-6)
        assert s.mask.tolist() == [i < valid_len for i in range(10)]
        assert (s.weights[valid_len:] == 0).all() and np.isfinite(s.scores).all()
        assert s.weights.sum() == pytest.approx(1, abs=1e-6)


def entropy(weights: np.ndarray) -> float:
    """-Σ w log w over the keys with weight (0 log 0 = 0), in nats."""
    w = weights[weights > 0].astype(np.float64)
    return float(-(w * np.log(w)).sum())


@pytest.mark.parametrize("valid_len", [10, 6])
def test_the_default_temperature_is_the_model_own_and_one_is_no_scaling(model, valid_len):
    X = torch.randn(10, 16, generator=torch.Generator().manual_seed(3))
    attention = model.encoder.blks[0].attention
    mask = key_padding_mask(torch.tensor([valid_len]), 10)
    with torch.no_grad():  # the model's own weights, from its attention's forward pass
        _, expected = attention(X[None], mask, need_weights=True)
    for head, query in ((0, 1), (1, valid_len - 1)):
        default = query_key_steps(attention, X, list("abcdefghij"), head, query, valid_len)
        given = query_key_steps(attention, X, list("abcdefghij"), head, query, valid_len,
                                temperature=8 ** 0.5)  # d = 16 / 2 heads = 8
        assert default.temperature == given.temperature == math.sqrt(8)
        for field in ("scores", "weights", "values", "output"):
            np.testing.assert_array_equal(getattr(default, field), getattr(given, field))
        np.testing.assert_allclose(default.weights, expected[0, head, query], rtol=1e-6,
                                   atol=1e-7)
        # τ = 1: the softmax of q·k itself, the scores √8 times the model's.
        unscaled = query_key_steps(attention, X, list("abcdefghij"), head, query, valid_len,
                                   temperature=1)
        scores, weights, _, output = (t.detach().numpy() for t in independent_steps(
            attention, X, head, query, valid_len, temperature=1.0))
        assert unscaled.temperature == 1.0
        np.testing.assert_allclose(unscaled.scores, scores, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(unscaled.scores, default.scores * 8 ** 0.5, rtol=1e-5,
                                   atol=1e-6)
        np.testing.assert_allclose(unscaled.weights, weights, rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(unscaled.output, output, rtol=1e-5, atol=1e-6)
        assert (unscaled.weights[valid_len:] == 0).all()


def test_a_higher_temperature_spreads_the_weights(small):
    model, _ = small
    X = torch.randn(12, 128, generator=torch.Generator().manual_seed(5))
    temperatures = [0.5, *temperature_stops(64), 100.0]
    for layer, head, query in ((0, 0, 0), (1, 1, 4), (1, 0, 8)):
        attention = model.encoder.blks[layer].attention
        steps = [query_key_steps(attention, X, list("abcdefghijkl"), head, query, 9,
                                 temperature=t) for t in temperatures]
        spread = [entropy(s.weights) for s in steps]
        assert all(later >= earlier - 1e-6 for earlier, later in itertools.pairwise(spread))
        unscaled, own, flat = (spread[temperatures.index(t)] for t in (1.0, 8.0, 32.0))
        assert unscaled < own < flat < math.log(9)  # 9 real keys: log 9 is the even spread
        tops = [float(s.weights.max()) for s in steps]
        assert all(later <= earlier + 1e-6 for earlier, later in itertools.pairwise(tops))
        for s in steps:  # whatever τ, a distribution over the real keys only
            assert s.weights.sum() == pytest.approx(1, abs=1e-5) and (s.weights[9:] == 0).all()


@pytest.mark.parametrize("d", [1, 8, 32, 48, 64, 128])
def test_the_temperature_stops_run_from_no_scaling_past_the_model_own(d):
    stops = temperature_stops(d)
    assert stops[0] == 1.0 and math.sqrt(d) in stops  # both exactly, so both reachable
    ratios = [b / a for a, b in itertools.pairwise(stops)]
    assert all(2 ** 0.25 < r <= 2 ** 0.75 + 1e-9 for r in ratios)  # √d off the √2 grid: wider
    assert sum(r > 2 ** 0.5 + 1e-9 for r in ratios) <= (math.log2(d) % 1 != 0)
    assert 4 * math.sqrt(d) / 2 ** 0.5 < stops[-1] <= 4 * math.sqrt(d) + 1e-9


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"head": 2}, r"head must be an integer in \[0, 1\]; got 2"),
    ({"query": 10}, r"query must be an integer in \[0, 9\] \(a token index\); got 10"),
    ({"tokens": ["a"]}, "tokens must name the 10 positions of X; got 1"),
    *(({"X": torch.zeros(10, 16, dtype=dtype)},
       rf"X must have the model's dtype, torch.float32; got {dtype}")
      for dtype in (torch.float64, torch.float16)),
])
def test_bad_steps_arguments_are_named(model, kwargs, message):
    args = {"attention": model.encoder.blks[0].attention, "X": torch.zeros(10, 16),
            "tokens": list("abcdefghij"), "head": 0, "query": 0, **kwargs}
    with pytest.raises(ValueError, match=message):
        query_key_steps(**args)


def test_the_temperature_range_includes_its_ends(model):
    args = (model.encoder.blks[0].attention, torch.randn(4, 16), list("abcd"), 0, 0)
    for ends in (8 ** 0.5 / 64, 64 * 8 ** 0.5):
        assert query_key_steps(*args, temperature=ends).temperature == ends


@pytest.mark.parametrize("lang", ["en", "zh", "ja"])
def test_every_key_is_named_and_numbered_in_the_reader_language(model, lang):
    set_language(lang)  # lang=None: the edition's language
    tokens = [*"abcdefg", "<pad>", "<pad>", "<pad>"]
    steps = query_key_steps(model.encoder.blks[1].attention, torch.randn(10, 16), tokens, 1, 3,
                            valid_len=7)
    plot = QueryKeyPlot()
    plot.update(steps, 1)
    assert plot.labels.tokens == tokens
    shown = [t for t in plot.score_numbers if t.get_visible()]
    assert [t.get_text() for t in shown] == [f"{s:.2f}".replace("-", "−")
                                             for s in steps.scores]
    assert [t.get_text() for t in plot.weight_numbers if t.get_visible()] == [
        *(f"{w:.3f}" for w in steps.weights[:7]), "0", "0", "0"]
    assert [t.get_text() for t in plot.mask_texts if t.get_visible()] == ["0"] * 7 + ["−∞"] * 3
    assert [len(shade.get_paths()) for shade in plot.shades] == [3, 3, 3]  # the padded rows
    titles = [t.get_text() for t in plot.titles]
    assert titles == [text("qk_scores_title", lang), text("qk_mask_title", lang),
                      text("qk_weights_title", lang), text("qk_values_title", lang, d=8)]
    assert plot.suptitle.get_text() == text("qk_title", lang, layer=1, head=1, token="d")
    hidden = np.ma.getmaskarray(plot.values.get_array())  # drawn grey: their weight is 0
    assert hidden[7:].all() and not hidden[:7].any()
    np.testing.assert_array_equal(plot.output.get_array()[0], steps.output)
    assert plot_query_key(steps, 1, lang)._suptitle.get_text() == plot.suptitle.get_text()


def test_the_numbers_of_64_keys_and_8_padded_ones_are_legible_and_apart(small):
    model, tokenizer = small
    w = AttentionWidget(model, tokenizer, "en", text_a="the dog ran to the park " * 10,
                        text_b="")
    tokens = [*w.encoded.tokens, *["<pad>"] * 8]
    steps = query_key_steps(model.encoder.blks[0].attention, torch.randn(len(tokens), 128),
                            tokens, 0, 1, valid_len=len(w.encoded.tokens))
    plot = QueryKeyPlot("en")
    plot.update(steps, 0)
    plot.png()
    assert len(tokens) == 70 and plot.fontsize >= 8
    renderer = plot.figure.canvas.get_renderer()
    for column in (plot.score_numbers, plot.weight_numbers, plot.labels.texts):
        boxes = [t.get_window_extent(renderer) for t in column[:len(tokens)]]
        assert all(t.get_visible() for t in column[:len(tokens)])
        for upper, lower in itertools.pairwise(boxes):  # rows run downwards
            assert upper.y0 >= lower.y1 - 1, "numbers of two keys overlap"


def test_the_widget_pads_the_input_and_masks_the_padded_keys(small):
    model, tokenizer = small
    w = AttentionWidget(model, tokenizer, "zh")
    w.view.value = "querykey"
    T, pad = len(w.encoded.ids), tokenizer.vocab.pad_id
    assert w.padding.value == 3 and w.padding.max == 8
    assert w.steps_controls.layout.display is None  # the padding and the temperature
    for padding, layer, head, query in ((4, 0, 0, 2), (7, 1, 1, 5), (0, 1, 0, T - 1)):
        w.padding.value, w.layer.value, w.head.value, w.query.value = (padding, layer, head,
                                                                       query)
        s = w.steps
        assert s.tokens == [*w.encoded.tokens, *["<pad>"] * padding]
        assert s.mask.tolist() == [True] * T + [False] * padding
        assert (s.weights[T:] == 0).all()
        # The same input padded as a batch pads it, through the model itself.
        ids = torch.tensor([w.encoded.ids + [pad] * padding])
        segments = torch.tensor([w.encoded.segments + [0] * padding])
        with torch.no_grad():
            _, attentions = model.encoder(ids, segments, torch.tensor([T]),
                                          return_attention=True)
            inputs, _ = block_inputs(model, ids, segments, torch.tensor([T]))
        np.testing.assert_allclose(s.weights, attentions[layer][0, head, query], atol=1e-6)
        expected = independent_steps(model.encoder.blks[layer].attention, inputs[layer][0],
                                     head, query, T)
        for got, want in zip((s.scores, s.weights, s.values, s.output), expected, strict=True):
            np.testing.assert_allclose(got, want.detach().numpy(), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(s.weights[:T], w.attentions[layer, head, query], atol=1e-6)
        assert w.steps_plot.titles[1].get_text() == text("qk_mask_title", "zh")
    assert w.shown_figure() is w.steps_plot
    w.view.value = "one"
    assert w.steps_controls.layout.display == "none"


@pytest.mark.parametrize("lang", ["en", "zh", "ja"])
def test_the_temperature_slider_redraws_the_steps_at_its_temperature(small, lang):
    model, tokenizer = small
    w = AttentionWidget(model, tokenizer, lang)
    w.view.value = "querykey"
    w.layer.value, w.head.value, w.query.value = 1, 0, 3
    T = len(w.encoded.ids)
    # The model's own √d, marked on the slider; 1, the dot products unscaled, at its left end.
    assert w.temperature.value == 8.0 and w.temperature.label == "8 = √d"  # d = 128 / 2 heads
    assert w.temperature.options[0] == ("1", 1.0)
    assert w.temperature.description == text("temperature", lang)
    own = w.steps
    np.testing.assert_allclose(own.weights[:T], w.attentions[1, 0, 3], rtol=1e-6, atol=1e-7)
    at_own = w.steps_plot.png()
    assert w.steps_plot.temperature.get_text() == text("qk_temperature_model", lang, value="8")
    inputs = w.block_inputs[1][: T + w.padding.value]
    for tau, caption in ((1.0, text("qk_temperature_none", lang)),
                         (32.0, text("qk_temperature_flatter", lang, value="32", ratio="4")),
                         (2.0, text("qk_temperature_sharper", lang, value="2", ratio="0.25"))):
        w.temperature.value = tau
        s = w.steps
        assert s.temperature == tau and w.steps_plot.temperature.get_text() == caption
        expected = independent_steps(model.encoder.blks[1].attention, inputs, 0, 3, T, tau)
        for got, want in zip((s.scores, s.weights, s.values, s.output), expected, strict=True):
            np.testing.assert_allclose(got, want.detach().numpy(), rtol=1e-4, atol=1e-5)
        # What is drawn follows: every score's number, and the picture.
        assert [t.get_text() for t in w.steps_plot.score_numbers if t.get_visible()] == [
            "0.00" if round(float(x), 2) == 0 else f"{x:.2f}".replace("-", "−")  # no −0.00
            for x in s.scores]
        assert w.steps_plot.png() != at_own
    w.temperature.value = 8.0
    assert w.steps_plot.png() == at_own  # back at √d: the model's attention, as drawn first
    w.view.value = "all"
    assert w.steps_controls.layout.display == "none"


def test_a_slider_and_a_save_on_two_kernel_threads_take_turns(small, tmp_path):
    """JupyterLab may hand a widget's messages to two kernel threads: the temperature dragged
    while Save SVG runs. Without the widget's lock the redraw met the figure's canvas swapped
    for an SVG one, and failed."""
    model, tokenizer = small
    w = AttentionWidget(model, tokenizer, "en")
    w.view.value = "querykey"
    stops = [t for _, t in w.temperature.options]
    failures = []

    def saving() -> None:
        for _ in range(4):
            try:
                w.save(tmp_path / "steps.svg")
            except Exception as err:  # whatever it is, the test reports it
                failures.append(repr(err))

    def sliding() -> None:
        for i in range(30):
            try:
                w.temperature.value = stops[i % len(stops)]
            except Exception as err:
                failures.append(repr(err))
            if w.message:  # a notice or an error on screen instead of the figure
                failures.append(w.message)

    threads = [threading.Thread(target=saving), threading.Thread(target=sliding)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert w.steps.temperature == stops[29 % len(stops)] == 2 ** 3.5  # the last one set
    assert w.steps_plot.temperature.get_text() == text("qk_temperature_flatter", "en",
                                                       value="11.3", ratio="1.41")


def test_the_model_runs_once_per_text_and_never_for_the_other_controls(small):
    model, tokenizer = small
    w = AttentionWidget(model, tokenizer, "en")
    runs = []
    hook = model.encoder.blks[0].register_forward_hook(lambda *_: runs.append(1))
    try:
        for view in ("querykey", "model", "all", "one", "querykey"):
            w.view.value = view
            w.layer.value, w.head.value, w.query.value, w.padding.value = 1, 1, 3, 2
            w.temperature.value = 1.0 if w.temperature.value != 1.0 else 8.0
            w.hide_specials.value = not w.hide_specials.value
        assert runs == []
        w.text_a.value = "The dog ran to the park."
        assert runs == [1]
    finally:
        hook.remove()


def test_the_view_says_it_shows_every_key_when_specials_are_hidden(small):
    model, tokenizer = small
    w = AttentionWidget(model, tokenizer, "zh")
    w.view.value = "querykey"
    w.hide_specials.value = True
    assert w.steps.tokens[0] == "<cls>"  # the softmax runs over every real key
    assert w.steps_plot.note.get_text() == text("qk_all_keys", "zh")
    assert "<cls>" not in [label for label, _ in w.query.options]  # queries follow the box
    w.hide_specials.value = False
    assert w.steps_plot.note.get_text() == ""


@pytest.mark.parametrize("lang", ["en", "zh", "ja"])
def test_the_note_the_summary_and_the_titles_never_overlap(small, lang):
    """The note under the figure (specials hidden) clear of the output's two-line summary and
    of its axis label; the four column titles clear of one another (ja's ran together)."""
    model, tokenizer = small
    w = AttentionWidget(model, tokenizer, lang)
    w.view.value = "querykey"
    w.hide_specials.value = True
    plot = w.steps_plot
    renderer = plot.figure.canvas.get_renderer()
    note = plot.note.get_window_extent(renderer)
    assert plot.note.get_text()
    for other in (plot.summary, plot.ax_output.xaxis.label, plot.temperature):
        assert not note.overlaps(other.get_window_extent(renderer)), other.get_text()
    titles = [t.get_window_extent(renderer) for t in plot.titles]
    for left, right in itertools.pairwise(titles):
        assert left.x1 + 4 <= right.x0, "two column titles run together"


def test_the_mean_of_heads_has_no_steps_and_nothing_to_save(small, tmp_path):
    model, tokenizer = small
    w = AttentionWidget(model, tokenizer, "zh")
    w.view.value = "querykey"
    w.head.value = -1  # the mean over heads has no single query and key
    assert w.message == text("qk_mean_head", "zh")
    assert w.steps_image.layout.display == "none"
    with pytest.raises(InputNotice, match=text("save_mean_head", "zh")):
        w.save(tmp_path / "steps.png")
    w.save_buttons["png"].click()
    assert w.message == text("save_mean_head", "zh") and not (tmp_path / "steps.png").exists()
    w.head.value = 1
    assert w.steps.head == 1 and w.steps_image.layout.display is None
    assert w.save(tmp_path / "steps.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

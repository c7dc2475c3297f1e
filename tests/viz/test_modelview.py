"""The model view: every layer and head of one input at once, and the chosen one large."""

import itertools

import numpy as np
import pytest

from bertlib import load_small_bert
from bertlib.support.i18n import set_language, text
from bertlib.viz import AttentionWidget
from bertlib.viz.modelview import ModelViewPlot, plot_model_view
from bertlib.viz.style import MIN_FONT, PAGE_WIDTH


@pytest.fixture(scope="module")
def widget():
    model, tokenizer = load_small_bert()
    return AttentionWidget(model, tokenizer, "zh")


def weights(num_blks: int, num_heads: int, T: int) -> np.ndarray:
    w = np.random.default_rng(0).random((num_blks, num_heads, T, T)) ** 3
    return w / w.sum(-1, keepdims=True)


def tokens(T: int) -> list[str]:
    return ["<cls>", *(f"w{i}" if i % 3 else f"##ing{i}" for i in range(1, T - 1)), "<sep>"]


def test_every_thumbnail_is_its_layer_and_head(widget):
    widget.view.value = "model"
    assert widget.model_image.layout.display is None and widget.image.layout.display == "none"
    plot = widget.model_plot
    L, nh = widget.attentions.shape[:2]
    assert len(plot.images) == L * nh
    for i, image in enumerate(plot.images):
        np.testing.assert_array_equal(image.get_array(), widget.attentions[i // nh, i % nh])
    assert [t.get_text() for t in plot.row_labels] == ["层 0", "层 1"]
    assert [t.get_text() for t in plot.column_labels] == ["头 0", "头 1"]
    assert widget.shown_figure() is plot


def test_picking_a_layer_and_head_draws_it_large_with_its_tokens(widget):
    widget.view.value = "model"
    plot, renderer = widget.model_plot, widget.model_plot.figure.canvas.get_renderer()
    for layer, head in ((1, 0), (0, 1), (1, -1)):
        widget.layer.value, widget.head.value = layer, head
        picked = widget.attentions[layer]
        picked = picked.mean(0) if head == -1 else picked[head]
        np.testing.assert_allclose(plot.detail.get_array(), picked, rtol=1e-6)
        assert plot.query_labels.tokens == plot.key_labels.tokens == widget.encoded.tokens
        head_name = text("mean_heads", "zh") if head == -1 else text("head_name", "zh",
                                                                       head=head)
        assert plot.ax_detail.get_title() == text("attention_title", "zh", layer=layer,
                                                  head=head_name)
        # The outline goes round the chosen thumbnail (every thumbnail of the layer for the
        # mean), and round no other.
        outline = plot.outline.get_window_extent(renderer)
        inside = [(i, h) for i, row in enumerate(plot.thumbs) for h, ax in enumerate(row)
                  if outline.contains(*ax.get_window_extent(renderer).p0)
                  and outline.contains(*ax.get_window_extent(renderer).p1)]
        assert inside == ([(layer, 0), (layer, 1)] if head == -1 else [(layer, head)])
    widget.hide_specials.value = True
    assert "<cls>" not in plot.key_labels.tokens
    assert plot.detail.get_array().shape == (len(widget.shown),) * 2
    widget.hide_specials.value = False


@pytest.mark.parametrize(("lang", "num_blks", "num_heads", "T"), [
    ("en", 6, 12, 64),  # MiniLM (notebook 09)
    ("zh", 6, 12, 30),
    ("en", 2, 2, 23),  # the small BERT
    ("zh", 24, 16, 12),  # BERT-large
    ("en", 2, 40, 8),  # too many heads to name: their numbers
])
def test_labels_are_legible_and_never_overlap(lang, num_blks, num_heads, T):
    set_language(lang)
    plot = ModelViewPlot(num_blks, num_heads)
    plot.update(weights(num_blks, num_heads, T), tokens(T), num_blks - 1, num_heads - 1)
    plot.png()
    renderer = plot.figure.canvas.get_renderer()
    labels = [*plot.row_labels, *plot.column_labels]
    if plot.head_label.get_visible():
        labels.append(plot.head_label)
    assert all(t.get_fontsize() >= MIN_FONT for t in labels)
    boxes = [t.get_window_extent(renderer) for t in labels]
    thumbs = [ax.get_window_extent(renderer) for row in plot.thumbs for ax in row]
    for a, b in itertools.combinations(boxes, 2):
        assert not a.overlaps(b), "two row or column labels overlap"
    for box in boxes:
        assert not any(box.overlaps(thumb) for thumb in thumbs), "a label covers a thumbnail"
    names = [t.get_text() for t in plot.column_labels]
    if not plot.head_label.get_visible():
        assert names == [text("head_name", lang, head=h) for h in range(num_heads)]
    else:  # the numbers alone, and "head" once
        assert names == [*map(str, range(num_heads))]
        assert plot.head_label.get_text() == text("head", lang)
    assert [t.get_text() for t in plot.row_labels] == [
        text("layer_name", lang, layer=layer) for layer in range(num_blks)]
    if num_heads <= 16:  # the page, a long input's too; more heads than BERT-large scroll
        assert plot.figure.get_size_inches()[0] <= PAGE_WIDTH + 1e-9
    # Every token named, or on a long input every k-th, a line of MIN_FONT apart at least.
    shown = plot.query_labels.tokens
    step = next((i for i, t in enumerate(shown[1:], 1) if t), 1)
    assert shown == [t if i % step == 0 else "" for i, t in enumerate(tokens(T))]
    assert step * 72 * plot._side / T >= 0.9 * MIN_FONT
    assert step == 1 or T > 32
    assert all(t.get_fontsize() >= MIN_FONT for t in plot.key_labels.texts[:T])


@pytest.mark.parametrize(("args", "message"), [
    ((np.zeros((1, 2, 3, 3)), ["a"] * 2), "tokens must name the 3 positions"),
    ((np.zeros((1, 2, 3, 3)), ["a"] * 3, 1), r"layer must be an integer in \[0, 0\]"),
    ((np.zeros((1, 2, 3, 3)), ["a"] * 3, 0, 2), r"head must be an integer in \[-1, 1\]"),
])
def test_bad_model_view_input_is_named(args, message):
    with pytest.raises(ValueError, match=message):
        plot_model_view(*args)

"""The model view: every layer and head of one input at once."""

import numpy as np
import pytest

from bertlib import load_small_bert
from bertlib.i18n import text
from bertlib.viz import AttentionWidget
from bertlib.viz.modelview import plot_model_view


@pytest.fixture(scope="module")
def widget():
    model, tokenizer = load_small_bert()
    return AttentionWidget(model, tokenizer, "zh")


def test_every_thumbnail_is_its_layer_and_head(widget):
    widget.view.value = "model"
    assert widget.model_image.layout.display is None and widget.image.layout.display == "none"
    assert widget.pick.layout.display is None
    plot = widget.model_plot
    L, nh = widget.attentions.shape[:2]
    assert len(plot.images) == L * nh
    for i, image in enumerate(plot.images):
        np.testing.assert_array_equal(image.get_array(), widget.attentions[i // nh, i % nh])
        assert image.axes.get_title() == text("model_view_cell", "zh", layer=i // nh,
                                              head=i % nh)
    assert widget.shown_figure() is plot


def test_picking_a_thumbnail_opens_it_with_its_tokens(widget):
    widget.view.value = "model"
    widget.pick.value = (1, 0)
    assert (widget.view.value, widget.layer.value, widget.head.value) == ("one", 1, 0)
    np.testing.assert_array_equal(widget.current.weights, widget.attentions[1, 0])
    assert widget.pick.layout.display == "none"


def test_bad_model_view_input_is_named():
    with pytest.raises(ValueError, match=r"attentions must be \(num_blks, num_heads, T, T\)"):
        plot_model_view(np.zeros((2, 2, 3)))

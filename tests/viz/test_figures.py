"""What each figure shows: the data, the labels, the language."""

import io
import time
import xml.etree.ElementTree as ET

import matplotlib
import numpy as np
import PIL.Image
import pytest
import torch
from jaxtyping import TypeCheckError
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.text import Text

from bertlib import viz
from bertlib.masking import Fate
from bertlib.support.i18n import text
from bertlib.viz import style

TOKENS = ["<cls>", "a", "crane", "flew", "<sep>", "it", "sang", "<sep>"]


def pixels(png: bytes) -> np.ndarray:
    return np.asarray(PIL.Image.open(io.BytesIO(png)).convert("RGB"), dtype=int)


def bar_heights(plot: viz.AttentionPlot) -> list[float]:
    """Lengths of the drawn bars, read from the collection's rectangles: horizontal, one per
    key, key j's on row j (the heatmap's rows)."""
    paths = plot.bars.get_paths()
    middles = [float(p.vertices[:, 1].min() + p.vertices[:, 1].max()) / 2 for p in paths]
    assert middles == pytest.approx(range(len(paths)))
    return [path.vertices[:, 0].max() for path in paths]


def attention_weights(T: int, seed: int = 0) -> np.ndarray:
    w = np.random.default_rng(seed).random((T, T)) ** 3
    return w / w.sum(-1, keepdims=True)


def test_attention_plot_shows_the_weights_the_row_and_the_boundary():
    w = attention_weights(len(TOKENS))
    plot = viz.AttentionPlot("en")
    plot.update(viz.AttentionView(w, TOKENS, boundary=5, query=2, title="t"))
    np.testing.assert_array_equal(plot.image.get_array(), w)
    np.testing.assert_allclose(bar_heights(plot), w[2])
    np.testing.assert_array_equal(plot.row_values, w[2])
    assert plot.vline.get_visible() and list(plot.vline.get_xdata()) == [4.5, 4.5]
    assert list(plot.hline.get_ydata()) == [4.5, 4.5]
    assert plot.highlight.get_y() == 1.5  # the query row is outlined
    assert plot.query_labels.tokens == TOKENS
    assert plot.key_labels.tokens == TOKENS
    assert plot.bar_labels.tokens == TOKENS  # the bars name their keys too
    assert list(plot.row_vline.get_ydata()) == [4.5, 4.5]  # the boundary across the bars
    image = plot.image
    w2 = attention_weights(len(TOKENS), seed=1)
    plot.update(viz.AttentionView(w2, TOKENS, boundary=None, query=0))
    assert plot.image is image  # updated in place, not redrawn from scratch
    np.testing.assert_array_equal(plot.image.get_array(), w2)
    assert not plot.vline.get_visible()


def test_plot_attention_rejects_mismatched_inputs():
    with pytest.raises(ValueError, match=r"weights must be \(T, T\) with T=8"):
        viz.plot_attention(viz.AttentionView(np.ones((3, 3)), TOKENS))
    with pytest.raises(ValueError, match=r"query must be an integer in \[0, 7\]"):
        viz.plot_attention(viz.AttentionView(attention_weights(8), TOKENS, query=8))


def test_chips_are_coloured_and_labelled_by_fate():
    fates = [None, Fate.MASK, Fate.RANDOM, Fate.KEEP, None, None, None, None]
    shown = ["<cls>", "<mask>", "river", "crane", "<sep>", "it", "sang", "<sep>"]
    plot = viz.ChipsPlot("en")
    plot.update(TOKENS, shown, fates, "draw")
    assert [b.get_visible() for b in plot.bands] == [f is not None for f in fates]
    for band, outline, fate in zip(plot.bands, plot.outlines, fates, strict=True):
        if fate is not None:
            assert to_hex(band.get_facecolor()) == style.FATE_COLORS[fate].lower()
            assert to_hex(outline.get_edgecolor()) == style.FATE_COLORS[fate].lower()
    assert len({style.FATE_COLORS[f] for f in Fate} | {style.NOT_SELECTED_COLOR}) == 4
    assert [t.get_text() for t in plot.top_texts] == TOKENS
    assert [t.get_text() for t, f in zip(plot.bottom_texts, fates, strict=True)
            if f is not None] == [
        "→ <mask>", "→ river", "→ crane"]
    legend = [t.get_text() for t in plot.legend.get_texts()]
    assert legend == ["→ mask token (80%)", "→ random token (10%)", "unchanged (10%)",
                      "not selected"]
    plot.update(TOKENS, TOKENS, [None] * 8)
    assert not any(b.get_visible() for b in plot.bands)
    with pytest.raises(ValueError, match="one entry per token"):
        viz.plot_mask_chips(TOKENS, shown[:3], fates)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_chip_holds_its_texts_and_the_chips_stay_on_the_page(lang):
    """A long word and "→ <mask>" fit inside their chip ("grandmother" was clipped by a tenth
    of the page); 64 chips flow in rows within the page's width."""
    tokens = ["<cls>", "my", "grandmother", "wanted", "蔬菜", "世界", *["the"] * 57, "<sep>"]
    fates = [None, Fate.MASK, Fate.KEEP, Fate.RANDOM, Fate.MASK, None] + [None] * 58
    shown = ["<cls>", "<mask>", "grandmother", "photographer", "<mask>", "世界",
             *["the"] * 57, "<sep>"]
    plot = viz.ChipsPlot(lang)
    plot.update(tokens, shown, fates, "draw")
    plot.png()
    renderer = plot.figure.canvas.get_renderer()
    for i, outline in enumerate(plot.outlines):
        chip = outline.get_window_extent(renderer)
        texts = [plot.top_texts[i]] + ([plot.bottom_texts[i]] if fates[i] else [])
        for t in texts:
            box = t.get_window_extent(renderer)
            assert chip.x0 <= box.x0 and box.x1 <= chip.x1, f"{t.get_text()!r} sticks out"
        assert chip.x1 <= plot.figure.bbox.width
    assert plot.figure.get_size_inches()[0] <= style.PAGE_WIDTH


def test_tally_plot_draws_the_fractions_and_the_expected_values():
    counts = np.array([0, 30, 25, 35, 0, 28, 32, 0])
    fate_counts = np.cumsum(np.tile([[4, 1, 0]], (50, 1)), axis=0)
    tally = viz.MaskTally(TOKENS, counts, fate_counts, selected=3, candidates=5)
    fig = viz.plot_mask_tally(tally, "en")
    ax_sel, ax_fate = fig.axes
    bars = ax_sel.collections[0]
    np.testing.assert_allclose([path.vertices[:, 1].max() for path in bars.get_paths()],
                               counts / 50)
    hlines = {round(float(line.get_ydata()[0]), 6) for line in ax_sel.get_lines()
              if line.get_linestyle() == "--"}
    assert hlines == {0.6}
    fate_lines = [line for line in ax_fate.get_lines() if len(line.get_xdata()) == 50]
    np.testing.assert_allclose([line.get_ydata()[-1] for line in fate_lines], [0.8, 0.2, 0.0])
    refs = sorted(float(line.get_ydata()[0]) for line in ax_fate.get_lines()
                  if line.get_linestyle() == "--" and len(line.get_ydata()) == 2)
    assert refs == pytest.approx([0.1, 0.1, 0.8])
    legend = [t.get_text() for t in ax_sel.get_legend().get_texts()]
    assert legend == [text("tally_selection_expected", "en", selected=3, candidates=5,
                           percent=60.0)]
    assert ax_sel.get_ylim() == (0, 1.0)  # 2 x 0.6, capped at 1


def test_embedding_plot_shows_each_part_on_one_symmetric_scale():
    rng = np.random.default_rng(0)
    parts = viz.EmbeddingParts(TOKENS, *(rng.normal(size=(8, 6)) for _ in range(4)))
    plot = viz.EmbeddingPlot("en")
    plot.update(parts)
    for image, data in zip(plot.images, parts.panels(), strict=True):
        np.testing.assert_array_equal(image.get_array(), data)
        low, high = image.get_clim()
        assert low == -high == -max(np.abs(p).max() for p in parts.panels())
    assert [ax.get_title() for ax in plot.axes][-1] == "sum = encoder input"
    assert pixels(plot.png()).shape[0] > 100


def test_nsp_plot_bars_are_the_probabilities():
    plot = viz.NSPPlot("en")
    plot.update([0.25, 0.75])
    assert [b.get_width() for b in plot.bars] == [0.25, 0.75]
    assert plot.ax.get_title() == "Next-sentence prediction: P(IsNext) = 0.750"
    with pytest.raises(ValueError, match=r"two numbers in \[0, 1\] summing to 1"):
        viz.plot_nsp([0.5, 0.7])


def test_similarity_heatmap_writes_each_value_in_its_cell():
    m = np.array([[1.0, 0.31], [-0.5, 0.875]])
    fig = viz.plot_similarity(m, ["bank (river)", "bank (money)"], ["crane", "bird"])
    ax = fig.axes[0]
    np.testing.assert_array_equal(ax.images[0].get_array(), m)
    cells = {(t.get_position(), t.get_text()) for t in ax.texts}
    assert cells == {((0, 0), "1.00"), ((1, 0), "0.31"), ((0, 1), "-0.50"), ((1, 1), "0.88")}
    assert ax.images[0].get_clim() == (-1, 1)
    assert ax.get_title() == "Cosine similarity"
    assert viz.plot_similarity(m, ["a", "b"], ["c", "d"], title="T").axes[0].get_title() == "T"
    zh = viz.plot_similarity(m, ["a", "b"], ["c", "d"], lang="zh")
    assert zh.axes[0].get_title() == "余弦相似度"


@pytest.mark.parametrize(("matrix", "rows", "cols", "message"), [
    (np.ones((2, 2)), ["a"], ["b", "c"], "one label per row and column"),
    (np.ones(3), ["a"], ["b"], "non-empty 2-D array"),
    (np.full((1, 1), 1.5), ["a"], ["b"], r"in \[-1, 1\]"),
    (np.full((1, 1), np.nan), ["a"], ["b"], r"in \[-1, 1\]"),
])
def test_similarity_rejects_bad_input(matrix, rows, cols, message):
    with pytest.raises(ValueError, match=message):
        viz.plot_similarity(matrix, rows, cols)


def test_titles_follow_the_language():
    w = attention_weights(8)
    en = viz.plot_attention(viz.AttentionView(w, TOKENS, 5, 0), "en")
    zh = viz.plot_attention(viz.AttentionView(w, TOKENS, 5, 0), "zh")
    assert en.axes[0].get_xlabel() == "key (attended token)"
    assert zh.axes[0].get_xlabel() == "键（被关注的词元）"
    assert viz.NSPPlot("zh").ax.get_xlabel() == "概率"


def test_dollar_signs_are_drawn_as_written_never_as_mathtext():
    tokens = ["<cls>", "i", "paid", "$5", "at", "the", "bank", "for", "$10", "<sep>"]
    T = len(tokens)
    attention = viz.AttentionPlot("en")
    attention.update(viz.AttentionView(attention_weights(T), tokens, None, 3, "cost $5 or $10",
                                       note=r"$\foo$ and $y$"))
    assert attention.query_labels.tokens == tokens
    chips = viz.ChipsPlot("en")
    chips.update(tokens, tokens, [None] * T, title="$5 to $10")
    similarity = viz.plot_similarity(np.eye(2), ["$5 a", "b $10"], ["$5 a", "b $10"],
                                     title="$5 vs $10")
    texts = [*attention.query_labels.texts[:T], *chips.top_texts, attention.ax_row.title,
             attention.ax_map.title, attention.note, chips.title, similarity.axes[0].title,
             *similarity.axes[0].get_xticklabels(), *similarity.axes[0].get_yticklabels()]
    for t in texts:
        if "$" in t.get_text():
            _, is_math = t._preprocess_math(t.get_text())
            assert not is_math, t.get_text()
    attention.png()  # and it draws
    chips.png()
    similarity.savefig(io.BytesIO())  # an unknown \\foo would fail only here, as mathtext


@pytest.mark.parametrize("bad", [np.nan, np.inf, -0.1, 1.5])
def test_weights_and_probabilities_that_are_not_probabilities_are_refused(bad):
    w = attention_weights(len(TOKENS))
    w[2, 3] = bad
    with pytest.raises(ValueError, match="weights must be attention weights, finite and in"):
        viz.plot_attention(viz.AttentionView(w, TOKENS))
    with pytest.raises(ValueError, match="weights must be attention weights"):
        viz.plot_all_heads(w[None], TOKENS, 0)
    with pytest.raises(ValueError, match=r"probabilities must be two numbers in \[0, 1\]"):
        viz.plot_nsp([bad, 1 - bad])


T3 = ["a", "b", "c"]
W3 = np.full((3, 3), 1 / 3)
HEADS = np.full((2, 3, 3), 1 / 3)
EMB = np.zeros((3, 2))


def parts(**changes) -> viz.EmbeddingParts:
    return viz.EmbeddingParts(**{"tokens": T3, "token": EMB, "segment": EMB, "position": EMB,
                                 "total": EMB, **changes})


def view(**changes) -> Figure:
    return viz.plot_attention(viz.AttentionView(**{"weights": W3, "tokens": T3, **changes}))


@pytest.mark.parametrize(("call", "message"), [
    # a string where a list of tokens belongs would be split into characters
    (lambda: view(tokens="abc"), "tokens must be a list of token strings, not a text"),
    (lambda: view(tokens=[1, 2, 3]), "tokens must be a list of token strings; got"),
    (lambda: viz.plot_all_heads(HEADS, "abc", 0), "tokens must be a list of token strings"),
    (lambda: viz.plot_mask_chips("abc", "abc", [None] * 3), "tokens must be a list"),
    (lambda: viz.plot_mask_chips(T3, [None] * 3, [None] * 3), "shown must be a list"),
    (lambda: viz.plot_similarity(np.eye(2), "ab", ["a", "b"]), "row_labels must be a list"),
    (lambda: viz.plot_similarity(np.eye(2), [1, 2], ["a", "b"]), "row_labels must be a list"),
    (lambda: viz.plot_similarity(np.eye(2), None, ["a", "b"]), "row_labels must be a list"),
    # attention weights: numbers, a (T, T) shape, probabilities
    (lambda: view(weights=np.zeros((0, 0)), tokens=[]), r"weights must be \(T, T\)"),
    (lambda: view(weights=[["a"] * 3] * 3), "weights must hold numbers"),
    (lambda: view(weights=np.ones((3, 3), dtype=bool)), "weights must hold numbers"),
    (lambda: view(weights=[[1], [1, 2]], tokens=["a", "b"]), "weights must be a rectangular"),
    (lambda: view(query=1.5), r"query must be an integer in \[0, 2\] \(a token index\)"),
    (lambda: view(query=True), r"query must be an integer in \[0, 2\] \(a token index\); got True"),
    (lambda: view(query="0"), r"query must be an integer in \[0, 2\]"),
    # all heads: a sane number of heads, a layer index
    (lambda: viz.AllHeadsPlot(-1), r"num_heads must be an integer in \[1, 64\]"),
    (lambda: viz.AllHeadsPlot(0), r"num_heads must be an integer in \[1, 64\]"),
    (lambda: viz.AllHeadsPlot(True), r"num_heads must be an integer in \[1, 64\]"),
    (lambda: viz.AllHeadsPlot(2.5), r"num_heads must be an integer in \[1, 64\]"),
    (lambda: viz.AllHeadsPlot(10**5), r"num_heads must be an integer in \[1, 64\]"),
    (lambda: viz.plot_all_heads(HEADS, T3, -3), "layer must be an integer >= 0"),
    (lambda: viz.plot_all_heads(np.ones((2, 3, 3)), T3, 0),
     r"each row \(one query's weights over the keys\) summing to 1 within 0.001; got a row "
     "summing to 3"),
    (lambda: viz.plot_all_heads(HEADS * 0.99, T3, 0), "got a row summing to 0.99"),
    # NSP: two probabilities
    (lambda: viz.plot_nsp({0.3, 0.7}), "probabilities must hold numbers"),
    (lambda: viz.plot_nsp("ab"), "probabilities must hold numbers"),
    (lambda: viz.plot_nsp([True, False]), "probabilities must hold numbers"),
    # chips: at least one and at most 512 tokens
    (lambda: viz.plot_mask_chips([], [], []), "tokens must hold 1 to 512 tokens"),
    (lambda: viz.plot_mask_chips(["x"] * 600, ["x"] * 600, [None] * 600), "1 to 512"),
    # figure sizes
    (lambda: viz.new_figure(1e6, 1e6), r"width must be a number of inches in \(0, 100\]"),
    (lambda: viz.new_figure(4, float("nan")), r"height must be a number of inches"),
    (lambda: viz.new_figure(4, 0), r"height must be a number of inches"),
])
def test_bad_figure_input_is_refused_by_name(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_arrays_may_be_lists_or_tensors_even_with_grad():
    w = torch.full((3, 3), 1 / 3, requires_grad=True)
    assert view(weights=w).axes[0].images[0].get_array().shape == (3, 3)
    viz.plot_nsp(torch.tensor([0.3, 0.7], requires_grad=True))
    viz.plot_all_heads(torch.tensor(HEADS, requires_grad=True), T3, 0)
    viz.plot_model_view(torch.tensor(HEADS[None], requires_grad=True), T3)


@pytest.mark.parametrize(("call", "parameter"), [
    (lambda: viz.plot_all_heads(np.float64(0.5), T3, 0), "weights"),
    (lambda: viz.plot_all_heads(HEADS[0], T3, 0), "weights"),
    (lambda: viz.plot_all_heads(HEADS, T3, "first"), "layer"),
    (lambda: viz.plot_model_view(HEADS, T3), "attentions"),
    (lambda: viz.plot_model_view(np.ones((1, 1, 3, 4)) / 4, T3), "attentions"),
    (lambda: parts(token=np.zeros(())), "token"),
    (lambda: parts(total=np.zeros((3, 5))), "total"),
])
def test_shapes_are_checked_in_the_signatures(call, parameter):
    with pytest.raises(TypeCheckError, match=f"parameter '{parameter}'"):
        call()


def test_a_large_similarity_matrix_fits_the_largest_figure():
    labels = [str(i) for i in range(120)]
    fig = viz.plot_similarity(np.eye(120), labels, labels)
    assert tuple(fig.get_size_inches()) == (style.MAX_INCHES, 73.8)


def test_a_boundary_is_drawn_where_it_is():
    plot = viz.AttentionPlot("en")
    plot.update(viz.AttentionView(W3, T3, boundary=2))
    assert plot.hline.get_visible() and plot.hline.get_ydata()[0] == 1.5
    plot.update(viz.AttentionView(W3, T3))
    assert not plot.hline.get_visible()


def test_no_figure_changes_matplotlib_settings():
    before = dict(matplotlib.rcParams)
    viz.plot_nsp([0.3, 0.7])
    viz.plot_mask_chips(T3, T3, [None, Fate.MASK, None], lang="zh")
    view()
    assert dict(matplotlib.rcParams) == before


# Every character an SVG (XML 1.0) cannot hold or matplotlib cannot lay out: the C0 controls
# (tab, newline and carriage return are allowed but drawn too), U+FFFE, U+FFFF, lone surrogates.
UNDRAWABLE = [chr(c) for c in range(32)] + ["\ufffe", "\uffff", "\ud800", "\udbff", "\udfff"]


def test_every_figure_saves_a_well_formed_svg_whatever_its_tokens():
    """Before: a token holding \\x00 saved an SVG that no XML parser reads, and a lone
    surrogate raised TypeError from matplotlib's text layout on any save."""
    tokens = [f"a{c}b" for c in UNDRAWABLE]
    T = len(tokens)
    weights = np.full((T, T), 1 / T)
    emb = np.zeros((T, 2))
    figures = [
        viz.plot_attention(viz.AttentionView(weights, tokens, query=0, title="t\x00",
                                             note="\ud800")),
        viz.plot_all_heads(weights[None], tokens, 0),
        viz.plot_model_view(weights[None, None], tokens),
        viz.plot_mask_chips(tokens, tokens, [None] * T, title="\x1f"),
        viz.plot_similarity(np.eye(T), tokens, tokens, title="\uffff"),
        viz.plot_input_representation(viz.EmbeddingParts(tokens, emb, emb, emb, emb)),
        viz.plot_mask_tally(viz.MaskTally(tokens, np.zeros(T), np.ones((1, 3)), 1, T)),
    ]
    for fig in figures:
        svg = io.BytesIO()
        fig.savefig(svg, format="svg")
        ET.fromstring(svg.getvalue())  # raises ParseError if not well-formed
        fig.savefig(io.BytesIO(), format="png")
    assert any("\\x00" in t.get_text() for fig in figures for t in fig.findobj(Text))


def test_no_figure_grows_past_the_largest_size():
    """Before: plot_model_view of 1,350 tokens made a figure 149 inches tall (docs/checks.md
    promises at most 100 a side), and plot_similarity of a 1000 x 1000 matrix ran for ever."""
    tokens = [str(i) for i in range(1350)]
    with pytest.raises(ValueError, match="attentions must cover at most 512 tokens"):
        viz.plot_model_view(np.full((1, 1, 1350, 1350), 1 / 1350), tokens)
    for shape, name in (((25, 1), "num_blks"), ((1, 65), "num_heads")):
        with pytest.raises(ValueError, match=f"{name} must be an integer in"):
            viz.ModelViewPlot(*shape)
    # The largest allowed grid's layout for the largest allowed input, without drawing its
    # heatmaps: _layout sizes the figure from the grid's shape and the token count alone, so a
    # one-thumbnail plot told it has 24 x 64 is sized as ModelViewPlot(24, 64) would be (whose
    # 1,536 axes take matplotlib half a minute to make).
    smallest = viz.ModelViewPlot(1, 1)
    smallest._layout(512)
    small = smallest.figure.get_size_inches().copy()
    largest = viz.ModelViewPlot(1, 1)
    largest.shape = (24, 64)
    largest._layout(512)
    size = largest.figure.get_size_inches()
    assert (size >= small).all() and (size > small).any()  # the shape did count
    assert max(size) <= style.MAX_INCHES
    start = time.monotonic()
    with pytest.raises(ValueError, match=r"at most 200 rows and columns.*got 1000x1000"):
        viz.plot_similarity(np.eye(1000), tokens[:1000], tokens[:1000])
    assert time.monotonic() - start < 1
    fig = viz.plot_similarity(np.eye(200), tokens[:200], tokens[:200])  # colours, no numbers
    assert max(fig.get_size_inches()) <= style.MAX_INCHES and not fig.axes[0].texts
    with pytest.raises(ValueError, match="a figure is at most 100 inches a side"):
        viz.new_figure(4, 3).set_size_inches(4, 149)

import io

import numpy as np
import PIL.Image
import pytest
from matplotlib.colors import to_hex

from bertlib import plots
from bertlib.i18n import text
from bertlib.masking import Fate

TOKENS = ["<cls>", "a", "crane", "flew", "<sep>", "it", "sang", "<sep>"]


def pixels(png: bytes) -> np.ndarray:
    return np.asarray(PIL.Image.open(io.BytesIO(png)).convert("RGB"), dtype=int)


def bar_heights(plot: plots.AttentionPlot) -> list[float]:
    """Heights of the drawn bars, read from the collection's rectangles."""
    return [path.vertices[:, 1].max() for path in plot.bars.get_paths()]


def attention_weights(T: int, seed: int = 0) -> np.ndarray:
    w = np.random.default_rng(seed).random((T, T)) ** 3
    return w / w.sum(-1, keepdims=True)


def test_attention_plot_shows_the_weights_the_row_and_the_boundary():
    w = attention_weights(len(TOKENS))
    plot = plots.AttentionPlot("en")
    plot.update(plots.AttentionView(w, TOKENS, boundary=5, query=2, title="t"))
    np.testing.assert_array_equal(plot.image.get_array(), w)
    np.testing.assert_allclose(bar_heights(plot), w[2])
    np.testing.assert_array_equal(plot.row_values, w[2])
    assert plot.vline.get_visible() and list(plot.vline.get_xdata()) == [4.5, 4.5]
    assert list(plot.hline.get_ydata()) == [4.5, 4.5]
    assert plot.highlight.get_y() == 1.5  # the query row is outlined
    assert plot.query_labels.tokens == TOKENS
    assert plot.key_labels.tokens == TOKENS
    image = plot.image
    w2 = attention_weights(len(TOKENS), seed=1)
    plot.update(plots.AttentionView(w2, TOKENS, boundary=None, query=0))
    assert plot.image is image  # updated in place, not redrawn from scratch
    np.testing.assert_array_equal(plot.image.get_array(), w2)
    assert not plot.vline.get_visible()


def test_attention_plot_rejects_mismatched_inputs():
    plot = plots.AttentionPlot("en")
    with pytest.raises(ValueError, match=r"weights must be \(T, T\) with T=8"):
        plot.update(plots.AttentionView(np.ones((3, 3)), TOKENS))
    with pytest.raises(ValueError, match=r"query must be a token index in \[0, 7\]"):
        plot.update(plots.AttentionView(attention_weights(8), TOKENS, query=8))


@pytest.mark.parametrize("make", ["attention", "shorter", "embedding", "chips", "nsp",
                                  "heads"])
def test_blitted_png_matches_a_full_redraw(make):
    if make == "attention":
        plot = plots.AttentionPlot("en")
        plot.update(plots.AttentionView(attention_weights(8), TOKENS, 5, 1, "first"))
        plot.png()
        plot.update(plots.AttentionView(attention_weights(8, 3), TOKENS, 5, 6, "second"))
    elif make == "shorter":  # fewer tokens, the same figure size: the background is kept
        plot = plots.AttentionPlot("en")
        plot.update(plots.AttentionView(attention_weights(8), TOKENS, 5, 1, "first"))
        plot.png()
        plot.update(plots.AttentionView(attention_weights(6, 3), TOKENS[:6], 5, 2, "second"))
    elif make == "embedding":  # 8 then 6 tokens: one height step
        rng = np.random.default_rng(0)
        plot = plots.EmbeddingPlot("en")
        plot.update(plots.EmbeddingParts(TOKENS, *(rng.normal(size=(8, 6)) for _ in range(4))))
        plot.png()
        plot.update(plots.EmbeddingParts(TOKENS[:6],
                                         *(rng.normal(size=(6, 6)) for _ in range(4))))
    elif make == "chips":
        plot = plots.ChipsPlot("en")
        plot.update(TOKENS, TOKENS, [None] * 8, "first")
        plot.png()
        plot.update(TOKENS, TOKENS, [None, Fate.MASK, None, Fate.KEEP, None, Fate.RANDOM, None,
                                     None], "second")
    elif make == "nsp":
        plot = plots.NSPPlot("en")
        plot.update([0.5, 0.5])
        plot.png()
        plot.update([0.1, 0.9])
    else:
        plot = plots.AllHeadsPlot(2, "en")
        plot.update(np.stack([attention_weights(8, 1), attention_weights(8, 2)]), TOKENS, 0)
        plot.png()
        plot.update(np.stack([attention_weights(8, 3), attention_weights(8, 4)]), TOKENS, 1)
    blitted = pixels(plot.png())
    for artist in plot.blitter.artists + plot.blitter.token_artists:
        artist.set_animated(False)
    full = pixels(plots.figure_png(plot.figure))
    # The same pixels: the animated artists are drawn in the z-order of a full draw.
    np.testing.assert_array_equal(blitted, full)


def use_tick_labels(token_labels) -> None:
    """Replace TokenLabels by matplotlib's own ticks and tick labels."""
    for labels in token_labels:
        tokens, size = labels.tokens, labels.texts[0].get_fontsize()
        for artist in [*labels.texts, labels.marks]:
            artist.set_visible(False)
        set_ticks = labels.ax.set_yticks if labels.axis == "y" else labels.ax.set_xticks
        set_ticks(range(len(tokens)), tokens, fontsize=size, rotation=labels.rotation)


def tick_label_reference(plot, token_labels) -> np.ndarray:
    """The plot drawn in full with matplotlib's own ticks instead of TokenLabels."""
    use_tick_labels(token_labels)
    for artist in plot.blitter.artists:
        artist.set_animated(False)
    return pixels(plots.figure_png(plot.figure))


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("tokens", [
    ["<cls>", "春天", "crane", "##s", "。", "<sep>", "it", "<eos>"],
    ["<cls>", "春天", "crane", "##s", "。", "<sep>", "it", "<sep>"],
])
def test_token_labels_are_drawn_like_tick_labels(lang, tokens):
    rng = np.random.default_rng(0)
    attention = plots.AttentionPlot(lang)
    attention.update(plots.AttentionView(attention_weights(8), tokens, 6, 2, "t"))
    embedding = plots.EmbeddingPlot(lang)
    embedding.update(plots.EmbeddingParts(tokens, *(rng.normal(size=(8, 6)) for _ in range(4))))
    heads = plots.AllHeadsPlot(3, lang)
    heads.update(np.stack([attention_weights(8, s) for s in range(3)]), tokens, 1)
    for plot, labels in ((attention, [attention.query_labels, attention.key_labels]),
                         (embedding, [embedding.token_labels]), (heads, heads.token_labels)):
        blitted = pixels(plot.png())
        reference = tick_label_reference(plot, labels)
        # A string is rendered once per figure: a repeated token, or the same token beside
        # both rows of the all-heads grid, is stamped where the first one was rendered.
        if len(set(tokens)) == len(tokens) and plot is not heads:
            np.testing.assert_array_equal(blitted, reference)
        else:  # the stamped copies are within a pixel of a fresh rendering
            assert blitted.shape == reference.shape
            off = np.min([np.abs(np.roll(blitted, (dy, dx), axis=(0, 1)) - reference).max(-1)
                          for dy in (-1, 0, 1) for dx in (-1, 0, 1)], axis=0)
            # Half a pixel moves an edge pixel's coverage by up to about half; a glyph stroke
            # in the wrong place would differ by ~255.
            assert off.max() < 160


def test_only_a_new_figure_size_redraws_the_background():
    """New tokens redraw only their labels and marks, a new query neither; a new length redraws
    the background only when it changes the figure's size."""
    plot = plots.AttentionPlot("en")
    plot.update(plots.AttentionView(attention_weights(8), TOKENS, 5, 1))
    plot.png()
    background = plot.blitter._background
    plot.update(plots.AttentionView(attention_weights(8, 1), TOKENS, 5, 3))
    assert plot.blitter._with_tokens is not None  # the same labels: kept
    other = [t.upper() for t in TOKENS]
    plot.update(plots.AttentionView(attention_weights(8, 2), other, 5, 3))
    assert plot.blitter._with_tokens is None
    plot.png()
    assert plot.blitter._background is background
    assert plot.query_labels.tokens == plot.key_labels.tokens == other
    size = tuple(plot.figure.get_size_inches())
    plot.update(plots.AttentionView(attention_weights(5), other[:5], 3, 0))
    plot.png()
    assert tuple(plot.figure.get_size_inches()) == size  # small inputs share the smallest size
    assert plot.blitter._background is background
    assert plot.query_labels.tokens == other[:5]
    assert sum(t.get_visible() for t in plot.query_labels.texts) == 5
    assert len(plot.query_labels.marks.get_ydata()) == 5
    long = [f"t{i}" for i in range(40)]
    plot.update(plots.AttentionView(attention_weights(40), long, 20, 0))
    plot.png()
    assert tuple(plot.figure.get_size_inches()) != size
    assert plot.blitter._background is not background


def test_encode_png_is_lossless():
    rgba = np.random.default_rng(0).integers(0, 256, size=(7, 11, 4), dtype=np.uint8)
    np.testing.assert_array_equal(pixels(plots.encode_png(rgba)), rgba[:, :, :3])


def test_chips_are_coloured_and_labelled_by_fate():
    fates = [None, Fate.MASK, Fate.RANDOM, Fate.KEEP, None, None, None, None]
    shown = ["<cls>", "<mask>", "river", "crane", "<sep>", "it", "sang", "<sep>"]
    plot = plots.ChipsPlot("en")
    plot.update(TOKENS, shown, fates, "draw")
    assert [b.get_visible() for b in plot.bands] == [f is not None for f in fates]
    for band, outline, fate in zip(plot.bands, plot.outlines, fates, strict=True):
        if fate is not None:
            assert to_hex(band.get_facecolor()) == plots.FATE_COLORS[fate].lower()
            assert to_hex(outline.get_edgecolor()) == plots.FATE_COLORS[fate].lower()
    assert len({plots.FATE_COLORS[f] for f in Fate} | {plots.NOT_SELECTED_COLOR}) == 4
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
        plot.update(TOKENS, shown[:3], fates)


def test_tally_plot_draws_the_fractions_and_the_expected_values():
    counts = np.array([0, 30, 25, 35, 0, 28, 32, 0])
    fate_counts = np.cumsum(np.tile([[4, 1, 0]], (50, 1)), axis=0)
    tally = plots.MaskTally(TOKENS, counts, fate_counts, selected=3, candidates=5)
    fig = plots.plot_mask_tally(tally, "en")
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


def test_tally_plot_redraws_in_place_like_a_full_draw():
    rng = np.random.default_rng(0)
    plot = plots.TallyPlot("zh")
    for samples, tokens in ((300, TOKENS), (300, TOKENS[:6]), (300, TOKENS)):
        counts = rng.integers(40, 50, size=len(tokens))
        fates = np.cumsum(rng.multinomial(1, [0.8, 0.1, 0.1], size=samples), axis=0)
        plot.update(plots.MaskTally(tokens, counts, fates, selected=1, candidates=len(tokens)))
        blitted = pixels(plot.png())
    assert plot.token_labels.tokens == TOKENS
    assert plot.curves[Fate.MASK].get_xdata()[-1] == 300
    for artist in plot.blitter.artists + plot.blitter.token_artists:
        artist.set_animated(False)
    np.testing.assert_array_equal(blitted, pixels(plots.figure_png(plot.figure)))


def test_embedding_plot_shows_each_part_on_one_symmetric_scale():
    rng = np.random.default_rng(0)
    parts = plots.EmbeddingParts(TOKENS, *(rng.normal(size=(8, 6)) for _ in range(4)))
    plot = plots.EmbeddingPlot("en")
    plot.update(parts)
    for image, data in zip(plot.images, parts.panels(), strict=True):
        np.testing.assert_array_equal(image.get_array(), data)
        low, high = image.get_clim()
        assert low == -high == -max(np.abs(p).max() for p in parts.panels())
    assert [ax.get_title() for ax in plot.axes][-1] == "sum = encoder input"
    assert pixels(plot.png()).shape[0] > 100


def test_nsp_plot_bars_are_the_probabilities():
    plot = plots.NSPPlot("en")
    plot.update([0.25, 0.75])
    assert [b.get_width() for b in plot.bars] == [0.25, 0.75]
    assert plot.ax.get_title() == "Next-sentence prediction: P(IsNext) = 0.750"
    with pytest.raises(ValueError, match="two numbers summing to 1"):
        plot.update([0.5, 0.7])


def test_similarity_heatmap_writes_each_value_in_its_cell():
    m = np.array([[1.0, 0.31], [-0.5, 0.875]])
    fig = plots.plot_similarity(m, ["bank (river)", "bank (money)"], ["crane", "bird"])
    ax = fig.axes[0]
    np.testing.assert_array_equal(ax.images[0].get_array(), m)
    cells = {(t.get_position(), t.get_text()) for t in ax.texts}
    assert cells == {((0, 0), "1.00"), ((1, 0), "0.31"), ((0, 1), "-0.50"), ((1, 1), "0.88")}
    assert ax.images[0].get_clim() == (-1, 1)
    assert ax.get_title() == "Cosine similarity"
    assert plots.plot_similarity(m, "ab", "cd", title="T").axes[0].get_title() == "T"
    assert plots.plot_similarity(m, "ab", "cd", lang="zh").axes[0].get_title() == "余弦相似度"


@pytest.mark.parametrize(("matrix", "rows", "cols", "message"), [
    (np.ones((2, 2)), ["a"], ["b", "c"], "one label per row and column"),
    (np.ones(3), ["a"], ["b"], "non-empty 2-D array"),
    (np.full((1, 1), 1.5), ["a"], ["b"], r"in \[-1, 1\]"),
    (np.full((1, 1), np.nan), ["a"], ["b"], r"in \[-1, 1\]"),
])
def test_similarity_rejects_bad_input(matrix, rows, cols, message):
    with pytest.raises(ValueError, match=message):
        plots.plot_similarity(matrix, rows, cols)


def test_titles_follow_the_language():
    w = attention_weights(8)
    en = plots.plot_attention(plots.AttentionView(w, TOKENS, 5, 0), "en")
    zh = plots.plot_attention(plots.AttentionView(w, TOKENS, 5, 0), "zh")
    assert en.axes[1].get_xlabel() == "key (attended token)"
    assert zh.axes[1].get_xlabel() == "键（被关注的词元）"
    assert plots.NSPPlot("zh").ax.get_xlabel() == "概率"


def test_one_shot_figures_have_nothing_animated():
    """savefig and inline display leave out animated figure-level artists (the colour bar's
    axes, a suptitle): the plot_* functions return figures with nothing animated, and saving
    one gives what its own canvas shows."""
    rng = np.random.default_rng(0)
    w = attention_weights(8)
    tally = plots.MaskTally(TOKENS, np.arange(8), np.cumsum(np.ones((20, 3)), axis=0), 1, 6)
    figures = [
        plots.plot_attention(plots.AttentionView(w, TOKENS, 5, 1, "t"), "en"),
        plots.plot_all_heads(np.stack([w, w]), TOKENS, 0, "en"),
        plots.plot_input_representation(
            plots.EmbeddingParts(TOKENS, *(rng.normal(size=(8, 6)) for _ in range(4))), "en"),
        plots.plot_mask_chips(TOKENS, TOKENS, [None, Fate.MASK, *[None] * 6], "t", "en"),
        plots.plot_mask_tally(tally, "en"),
        plots.plot_nsp([0.3, 0.7], "en"),
    ]
    for fig in figures:
        assert not [a for a in fig.findobj() if a.get_animated()]
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=fig.dpi)
        np.testing.assert_array_equal(pixels(buf.getvalue()), pixels(plots.figure_png(fig)))


def near(blitted: np.ndarray, reference: np.ndarray) -> None:
    """The same picture up to stamped texts sitting half a pixel from a fresh rendering."""
    assert blitted.shape == reference.shape
    off = np.min([np.abs(np.roll(blitted, (dy, dx), axis=(0, 1)) - reference).max(-1)
                  for dy in (-1, 0, 1) for dx in (-1, 0, 1)], axis=0)
    assert off.max() < 160


def test_a_sequence_of_updates_draws_what_a_fresh_plot_draws():
    def view(T: int, seed: int) -> plots.AttentionView:
        return plots.AttentionView(attention_weights(T, seed), [f"t{i % 5}" for i in range(T)],
                                   T // 2, T - 1, f"{T} tokens")

    plot = plots.AttentionPlot("zh")
    for seed, T in enumerate((8, 40, 8, 17, 3)):
        plot.update(view(T, seed))
        blitted = pixels(plot.png())
    fresh = plots.AttentionPlot("zh")
    fresh.update(view(3, 4))
    near(blitted, pixels(fresh.png()))


def test_background_follows_a_size_or_dpi_change_it_was_not_told_about():
    plot = plots.NSPPlot("en")
    plot.update([0.4, 0.6])
    plot.png()
    for change in (lambda: plot.figure.set_size_inches(7, 3), lambda: plot.figure.set_dpi(120)):
        change()
        blitted = pixels(plot.png())
        fresh = plots.NSPPlot("en")
        fresh.figure.set_size_inches(*plot.figure.get_size_inches())
        fresh.figure.set_dpi(plot.figure.dpi)
        fresh.update([0.4, 0.6])
        np.testing.assert_array_equal(blitted, pixels(fresh.png()))


def test_long_tokens_are_never_cut_off():
    """A stamp is the whole text, rendered on a canvas of its own size."""
    long = "internationalisation" * 2
    tokens = ["<cls>", long, *[f"w{i}" for i in range(5)], "<sep>"]
    chips = plots.ChipsPlot("en")
    chips.update(tokens, tokens, [None] * 8)  # the long token in column 1 ...
    chips.png()
    moved = ["<cls>", "a", "b", long, *[f"w{i}" for i in range(3)], "<sep>"]
    chips.update(moved, moved, [None] * 8)  # ... then in column 3
    fresh = plots.ChipsPlot("en")
    fresh.update(moved, moved, [None] * 8)
    near(pixels(chips.png()), pixels(fresh.png()))

    def tight(fig) -> np.ndarray:
        buf = io.BytesIO()
        fig.savefig(buf, format="png", bbox_inches="tight")  # how Jupyter shows a figure
        return pixels(buf.getvalue())

    plot = plots.AttentionPlot("en")
    plot.update(plots.AttentionView(attention_weights(8), tokens, 7, 1))
    stamped = tight(plot.blitter.still())  # what plot_attention returns
    use_tick_labels([plot.query_labels, plot.key_labels])
    near(stamped, tight(plot.figure))

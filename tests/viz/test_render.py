"""The private rendering engine: what it draws equals what matplotlib draws in full."""

import io

import numpy as np
import PIL.Image
import pytest
from matplotlib.text import Text

from bertlib import viz
from bertlib.masking import Fate
from bertlib.viz import _render
from bertlib.viz.finetune import FineTunePlot
from bertlib.viz.modelview import ModelViewPlot
from bertlib.viz.querykey import QueryKeyPlot, QueryKeySteps

TOKENS = ["<cls>", "a", "crane", "flew", "<sep>", "it", "sang", "<sep>"]


def pixels(png: bytes) -> np.ndarray:
    return np.asarray(PIL.Image.open(io.BytesIO(png)).convert("RGB"), dtype=int)


def full_png(fig) -> bytes:
    """The figure drawn in full (nothing skipped, nothing cached), as PNG bytes."""
    fig.canvas.draw()
    return _render.canvas_png(fig.canvas)


def attention_weights(T: int, seed: int = 0) -> np.ndarray:
    w = np.random.default_rng(seed).random((T, T)) ** 3
    return w / w.sum(-1, keepdims=True)


def query_key_steps(tokens: list[str], valid: int, query: int, seed: int) -> QueryKeySteps:
    rng, T = np.random.default_rng(seed), len(tokens)
    scores, values = rng.normal(size=T), rng.normal(size=(T, 6))
    mask = np.arange(T) < valid
    weights = np.where(mask, np.exp(scores), 0) / np.exp(scores[mask]).sum()
    temperature = 6 ** 0.5 * 2 ** seed  # another seed, another caption under the scores
    return QueryKeySteps(tokens, query, 1, scores, mask, weights, values, weights @ values,
                         temperature)


@pytest.mark.parametrize("make", ["attention", "shorter", "embedding", "chips", "nsp",
                                  "heads", "querykey", "model", "finetune"])
def test_blitted_png_matches_a_full_redraw(make):
    if make == "attention":
        plot = viz.AttentionPlot("en")
        plot.update(viz.AttentionView(attention_weights(8), TOKENS, 5, 1, "first"))
        plot.png()
        plot.update(viz.AttentionView(attention_weights(8, 3), TOKENS, 5, 6, "second"))
    elif make == "shorter":  # fewer tokens, the same figure size: the background is kept
        plot = viz.AttentionPlot("en")
        plot.update(viz.AttentionView(attention_weights(8), TOKENS, 5, 1, "first"))
        plot.png()
        plot.update(viz.AttentionView(attention_weights(6, 3), TOKENS[:6], 5, 2, "second"))
    elif make == "embedding":  # 8 then 6 tokens: one height step
        rng = np.random.default_rng(0)
        plot = viz.EmbeddingPlot("en")
        plot.update(viz.EmbeddingParts(TOKENS, *(rng.normal(size=(8, 6)) for _ in range(4))))
        plot.png()
        plot.update(viz.EmbeddingParts(TOKENS[:6],
                                         *(rng.normal(size=(6, 6)) for _ in range(4))))
    elif make == "chips":
        plot = viz.ChipsPlot("en")
        plot.update(TOKENS, TOKENS, [None] * 8, "first")
        plot.png()
        plot.update(TOKENS, TOKENS, [None, Fate.MASK, None, Fate.KEEP, None, Fate.RANDOM, None,
                                     None], "second")
    elif make == "nsp":
        plot = viz.NSPPlot("en")
        plot.update([0.5, 0.5])
        plot.png()
        plot.update([0.1, 0.9])
    elif make == "querykey":  # more padding, another query: new numbers, shades and mask
        plot = QueryKeyPlot("zh")
        plot.update(query_key_steps([*TOKENS, "<pad>"], 8, 2, 0), 0)
        plot.png()
        plot.update(query_key_steps([*TOKENS, "<pad>", "<pad>", "<pad>"], 8, 5, 1), 1, "note")
    elif make == "model":
        plot = ModelViewPlot(2, 3, "zh")
        weights = np.stack([np.stack([attention_weights(8, 3 * i + j) for j in range(3)])
                            for i in range(2)])
        plot.update(weights, TOKENS, 0, 1)
        plot.png()
        plot.update(weights[:, :, :6, :6], TOKENS[:6], 1, -1)
    elif make == "finetune":
        plot = FineTunePlot(["market", "rainy day", "library"], "en")
        plot.update(np.array([0.2, 0.5, 0.3]), TOKENS, [0, 1, 2, 3, 0, 1, 2, 3], heading="one",
                    accuracy="right on 19.4%")
        plot.png()
        plot.update(np.array([0.6, 0.1, 0.3]), TOKENS[:5], [3, 2, 1, 0, 0], heading="another",
                    accuracy="right on 84.8%")  # another classifier
    else:
        plot = viz.AllHeadsPlot(2, "en")
        plot.update(np.stack([attention_weights(8, 1), attention_weights(8, 2)]), TOKENS, 0)
        plot.png()
        plot.update(np.stack([attention_weights(8, 3), attention_weights(8, 4)]), TOKENS, 1)
    blitted = pixels(plot.png())
    for artist in plot.blitter.artists + plot.blitter.token_artists:
        artist.set_animated(False)
    full = pixels(full_png(plot.figure))
    # The animated artists are drawn in the z-order of a full draw.
    assert_drawn_alike(blitted, full, plot.blitter)


def assert_drawn_alike(a: np.ndarray, b: np.ndarray, blitter: _render.Blitter) -> None:
    """The same pixels everywhere but inside the animated titles and notes, which are stamped:
    there a stamp and a fresh rendering may round a half-pixel glyph position differently and
    shade the glyphs' antialiased edges a few levels (of 255) apart. A missing, misplaced or
    out-of-order artist differs by far more."""
    assert a.shape == b.shape
    diff = np.abs(a.astype(int) - b.astype(int)).max(-1)  # (height, width)
    renderer = blitter.figure.canvas.get_renderer()
    height = diff.shape[0]
    stamped = np.zeros(diff.shape, dtype=bool)
    for text in blitter.artists:
        if type(text) is Text and text.get_visible() and text.get_text():
            x0, y0, x1, y1 = text.get_window_extent(renderer).padded(3).extents  # y upwards
            stamped[max(0, int(height - y1)):int(height - y0) + 1,
                    max(0, int(x0)):int(x1) + 1] = True
    assert not diff[~stamped].any()
    assert diff.max() <= 8


def use_tick_labels(token_labels) -> None:
    """Replace TokenLabels by matplotlib's own ticks and tick labels."""
    for labels in token_labels:
        tokens, size = labels.tokens, labels.texts[0].get_fontsize()
        for artist in [*labels.texts, labels.marks]:
            artist.set_visible(False)
        set_ticks = labels.ax.set_yticks if labels.axis == "y" else labels.ax.set_xticks
        ticks = set_ticks(range(len(tokens)), tokens, fontsize=size, rotation=labels.rotation)
        # Each at the angle its label has (a short token stands upright on a turned axis).
        for tick, text in zip(ticks, labels.texts, strict=False):
            tick.label1.set_rotation(text.get_rotation())


def tick_label_reference(plot, token_labels) -> np.ndarray:
    """The plot drawn in full with matplotlib's own ticks instead of TokenLabels."""
    use_tick_labels(token_labels)
    for artist in plot.blitter.artists:
        artist.set_animated(False)
    return pixels(full_png(plot.figure))


@pytest.mark.parametrize("lang", ["en", "zh", "ja"])
@pytest.mark.parametrize("tokens", [
    ["<cls>", "春天", "crane", "##s", "。", "<sep>", "it", "<eos>"],
    ["<cls>", "春天", "crane", "##s", "。", "<sep>", "it", "<sep>"],
])
def test_token_labels_are_drawn_like_tick_labels(lang, tokens):
    rng = np.random.default_rng(0)
    attention = viz.AttentionPlot(lang)
    attention.update(viz.AttentionView(attention_weights(8), tokens, 6, 2, "t"))
    embedding = viz.EmbeddingPlot(lang)
    embedding.update(viz.EmbeddingParts(tokens, *(rng.normal(size=(8, 6)) for _ in range(4))))
    heads = viz.AllHeadsPlot(3, lang)
    heads.update(np.stack([attention_weights(8, s) for s in range(3)]), tokens, 1)
    for plot, labels in ((attention, [attention.query_labels, attention.key_labels,
                                      attention.bar_labels]),
                         (embedding, [embedding.token_labels]), (heads, heads.token_labels)):
        blitted = pixels(plot.png())
        reference = tick_label_reference(plot, labels)
        # A string is rendered once per figure: a repeated token, or the same token beside
        # both rows of the all-heads grid, is stamped where the first one was rendered.
        if len(set(tokens)) == len(tokens) and plot is not heads:
            assert_drawn_alike(blitted, reference, plot.blitter)
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
    plot = viz.AttentionPlot("en")
    plot.update(viz.AttentionView(attention_weights(8), TOKENS, 5, 1))
    plot.png()
    background = plot.blitter._background
    plot.update(viz.AttentionView(attention_weights(8, 1), TOKENS, 5, 3))
    assert plot.blitter._with_tokens is not None  # the same labels: kept
    other = [t.upper() for t in TOKENS]
    plot.update(viz.AttentionView(attention_weights(8, 2), other, 5, 3))
    assert plot.blitter._with_tokens is None
    plot.png()
    assert plot.blitter._background is background
    assert plot.query_labels.tokens == plot.key_labels.tokens == other
    size = tuple(plot.figure.get_size_inches())
    plot.update(viz.AttentionView(attention_weights(5), other[:5], 3, 0))
    plot.png()
    assert tuple(plot.figure.get_size_inches()) == size  # small inputs share the smallest size
    assert plot.blitter._background is background
    assert plot.query_labels.tokens == other[:5]
    assert sum(t.get_visible() for t in plot.query_labels.texts) == 5
    assert len(plot.query_labels.marks.get_ydata()) == 5
    long = [f"t{i}" for i in range(40)]
    plot.update(viz.AttentionView(attention_weights(40), long, 20, 0))
    plot.png()
    assert tuple(plot.figure.get_size_inches()) != size
    assert plot.blitter._background is not background


def test_numbers_are_drawn_like_text_and_saved_as_text(tmp_path):
    """A NumberText lands where matplotlib draws the same text (to a pixel or so: each
    character is placed to the nearest pixel), and is text in an SVG."""
    plot = viz.NSPPlot("en")  # any figure of the package will do
    fig, renderer = plot.figure, plot.figure.canvas.get_renderer()
    ink = []
    for cls in (Text, _render.NumberText):
        extra = {"stamps": plot.blitter.stamps} if cls is _render.NumberText else {}
        probe = fig.add_artist(cls(0.3, 0.5, "−12.05 0.017 ∞", fontsize=11, ha="right",
                                   **extra))  # on its baseline, a Text's default
        for other in fig.get_children():
            other.set_visible(other is probe or other is fig.patch)
        fig.canvas.draw()
        dark = np.argwhere(np.asarray(renderer.buffer_rgba())[:, :, 0] < 128)
        ink.append((*dark.min(0), *dark.max(0)))
        probe.remove()
    np.testing.assert_allclose(ink[0], ink[1], atol=2)
    number = fig.add_artist(_render.NumberText(0.5, 0.5, "0.123", stamps=plot.blitter.stamps))
    number.set_visible(True)
    plot.save(tmp_path / "n.svg")
    assert ">0.123<" in (tmp_path / "n.svg").read_text("utf-8")


def test_encode_png_is_lossless():
    rgba = np.random.default_rng(0).integers(0, 256, size=(7, 11, 4), dtype=np.uint8)
    np.testing.assert_array_equal(pixels(_render.encode_png(rgba)), rgba[:, :, :3])


def test_tally_plot_redraws_in_place_like_a_full_draw():
    rng = np.random.default_rng(0)
    plot = viz.TallyPlot("zh")
    for samples, tokens in ((300, TOKENS), (300, TOKENS[:6]), (300, TOKENS)):
        counts = rng.integers(40, 50, size=len(tokens))
        fates = np.cumsum(rng.multinomial(1, [0.8, 0.1, 0.1], size=samples), axis=0)
        plot.update(viz.MaskTally(tokens, counts, fates, selected=1, candidates=len(tokens)))
        blitted = pixels(plot.png())
    assert plot.token_labels.tokens == TOKENS
    assert plot.curves[Fate.MASK].get_xdata()[-1] == 300
    for artist in plot.blitter.artists + plot.blitter.token_artists:
        artist.set_animated(False)
    np.testing.assert_array_equal(blitted, pixels(full_png(plot.figure)))


def test_one_shot_figures_have_nothing_animated():
    """savefig and inline display leave out animated figure-level artists (the colour bar's
    axes, a suptitle): the plot_* functions return figures with nothing animated, and saving
    one gives what its own canvas shows."""
    rng = np.random.default_rng(0)
    w = attention_weights(8)
    tally = viz.MaskTally(TOKENS, np.arange(8), np.cumsum(np.ones((20, 3)), axis=0), 1, 6)
    figures = [
        viz.plot_attention(viz.AttentionView(w, TOKENS, 5, 1, "t"), "en"),
        viz.plot_all_heads(np.stack([w, w]), TOKENS, 0, "en"),
        viz.plot_input_representation(
            viz.EmbeddingParts(TOKENS, *(rng.normal(size=(8, 6)) for _ in range(4))), "en"),
        viz.plot_mask_chips(TOKENS, TOKENS, [None, Fate.MASK, *[None] * 6], "t", "en"),
        viz.plot_mask_tally(tally, "en"),
        viz.plot_nsp([0.3, 0.7], "en"),
    ]
    for fig in figures:
        assert not [a for a in fig.findobj() if a.get_animated()]
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=fig.dpi)
        np.testing.assert_array_equal(pixels(buf.getvalue()), pixels(full_png(fig)))


def near(blitted: np.ndarray, reference: np.ndarray) -> None:
    """The same picture up to stamped texts sitting half a pixel from a fresh rendering."""
    assert blitted.shape == reference.shape
    off = np.min([np.abs(np.roll(blitted, (dy, dx), axis=(0, 1)) - reference).max(-1)
                  for dy in (-1, 0, 1) for dx in (-1, 0, 1)], axis=0)
    assert off.max() < 160


def test_a_sequence_of_updates_draws_what_a_fresh_plot_draws():
    def view(T: int, seed: int) -> viz.AttentionView:
        return viz.AttentionView(attention_weights(T, seed), [f"t{i % 5}" for i in range(T)],
                                   T // 2, T - 1, f"{T} tokens")

    plot = viz.AttentionPlot("zh")
    for seed, T in enumerate((8, 40, 8, 17, 3)):
        plot.update(view(T, seed))
        blitted = pixels(plot.png())
    fresh = viz.AttentionPlot("zh")
    fresh.update(view(3, 4))
    near(blitted, pixels(fresh.png()))


def test_a_figure_size_seen_before_reuses_its_background_and_draws_the_same():
    """40 and 60 tokens in turn resize the figure; the second time at each size its background
    is reused, and the picture is still that of a full draw."""
    plot = viz.AttentionPlot("en")
    backgrounds = []
    for T, seed in ((40, 0), (60, 1), (40, 2), (60, 3)):
        tokens = [f"t{i}" for i in range(T)]
        plot.update(viz.AttentionView(attention_weights(T, seed), tokens, T // 2, 1))
        blitted = pixels(plot.png())
        backgrounds.append(plot.blitter._background)
    assert backgrounds[2] is backgrounds[0] and backgrounds[3] is backgrounds[1]
    assert backgrounds[0] is not backgrounds[1]
    animated = plot.blitter.artists + plot.blitter.token_artists
    for artist in animated:
        artist.set_animated(False)
    full = pixels(full_png(plot.figure))
    plot.blitter.artists = animated  # (for assert_drawn_alike: which texts are stamped)
    assert_drawn_alike(blitted, full, plot.blitter)


def test_invalidate_forgets_every_size_and_the_cache_stays_small():
    plot = viz.NSPPlot("en")
    plot.update([0.4, 0.6])
    sizes = [(6, 3), (7, 3), (8, 3), (9, 3), (10, 3), (6, 3)]
    for size in sizes:
        plot.figure.set_size_inches(*size)
        plot.png()
        assert len(plot.blitter._backgrounds) <= plot.blitter.MAX_BACKGROUNDS
    plot.blitter.invalidate()
    assert plot.blitter._backgrounds == {} and plot.blitter._background is None


def test_background_follows_a_size_or_dpi_change_it_was_not_told_about():
    plot = viz.NSPPlot("en")
    plot.update([0.4, 0.6])
    plot.png()
    for change in (lambda: plot.figure.set_size_inches(7, 3), lambda: plot.figure.set_dpi(120)):
        change()
        blitted = pixels(plot.png())
        fresh = viz.NSPPlot("en")
        fresh.figure.set_size_inches(*plot.figure.get_size_inches())
        fresh.figure.set_dpi(plot.figure.dpi)
        fresh.update([0.4, 0.6])
        np.testing.assert_array_equal(blitted, pixels(fresh.png()))


def test_long_tokens_are_never_cut_off():
    """A stamp is the whole text, rendered on a canvas of its own size."""
    long = "internationalisation" * 2
    tokens = ["<cls>", long, *[f"w{i}" for i in range(5)], "<sep>"]
    chips = viz.ChipsPlot("en")
    chips.update(tokens, tokens, [None] * 8)  # the long token in column 1 ...
    chips.png()
    moved = ["<cls>", "a", "b", long, *[f"w{i}" for i in range(3)], "<sep>"]
    chips.update(moved, moved, [None] * 8)  # ... then in column 3
    fresh = viz.ChipsPlot("en")
    fresh.update(moved, moved, [None] * 8)
    near(pixels(chips.png()), pixels(fresh.png()))

    def tight(fig) -> np.ndarray:
        buf = io.BytesIO()
        fig.savefig(buf, format="png", bbox_inches="tight")  # how Jupyter shows a figure
        return pixels(buf.getvalue())

    plot = viz.AttentionPlot("en")
    plot.update(viz.AttentionView(attention_weights(8), tokens, 7, 1))
    stamped = tight(plot.blitter.still())  # what plot_attention returns
    use_tick_labels([plot.query_labels, plot.key_labels])
    near(stamped, tight(plot.figure))


def test_a_title_moved_by_a_fraction_of_a_pixel_is_rendered_again():
    plot = viz.NSPPlot("en")
    plot.update([0.5, 0.5])
    title = plot.figure.text(0.5, 0.5, "a title that moves", fontsize=13)
    plot.blitter.animate(title)
    plot.png()
    width = plot.figure.bbox.width
    for shift in (0.25, 0.6, 0.0):  # pixels; back at 0 the first stamp is used again
        title.set_x(0.5 + shift / width)
        blitted = pixels(plot.png())
        animated = plot.blitter.artists + plot.blitter.token_artists
        for artist in animated:
            artist.set_animated(False)
        # Placed at its own fraction of a pixel: a stamp reused from 0.25 px away would be off
        # by up to half the contrast at the glyphs' edges.
        assert_drawn_alike(blitted, pixels(full_png(plot.figure)), plot.blitter)
        for artist in animated:
            artist.set_animated(True)
    assert sum(key[0] == "a title that moves" for key in plot.blitter.stamps) == 3

"""What a learner sees of a figure: it draws wherever a notebook shows it, fits the page at its
own size, and its smallest text is legible on a projector."""

import io

import numpy as np
import PIL.Image
import pytest
from IPython.core.formatters import DisplayFormatter
from matplotlib.text import Text

from bertlib import load_small_bert
from bertlib.finetuning.finetune import Accuracy
from bertlib.finetuning.tasks import class_names
from bertlib.support.i18n import text
from bertlib.viz import (
    AttentionWidget,
    InputRepresentationWidget,
    MaskingWidget,
    NSPWidget,
    new_figure,
)
from bertlib.viz._widget import captioned
from bertlib.viz.finetune import DEFAULT_SENTENCES, FineTunePlot, accuracy_text
from bertlib.viz.style import DPI, MIN_FONT, PAGE_WIDTH

PAGE_PIXELS = 848  # JupyterLab's output area at 1280x720 with the file browser open
LEGIBLE_PIXELS = 10  # the smallest text a class can read from the back of the room


def test_the_page_constants_keep_their_promise():
    assert PAGE_WIDTH * DPI <= PAGE_PIXELS
    assert MIN_FONT * DPI / 72 >= LEGIBLE_PIXELS


def png_size(png: bytes) -> tuple[int, int]:
    return PIL.Image.open(io.BytesIO(png)).size


def test_a_figure_draws_itself_where_pyplot_was_never_set_up():
    """A fresh IPython formatter knows no matplotlib printer (as in a kernel that never
    imported pyplot): the figure must still come with a picture, not only its repr."""
    fig = new_figure(4, 2)
    fig.add_subplot().plot([0, 1], [1, 0])
    data, _ = DisplayFormatter().format(fig)
    assert "image/png" in data
    width, height = png_size(data["image/png"])
    # Trimmed to what is drawn, as the inline backend does: never larger than the figure.
    assert 0.5 * 4 * DPI < width <= 4 * DPI + 2
    assert 0.5 * 2 * DPI < height <= 2 * DPI + 2


def shown_texts(figure) -> list[Text]:
    """The texts drawn inside the figure's bounds: visible, not empty, in a visible axes."""
    renderer = figure.canvas.get_renderer()
    bounds = figure.bbox
    texts = []
    for t in figure.findobj(Text):
        if not t.get_visible() or not t.get_text().strip():
            continue
        if t.axes is not None and not t.axes.get_visible():
            continue
        box = t.get_window_extent(renderer)
        if box.x1 < 0 or box.y1 < 0 or box.x0 > bounds.width or box.y0 > bounds.height:
            continue
        texts.append(t)
    return texts


@pytest.fixture(scope="module")
def shipped():
    return load_small_bert()


def widget_figures(lang: str, shipped):
    """Every figure the widgets of notebooks 02-05 show for their default texts, by name."""
    model, tokenizer = shipped
    yield "input representation", InputRepresentationWidget(model, tokenizer, lang=lang).plot
    yield "next sentence", NSPWidget(model, tokenizer, lang=lang).plot
    masking = MaskingWidget(tokenizer, model=model, lang=lang)
    yield "masking chips", masking.chips
    masking.tally_button.click()
    yield "masking tally", masking.tally_plot
    names = class_names("topic", lang)
    tags = FineTunePlot(names, lang)  # what FineTuneWidget saves, for its default sentence
    tokens = tokenizer.tokenize(DEFAULT_SENTENCES[lang])
    tags.update(np.full(len(names), 1 / len(names)), tokens, [0] * len(tokens),
                heading=text("ft_classifier", lang),
                # Held-out figures out of the 72 sentences of one word per language: the widest
                # line they make (100.0%, an interval with two-digit bounds).
                accuracy=accuracy_text({"en": Accuracy(72, 72), "zh": Accuracy(58, 72)},
                                       len(names), lang))
    yield "fine-tuning", tags
    attention = AttentionWidget(model, tokenizer, lang=lang)
    for view in attention._views:
        attention.view.value = view
        yield f"attention {view}", attention._views[view][1]


@pytest.mark.parametrize("lang", ["en", "zh", "ja"])
def test_widget_figures_fit_the_page_with_legible_text(lang, shipped):
    problems = []
    for name, plot in widget_figures(lang, shipped):
        width, _ = png_size(plot.png())  # what the widget shows, drawn as it draws it
        if width > PAGE_PIXELS:
            problems.append(f"{name}: {width} px wide, more than the page's {PAGE_PIXELS}")
        for t in shown_texts(plot.figure):
            pixels = t.get_fontsize() * plot.figure.dpi / 72
            if pixels < LEGIBLE_PIXELS - 0.01:
                problems.append(f"{name}: {t.get_text()[:30]!r} is {pixels:.1f} px")
    assert not problems, "\n".join(problems)


def test_chinese_token_labels_stand_upright_and_words_turn(shipped):
    """On an axis whose labels are turned (the tally's positions), a Chinese character stays
    upright; a word that would not fit between two ticks turns."""
    model, tokenizer = shipped
    masking = MaskingWidget(tokenizer, model=model, lang="zh")
    masking.tally_button.click()
    labels = {t.get_text(): t.get_rotation() for t in masking.tally_plot.token_labels.texts
              if t.get_visible()}
    assert labels["小"] == 0
    assert labels["<cls>"] == 90


def test_a_widget_leaves_a_picture_of_what_it_shows(shipped):
    """Beside the live widget, the output holds a PNG of its figures as they are now: what
    GitHub, nbviewer and nbconvert show."""
    model, tokenizer = shipped
    widget = NSPWidget(model, tokenizer)
    bundle = widget._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    picture = np.asarray(PIL.Image.open(io.BytesIO(bundle["image/png"])).convert("RGB"))
    shown = np.asarray(PIL.Image.open(io.BytesIO(widget.plot.png())).convert("RGB"))
    line = picture.shape[0] - shown.shape[0]  # the caption's line above the figure
    assert 20 <= line <= 40
    assert np.array_equal(picture[line:], shown)
    assert (picture[:line] < 128).any()  # the caption is written on it
    assert bundle["image/png"] == captioned(widget.picture(), text("run_for_controls", "en"),
                                            "en")
    widget.text_b.value = ""  # the NSP figure is hidden: nothing to picture
    assert widget.picture() is None
    assert "image/png" not in widget._repr_mimebundle_()


@pytest.mark.parametrize("lang", ["en", "zh", "ja"])
def test_the_picture_before_a_run_says_to_run_the_cell(shipped, lang):
    """An unrun notebook shows the picture, not the controls: a line above it says in the
    edition's language that running the cell brings them."""
    model, tokenizer = shipped
    png = NSPWidget(model, tokenizer, lang)._repr_mimebundle_()["image/png"]
    assert png == captioned(NSPWidget(model, tokenizer, lang).picture(),
                            text("run_for_controls", lang), lang)
    assert text("run_for_controls", lang) != text("run_for_controls", "en") or lang == "en"
    assert png_size(png)[1] > png_size(NSPWidget(model, tokenizer, lang).picture())[1]


def test_a_picture_stacks_every_figure_on_screen(shipped):
    model, tokenizer = shipped
    masking = MaskingWidget(tokenizer, model=model)
    one = png_size(masking.picture())
    assert one == png_size(masking.chips.png())  # the tally is not on screen yet
    masking.tally_button.click()
    both = png_size(masking.picture())
    tally = png_size(masking.tally_plot.png())
    assert both == (max(one[0], tally[0]), one[1] + tally[1])

import re

import numpy as np
import pytest
import torch
from conftest import contrast
from matplotlib.colors import to_hex

from bertlib import BERTClassifier, BERTTagger, load_small_bert
from bertlib.i18n import text
from bertlib.tasks import NUM_TOPICS, TAGS, class_names
from bertlib.viz import FineTuneWidget
from bertlib.viz._widget import InputNotice
from bertlib.viz.finetune import (
    BAR_COLOR,
    DEFAULT_SENTENCES,
    TAG_COLORS,
    FineTunePlot,
    probabilities_html,
    tags_html,
)


@pytest.fixture(scope="module")
def parts():
    bert, tokenizer = load_small_bert()
    return BERTClassifier(bert, NUM_TOPICS), BERTTagger(bert, len(TAGS)), tokenizer


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_shows_the_classifier_softmax_and_the_tagger_argmax(parts, lang):
    clf, tagger, tokenizer = parts
    w = FineTuneWidget(clf, tagger, tokenizer, class_names("topic", lang), lang)
    assert w.text_a.value == DEFAULT_SENTENCES[lang]
    tokens = tokenizer.tokenize(DEFAULT_SENTENCES[lang])
    assert tokenizer.vocab.specials.unk not in tokens  # the default sentence suits the model
    ids = torch.tensor([tokenizer.vocab[["<cls>", *tokens, "<sep>"]]])
    with torch.no_grad():
        expected = clf.eval()(ids, torch.zeros_like(ids))[0].softmax(-1).numpy()
        tags = tagger.eval()(ids, torch.zeros_like(ids))[0, 1:-1].argmax(-1).tolist()
    np.testing.assert_allclose(w.probabilities, expected, rtol=1e-5)
    assert w.tags == tags and len(w.tags) == len(tokens)
    for name in class_names("topic", lang):
        assert name in w.probability_table.value
    assert text("ft_tags", lang) in w.tag_chips.value
    assert text("tag_PLACE", lang) in w.tag_chips.value  # the legend
    before = w.probability_table.value
    other = {"en": "They cooked dinner for their friends.", "zh": "他们请朋友来家里吃饭。"}
    w.text_a.value = other[lang]
    assert w.probability_table.value != before and w.message == ""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_empty_text_explains_itself_and_hides_the_outputs(parts, lang):
    """In the widget's own words: it has one sentence box, no "sentence A"."""
    w = FineTuneWidget(*parts[:2], parts[2], class_names("topic", lang), lang)
    for empty in ("   ", "\u200b"):
        w.text_a.value = empty
        assert w.message == text("ft_empty", lang)
        assert w.probability_table.layout.display == "none"
        assert w.tag_chips.layout.display == "none"
    assert text("sentence_a", lang) not in w.message
    w.text_a.value = DEFAULT_SENTENCES[lang]
    assert w.message == "" and w.probability_table.layout.display is None


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_chip_brings_its_own_text_colour(lang):
    """The chips and the legend set a dark text colour on their light backgrounds: the
    theme's own, white in JupyterLab Dark, was 1.1:1 on "other"'s grey (AA asks 4.5:1)."""
    value = tags_html(["on", "sunday", "grace", "city"], [0, 3, 1, 2], lang)
    styles = [dict(p.split(":", 1) for p in style.split(";") if ":" in p)
              for style in re.findall(r"style='([^']*)'", value)]
    chips = [s for s in styles if "background" in s]
    assert len(chips) == 4 + len(TAG_COLORS)
    for style in chips:
        assert contrast(style["color"], style["background"]) >= 4.5, style
    assert contrast("#FFFFFF", TAG_COLORS["O"]) < 1.5  # what the dark theme showed
    assert re.findall(r"font-size:(\d+)px", value) == ["15", "13"]
    table = probabilities_html(["a", "b"], np.array([0.3, 0.7]), lang)
    assert "background" not in table.replace(f"background:{BAR_COLOR}", "")
    assert "color:var(--jp-content-font-color1)" in table


def test_mismatched_parts_are_refused(parts):
    clf, tagger, tokenizer = parts
    with pytest.raises(ValueError, match="class_names must name the classifier's 12 classes"):
        FineTuneWidget(clf, tagger, tokenizer, ["a", "b"])
    with pytest.raises(ValueError, match="classifier and tagger must be a BERTClassifier"):
        FineTuneWidget(tagger, clf, tokenizer, class_names("topic"))
    small = BERTTagger(load_small_bert()[0], 3)
    with pytest.raises(ValueError, match="tagger must have one output per tag"):
        FineTuneWidget(clf, small, tokenizer, class_names("topic"))


@pytest.mark.parametrize("fmt", ["png", "svg", "pdf"])
def test_saving_saves_what_the_tables_show_as_a_figure(tmp_path, parts, fmt):
    w = FineTuneWidget(*parts[:3], class_names("topic", "zh"), "zh")
    w.text_a.value = "小明在公园里遛狗。"
    plot, order = w.plot, np.argsort(-w.probabilities, kind="stable")
    assert plot.class_labels.tokens == [class_names("topic", "zh")[i] for i in order]
    assert [t.get_text() for t in plot.numbers] == [f"{p:.3f}" for p in w.probabilities[order]]
    np.testing.assert_allclose([path.vertices[:, 0].max() for path in plot.bars.get_paths()],
                               w.probabilities[order], rtol=1e-6)
    tokens = w.encoded.tokens[1:-1]
    assert [t.get_text() for t in plot.tokens if t.get_visible()] == tokens
    colours = [to_hex(c).upper() for c in plot.chips.get_facecolors()]
    assert colours == [TAG_COLORS[TAGS[t]].upper() for t in w.tags]
    path = w.save(tmp_path / f"tune.{fmt}")
    data = path.read_bytes()
    if fmt == "png":
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
    elif fmt == "svg":
        assert "遛狗" in data.decode("utf-8")  # text stays text
    else:
        assert data.startswith(b"%PDF")


def test_the_save_buttons_save_into_the_current_folder(tmp_path, parts, monkeypatch):
    monkeypatch.chdir(tmp_path)
    w = FineTuneWidget(*parts[:3], class_names("topic", "zh"), "zh")
    w.save_buttons["png"].click()
    assert (tmp_path / "fine-tuning.png").read_bytes()[:4] == b"\x89PNG"
    assert w.message == text("saved", "zh", path="fine-tuning.png")
    w.text_a.value = " "  # nothing on screen: nothing to save, and the widget says why
    w.save_buttons["pdf"].click()
    assert w.message == text("save_hidden", "zh")
    assert not (tmp_path / "fine-tuning.pdf").exists()
    with pytest.raises(InputNotice, match=text("save_hidden", "zh")):
        w.save(tmp_path / "x.svg")


@pytest.mark.parametrize(("args", "message"), [
    (([0.5, 0.5], ["a"], [0]), r"need 3 probabilities and one tag per token"),
    (([0.2, 0.3, 0.5], ["a", "b"], [0]), r"need 3 probabilities and one tag per token"),
    (([0.2, 0.3, 0.5], ["a"], [4]), r"tags must be an integer in \[0, 3\]"),
    (([0.2, 0.3, 0.5], "ab", [0, 1]), "tokens must be a list of token strings, not a text"),
])
def test_bad_figure_input_is_named(args, message):
    with pytest.raises(ValueError, match=message):
        FineTunePlot(["a", "b", "c"], "en").update(*args)

import math
import re

import numpy as np
import pytest
import torch
from conftest import contrast, unfill
from matplotlib.colors import to_hex

from bertlib import BERTClassifier, BERTTagger, evaluate_task, fine_tune, load_small_bert
from bertlib.finetuning.finetune import Accuracy
from bertlib.finetuning.tasks import (
    NUM_TOPICS,
    TAGS,
    class_names,
    load_task_sentences,
    split_tasks,
    topic_data,
)
from bertlib.support.i18n import text
from bertlib.viz import FineTuneWidget, ScoredClassifier
from bertlib.viz._widget import InputNotice
from bertlib.viz.finetune import (
    BAR_COLOR,
    DEFAULT_SENTENCES,
    TAG_COLORS,
    probabilities_html,
    tags_html,
)

# Made-up held-out figures for the tests that do not look at them, out of the 72 held-out
# sentences of one word per language; the widest line they can make (100.0% and an interval
# with two-digit bounds), for the tests of the figure's width.
SCORES = {"en": Accuracy(72, 72), "zh": Accuracy(58, 72)}
NAMES = {"en": ("small BERT", "MiniLM"), "zh": ("小 BERT", "MiniLM（预训练）"),
         "ja": ("小さな BERT", "MiniLM（事前学習済み）")}


@pytest.fixture(scope="module")
def parts():
    bert, tokenizer = load_small_bert()
    return BERTClassifier(bert, NUM_TOPICS), BERTTagger(bert, len(TAGS)), tokenizer


@pytest.fixture(scope="module")
def split():
    return split_tasks(load_task_sentences())


@pytest.fixture(scope="module")
def held_out(split) -> list:
    """The held-out sentences of one word, both languages (words no classifier saw with a
    label): the topic task's."""
    return [s for s in split.held_out if s.topic is not None]


@pytest.fixture(scope="module")
def tuned(split) -> BERTClassifier:
    """The small BERT's classifier after 30 steps on the training sentences: right on some."""
    bert, tokenizer = load_small_bert()
    clf = BERTClassifier(bert, NUM_TOPICS)
    train = [s for s in split.train if s.topic is not None]
    fine_tune(clf, topic_data(train, tokenizer, 64), num_steps=30, lr=1e-3, seed=0,
              progress=False)
    return clf.eval()


def one(parts, lang: str | None = None) -> FineTuneWidget:
    """The widget with the small BERT's classifier only."""
    clf, tagger, tokenizer = parts
    return FineTuneWidget({"small BERT": ScoredClassifier(clf, tokenizer, SCORES)}, tagger,
                          tokenizer, class_names("topic", lang), lang)


def two(parts, minilm, lang: str) -> tuple[FineTuneWidget, BERTClassifier]:
    """The widget offering the small BERT's classifier and MiniLM's (an untrained head: the
    probabilities are what is compared, not their worth); and MiniLM's classifier."""
    clf, tagger, tokenizer = parts
    model, minilm_tokenizer = minilm
    other = BERTClassifier(model, NUM_TOPICS, seed=1)
    small, big = NAMES[lang]
    return FineTuneWidget({small: ScoredClassifier(clf, tokenizer, SCORES),
                           big: ScoredClassifier(other, minilm_tokenizer,
                                                 {"en": Accuracy(314, 370)})},
                          tagger, tokenizer, class_names("topic", lang), lang), other


def softmax_of(classifier, tokenizer, sentence: str) -> np.ndarray:
    """The classifier's probabilities for ``sentence``, run by hand on its own tokens."""
    specials = tokenizer.vocab.specials
    ids = torch.tensor([tokenizer.vocab[[specials.cls, *tokenizer.tokenize(sentence),
                                         specials.sep]]])
    with torch.no_grad():
        return classifier.eval()(ids, torch.zeros_like(ids))[0].softmax(-1).numpy()


@pytest.mark.parametrize("lang", ["en", "zh", "ja"])
def test_shows_the_classifier_softmax_and_the_tagger_argmax(parts, lang):
    clf, tagger, tokenizer = parts
    w = one(parts, lang)
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
    other = {"en": "They cooked dinner for their friends.", "zh": "他们请朋友来家里吃饭。",
             "ja": "They cooked dinner for their friends."}  # the model reads no Japanese
    w.text_a.value = other[lang]
    assert w.probability_table.value != before and w.message == ""


@pytest.mark.parametrize("lang", ["en", "zh", "ja"])
def test_empty_text_explains_itself_and_hides_the_outputs(parts, lang):
    """In the widget's own words: it has one sentence box, no "sentence A"."""
    w = one(parts, lang)
    accuracy = w.accuracy.value
    for empty in ("   ", "\u200b"):
        w.text_a.value = empty
        assert w.message == text("ft_empty", lang)
        assert w.probability_table.layout.display == "none"
        assert w.tag_chips.layout.display == "none"
        assert w.accuracy.value == accuracy  # the classifier's, whatever the sentence
    assert text("sentence_a", lang) not in w.message
    w.text_a.value = DEFAULT_SENTENCES[lang]
    assert w.message == "" and w.probability_table.layout.display is None


@pytest.mark.parametrize("lang", ["en", "zh", "ja"])
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


def wilson(hits: int, n: int) -> tuple[float, float]:
    """The 95% Wilson score interval, as Wilson (1927) and Agresti & Coull (1998) write it."""
    z, p = 1.959964, hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


@pytest.mark.parametrize("lang", ["en", "zh", "ja"])
def test_the_accuracy_line_is_the_held_out_evaluation(parts, tuned, minilm, held_out, lang):
    """What the widget says of each classifier is its accuracy on held-out sentences, counted
    here sentence by sentence with the model run by hand, with its Wilson interval, and
    chance, one in the six classes; a language the classifier was not evaluated on is said to
    be so."""
    _, tagger, tokenizer = parts
    clf = tuned
    model, minilm_tokenizer = minilm
    other = BERTClassifier(model, NUM_TOPICS, seed=1)
    english = [s for s in held_out if s.lang == "en"]
    scores = {
        "small": {code: evaluate_task(clf, topic_data([s for s in held_out if s.lang == code],
                                                      tokenizer, 64), NUM_TOPICS).overall
                  for code in ("en", "zh")},
        "minilm": {"en": evaluate_task(other, topic_data(english, minilm_tokenizer, 64),
                                       NUM_TOPICS).overall},
    }
    w = FineTuneWidget({"small": ScoredClassifier(clf, tokenizer, scores["small"]),
                        "minilm": ScoredClassifier(other, minilm_tokenizer, scores["minilm"])},
                       tagger, tokenizer, class_names("topic", lang), lang)

    def score(model, tok, code: str) -> str:
        sentences = [s for s in held_out if s.lang == code]
        hits = sum(int(softmax_of(model, tok, s.text).argmax()) == s.topic for s in sentences)
        value, (low, high) = hits / len(sentences), wilson(hits, len(sentences))
        numbers = f"{100 * value:.1f}%", f"{100 * low:.1f}%", f"{100 * high:.1f}%"
        return {"en": "{} (95% interval {}–{})", "zh": "{}（95% 置信区间 {}–{}）",
                "ja": "{}（95% 信頼区間 {}–{}）"}[lang].format(*numbers)

    expected = {
        "en": "Right on test sentences with held-out words: English {}; Chinese {}. Chance: "
              "1/6 = 16.7%.",
        "zh": "在含留出词的测试句子上的准确率——英文：{}；中文：{}。随机猜测：1/6 = 16.7%。",
        "ja": "ホールドアウトした単語を含むテスト文での正解率：英語 {}、中国語 {}。"
              "チャンスレベル：1/6 = 16.7%。",
    }[lang]
    absent = {"en": "not measured", "zh": "未测量", "ja": "未測定"}[lang]
    for name, line in [
        ("small", expected.format(score(clf, tokenizer, "en"), score(clf, tokenizer, "zh"))),
        ("minilm", expected.format(score(other, minilm_tokenizer, "en"), absent)),
    ]:
        w.choice.value = name
        assert f">{line}</div>" in w.accuracy.value
        assert w.plot.heading.get_text() == name
        assert unfill(w.plot.accuracy.get_text()) == line + "\n"  # in lines for the figure
        assert w.choice.tooltips[list(scores).index(name)] == line


@pytest.mark.parametrize("lang", ["en", "zh", "ja"])
def test_another_classifier_reads_the_sentence_with_its_own_tokenizer(parts, minilm, lang):
    """Switching the classifier draws the other model's probabilities, for its own tokens; the
    tags stay the tagger's, on the tagger's tokens."""
    clf, _, tokenizer = parts
    w, other = two(parts, minilm, lang)
    sentence = "The children played football in the park after school."
    w.text_a.value = sentence
    tags = w.tags
    small, big = NAMES[lang]
    assert w.choice.value == small and w.choice.layout.display == "flex"
    np.testing.assert_allclose(w.probabilities, softmax_of(clf, tokenizer, sentence), rtol=1e-5)
    w.choice.value = big
    mine = softmax_of(other, minilm[1], sentence)
    np.testing.assert_allclose(w.probabilities, mine, rtol=1e-4, atol=1e-7)
    assert not np.allclose(mine, softmax_of(clf, tokenizer, sentence), atol=1e-3)
    assert w.tags == tags and w.encoded.tokens[1:-1] == tokenizer.tokenize(sentence)
    order = np.argsort(-mine, kind="stable")
    np.testing.assert_allclose([path.vertices[:, 0].max() for path in w.plot.bars.get_paths()],
                               mine[order], rtol=1e-4)
    assert f"{mine[order[0]]:.3f}" in w.probability_table.value
    assert w.message == ""  # MiniLM knows every piece of this sentence
    w.choice.value = small
    np.testing.assert_allclose(w.probabilities, softmax_of(clf, tokenizer, sentence), rtol=1e-5)


def test_what_the_classifier_cannot_read_is_said_in_its_words(parts, minilm):
    """MiniLM's vocabulary lacks many Chinese characters: the widget counts them as the
    classifier's, whose pieces it does not show."""
    w, _ = two(parts, minilm, "zh")
    w.choice.value = NAMES["zh"][1]
    unknown = minilm[1].tokenize(DEFAULT_SENTENCES["zh"]).count("[UNK]")
    assert unknown > 0
    assert w.message == text("ft_unknown", "zh", count=unknown, unk="[UNK]")
    assert "分类器的词表" in w.message


def test_the_chinese_widget_words_everything_in_chinese(parts, minilm):
    w, _ = two(parts, minilm, "zh")
    shown = [w.choice.description, w.choice.tooltip, *w.choice.tooltips,
             re.sub("<[^>]+>", " ", w.accuracy.value), w.plot.accuracy.get_text()]
    w.choice.value = NAMES["zh"][1]
    shown += [re.sub("<[^>]+>", " ", w.accuracy.value), w.plot.accuracy.get_text(),
              w.plot.heading.get_text()]
    for label in shown:
        assert re.search(r"[\u4e00-\u9fff]", label), label
        # Latin words: only the model's name and acronyms (BERT)
        assert {word for word in re.findall(r"[A-Za-z]{2,}", label)} <= {"MiniLM", "BERT"}, label


@pytest.mark.parametrize("lang", ["en", "zh", "ja"])
def test_the_figure_shows_the_classifier_and_its_accuracy_within_its_width(parts, minilm, lang):
    w, _ = two(parts, minilm, lang)
    figure = w.plot.figure
    assert w.picture() == w.plot.png()  # the picture the notebook keeps: the figure's
    renderer = figure.canvas.get_renderer()
    for t in (w.plot.heading, w.plot.accuracy):
        box = t.get_window_extent(renderer)
        assert box.x0 >= 0 and box.x1 <= figure.bbox.width and box.y1 <= figure.bbox.height
    assert w.plot.accuracy.get_text().count("\n") == 1  # two lines in the figure's header


def test_a_single_classifier_has_no_buttons(parts):
    assert one(parts).choice.layout.display == "none"


def test_mismatched_parts_are_refused(parts, minilm):
    clf, tagger, tokenizer = parts
    scored = ScoredClassifier(clf, tokenizer, SCORES)
    with pytest.raises(ValueError, match="class_names must name the 'small' classifier's 6 "):
        FineTuneWidget({"small": scored}, tagger, tokenizer, ["a", "b"])
    with pytest.raises(ValueError, match="classifier must be a BERTClassifier; got BERTTagger"):
        ScoredClassifier(tagger, tokenizer, SCORES)
    with pytest.raises(ValueError, match="tagger must be a BERTTagger; got BERTClassifier"):
        FineTuneWidget({"small": scored}, clf, tokenizer, class_names("topic"))
    # 1927: the shipped small BERT's vocabulary (assets/small_bert/config.json); MiniLM's 30522
    with pytest.raises(ValueError, match=r"tokenizer has 30522 tokens but the classifier's "
                                         r"vocab_size is 1927"):
        ScoredClassifier(clf, minilm[1], SCORES)
    with pytest.raises(ValueError, match=r"the tagger's vocab_size is 1927"):
        FineTuneWidget({"small": scored}, tagger, minilm[1], class_names("topic"))


@pytest.mark.parametrize("accuracy", [
    {}, {"fr": Accuracy(1, 2)}, {"en": 0.194}, [Accuracy(1, 2)], None,
])
def test_an_accuracy_that_is_no_evaluation_is_refused(parts, accuracy):
    clf, _, tokenizer = parts
    with pytest.raises(ValueError, match=r"accuracy must map some of the languages \['en', "
                                         r"'zh'\] to held-out Accuracy values"):
        ScoredClassifier(clf, tokenizer, accuracy)


@pytest.mark.parametrize("classifiers", [{}, [], {"": "x"}, {"  ": None}, {"a": "b"}, None])
def test_classifiers_must_be_named_scored_classifiers(parts, classifiers):
    _, tagger, tokenizer = parts
    with pytest.raises(ValueError, match=r"classifiers must map names to ScoredClassifier"):
        FineTuneWidget(classifiers, tagger, tokenizer, class_names("topic"))


@pytest.mark.parametrize("fmt", ["png", "svg", "pdf"])
def test_saving_saves_what_the_tables_show_as_a_figure(tmp_path, parts, fmt):
    w = one(parts, "zh")
    w.text_a.value = "小明在公园里看狗。"  # every character in the small BERT's vocabulary
    plot, order = w.plot, np.argsort(-w.probabilities, kind="stable")
    assert plot.class_labels.tokens == [class_names("topic", "zh")[i] for i in order]
    assert [t.get_text() for t in plot.numbers] == [f"{p:.3f}" for p in w.probabilities[order]]
    np.testing.assert_allclose([path.vertices[:, 0].max() for path in plot.bars.get_paths()],
                               w.probabilities[order], rtol=1e-6)
    tokens = w.encoded.tokens[1:-1]
    assert parts[2].vocab.specials.unk not in tokens
    assert [t.get_text() for t in plot.tokens if t.get_visible()] == tokens
    colours = [to_hex(c).upper() for c in plot.chips.get_facecolors()]
    assert colours == [TAG_COLORS[TAGS[t]].upper() for t in w.tags]
    path = w.save(tmp_path / f"tune.{fmt}")
    data = path.read_bytes()
    if fmt == "png":
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
    elif fmt == "svg":
        svg = data.decode("utf-8")
        for label in [*class_names("topic", "zh"), *tokens]:  # text stays text
            assert f">{label}</text>" in svg, label
        assert "small BERT" in svg  # the classifier, and how good it is
        assert text("ft_accuracy", "zh", en="\0", zh="\0", classes=0, chance=0
                    ).split("\0")[0] in svg
    else:
        assert data.startswith(b"%PDF")


def test_the_save_buttons_save_into_the_current_folder(tmp_path, parts, monkeypatch):
    monkeypatch.chdir(tmp_path)
    w = one(parts, "zh")
    w.save_buttons["png"].click()
    assert (tmp_path / "fine-tuning.png").read_bytes()[:4] == b"\x89PNG"
    assert w.message == text("saved", "zh", path="fine-tuning.png")
    w.text_a.value = " "  # nothing on screen: nothing to save, and the widget says why
    w.save_buttons["pdf"].click()
    assert w.message == text("save_hidden", "zh")
    assert not (tmp_path / "fine-tuning.pdf").exists()
    with pytest.raises(InputNotice, match=text("save_hidden", "zh")):
        w.save(tmp_path / "x.svg")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_lone_surrogate_in_the_sentence_gets_a_notice(parts, lang):
    """Before: TypeError: TextInputSequence must be str, out of the text box's callback."""
    w = one(parts, lang)
    before = w.text_a.value
    w.text_a.value = "a \udc80 b"
    assert w.message == text("lone_surrogate", lang, box=text("ft_sentence", lang),
                             code="\\udc80")
    w.text_a.value = before
    assert "\\udc80" not in w.message

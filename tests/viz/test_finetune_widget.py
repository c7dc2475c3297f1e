import numpy as np
import pytest
import torch

from bertlib import BERTClassifier, BERTTagger, load_small_bert
from bertlib.i18n import text
from bertlib.tasks import NUM_TOPICS, TAGS, class_names
from bertlib.viz import FineTuneWidget
from bertlib.viz.finetune import DEFAULT_SENTENCES


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


def test_empty_text_explains_itself_and_hides_the_outputs(parts):
    w = FineTuneWidget(*parts[:2], parts[2], class_names("topic", "zh"), "zh")
    w.text_a.value = "   "
    assert w.message == text("empty_text", "zh")
    assert w.probability_table.layout.display == "none"


def test_mismatched_parts_are_refused(parts):
    clf, tagger, tokenizer = parts
    with pytest.raises(ValueError, match="class_names must name the classifier's 12 classes"):
        FineTuneWidget(clf, tagger, tokenizer, ["a", "b"])
    with pytest.raises(ValueError, match="classifier and tagger must be a BERTClassifier"):
        FineTuneWidget(tagger, clf, tokenizer, class_names("topic"))
    small = BERTTagger(load_small_bert()[0], 3)
    with pytest.raises(ValueError, match="tagger must have one output per tag"):
        FineTuneWidget(clf, small, tokenizer, class_names("topic"))


def test_saving_says_there_is_no_figure(tmp_path, parts):
    w = FineTuneWidget(*parts[:3], class_names("topic", "en"), "en")
    with pytest.raises(ValueError, match="FineTuneWidget shows HTML tables, not a figure"):
        w.save(tmp_path / "x.png")

"""A fine-tuned classifier and tagger at work: type a sentence, see the class probabilities and
one tag per token (HTML only: no figure to redraw, so it answers at typing speed)."""

from __future__ import annotations

import html
from collections.abc import Sequence

import ipywidgets as widgets
import numpy as np

from bertlib.finetune import BERTClassifier, BERTTagger
from bertlib.i18n import text
from bertlib.inputs import EncodedInput, eval_mode, model_device
from bertlib.tasks import TAGS
from bertlib.tokenizer import WordPieceTokenizer
from bertlib.viz._widget import Widget, check_tokenizer, text_box

# New sentences, in no template of the corpus, about the train trip and the market.
DEFAULT_SENTENCES = {
    "en": "On Sunday, Grace took the train to the old city.",
    "zh": "星期天，王芳坐火车去杭州看望奶奶。",
}
TAG_COLORS = {"O": "#F2F2F2", "NAME": "#56B4E9", "PLACE": "#E69F00", "TIME": "#009E73"}
BAR_COLOR = "#0072B2"


def probabilities_html(names: Sequence[str], probabilities: np.ndarray, lang: str) -> str:
    """Each class with its probability as a number and a bar, most probable first."""
    rows = "".join(
        f"<tr><td style='padding:1px 8px;white-space:nowrap'>{html.escape(names[i])}</td>"
        f"<td style='padding:1px 8px;text-align:right'>{probabilities[i]:.3f}</td>"
        f"<td style='width:240px'><div style='background:{BAR_COLOR};height:12px;"
        f"width:{100 * probabilities[i]:.1f}%'></div></td></tr>"
        for i in np.argsort(-probabilities, kind="stable"))
    head = "".join(f"<th style='text-align:left;padding:1px 8px'>{text(k, lang)}</th>"
                   for k in ("ft_class", "ft_probability"))
    return (f"<b>{html.escape(text('ft_probabilities', lang))}</b>"
            f"<table style='font-size:14px'><tr>{head}<th></th></tr>{rows}</table>")


def tags_html(tokens: Sequence[str], tags: Sequence[int], lang: str) -> str:
    """The tokens as chips coloured by their tag, with a legend."""
    chips = "".join(
        f"<span style='background:{TAG_COLORS[TAGS[t]]};padding:2px 5px;margin:1px;"
        f"display:inline-block;border-radius:3px' title='{text('tag_' + TAGS[t], lang)}'>"
        f"{html.escape(tok)}</span>" for tok, t in zip(tokens, tags, strict=True))
    legend = " ".join(f"<span style='background:{color};padding:1px 6px;border-radius:3px'>"
                      f"{text('tag_' + tag, lang)}</span>" for tag, color in TAG_COLORS.items())
    return (f"<b>{html.escape(text('ft_tags', lang))}</b><div style='font-size:15px'>{chips}"
            f"</div><div style='font-size:12px;margin-top:4px'>{legend}</div>")


class FineTuneWidget(Widget):
    """A sentence -> the classifier's probabilities for each class and the tagger's tags.

    ``.probabilities`` (C,) and ``.tags`` (one tag id per token between ``<cls>`` and
    ``<sep>``) keep what is shown, so tests can drive the widget without a browser.
    """

    def __init__(self, classifier: BERTClassifier, tagger: BERTTagger,
                 tokenizer: WordPieceTokenizer, class_names: Sequence[str],
                 lang: str | None = None, *, sentence: str | None = None):
        super().__init__(lang)
        check_tokenizer(tokenizer)
        if not isinstance(classifier, BERTClassifier) or not isinstance(tagger, BERTTagger):
            raise ValueError(f"classifier and tagger must be a BERTClassifier and a BERTTagger; "
                             f"got {type(classifier).__name__} and {type(tagger).__name__}")
        if classifier.output.out_features != len(class_names):
            raise ValueError(f"class_names must name the classifier's "
                             f"{classifier.output.out_features} classes; got "
                             f"{len(class_names)} names")
        if tagger.output.out_features != len(TAGS):
            raise ValueError(f"tagger must have one output per tag in {TAGS}; got "
                             f"{tagger.output.out_features}")
        vocab_size = len(tokenizer.vocab)
        for name, model in (("classifier", classifier), ("tagger", tagger)):
            if model.encoder.config.vocab_size != vocab_size:
                raise ValueError(f"{name}'s vocab_size={model.encoder.config.vocab_size} must "
                                 f"equal len(tokenizer.vocab)={vocab_size}")
        self.classifier, self.tagger, self.tokenizer = classifier, tagger, tokenizer
        self.class_names = list(class_names)
        default = DEFAULT_SENTENCES[self.lang] if sentence is None else sentence
        self.text_a = text_box("ft_sentence", default, self.lang)
        self.text_b = widgets.Text(value="")  # no sentence B: Widget._encode reads both boxes
        self.probability_table = widgets.HTML()
        self.tag_chips = widgets.HTML()
        self.encoded: EncodedInput | None = None
        self.probabilities: np.ndarray | None = None
        self.tags: list[int] | None = None
        self.text_a.observe(lambda _: self.refresh(), names="value")
        self.ui = widgets.VBox([self.text_a, self.status, self.probability_table, self.tag_chips])
        self.refresh()

    def shown_figure(self):
        raise ValueError("FineTuneWidget shows HTML tables, not a figure: there is nothing to "
                         "save; copy the tables, or save a figure of another widget")

    def refresh(self) -> None:
        self._guarded(self._draw, [self.probability_table, self.tag_chips])

    def _draw(self) -> list[str]:
        max_len = min(self.classifier.encoder.config.max_len,
                      self.tagger.encoder.config.max_len)
        enc, notices = self._encode(self.tokenizer, max_len)  # an empty text is explained
        with eval_mode(self.classifier), eval_mode(self.tagger):
            logits = self.classifier(*enc.tensors(model_device(self.classifier)))
            tag_logits = self.tagger(*enc.tensors(model_device(self.tagger)))
        self.encoded = enc
        self.probabilities = logits[0].softmax(-1).cpu().numpy().astype(float)
        self.tags = tag_logits[0, 1:-1].argmax(-1).tolist()
        self.probability_table.value = probabilities_html(self.class_names, self.probabilities,
                                                          self.lang)
        self.tag_chips.value = tags_html(enc.tokens[1:-1], self.tags, self.lang)
        return notices

"""A fine-tuned classifier and tagger at work: class probabilities and tags as HTML (at typing
speed; a figure to save), with the classifier's held-out accuracy."""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import ipywidgets as widgets
import numpy as np
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.transforms import offset_copy

from bertlib.finetuning.finetune import Accuracy, BERTClassifier, BERTTagger
from bertlib.finetuning.tasks import TAGS
from bertlib.inputs import eval_mode, model_device
from bertlib.support.checks import check_instance, check_str, check_tokens, check_vocab_fits
from bertlib.support.i18n import CORPUS_LANGUAGES, fill, text
from bertlib.text.tokenizer import WordPieceTokenizer
from bertlib.viz._render import NumberText, StampedText, TokenLabels, hbar_verts, spines
from bertlib.viz._widget import Widget, text_box, toggle_buttons, toggle_style
from bertlib.viz.live import LiveFigure
from bertlib.viz.style import PAGE_WIDTH, literal

# A held-out word (one no labelled training sentence holds) in a frame no training sentence
# uses: notebook 11's fine-tuned small BERT classifies both, and tags Lisbon a place and 郑凯 a
# name (the widget in notebook 11 shows both).
DEFAULT_SENTENCES = {
    "en": "Everyone was talking about Lisbon.",
    "zh": "大家都在谈论郑凯。",
}
DEFAULT_SENTENCES["ja"] = DEFAULT_SENTENCES["en"]  # the model reads English and Chinese only
TAG_COLORS = {"O": "#F2F2F2", "NAME": "#56B4E9", "PLACE": "#E69F00", "TIME": "#009E73"}
BAR_COLOR = "#0072B2"
TAG_TEXT_COLOR = "#000000"  # on every tag colour (see tags_html)


@dataclass(frozen=True)
class ScoredClassifier:
    """A classifier, its tokenizer, its held-out accuracy per language (``evaluate_task``)."""

    classifier: BERTClassifier
    tokenizer: WordPieceTokenizer
    accuracy: Mapping[str, Accuracy]

    def __post_init__(self):
        check_instance("classifier", self.classifier, BERTClassifier, "a BERTClassifier")
        check_vocab_fits("tokenizer", len(self.tokenizer.vocab),
                         self.classifier.encoder.config.vocab_size, "classifier")
        if (not isinstance(self.accuracy, Mapping) or not self.accuracy
                or not set(self.accuracy) <= set(CORPUS_LANGUAGES)
                or not all(isinstance(a, Accuracy) for a in self.accuracy.values())):
            raise ValueError(f"accuracy must map some of the languages "
                             f"{list(CORPUS_LANGUAGES)} to held-out Accuracy values "
                             f"(evaluate_task(...).overall); got {self.accuracy!r:.200}")


def percent(share: float) -> str:  # 0.1942 -> "19.4%"
    return f"{100 * share:.1f}%"


def accuracy_text(accuracy: Mapping[str, Accuracy], num_classes: int, lang: str) -> str:
    """Held-out accuracy per language with 95% intervals, and the chance level."""
    scores = dict.fromkeys(CORPUS_LANGUAGES, text("ft_not_measured", lang))
    for code, score in accuracy.items():
        low, high = score.interval
        scores[code] = text("ft_score", lang, value=percent(score.value), low=percent(low),
                            high=percent(high))
    return text("ft_accuracy", lang, classes=num_classes, chance=percent(1 / num_classes),
                **scores)


def accuracy_html(accuracy: str) -> str:
    """The accuracy line in the theme's text colour (16.1:1 on white, 18.9:1 on Dark)."""
    return (f"<div style='font-size:14px;line-height:1.4;color:var(--jp-content-font-color1);"
            f"border-left:4px solid {BAR_COLOR};padding:2px 8px;margin:2px 0;"
            f"white-space:normal'>{html.escape(accuracy)}</div>")


def probabilities_html(names: Sequence[str], probabilities: np.ndarray, lang: str) -> str:
    # The theme's text colour; the bars stand out 5.2:1 on white and 3.6:1 on JupyterLab Dark
    # (WCAG asks 3:1 of a graphic). Rows 20 px high, not 28: the tags still fit a projector.
    rows = "".join(
        f"<tr><td style='padding:1px 8px;white-space:nowrap'>{html.escape(names[i])}</td>"
        f"<td style='padding:1px 8px;text-align:right'>{probabilities[i]:.3f}</td>"
        f"<td style='width:240px'><div style='background:{BAR_COLOR};height:12px;"
        f"width:{100 * probabilities[i]:.1f}%'></div></td></tr>"
        for i in np.argsort(-probabilities, kind="stable"))
    head = "".join(f"<th style='text-align:left;padding:1px 8px'>{text(k, lang)}</th>"
                   for k in ("ft_class", "ft_probability"))
    return (f"<b>{html.escape(text('ft_probabilities', lang))}</b>"
            f"<table style='font-size:14px;line-height:20px;color:var(--jp-content-font-color1)'>"
            f"<tr>{head}<th></th></tr>{rows}</table>")


def tags_html(tokens: Sequence[str], tags: Sequence[int], lang: str) -> str:
    # Each chip sets its own text colour, whatever the theme's: black on #F2F2F2 is 18.8:1, on
    # #56B4E9 9.1:1, on #E69F00 9.3:1, on #009E73 6.1:1 (WCAG AA: 4.5:1).
    chips = "".join(
        f"<span style='background:{TAG_COLORS[TAGS[t]]};color:{TAG_TEXT_COLOR};"
        f"padding:2px 5px;margin:1px;display:inline-block;border-radius:3px' "
        f"title='{text('tag_' + TAGS[t], lang)}'>{html.escape(tok)}</span>"
        for tok, t in zip(tokens, tags, strict=True))
    legend = " ".join(f"<span style='background:{color};color:{TAG_TEXT_COLOR};"
                      f"padding:1px 6px;border-radius:3px;display:inline-block'>"
                      f"{text('tag_' + tag, lang)}</span>" for tag, color in TAG_COLORS.items())
    return (f"<b>{html.escape(text('ft_tags', lang))}</b>"
            f"<div style='font-size:15px;line-height:normal'>{chips}</div>"
            f"<div style='font-size:13px;line-height:normal;margin-top:4px'>{legend}</div>")


CHIP_COLUMNS = 8  # tokens per row of the figure's tags
ROW = 0.3  # inches per class, and (x 1.6) per row of tokens
HEADER = 0.75  # inches above the probabilities: the classifier's name, its accuracy in 2 lines
# Columns per line of the accuracy (a Chinese character takes two): at 10 points, 10's lines
# take 670 px (English) and 630 px (Chinese) of the figure's 828.
ACCURACY_COLUMNS = 100


class FineTunePlot(LiveFigure):
    """What :class:`FineTuneWidget` shows, as a figure to save."""

    def __init__(self, class_names: Sequence[str], lang: str | None = None):
        self.num_classes = len(class_names)
        self.class_names = list(class_names)
        super().__init__(PAGE_WIDTH, 5, lang)
        self.ax_probs = self.figure.add_axes((0, 0, 1, 1), xlim=(0, 1),
                                             ylim=(self.num_classes - 0.5, -0.5),
                                             xlabel=text("ft_probability", self.lang))
        self.ax_probs.set_title(text("ft_probabilities", self.lang), loc="left")
        self.ax_tags = self.figure.add_axes((0, 0, 1, 1), xlim=(0, CHIP_COLUMNS))
        self.ax_tags.set_axis_off()
        self.ax_tags.set_title(text("ft_tags", self.lang), loc="left")
        self.legend = self.ax_tags.legend(
            handles=[Patch(facecolor=color, label=text("tag_" + tag, self.lang))
                     for tag, color in TAG_COLORS.items()],
            loc="lower right", bbox_to_anchor=(1.0, 1.0), ncol=len(TAGS), frameon=False)
        self.bars = self.ax_probs.add_collection(PolyCollection([], facecolors=BAR_COLOR),
                                                 autolim=False)
        # Right of the bars, their baselines a third of the font below each row's centre.
        beside = offset_copy(self.ax_probs.get_yaxis_transform(), self.figure, y=-0.35 * 11,
                             units="points")
        self.numbers = [self.ax_probs.add_artist(NumberText(
            1.01, i, "", transform=beside, fontsize=11, clip_on=False,
            stamps=self.blitter.stamps)) for i in range(self.num_classes)]
        self.chips = self.ax_tags.add_collection(PolyCollection([], edgecolors="#888888"),
                                                 autolim=False)
        self.tokens: list[StampedText] = []
        self.heading = self.figure.text(0, 0, "", fontsize=12, va="top")
        self.accuracy = self.figure.text(0, 0, "", fontsize=10, va="top")
        self.blitter.animate(self.bars, *self.numbers, self.chips, self.heading, self.accuracy,
                             *spines([self.ax_probs]))
        self.class_labels = TokenLabels(self.ax_probs, self.blitter, "y")
        self._rows: int | None = None

    def _layout(self, rows: int) -> None:  # for ``rows`` rows of tokens
        probs, tags = ROW * self.num_classes, 1.6 * ROW * rows
        height = HEADER + 0.5 + probs + 0.9 + 0.6 + tags + 0.2
        self.figure.set_size_inches(PAGE_WIDTH, height)
        self.heading.set_position((0.1 / PAGE_WIDTH, 1 - 0.08 / height))
        self.accuracy.set_position((0.1 / PAGE_WIDTH, 1 - 0.33 / height))
        # In inches: 2.2 left for the class names, 1.0 right for the probabilities' numbers.
        self.ax_probs.set_position((2.2 / PAGE_WIDTH, 1 - (HEADER + 0.5 + probs) / height,
                                    (PAGE_WIDTH - 3.2) / PAGE_WIDTH, probs / height))
        self.ax_tags.set_position((0.2 / PAGE_WIDTH, 0.2 / height, (PAGE_WIDTH - 0.4) / PAGE_WIDTH,
                                   tags / height))
        self.ax_tags.set_ylim(rows, 0)
        self._rows = rows

    def update(self, probabilities: np.ndarray, tokens: Sequence[str], tags: Sequence[int],
               *, heading: str = "", accuracy: str = "") -> Figure:
        """probabilities: (C,); heading: the classifier's name; accuracy: its line."""
        rows = max(1, math.ceil(len(tokens) / CHIP_COLUMNS))
        if rows != self._rows:
            self._layout(rows)
        self.heading.set_text(literal(heading))
        self.accuracy.set_text(literal(fill(accuracy, ACCURACY_COLUMNS)))
        order = np.argsort(-probabilities, kind="stable")
        self.class_labels.set([self.class_names[i] for i in order], 11)
        self.bars.set_verts(hbar_verts(probabilities[order], 0.35))
        for t, p in zip(self.numbers, probabilities[order], strict=True):
            t.set_text(f"{p:.3f}")
        cells = [(i % CHIP_COLUMNS, i // CHIP_COLUMNS) for i in range(len(tokens))]
        self.chips.set_verts([[(x + 0.04, y + 0.1), (x + 0.96, y + 0.1), (x + 0.96, y + 0.9),
                               (x + 0.04, y + 0.9)] for x, y in cells])
        self.chips.set_facecolors([TAG_COLORS[TAGS[t]] for t in tags])
        new = [self.ax_tags.add_artist(StampedText(0, 0, "", ha="center", va="center",
                                                   fontsize=12, stamps=self.blitter.stamps))
               for _ in range(len(self.tokens), len(tokens))]
        self.blitter.animate(*new)
        self.tokens.extend(new)
        for i, t in enumerate(self.tokens):
            t.set_visible(i < len(tokens))
            if i < len(tokens):
                t.set_position((cells[i][0] + 0.5, cells[i][1] + 0.5))
                t.set_text(literal(tokens[i]))
        return self.figure


class FineTuneWidget(Widget):
    """A sentence -> class probabilities and tags. ``classifiers``: button names to
    :class:`ScoredClassifier`, the first shown first; the tagger reads with ``tokenizer``."""

    name = "fine-tuning"
    empty_text = "ft_empty"  # its one sentence box is no "sentence A"

    def __init__(self, classifiers: Mapping[str, ScoredClassifier], tagger: BERTTagger,
                 tokenizer: WordPieceTokenizer, class_names: Sequence[str],
                 lang: str | None = None, *, sentence: str | None = None):
        super().__init__(lang)
        if not classifiers or not all(isinstance(v, ScoredClassifier)
                                      for v in classifiers.values()):
            raise ValueError(f"classifiers must map names to "
                             f"ScoredClassifier(classifier, tokenizer, accuracy); got "
                             f"{classifiers!r:.200}")
        check_tokens("class_names", class_names)
        check_instance("tagger", tagger, BERTTagger, "a BERTTagger")
        for name, choice in classifiers.items():
            if choice.classifier.output.out_features != len(class_names):
                raise ValueError(f"class_names must name the {name!r} classifier's "
                                 f"{choice.classifier.output.out_features} classes; got "
                                 f"{len(class_names)} names")
        check_vocab_fits("tokenizer", len(tokenizer.vocab), tagger.encoder.config.vocab_size,
                         "tagger")
        if sentence is not None:
            check_str("sentence", sentence)
        self.classifiers, self.tagger, self.tokenizer = dict(classifiers), tagger, tokenizer
        self.class_names = list(class_names)
        self.accuracy_texts = {name: accuracy_text(choice.accuracy, len(class_names), self.lang)
                               for name, choice in classifiers.items()}
        default = DEFAULT_SENTENCES[self.lang] if sentence is None else sentence
        self.text_a = text_box("ft_sentence", default, self.lang)
        self.text_b = widgets.Text(value="")  # no sentence B: Widget._encode reads both boxes
        # One button per classifier, as wide as its name (ipywidgets' 148 px would cut it);
        # hidden when there is nothing to choose.
        self.choice = toggle_buttons(
            options=list(classifiers), description=text("ft_classifier", self.lang),
            tooltip=text("ft_classifier_tip", self.lang),
            tooltips=list(self.accuracy_texts.values()), style={"button_width": "auto"},
            layout=widgets.Layout(display="flex" if len(classifiers) > 1 else "none",
                                  flex_flow="row wrap", align_items="center"))
        self.accuracy = widgets.HTML()
        self.probability_table = widgets.HTML()
        self.tag_chips = widgets.HTML()
        self.plot = FineTunePlot(self.class_names, self.lang)
        self.probabilities: np.ndarray | None = None
        self.tags: list[int] | None = None
        self.text_a.observe(lambda _: self.refresh(), names="value")
        self.choice.observe(lambda _: self.refresh(), names="value")
        self.ui = widgets.VBox([self.text_a, self.choice, self.accuracy, self.status,
                                self.probability_table, self.tag_chips, self._save_controls(),
                                toggle_style()])
        self.refresh()

    def _figures(self) -> dict[str, tuple[LiveFigure, widgets.Widget]]:
        return {self.name: (self.plot, self.probability_table)}

    def refresh(self) -> None:
        # The accuracy is the classifier's, shown whatever the sentence.
        self.accuracy.value = accuracy_html(self.accuracy_texts[self.choice.value])
        self._guarded(self._draw, [self.probability_table, self.tag_chips])

    def _draw(self) -> list[str]:
        chosen = self.classifiers[self.choice.value]
        classifier, tag_len = chosen.classifier, self.tagger.encoder.config.max_len
        max_len = classifier.encoder.config.max_len
        shared = chosen.tokenizer is self.tokenizer  # one encoding, which both models read
        enc, notices = self._encode(self.tokenizer, min(tag_len, max_len) if shared else tag_len)
        read = enc
        if not shared:  # the classifier's own pieces, which the widget does not show
            read, more = self._encode(chosen.tokenizer, max_len, unknown="ft_unknown")
            notices = list(dict.fromkeys(notices + more))
        with eval_mode(classifier), eval_mode(self.tagger):
            logits = classifier(*read.tensors(model_device(classifier)))
            tag_logits = self.tagger(*enc.tensors(model_device(self.tagger)))
        self.encoded = enc
        self.probabilities = logits[0].softmax(-1).cpu().numpy().astype(float)
        self.tags = tag_logits[0, 1:-1].argmax(-1).tolist()
        self.probability_table.value = probabilities_html(self.class_names, self.probabilities,
                                                          self.lang)
        self.tag_chips.value = tags_html(enc.tokens[1:-1], self.tags, self.lang)
        self.plot.update(self.probabilities, enc.tokens[1:-1], self.tags,  # drawn when saved
                         heading=self.choice.value,
                         accuracy=self.accuracy_texts[self.choice.value])
        return notices

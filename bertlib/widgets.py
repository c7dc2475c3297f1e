"""ipywidgets front ends for the figures of :mod:`bertlib.plots`.

Each widget is displayable directly in a notebook (it delegates to its ``.ui`` container),
exposes its controls as attributes, and keeps the data behind what it draws (``.encoded``,
``.attentions``, ``.masked``, ``.tally``, ``.probabilities``, the plot objects and their
artists) so tests can drive it without a browser. Figures are sent as PNG bytes to
``ipywidgets.Image``: no JavaScript beyond ipywidgets' own, so they work offline.

Models run in eval mode under ``torch.no_grad()``; model outputs are computed once per text
change, and the layer/head/query controls only re-slice them.
"""

from __future__ import annotations

import contextlib
import html
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import ipywidgets as widgets
import numpy as np
import torch

from bertlib.data import truncate_pair
from bertlib.i18n import resolve_language, text
from bertlib.masking import Fate, MaskedTokens, make_generator, mask_tokens
from bertlib.model import BERTModel, get_tokens_and_segments
from bertlib.plots import (
    FATE_KEYS,
    SEGMENT_COLORS,
    AllHeadsPlot,
    AttentionPlot,
    AttentionView,
    ChipsPlot,
    EmbeddingParts,
    EmbeddingPlot,
    MaskTally,
    NSPPlot,
    TallyPlot,
)
from bertlib.tokenizer import WordPieceTokenizer

# Two consecutive sentences of one story in the shipped corpus (data/small_corpus), per
# language: the small pretrained model knows their words, and its NSP head tells their order
# (P(IsNext) 0.88 as written, 0.03 swapped in English; 0.88 and 0.03 in Chinese).
DEFAULT_TEXTS = {
    "en": ("When Peter woke up on Friday, it was raining hard.",
           "The plan to walk in the park had to wait."),
    "zh": ("上半场，他的球队一直落后。", "后来小明抓住机会，为球队得了分。"),
}
MASKING_MAX_LEN = 64  # beyond this the chips get too small to read
MEAN_HEAD = -1  # the head selector's value for the mean over heads


class InputNotice(ValueError):
    """Bad input the widget explains in the reader's language (empty text, missing B)."""


@dataclass(frozen=True)
class EncodedInput:
    """``<cls> A <sep> [B <sep>]`` as tokens, ids and segments, after truncation.

    boundary: index of the first sentence-B token, None without B; notices: translated
    messages about truncation and unknown words.
    """

    tokens: list[str]
    ids: list[int]
    segments: list[int]
    boundary: int | None
    notices: list[str]


def encode_pair(tokenizer: WordPieceTokenizer, text_a: str, text_b: str | None, max_len: int,
                lang: str, *, require_b: bool = False) -> EncodedInput:
    """Tokenize A (and B when not blank), truncate to ``max_len`` tokens with the specials,
    and note what was cut and what is unknown. Empty A (or B when required): InputNotice."""
    a = tokenizer.tokenize(text_a)
    b = tokenizer.tokenize(text_b) if text_b and text_b.strip() else None
    if not a:
        raise InputNotice(text("empty_text", lang))
    if require_b and not b:
        raise InputNotice(text("need_b", lang))
    specials = tokenizer.vocab.specials
    notices = []
    total = len(a) + 2 + (len(b) + 1 if b else 0)
    if total > max_len:
        if b:
            a, b = truncate_pair(a, b, max_len - 3)
        else:
            a = a[: max_len - 2]
        notices.append(text("truncated", lang, total=total, kept=max_len, max_len=max_len))
    tokens, segments = get_tokens_and_segments(a, b, cls_token=specials.cls,
                                               sep_token=specials.sep)
    unknown = tokens.count(specials.unk)
    if unknown:
        notices.append(text("unknown", lang, count=unknown, unk=specials.unk))
    return EncodedInput(tokens, tokenizer.vocab[tokens], segments,
                        len(a) + 2 if b else None, notices)


def token_table_html(encoded: EncodedInput, lang: str, unk: str) -> str:
    """Position, token and segment of every input token, coloured by segment."""
    cells = {"position": [], "token": [], "segment": []}
    for i, (tok, seg) in enumerate(zip(encoded.tokens, encoded.segments, strict=True)):
        style = f"background:{SEGMENT_COLORS[seg]};padding:2px 6px;text-align:center;"
        if tok == unk:
            style += "color:#B00020;font-weight:bold;"
        cells["position"].append(f"<td style='{style}'>{i}</td>")
        cells["token"].append(f"<td style='{style}font-size:15px'>{html.escape(tok)}</td>")
        cells["segment"].append(f"<td style='{style}'>{seg}</td>")
    # nowrap: a narrow Chinese header ("位置") would otherwise break after every character.
    rows = "".join(f"<tr><th style='text-align:left;padding-right:8px;white-space:nowrap'>"
                   f"{text(key, lang)}</th>{''.join(tds)}</tr>" for key, tds in cells.items())
    return (f"<div style='overflow-x:auto'><table style='border-collapse:separate;"
            f"border-spacing:2px;font-size:13px'>{rows}</table></div>")


def check_model_and_tokenizer(model: BERTModel, tokenizer: WordPieceTokenizer) -> None:
    if not isinstance(model, BERTModel):
        raise ValueError(f"model must be a bertlib BERTModel; got {type(model).__name__}")
    check_tokenizer(tokenizer)
    if model.config.vocab_size != len(tokenizer.vocab):
        raise ValueError(
            f"model.config.vocab_size={model.config.vocab_size} must equal "
            f"len(tokenizer.vocab)={len(tokenizer.vocab)}: use the tokenizer the model was "
            "trained with"
        )


def check_tokenizer(tokenizer: WordPieceTokenizer) -> None:
    if not isinstance(tokenizer, WordPieceTokenizer):
        raise ValueError("tokenizer must be a bertlib WordPieceTokenizer; got "
                         f"{type(tokenizer).__name__}")


def _text_box(key: str, value: str, lang: str) -> widgets.Text:
    return widgets.Text(value=value, description=text(key, lang), continuous_update=False,
                        style={"description_width": "initial"},
                        layout=widgets.Layout(width="98%"))


def _image() -> widgets.Image:
    return widgets.Image(format="png", layout=widgets.Layout(max_width="100%", height="auto"))


@contextlib.contextmanager
def inference() -> Iterator[None]:
    """``torch.no_grad()`` on one thread. For one short sequence, waking a second thread costs
    more than it saves: measured 133 ms against 2 ms per forward pass on a busy 2-core machine."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with torch.no_grad():
            yield
    finally:
        torch.set_num_threads(threads)


def _batch(encoded: EncodedInput) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.tensor([encoded.ids]), torch.tensor([encoded.segments])


class _Widget:
    """Shared plumbing: the language, a status line, and errors shown instead of raised."""

    ui: widgets.Widget

    def __init__(self, lang: str | None):
        self.lang = resolve_language(lang)
        self.status = widgets.HTML()
        self.message = ""

    def _text_boxes(self, text_a: str | None,
                    text_b: str | None) -> tuple[widgets.Text, widgets.Text]:
        """The sentence A and B boxes, holding the given texts or the language's defaults."""
        default_a, default_b = DEFAULT_TEXTS[self.lang]
        return (_text_box("sentence_a", default_a if text_a is None else text_a, self.lang),
                _text_box("sentence_b", default_b if text_b is None else text_b, self.lang))

    def _repr_mimebundle_(self, **kwargs):
        return self.ui._repr_mimebundle_(**kwargs)

    def _show(self, messages: list[str], *, error: bool = False) -> None:
        self.message = "\n".join(messages)
        color = "#B00020" if error else "#8A5300"
        self.status.value = "".join(f"<div style='color:{color};font-size:14px'>"
                                    f"{html.escape(m)}</div>" for m in messages)

    def _guarded(self, action: Callable[[], list[str]], outputs: list[widgets.Widget]) -> None:
        """Run ``action`` (which returns notices); on ValueError hide ``outputs`` and show
        the message, never a traceback."""
        try:
            notices = action()
        except InputNotice as err:
            self._fail(str(err), outputs)
        except ValueError as err:
            self._fail(text("error", self.lang, message=str(err)), outputs)
        else:
            for w in outputs:
                w.layout.display = None
            self._show(notices)

    def _fail(self, message: str, outputs: list[widgets.Widget]) -> None:
        for w in outputs:
            w.layout.display = "none"
        self._show([message], error=True)


class _ModelWidget(_Widget):
    """A widget that runs ``model`` on the sentence pair typed in its two text boxes."""

    def __init__(self, model: BERTModel, tokenizer: WordPieceTokenizer, lang: str | None,
                 text_a: str | None, text_b: str | None):
        super().__init__(lang)
        check_model_and_tokenizer(model, tokenizer)
        self.model, self.tokenizer = model.eval(), tokenizer
        self.text_a, self.text_b = self._text_boxes(text_a, text_b)


class InputRepresentationWidget(_ModelWidget):
    """Sentence A and optional B -> the token/segment/position table and the embeddings."""

    def __init__(self, model: BERTModel, tokenizer: WordPieceTokenizer,
                 lang: str | None = None, *, text_a: str | None = None,
                 text_b: str | None = None):
        super().__init__(model, tokenizer, lang, text_a, text_b)
        self.text_b.placeholder = text("optional", self.lang)
        self.table = widgets.HTML()
        self.image = _image()
        self.plot = EmbeddingPlot(self.lang)
        self.encoded: EncodedInput | None = None
        self.parts: EmbeddingParts | None = None
        for box in (self.text_a, self.text_b):
            box.observe(lambda _: self.refresh(), names="value")
        self.ui = widgets.VBox([self.text_a, self.text_b, self.status, self.table, self.image])
        self.refresh()

    def refresh(self) -> None:
        self._guarded(self._draw, [self.table, self.image])

    def _draw(self) -> list[str]:
        enc = encode_pair(self.tokenizer, self.text_a.value, self.text_b.value,
                          self.model.config.max_len, self.lang)
        encoder = self.model.encoder
        tokens, segments = _batch(enc)
        with inference():
            total = encoder.embed(tokens, segments)[0]
            parts = EmbeddingParts(
                tokens=enc.tokens,
                token=encoder.token_embedding(tokens)[0].numpy(),
                segment=encoder.segment_embedding(segments)[0].numpy(),
                position=encoder.pos_embedding[0, : len(enc.tokens)].numpy(),
                total=total.numpy(),
                normalised=self.model.config.embedding_norm,
            )
        self.encoded, self.parts = enc, parts
        self.table.value = token_table_html(enc, self.lang, self.tokenizer.vocab.specials.unk)
        self.plot.update(parts)
        self.image.value = self.plot.png()
        return enc.notices


class MaskingWidget(_Widget):
    """One MLM masking draw as chips, its targets, and a tally over many redraws."""

    def __init__(self, tokenizer: WordPieceTokenizer, lang: str | None = None, seed: int = 0,
                 *, max_len: int = MASKING_MAX_LEN, text_a: str | None = None,
                 text_b: str | None = None):
        super().__init__(lang)
        check_tokenizer(tokenizer)
        self.tokenizer, self.max_len = tokenizer, max_len
        lang = self.lang
        self.text_a, self.text_b = self._text_boxes(text_a, text_b)
        self.mask_ratio = widgets.FloatSlider(value=0.15, min=0.05, max=1.0, step=0.05,
                                              description=text("mask_ratio", lang),
                                              readout_format=".2f", continuous_update=False,
                                              style={"description_width": "initial"})
        self.seed = widgets.BoundedIntText(value=seed, min=0, max=2**31 - 1,
                                           description=text("seed", lang),
                                           style={"description_width": "initial"},
                                           layout=widgets.Layout(width="160px"))
        self.resample = widgets.Button(description=text("resample", lang), icon="refresh")
        self.num_samples = widgets.BoundedIntText(value=300, min=10, max=20000,
                                                  description=text("num_samples", lang),
                                                  style={"description_width": "initial"},
                                                  layout=widgets.Layout(width="200px"))
        self.tally_button = widgets.Button(description=text("tally_button", lang),
                                           icon="bar-chart")
        self.image = _image()
        self.targets = widgets.HTML()
        self.tally_note = widgets.HTML(f"<i>{html.escape(text('tally_stale', lang))}</i>")
        self.tally_image = _image()
        self.chips = ChipsPlot(lang)
        self.encoded: EncodedInput | None = None
        self.masked: MaskedTokens | None = None
        self.tally: MaskTally | None = None
        self.tally_plot = TallyPlot(lang)

        for control in (self.text_a, self.text_b, self.mask_ratio):
            control.observe(lambda _: self.refresh(clear_tally=True), names="value")
        self.seed.observe(lambda _: self.refresh(), names="value")
        self.resample.on_click(lambda _: self._next_seed())
        self.tally_button.on_click(lambda _: self.run_tally())
        self.ui = widgets.VBox([
            self.text_a, self.text_b,
            widgets.HBox([self.mask_ratio, self.seed, self.resample]),
            self.status, self.image, self.targets,
            widgets.HBox([self.num_samples, self.tally_button]), self.tally_note,
            self.tally_image,
        ])
        self.tally_image.layout.display = "none"
        self.refresh()

    def _next_seed(self) -> None:
        self.seed.value = self.seed.value + 1  # the observer redraws with the new seed

    def refresh(self, *, clear_tally: bool = False) -> None:
        if clear_tally:
            self.tally = None
            self.tally_image.layout.display = "none"
            self.tally_note.layout.display = None
        self._guarded(self._draw, [self.image, self.targets])

    def _draw(self) -> list[str]:
        enc = encode_pair(self.tokenizer, self.text_a.value, self.text_b.value, self.max_len,
                          self.lang)
        vocab = self.tokenizer.vocab
        masked = mask_tokens(enc.ids, vocab, mask_ratio=self.mask_ratio.value,
                             seed=self.seed.value)
        self.encoded, self.masked = enc, masked
        fates: list[Fate | None] = [None] * len(enc.ids)
        for pos, fate in zip(masked.positions, masked.fates, strict=True):
            fates[pos] = fate
        shown = vocab.to_tokens(masked.masked_ids)
        title = text("chips_title", self.lang, selected=len(masked.positions),
                     candidates=masked.num_candidates, seed=self.seed.value)
        self.chips.update(enc.tokens, shown, fates, title)
        self.image.value = self.chips.png()
        self.targets.value = self._targets_html(enc, masked, shown)
        return enc.notices

    def _targets_html(self, enc: EncodedInput, masked: MaskedTokens, shown: list[str]) -> str:
        head = "".join(f"<th style='padding:2px 10px;text-align:left'>{text(k, self.lang)}</th>"
                       for k in ("position", "target_original", "target_input", "fate"))
        rows = "".join(
            f"<tr><td style='padding:2px 10px'>{pos}</td>"
            f"<td style='padding:2px 10px'><b>{html.escape(enc.tokens[pos])}</b></td>"
            f"<td style='padding:2px 10px'>{html.escape(shown[pos])}</td>"
            f"<td style='padding:2px 10px'>{html.escape(text(FATE_KEYS[fate], self.lang))}</td>"
            "</tr>" for pos, fate in zip(masked.positions, masked.fates, strict=True))
        return (f"<b>{html.escape(text('targets_title', self.lang))}</b>"
                f"<table style='font-size:14px'><tr>{head}</tr>{rows}</table>")

    def run_tally(self) -> None:
        """Redraw the mask ``num_samples`` times from one generator seeded with ``seed``."""
        def action() -> list[str]:
            enc = encode_pair(self.tokenizer, self.text_a.value, self.text_b.value,
                              self.max_len, self.lang)
            self.tally = tally_masks(enc, self.tokenizer, self.mask_ratio.value,
                                     self.num_samples.value, self.seed.value)
            self.tally_plot.update(self.tally)
            self.tally_image.value = self.tally_plot.png()
            self.tally_note.layout.display = "none"
            return enc.notices

        self._guarded(action, [self.tally_image])


def tally_masks(enc: EncodedInput, tokenizer: WordPieceTokenizer, mask_ratio: float,
                samples: int, seed: int) -> MaskTally:
    """Count selections per position and cumulative fates over ``samples`` draws of
    :func:`mask_tokens`, all from one generator seeded with ``seed``."""
    vocab = tokenizer.vocab
    g = make_generator(seed=seed)
    selection = np.zeros(len(enc.ids), dtype=np.int64)
    per_draw = np.zeros((samples, len(Fate)), dtype=np.int64)
    for i in range(samples):
        masked = mask_tokens(enc.ids, vocab, mask_ratio=mask_ratio, generator=g)
        selection[masked.positions] += 1
        per_draw[i] = np.bincount(np.asarray(masked.fates, dtype=np.int64),
                                  minlength=len(Fate))
    # Every draw selects the same number of positions from the same candidates.
    return MaskTally(enc.tokens, selection, per_draw.cumsum(axis=0), len(masked.positions),
                     masked.num_candidates)


class AttentionWidget(_ModelWidget):
    """Attention weights by layer and head, all heads at once, and one token's row."""

    def __init__(self, model: BERTModel, tokenizer: WordPieceTokenizer,
                 lang: str | None = None, *, text_a: str | None = None,
                 text_b: str | None = None):
        super().__init__(model, tokenizer, lang, text_a, text_b)
        cfg, lang = model.config, self.lang
        self.layer = widgets.Dropdown(options=list(range(cfg.num_blks)), value=0,
                                      description=text("layer", lang),
                                      layout=widgets.Layout(width="150px"))
        self.head = widgets.Dropdown(
            options=[*((str(h), h) for h in range(cfg.num_heads)),
                     (text("mean_heads", lang), MEAN_HEAD)],
            value=0, description=text("head", lang), layout=widgets.Layout(width="220px"))
        self.view = widgets.ToggleButtons(
            options=[(text("view_one", lang), "one"), (text("view_all", lang), "all")],
            value="one", description=text("view", lang))
        self.hide_specials = widgets.Checkbox(value=False,
                                              description=text("hide_specials", lang))
        self.query = widgets.Dropdown(description=text("query_token", lang),
                                      style={"description_width": "initial"})
        self.image = _image()
        self.grid_image = _image()
        self.plot = AttentionPlot(lang)
        self.grid_plot = AllHeadsPlot(cfg.num_heads, lang)
        self.encoded: EncodedInput | None = None
        self.attentions: np.ndarray | None = None  # (num_blks, num_heads, T, T)
        self.shown: np.ndarray | None = None  # indices of the tokens on screen
        self.current: AttentionView | None = None
        self._notices: list[str] = []  # about the current text, kept across redraws
        self._busy = False  # set while controls are reset, so their events don't redraw

        for box in (self.text_a, self.text_b):
            box.observe(lambda _: self.refresh(), names="value")
        self.hide_specials.observe(lambda _: self._guarded(self._select, self._outputs()),
                                   names="value")
        for control in (self.layer, self.head, self.view, self.query):
            control.observe(lambda _: self._on_control(), names="value")
        self.ui = widgets.VBox([
            self.text_a, self.text_b,
            widgets.HBox([self.layer, self.head, self.hide_specials]),
            widgets.HBox([self.view, self.query]),
            self.status, self.image, self.grid_image,
        ])
        self.refresh()

    def _outputs(self) -> list[widgets.Widget]:
        return [self.grid_image if self.view.value == "all" else self.image]

    def refresh(self) -> None:
        """Run the model on the current text (the only place it runs) and redraw."""
        self._guarded(self._compute, self._outputs())

    def _compute(self) -> list[str]:
        enc = encode_pair(self.tokenizer, self.text_a.value, self.text_b.value,
                          self.model.config.max_len, self.lang)
        with inference():
            _, attentions = self.model.encoder(*_batch(enc), return_attention=True)
        self.encoded, self._notices = enc, enc.notices
        self.attentions = torch.stack([a[0] for a in attentions]).numpy()
        self.shown = None  # a new text: the query starts again at the first token
        return self._select()

    def _select(self) -> list[str]:
        """Choose the tokens on screen (all, or without specials), keep the query on the same
        token when it stays visible, and redraw."""
        enc = self.encoded
        if enc is None:
            return []
        hidden = {self.tokenizer.vocab.cls_id, self.tokenizer.vocab.sep_id,
                  self.tokenizer.vocab.pad_id}
        keep = [i for i, t in enumerate(enc.ids) if t not in hidden]
        if not self.hide_specials.value or not keep:
            keep = list(range(len(enc.ids)))
        previous = None if self.shown is None else int(self.shown[self.query.value])
        self.shown = np.asarray(keep)
        self._busy = True
        try:
            self.query.options = [(f"{i}: {enc.tokens[i]}", n) for n, i in enumerate(keep)]
            self.query.value = keep.index(previous) if previous in keep else 0
        finally:
            self._busy = False
        return self._redraw()

    def _on_control(self) -> None:
        if not self._busy:
            self._guarded(self._redraw, self._outputs())

    def _redraw(self) -> list[str]:
        """Slice the stored attentions for the current controls and draw them."""
        if self.attentions is None:
            return []
        show_all = self.view.value == "all"
        self.image.layout.display = "none" if show_all else None
        self.grid_image.layout.display = None if show_all else "none"
        enc, keep = self.encoded, self.shown
        tokens = [enc.tokens[i] for i in keep]
        layer_weights = self.attentions[self.layer.value][:, keep][:, :, keep]  # (nh, T', T')
        if show_all:
            self.grid_plot.update(layer_weights, tokens, self.layer.value)
            self.grid_image.value = self.grid_plot.png()
            return self._notices
        head = self.head.value
        weights = layer_weights.mean(axis=0) if head == MEAN_HEAD else layer_weights[head]
        head_label = (text("mean_heads", self.lang) if head == MEAN_HEAD
                      else text("head_name", self.lang, head=head))
        boundary = None
        if enc.boundary is not None:
            boundary = int(np.searchsorted(keep, enc.boundary))
        hiding = len(keep) < len(enc.ids)
        self.current = AttentionView(
            weights=weights, tokens=tokens, boundary=boundary, query=self.query.value,
            title=text("attention_title", self.lang, layer=self.layer.value, head=head_label),
            note=text("rows_not_renormalised", self.lang) if hiding else "")
        self.plot.update(self.current)
        self.image.value = self.plot.png()
        return self._notices


class NSPWidget(_ModelWidget):
    """A sentence pair, its segments and the NSP head's probability that B follows A."""

    def __init__(self, model: BERTModel, tokenizer: WordPieceTokenizer,
                 lang: str | None = None, *, text_a: str | None = None,
                 text_b: str | None = None):
        super().__init__(model, tokenizer, lang, text_a, text_b)
        self.swap = widgets.Button(description=text("swap", self.lang), icon="exchange")
        self.table = widgets.HTML()
        self.image = _image()
        self.plot = NSPPlot(self.lang)
        self.encoded: EncodedInput | None = None
        self.probabilities: np.ndarray | None = None  # (P(NotNext), P(IsNext))
        self._busy = False
        for box in (self.text_a, self.text_b):
            box.observe(lambda _: self.refresh(), names="value")
        self.swap.on_click(lambda _: self._swap())
        self.ui = widgets.VBox([self.text_a, self.text_b, self.swap, self.status, self.table,
                                self.image])
        self.refresh()

    @property
    def is_next_probability(self) -> float | None:
        return None if self.probabilities is None else float(self.probabilities[1])

    def _swap(self) -> None:
        self._busy = True  # one redraw for the pair, not one per text box
        try:
            self.text_a.value, self.text_b.value = self.text_b.value, self.text_a.value
        finally:
            self._busy = False
        self.refresh()

    def refresh(self) -> None:
        if not self._busy:
            self._guarded(self._draw, [self.table, self.image])

    def _draw(self) -> list[str]:
        enc = encode_pair(self.tokenizer, self.text_a.value, self.text_b.value,
                          self.model.config.max_len, self.lang, require_b=True)
        with inference():
            _, _, nsp_logits = self.model(*_batch(enc))
        self.encoded = enc
        self.probabilities = nsp_logits[0].softmax(dim=-1).numpy().astype(float)
        self.table.value = token_table_html(enc, self.lang, self.tokenizer.vocab.specials.unk)
        self.plot.update(self.probabilities)
        self.image.value = self.plot.png()
        return enc.notices

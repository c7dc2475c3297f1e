"""The attention widget and its five views. The model runs once per text (the evidence view:
once more per choice of masked tokens); every other control only re-slices what it returned."""

from __future__ import annotations

import math

import ipywidgets as widgets
import numpy as np
import torch
import torch.nn.functional as F

from bertlib.inputs import eval_mode, model_device
from bertlib.model import BERTModel, key_padding_mask
from bertlib.support.i18n import text
from bertlib.text.tokenizer import WordPieceTokenizer
from bertlib.viz._widget import (
    WRAP,
    FigureView,
    InputNotice,
    ModelWidget,
    control,
    figure_height,
    text_row,
    toggle_buttons,
    toggle_style,
)
from bertlib.viz.attention import AllHeadsPlot, AttentionPlot, AttentionView
from bertlib.viz.evidence import Evidence, EvidencePlot, collect_evidence
from bertlib.viz.live import LiveFigure
from bertlib.viz.modelview import MEAN_HEAD, ModelViewPlot, head_name
from bertlib.viz.querykey import QueryKeyPlot, QueryKeySteps, query_key_steps, temperature_stops

MAX_PADDING = 8  # <pad> keys the step-by-step view can add: enough to see the mask at work
CONTROLS = 205  # px of controls above the figure at most, two notices too (figure_height)
PADDING = 3  # its default: a single pair has no padding, and then the mask would be all 0s
VIEWS = {"one": "view_one", "all": "view_all", "model": "view_model",  # strings.json keys
         "querykey": "view_query_key", "evidence": "view_evidence"}


class AttentionWidget(ModelWidget):
    """Attention by layer and head, in five views: one head, a layer's heads, every layer and
    head, one query step by step, and the evidence (see the view tooltips)."""

    name = "attention"

    def __init__(self, model: BERTModel, tokenizer: WordPieceTokenizer,
                 lang: str | None = None, *, text_a: str | None = None,
                 text_b: str | None = None):
        super().__init__(model, tokenizer, lang, text_a, text_b)
        cfg, lang = model.config, self.lang
        self.layer, self.head = self._layer_head(("150px", "190px"))
        self.view = toggle_buttons(
            options=[(text(key, lang), view) for view, key in VIEWS.items()],
            # A tooltip of its own: without one, ipywidgets 8 titles the label "null".
            value="one", description=text("view", lang), tooltip=text("view", lang),
            tooltips=[text(f"{key}_tip", lang) for key in VIEWS.values()],
            # Each button as wide as its label (ipywidgets' 148 px cut them short); a flex row
            # puts the label beside the buttons.
            style={"button_width": "auto"},
            layout=widgets.Layout(display="flex", flex_flow="row wrap", align_items="center"))
        self.hide_specials = widgets.Checkbox(value=False, indent=False,
                                              description=text("hide_specials", lang),
                                              layout=widgets.Layout(width="auto"))
        self.query = control(widgets.Dropdown, "query_token", lang, "240px")
        # At least 240 px: squeezed, its track was 8 px wide and any drag jumped to an end.
        self.padding = control(widgets.IntSlider, "padding", lang, "250px", "240px",
                               value=PADDING, min=0, max=MAX_PADDING, continuous_update=False,
                               tooltip=text("padding_tooltip", lang))
        # τ, what q·k is divided by, starting at the model's own √d, which its label marks;
        # each readout fits the narrowest readout box, so the track never changes length.
        head_size = cfg.num_hiddens // cfg.num_heads
        root = math.sqrt(head_size)  # exactly one of the stops
        self.temperature = control(
            widgets.SelectionSlider, "temperature", lang, "330px", "280px", value=root,
            options=[(f"{t:.3g} = √d" if t == root else f"{t:.3g}", t)
                     for t in temperature_stops(head_size)],
            tooltip=text("temperature_tooltip", lang))
        self.steps_controls = widgets.HBox([self.padding, self.temperature], layout=WRAP)
        # The evidence view's: the content tokens the model reads as <mask> (see _compute).
        self.masked = control(widgets.SelectMultiple, "masked_tokens", lang, "260px", rows=3,
                              tooltip=text("masked_tokens_tooltip", lang))
        # Under the controls of the busiest view (the step-by-step one's sliders, two notices).
        self.image, self.grid_image, self.steps_image, self.model_image, \
            self.evidence_image = (FigureView(figure_height(CONTROLS)) for _ in VIEWS)
        self.plot = AttentionPlot(lang)
        self.grid_plot = AllHeadsPlot(cfg.num_heads, lang)
        self.steps_plot = QueryKeyPlot(lang)
        self.model_plot = ModelViewPlot(cfg.num_blks, cfg.num_heads, lang)
        self.evidence_plot = EvidencePlot(cfg.num_blks, cfg.num_heads, lang)
        self._views = {"one": (self.image, self.plot), "all": (self.grid_image, self.grid_plot),
                       "model": (self.model_image, self.model_plot),
                       "querykey": (self.steps_image, self.steps_plot),
                       "evidence": (self.evidence_image, self.evidence_plot)}
        self.evidence: Evidence | None = None  # for the text and masked tokens on screen
        # (T + room, H) per block: what each block reads, the text and `room` <pad> positions
        self.block_inputs: list[torch.Tensor] = []
        self.steps: QueryKeySteps | None = None
        self.attentions: np.ndarray | None = None  # (num_blks, num_heads, T, T)
        self.shown: np.ndarray | None = None  # indices of the tokens on screen
        self.current: AttentionView | None = None
        self.hide_specials.observe(lambda _: self._guarded(self._select, self._outputs()),
                                   names="value")
        self.masked.observe(lambda _: self._on_masked(), names="value")
        for c in (self.layer, self.head, self.view, self.query, self.padding, self.temperature):
            c.observe(lambda _: self._on_control(), names="value")
        self.ui = widgets.VBox([
            text_row(self.text_a, self.text_b),
            widgets.HBox([self.view, self.hide_specials], layout=WRAP),
            widgets.HBox([self.layer, self.head, self.query, self.masked], layout=WRAP),
            self.steps_controls, self.status, self.image, self.grid_image, self.model_image,
            self.steps_image, self.evidence_image, self._save_controls(), toggle_style(),
        ])
        self.refresh()

    def _figures(self) -> dict[str, tuple[LiveFigure, widgets.Widget]]:
        image, plot = self._views[self.view.value]
        return {self.name: (plot, image)}

    def _hidden(self, figure: str) -> str:
        if self.view.value == "querykey" and self.head.value == MEAN_HEAD:
            return text("save_mean_head", self.lang)
        return super()._hidden(figure)

    def _outputs(self) -> list[widgets.Widget]:
        return [self._views[self.view.value][0]]

    def refresh(self) -> None:
        """Run the model on the current text (the only place it runs) and redraw."""
        self._guarded(self._compute, self._outputs())

    def _compute(self) -> list[str]:
        enc, notices = self._encode(self.tokenizer, self.model.config.max_len)
        encoder, T = self.model.encoder, len(enc.ids)
        # One run serves every view: the text and `room` masked <pad> positions. Masked keys
        # get weight 0, so the text's attention is as unpadded; a <pad> reads only itself and
        # the text, so the first `padding` are what an input padded that far would hold.
        room = min(MAX_PADDING, self.model.config.max_len - T)
        tokens, segments = enc.tensors(model_device(self.model))
        tokens = F.pad(tokens, (0, room), value=self.tokenizer.vocab.pad_id)
        segments = F.pad(segments, (0, room))  # segment 0, as pad_bert_inputs pads
        mask = key_padding_mask(torch.tensor([T], device=tokens.device), T + room)
        attentions, self.block_inputs = [], []
        with eval_mode(self.model):  # BERTEncoder.forward, keeping what each block reads
            X = encoder.embed(tokens, segments)
            for blk in encoder.blks:
                self.block_inputs.append(X[0])
                X, weights = blk(X, mask, need_weights=True)
                attentions.append(weights[0, :, :T, :T])
        self.encoded, self._notices = enc, notices
        self.attentions = torch.stack(attentions).cpu().numpy()
        with self._quiet():  # a shorter room moves the slider: one redraw, below
            self.padding.max = room
        self.shown = None  # a new text: the query starts again at the first token
        self._mask_options()
        return self._select()

    def _select(self) -> list[str]:
        """Choose the tokens on screen, the query kept on its token where visible; redraw."""
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
        with self._quiet():
            self.query.options = [(f"{i}: {enc.tokens[i]}", n) for n, i in enumerate(keep)]
            self.query.value = keep.index(previous) if previous in keep else 0
        return self._redraw()

    def _on_control(self) -> None:
        with self._lock:  # the outputs of the view chosen when this thread's turn comes
            self._guarded(self._redraw, self._outputs())

    def _redraw(self) -> list[str]:
        """Slice the stored attentions for the controls and draw them."""
        if self.attentions is None:
            return []
        for view, (image, _) in self._views.items():
            image.layout.display = None if self.view.value == view else "none"
        self.steps_controls.layout.display = None if self.view.value == "querykey" else "none"
        self.masked.layout.display = None if self.view.value == "evidence" else "none"
        self.query.layout.display = "none" if self.view.value == "evidence" else None
        enc, keep = self.encoded, self.shown
        if self.view.value == "querykey":
            return self._draw_steps()
        if self.view.value == "evidence":
            return self._draw_evidence()
        tokens = [enc.tokens[i] for i in keep]
        if self.view.value == "model":
            self.model_image.show(self.model_plot, self.attentions[:, :, keep][:, :, :, keep],
                                  tokens, self.layer.value, self.head.value)
            return self._notices
        layer_weights = self.attentions[self.layer.value][:, keep][:, :, keep]  # (nh, T', T')
        if self.view.value == "all":
            self.grid_image.show(self.grid_plot, layer_weights, tokens, self.layer.value)
            return self._notices
        head = self.head.value
        weights = layer_weights.mean(axis=0) if head == MEAN_HEAD else layer_weights[head]
        boundary = None if enc.boundary is None else int(np.searchsorted(keep, enc.boundary))
        self.current = AttentionView(
            weights=weights, tokens=tokens, boundary=boundary, query=self.query.value,
            title=text("attention_title", self.lang, layer=self.layer.value,
                       head=head_name(head, self.lang)), note=self._hiding_note())
        self.image.show(self.plot, self.current)
        return self._notices

    def _draw_steps(self) -> list[str]:
        """One query of one head step by step, over every key it sees: specials too (the
        softmax runs over them) and the <pad> keys the slider adds."""
        if self.head.value == MEAN_HEAD:  # the mean of heads has no one query and key
            raise InputNotice(text("qk_mean_head", self.lang))
        layer, query = self.layer.value, int(self.shown[self.query.value])
        T, padding = len(self.encoded.ids), self.padding.value
        tokens = [*self.encoded.tokens, *[self.tokenizer.vocab.specials.pad] * padding]
        self.steps = query_key_steps(self.model.encoder.blks[layer].attention,
                                     self.block_inputs[layer][: T + padding], tokens,
                                     self.head.value, query, valid_len=T,
                                     temperature=self.temperature.value)
        note = text("qk_all_keys", self.lang) if self.hide_specials.value else ""
        self.steps_image.show(self.steps_plot, self.steps, layer, note)
        return self._notices

    def _mask_options(self) -> None:
        """A new text's content tokens to mask, the earlier choices kept where still there."""
        vocab, enc = self.tokenizer.vocab, self.encoded
        content = [i for i, t in enumerate(enc.ids) if t not in vocab.structural_ids]
        kept = [p for p in self.masked.value if p in content] or content[:1]
        with self._quiet():
            self.masked.options = [(f"{i}: {enc.tokens[i]}", i) for i in content]
            self.masked.value = tuple(kept)
        self.evidence = None

    def _on_masked(self) -> None:
        self.evidence = None
        self._on_control()

    def _draw_evidence(self) -> list[str]:
        """The evidence for the masked tokens (run again only when they or the text change)."""
        if self.evidence is None:
            vocab = self.tokenizer.vocab
            self.evidence = collect_evidence(self.model, self.encoded, self.masked.value,
                                             vocab.mask_id, vocab.specials.mask)
        self.evidence_image.show(self.evidence_plot, self.evidence.select(self.shown),
                                 self.layer.value, self.head.value, self._hiding_note())
        return self._notices

    def _hiding_note(self) -> str:
        hiding = len(self.shown) < len(self.encoded.ids)
        return text("rows_not_renormalised", self.lang) if hiding else ""

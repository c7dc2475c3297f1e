"""The attention widget: one head with a query's row, all heads of a layer, every layer and
head at once, and one query step by step. The model runs once per text; every other control
only re-slices what it returned (see :mod:`bertlib.viz.widgets` for what all widgets share)."""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np
import torch

from bertlib.i18n import text
from bertlib.inputs import EncodedInput, eval_mode, model_device
from bertlib.model import BERTModel
from bertlib.tokenizer import WordPieceTokenizer
from bertlib.viz._widget import ModelWidget, image_output
from bertlib.viz.attention import AllHeadsPlot, AttentionPlot, AttentionView
from bertlib.viz.modelview import ModelViewPlot
from bertlib.viz.querykey import QueryKeyPlot, QueryKeySteps, query_key_steps

MEAN_HEAD = -1  # the head selector's value for the mean over heads


class AttentionWidget(ModelWidget):
    """Attention weights by layer and head, all heads at once, and one token's row."""

    name = "attention"

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
            options=[(text("view_one", lang), "one"), (text("view_all", lang), "all"),
                     (text("view_model", lang), "model"),
                     (text("view_query_key", lang), "querykey")],
            value="one", description=text("view", lang))
        self.hide_specials = widgets.Checkbox(value=False,
                                              description=text("hide_specials", lang))
        self.query = widgets.Dropdown(description=text("query_token", lang),
                                      style={"description_width": "initial"})
        self.image = image_output()
        self.grid_image = image_output()
        self.steps_image = image_output()
        self.plot = AttentionPlot(lang)
        self.grid_plot = AllHeadsPlot(cfg.num_heads, lang)
        self.steps_plot = QueryKeyPlot(lang)
        self.model_image = image_output()
        self.model_plot = ModelViewPlot(cfg.num_blks, cfg.num_heads, lang)
        # The model view's thumbnails are too small for tokens: open one in the one-head view.
        self.pick = widgets.ToggleButtons(
            options=[(text("model_view_cell", lang, layer=layer, head=head), (layer, head))
                     for layer in range(cfg.num_blks) for head in range(cfg.num_heads)],
            value=None, description=text("pick_head", lang))
        self.pick.observe(lambda change: self._open(change["new"]), names="value")
        self._views = {"one": (self.image, self.plot), "all": (self.grid_image, self.grid_plot),
                       "model": (self.model_image, self.model_plot),
                       "querykey": (self.steps_image, self.steps_plot)}
        self.block_inputs: list[torch.Tensor] = []  # (T, H) per block: what each block reads
        self.steps: QueryKeySteps | None = None
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
            self.status, self.image, self.grid_image, self.model_image, self.pick,
            self.steps_image, self._save_controls(),
        ])
        self.refresh()

    def _open(self, layer_head: tuple[int, int] | None) -> None:
        if layer_head is not None:
            self.layer.value, self.head.value = layer_head
            self.view.value = "one"

    def shown_figure(self) -> AttentionPlot | AllHeadsPlot | ModelViewPlot | QueryKeyPlot:
        return self._views[self.view.value][1]

    def _outputs(self) -> list[widgets.Widget]:
        return [self._views[self.view.value][0]]

    def refresh(self) -> None:
        """Run the model on the current text (the only place it runs) and redraw."""
        self._guarded(self._compute, self._outputs())

    def _compute(self) -> list[str]:
        enc, notices = self._encode(self.tokenizer, self.model.config.max_len)
        encoder = self.model.encoder
        attentions, self.block_inputs = [], []
        with eval_mode(self.model):  # BERTEncoder.forward, keeping what each block reads
            X = encoder.embed(*enc.tensors(model_device(self.model)))
            for blk in encoder.blks:
                self.block_inputs.append(X[0])
                X, weights = blk(X, None, need_weights=True)
                attentions.append(weights[0])
        self.encoded, self._notices = enc, notices
        self.attentions = torch.stack(attentions).cpu().numpy()
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
        for view, (image, _) in self._views.items():
            image.layout.display = None if self.view.value == view else "none"
        self.pick.layout.display = None if self.view.value == "model" else "none"
        self.pick.value = None
        enc, keep = self.encoded, self.shown
        if self.view.value == "querykey":
            return self._draw_steps()
        if self.view.value == "model":
            self.model_plot.update(self.attentions[:, :, keep][:, :, :, keep])
            self.model_image.value = self.model_plot.png()
            return self._notices
        tokens = [enc.tokens[i] for i in keep]
        layer_weights = self.attentions[self.layer.value][:, keep][:, :, keep]  # (nh, T', T')
        if self.view.value == "all":
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

    def _draw_steps(self) -> list[str]:
        """One query of one head, step by step; always over all tokens (the keys a query
        sees), so hiding the specials does not apply here."""
        if self.head.value == MEAN_HEAD:
            self.steps_image.layout.display = "none"
            return [*self._notices, text("qk_mean_head", self.lang)]
        layer, query = self.layer.value, int(self.shown[self.query.value])
        with eval_mode(self.model):
            self.steps = query_key_steps(self.model.encoder.blks[layer].attention,
                                         self.block_inputs[layer], self.encoded.tokens,
                                         self.head.value, query)
        self.steps_plot.update(self.steps, layer)
        self.steps_image.value = self.steps_plot.png()
        return self._notices

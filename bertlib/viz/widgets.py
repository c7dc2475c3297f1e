"""The input representation, masking and NSP widgets. Every widget shows ``.ui`` and keeps its
controls and data (``.encoded``, the plots...): tests drive it without a browser. Figures are
PNGs in ipywidgets' Image (no other JavaScript: offline); models run once per text, in eval mode.
"""

from __future__ import annotations

import html

import ipywidgets as widgets
import numpy as np

from bertlib.analysis.fill_mask import Guess, fill_mask
from bertlib.inputs import check_model_and_tokenizer, eval_mode, model_device
from bertlib.masking import MaskedTokens, check_replacement_words, mask_tokens
from bertlib.model import BERTModel
from bertlib.support.checks import check_int_in, check_positive_int
from bertlib.support.i18n import text
from bertlib.text.tokenizer import WordPieceTokenizer
from bertlib.viz._widget import WRAP, FigureView, ModelWidget, Widget, control, text_row
from bertlib.viz.embeddings import EmbeddingParts, EmbeddingPlot
from bertlib.viz.live import LiveFigure
from bertlib.viz.masks import ChipsPlot, MaskTally, TallyPlot, tally_masks
from bertlib.viz.nsp import NSPPlot
from bertlib.viz.tables import targets_table_html, token_table_html

MASKING_MAX_LEN = 64  # beyond this the chips get too small to read
MASKING_LONGEST = 512  # BERT's longest input: the most chips max_len may ask for
MAX_SEED = 2**31 - 1  # the seed box's upper bound


class InputRepresentationWidget(ModelWidget):
    """Sentence A and optional B -> the token table and the embeddings."""

    name = "input-representation"

    def __init__(self, model: BERTModel, tokenizer: WordPieceTokenizer,
                 lang: str | None = None, *, text_a: str | None = None,
                 text_b: str | None = None):
        super().__init__(model, tokenizer, lang, text_a, text_b)
        self.text_b.placeholder = text("optional", self.lang)
        self.parts: EmbeddingParts | None = None
        self._table_and_figure(EmbeddingPlot(self.lang))

    def _draw(self) -> list[str]:
        enc, notices = self._encode(self.tokenizer, self.model.config.max_len)
        encoder = self.model.encoder
        tokens, segments = enc.tensors(model_device(self.model))
        with eval_mode(self.model):
            total = encoder.embed(tokens, segments)[0]
            parts = EmbeddingParts(
                enc.tokens, encoder.token_embedding(tokens)[0].cpu().numpy(),
                encoder.segment_embedding(segments)[0].cpu().numpy(),
                encoder.pos_embedding[0, : len(enc.tokens)].cpu().numpy(), total.cpu().numpy(),
                normalised=self.model.config.embedding_norm)
        self.encoded, self.parts = enc, parts
        self.table.value = token_table_html(enc, self.lang, self.tokenizer.vocab.specials.unk)
        self.image.show(self.plot, parts)
        return notices


class MaskingWidget(Widget):
    """One MLM masking draw as chips, its targets, and a tally over many redraws."""

    name = "masking"

    def __init__(self, tokenizer: WordPieceTokenizer, lang: str | None = None, seed: int = 0,
                 *, max_len: int = MASKING_MAX_LEN, text_a: str | None = None,
                 text_b: str | None = None, model: BERTModel | None = None, top_k: int = 5):
        super().__init__(lang)
        # Refused here, in the caller's hands, not later as a message inside the widget.
        check_replacement_words(tokenizer.vocab)
        check_int_in("max_len", max_len, 5, MASKING_LONGEST,
                     " (<cls> A <sep> B <sep> needs 5)")
        check_int_in("seed", seed, 0, MAX_SEED)
        if model is not None:  # fill-mask: the model's guesses at every chosen position
            check_model_and_tokenizer(model, tokenizer)
            check_positive_int("top_k", top_k)
            max_len = min(max_len, model.config.max_len)
        self.model, self.top_k = model, top_k
        self.guesses: list[Guess] | None = None
        self.tokenizer, self.max_len = tokenizer, max_len
        lang = self.lang
        self.text_a, self.text_b = self._text_boxes(text_a, text_b)
        self.mask_ratio = control(widgets.FloatSlider, "mask_ratio", lang, "400px", "360px",
                                  value=0.15, min=0.05, max=1.0, step=0.05,
                                  readout_format=".2f", continuous_update=False)
        self.seed = control(widgets.BoundedIntText, "seed", lang, "160px", value=seed, min=0,
                            max=MAX_SEED)
        # Buttons as wide as their labels (ipywidgets' default 148 px would cut a longer one).
        self.resample = widgets.Button(description=text("resample", lang), icon="refresh",
                                       layout=widgets.Layout(width="auto"))
        self.num_samples = control(widgets.BoundedIntText, "num_samples", lang, "200px",
                                   value=300, min=10, max=20000)
        self.tally_button = widgets.Button(description=text("tally_button", lang),
                                           icon="bar-chart", layout=widgets.Layout(width="auto"))
        self.image = FigureView()
        self.targets = widgets.HTML()
        # The theme's own text colour, in italics (#555555 was 2.53:1 on JupyterLab Dark's
        # #111111 page): rgba(0,0,0,.87) on white 16.1:1, white on #111111 18.9:1.
        self.tally_note = widgets.HTML(
            f"<span style='color:var(--jp-content-font-color1);font-style:italic'>"
            f"{html.escape(text('tally_stale', lang))}</span>")
        self.tally_image = FigureView()
        self.chips = ChipsPlot(lang)
        self.masked: MaskedTokens | None = None
        self.tally: MaskTally | None = None
        self.tally_plot = TallyPlot(lang)

        for c in (self.text_a, self.text_b, self.mask_ratio):
            c.observe(lambda _: self.refresh(clear_tally=True), names="value")
        self.seed.observe(lambda _: self.refresh(), names="value")
        self.resample.on_click(lambda _: self._next_seed())
        self.tally_button.on_click(lambda _: self.run_tally())
        self.tally_save = self._save_controls("tally")  # shown with the tally
        self.ui = widgets.VBox([
            text_row(self.text_a, self.text_b),
            widgets.HBox([self.mask_ratio, self.seed, self.resample], layout=WRAP),
            self.status, self.image, self._save_controls(), self.targets,
            widgets.HBox([self.num_samples, self.tally_button], layout=WRAP), self.tally_note,
            self.tally_image, self.tally_save,
        ])
        self.refresh(clear_tally=True)  # the tally hidden until it is run

    def _figures(self) -> dict[str, tuple[LiveFigure, widgets.Widget]]:
        return {"chips": (self.chips, self.image), "tally": (self.tally_plot, self.tally_image)}

    def _hidden(self, figure: str) -> str:
        if figure == "tally" and self.tally is None:
            return text("save_no_tally", self.lang)
        return super()._hidden(figure)

    def _next_seed(self) -> None:
        self.seed.value = self.seed.value + 1  # the observer redraws with the new seed

    def refresh(self, *, clear_tally: bool = False) -> None:
        if clear_tally:
            self.tally = None
            for w in (self.tally_image, self.tally_save):
                w.layout.display = "none"
            self.tally_note.layout.display = None
        self._guarded(self._draw, [self.image, self.targets])

    def _draw(self) -> list[str]:
        enc, notices = self._encode(self.tokenizer, self.max_len)
        vocab = self.tokenizer.vocab
        masked = mask_tokens(enc.ids, vocab, mask_ratio=self.mask_ratio.value,
                             seed=self.seed.value)
        self.encoded, self.masked = enc, masked
        fate_at = dict(zip(masked.positions, masked.fates, strict=True))
        fates = [fate_at.get(i) for i in range(len(enc.ids))]  # None: not selected
        shown = vocab.to_tokens(masked.masked_ids)
        title = text("chips_title", self.lang, selected=len(masked.positions),
                     candidates=masked.num_candidates, seed=self.seed.value)
        self.image.show(self.chips, enc.tokens, shown, fates, title)
        if self.model is not None:
            self.guesses = fill_mask(self.model, vocab, enc, masked, self.top_k)
        self.targets.value = targets_table_html(enc.tokens, masked, shown, self.lang,
                                                self.guesses)
        return notices

    def run_tally(self) -> None:
        """Redraw the mask ``num_samples`` times from one generator seeded ``seed``."""
        def action() -> list[str]:
            enc, notices = self._encode(self.tokenizer, self.max_len)
            self.tally = tally_masks(enc, self.tokenizer.vocab, self.mask_ratio.value,
                                     self.num_samples.value, self.seed.value)
            self.tally_image.show(self.tally_plot, self.tally)
            self.tally_note.layout.display = "none"
            return notices

        self._guarded(action, [self.tally_image, self.tally_save])


class NSPWidget(ModelWidget):
    """A sentence pair, its segments and the NSP head's probability that B follows A."""

    name = "next-sentence"

    def __init__(self, model: BERTModel, tokenizer: WordPieceTokenizer,
                 lang: str | None = None, *, text_a: str | None = None,
                 text_b: str | None = None):
        super().__init__(model, tokenizer, lang, text_a, text_b)
        self.swap = widgets.Button(description=text("swap", self.lang), icon="exchange",
                                   layout=widgets.Layout(width="auto", align_self="flex-start"))
        self.probabilities: np.ndarray | None = None  # (P(NotNext), P(IsNext))
        self.swap.on_click(lambda _: self._swap())
        self._table_and_figure(NSPPlot(self.lang), self.swap)

    @property
    def is_next_probability(self) -> float | None:
        return None if self.probabilities is None else float(self.probabilities[1])

    def _swap(self) -> None:
        with self._quiet():  # one redraw for the pair, not one per text box
            self.text_a.value, self.text_b.value = self.text_b.value, self.text_a.value
        self.refresh()

    def _draw(self) -> list[str]:
        enc, notices = self._encode(self.tokenizer, self.model.config.max_len, require_b=True)
        with eval_mode(self.model):
            _, _, nsp_logits = self.model(*enc.tensors(model_device(self.model)))
        self.encoded = enc
        self.probabilities = nsp_logits[0].softmax(dim=-1).cpu().numpy().astype(float)
        self.table.value = token_table_html(enc, self.lang, self.tokenizer.vocab.specials.unk)
        self.image.show(self.plot, self.probabilities)
        return notices

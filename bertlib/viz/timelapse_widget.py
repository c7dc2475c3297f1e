"""A model that learns before your eyes: one sentence pair through a training run's snapshots.
Every snapshot runs once per text (or masked tokens); the other controls only re-slice."""

from __future__ import annotations

import ipywidgets as widgets

from bertlib.analysis.snapshots import SnapshotRecorder, Snapshots
from bertlib.analysis.timelapse import SnapshotOutputs, check_snapshots, snapshot_outputs
from bertlib.inputs import model_device
from bertlib.model import BERTModel
from bertlib.support.i18n import text
from bertlib.text.tokenizer import WordPieceTokenizer
from bertlib.train import TrainHistory
from bertlib.viz._widget import (
    WRAP,
    FigureView,
    InputNotice,
    ModelWidget,
    control,
    figure_height,
    text_row,
)
from bertlib.viz.modelview import MEAN_HEAD, head_name
from bertlib.viz.timelapse import TOP_K, TimeLapseFrame, TimeLapsePlot

# The tokens first masked in DEFAULT_TEXTS' pair, one per sentence: words the shipped snapshots
# guess as frequent tokens ("the", ",", 了) for hundreds of steps before they guess them right.
DEFAULT_MASKED = {"en": ("scored", "whistle"), "zh": ("喜", "赛")}
DEFAULT_MASKED["ja"] = DEFAULT_MASKED["en"]  # the Japanese edition's texts are DEFAULT_TEXTS["en"]
PLAY_INTERVAL_MS = 1000  # a second per snapshot: time to look before the next one


def _as_snapshots(snapshots: Snapshots | SnapshotRecorder,
                  history: TrainHistory | None) -> Snapshots:
    """Snapshots as given, or a recorder's, with its run's losses from ``history``."""
    if isinstance(snapshots, SnapshotRecorder):
        if not isinstance(history, TrainHistory):
            raise ValueError(f"history must be the TrainHistory that train_bert returned when "
                             f"snapshots is a SnapshotRecorder (its losses are drawn); got "
                             f"{type(history).__name__}")
        return Snapshots(dict(sorted(snapshots.snapshots.items())), history.mlm, history.nsp)
    if not isinstance(snapshots, Snapshots):
        raise ValueError("snapshots must be Snapshots (bertlib.analysis.snapshots.load_snapshots) "
                         f"or a SnapshotRecorder; got {type(snapshots).__name__}")
    if history is not None:
        raise ValueError("history is only for a SnapshotRecorder: Snapshots carry their run's "
                         "losses")
    return Snapshots(dict(sorted(snapshots.weights.items())), snapshots.mlm_loss,
                     snapshots.nsp_loss)


class TimeLapseWidget(ModelWidget):
    """A sentence pair through a run's snapshots: ``load_snapshots()``, or the
    ``SnapshotRecorder`` that ``train_bert`` called with the ``history`` it returned (``model``
    gives the architecture only). ``.outputs``: every snapshot's; ``.frame``: what is drawn."""

    name = "time-lapse"

    def __init__(self, model: BERTModel, tokenizer: WordPieceTokenizer,
                 snapshots: Snapshots | SnapshotRecorder, history: TrainHistory | None = None,
                 lang: str | None = None, *, text_a: str | None = None,
                 text_b: str | None = None):
        super().__init__(model, tokenizer, lang, text_a, text_b)
        run = _as_snapshots(snapshots, history)
        check_snapshots(run.weights, model, "snapshots")
        device = model_device(model)
        self.weights = {step: {name: v.to(device) for name, v in state.items()}
                        for step, state in run.weights.items()}
        self.steps = list(self.weights)
        self.last_step = len(run.mlm_loss)
        lang = self.lang
        self.step = control(widgets.SelectionSlider, "tl_step", lang, "330px", "300px",
                            options=[(str(s), s) for s in self.steps], value=self.steps[-1])
        self.play = widgets.Play(min=0, max=len(self.steps) - 1, value=len(self.steps) - 1,
                                 interval=PLAY_INTERVAL_MS, show_repeat=False,
                                 layout=widgets.Layout(width="auto"))
        widgets.link((self.play, "value"), (self.step, "index"))
        self.layer, self.head = self._layer_head(("130px", "180px"))
        self.mask_a, self.mask_b = (control(widgets.Dropdown, key, lang, "205px")
                                    for key in ("tl_mask_a", "tl_mask_b"))
        # Under the text boxes, the masked tokens, the step slider and two notices.
        self.image = FigureView(figure_height(175))
        self.plot = TimeLapsePlot(lang)
        self.plot.set_losses(run.mlm_loss, run.nsp_loss)
        self.outputs: SnapshotOutputs | None = None
        self.frame: TimeLapseFrame | None = None
        for c in (self.mask_a, self.mask_b):
            c.observe(lambda _: self._guarded(self._run, [self.image]), names="value")
        for c in (self.step, self.layer, self.head):
            c.observe(lambda _: self._on_control(), names="value")
        self.ui = widgets.VBox([
            text_row(self.text_a, self.text_b),
            widgets.HBox([self.step, self.play], layout=WRAP),
            widgets.HBox([self.layer, self.head, self.mask_a, self.mask_b], layout=WRAP),
            self.status, self.image, self._save_controls(),
        ])
        self.refresh()

    def refresh(self) -> None:
        """A new text: masked tokens chosen afresh, every snapshot run, redrawn."""
        self._guarded(self._new_text, [self.image])

    def _new_text(self) -> list[str]:
        self.outputs = None  # until this text has run: the controls redraw nothing stale
        enc, self._notices = self._encode(self.tokenizer, self.model.config.max_len,
                                          require_b=True)
        self.encoded = enc
        structural = self.tokenizer.vocab.structural_ids
        default = DEFAULT_MASKED[self.lang]
        with self._quiet():  # one run for both choices
            for segment, box in enumerate((self.mask_a, self.mask_b)):
                candidates = [i for i, (t, s) in enumerate(zip(enc.ids, enc.segments,
                                                               strict=True))
                              if s == segment and t not in structural]
                box.options = [*((f"{i}: {enc.tokens[i]}", i) for i in candidates),
                               (text("tl_no_mask", self.lang), None)]
                # The language's default word where the sentence has it, else the middle one.
                chosen = [i for i in candidates if enc.tokens[i] == default[segment]]
                box.value = (chosen or [candidates[len(candidates) // 2]])[0]
        return self._run()

    def _run(self) -> list[str]:
        """Every snapshot on the pair, the chosen tokens masked (the only model run); draw."""
        self.outputs = None
        positions = [p for p in (self.mask_a.value, self.mask_b.value) if p is not None]
        if not positions:
            raise InputNotice(text("tl_need_mask", self.lang))
        self.outputs = snapshot_outputs(self.model, self.weights, self.encoded, positions,
                                        self.tokenizer.vocab, TOP_K)
        return self._redraw()

    def _on_control(self) -> None:
        if self.outputs is not None:
            self._guarded(self._redraw, [self.image])

    def _redraw(self) -> list[str]:
        out, layer, head = self.outputs, self.layer.value, self.head.value
        s = self.steps.index(self.step.value)
        run = out.attentions[:, layer]  # (S, nh, T, T)
        run = run.mean(axis=1) if head == MEAN_HEAD else run[:, head]
        self.frame = TimeLapseFrame(
            step=self.step.value, last_step=self.last_step, weights=run[s],
            tokens=out.tokens, boundary=self.encoded.boundary, vmax=float(run.max()),
            title=text("attention_title", self.lang, layer=layer, head=head_name(head, self.lang)),
            guesses=out.guesses[s], original_probabilities=out.original_probabilities[s],
            is_next=float(out.is_next[s]))
        self.image.show(self.plot, self.frame)
        return self._notices

"""Time every widget action on a model the size of the chapter's pretraining config.

vocab 20000, hidden 128, ffn 256, 2 heads, 2 blocks; inputs of 64 tokens. Prints p50/p95 in
milliseconds per action; the target is p95 <= 100 ms. Each action is one widget update, as when
a student edits one text box (the boxes redraw on Enter or leaving the box, not per key):
"new text" changes sentence A and keeps the 64 tokens, "new length" changes it to 56-64 tokens
(the figures keep their size), "new size" switches between 40 and 60 tokens, which resizes the
figure and so redraws all of it, and "unseen words" gives a 30-token pair a sentence A of 13
words never shown before (nothing of it is cached). "save PNG" writes the figure on screen at the
default resolution (bertlib.viz.live.SAVE_DPI) into a temporary folder. The fine-tuning widget
offers a classifier on this model and one on all-MiniLM-L6-v2 (6 blocks, H = 384, its own
tokenizer), as notebook 10 does.

With ``--compare``, every action also runs with each piece of the private rendering machinery
(``bertlib/viz/_render.py``) switched off in turn, interleaved repeat by repeat on widgets of
their own, so that each piece is kept only while it pays: "no blitting" draws the whole figure on
every update, "no stamps" renders every token label, title and note afresh (matplotlib's own
text drawing), "Pillow PNG" encodes with Pillow instead of ``encode_png``, and "one
background" keeps the background of the last figure size only. Run:
    .venv/bin/python benchmarks/bench_widgets.py [--repeats 30] [--compare] [--only attention]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import PIL.Image
import torch
from matplotlib.text import Text

from bertlib.analysis.snapshots import Snapshots
from bertlib.finetuning.finetune import Accuracy, BERTClassifier, BERTTagger
from bertlib.finetuning.tasks import NUM_TOPICS, TAGS, class_names
from bertlib.model import BERTModel
from bertlib.text.tokenizer import WordPieceTokenizer
from bertlib.text.vocab import SpecialTokens
from bertlib.train import init_model
from bertlib.viz import (
    AttentionWidget,
    FineTuneWidget,
    InputRepresentationWidget,
    MaskingWidget,
    NSPWidget,
    ScoredClassifier,
    TimeLapseWidget,
    _render,
)
from bertlib.weights.hf import load_hf, minilm_directory

VOCAB_SIZE = 20000
WORDS = ("the a crane bird lifted flew over river bank steel beam heavy roof then it put on "
         "of and to in was is were by with for from at as that this his her they").split()


def chapter_tokenizer() -> WordPieceTokenizer:
    """A WordPiece tokenizer with exactly VOCAB_SIZE entries, from a written vocab.txt."""
    fillers = [f"w{i}" for i in range(VOCAB_SIZE - len(WORDS) - 5)]
    lines = [*SpecialTokens().as_list(), *WORDS, *fillers]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "vocab.txt"
        path.write_text("\n".join(lines), encoding="utf-8")
        return WordPieceTokenizer.from_vocab_txt(path)


def sentence(n_words: int, offset: int) -> str:
    return " ".join(WORDS[(i + offset) % len(WORDS)] for i in range(n_words))


def percentiles(samples: list[float]) -> tuple[float, float]:
    samples = sorted(samples)
    return statistics.median(samples), samples[round(0.95 * (len(samples) - 1))]


def _full_draw_png(blitter: _render.Blitter, dpi: float | None = None) -> bytes:
    """What Blitter.png would cost without blitting: the whole figure drawn on every update."""
    animated = blitter.artists + blitter.token_artists
    for artist in animated:
        artist.set_animated(False)
    shown = blitter.figure.dpi
    blitter.figure.set_dpi(dpi or shown)
    blitter.figure.canvas.draw()
    for artist in animated:
        artist.set_animated(True)
    png = _render.canvas_png(blitter.figure.canvas, dpi)
    blitter.figure.set_dpi(shown)
    return png


def _pillow_png(rgba: np.ndarray, dpi: float | None = None) -> bytes:
    """encode_png's work done by Pillow (the resolution written too, as encode_png does)."""
    out = io.BytesIO()
    PIL.Image.fromarray(rgba[:, :, :3]).save(out, format="png",
                                             **({} if dpi is None else {"dpi": (dpi, dpi)}))
    return out.getvalue()


def _fresh_text(text: Text, renderer, *_, **__) -> None:
    """What draw_stamped would cost without stamps: every text rendered afresh."""
    Text.draw(text, renderer)


# Each variant switches one piece of the rendering machinery off (see the module docstring).
VARIANTS: dict[str, list[tuple[object, str, object]]] = {
    "all on": [],
    "no blitting": [(_render.Blitter, "png", _full_draw_png)],
    "no stamps": [(_render, "draw_stamped", _fresh_text)],
    "Pillow PNG": [(_render, "encode_png", _pillow_png)],
    "one background": [(_render.Blitter, "MAX_BACKGROUNDS", 1)],
}


@contextlib.contextmanager
def variant(name: str) -> Iterator[None]:
    saved = [(owner, attr, getattr(owner, attr)) for owner, attr, _ in VARIANTS[name]]
    for owner, attr, replacement in VARIANTS[name]:
        setattr(owner, attr, replacement)
    try:
        yield
    finally:
        for owner, attr, original in saved:
            setattr(owner, attr, original)


def timings(actions: dict[str, Callable[[int], None]],
            repeats: int) -> dict[str, tuple[float, ...]]:
    """Per variant: p50/p95 of wall-clock and of this process's CPU time, in ms, the variants
    interleaved repeat by repeat. On a shared machine the wall clock includes waiting for a
    core; the CPU time does not."""
    for name, action in actions.items():
        with variant(name):
            action(0)  # warm-up: first draw lays out the figure
    wall = {name: [] for name in actions}
    cpu = {name: [] for name in actions}
    for i in range(1, repeats + 1):
        for name, action in actions.items():
            with variant(name):
                w0, c0 = time.perf_counter(), time.process_time()
                action(i)
                wall[name].append((time.perf_counter() - w0) * 1000)
                cpu[name].append((time.process_time() - c0) * 1000)
    return {name: (*percentiles(wall[name]), *percentiles(cpu[name])) for name in actions}


def widget_actions(model: BERTModel, tokenizer: WordPieceTokenizer, folder: Path,
                   minilm: tuple[BERTModel, WordPieceTokenizer]) -> dict[str, Callable]:
    """Widgets of their own, and each action on them as ``action(i)`` for repeat ``i``; saved
    figures go to ``folder``; ``minilm``: MiniLM and its tokenizer, the second classifier."""
    # 64 tokens: <cls> + 31 + <sep> + 30 + <sep>
    text_b = sentence(30, 7)
    texts = [sentence(31, k) for k in range(8)]

    def set_texts(w, i: int) -> None:
        """One update: a new sentence A (the first call also sets B)."""
        w.text_b.value = text_b
        w.text_a.value = texts[i % len(texts)]

    def set_length(w, i: int) -> None:
        """One update: sentence A of 23 to 31 words, never the length it had."""
        w.text_b.value = text_b
        w.text_a.value = sentence(23 + i % 9, i)

    def set_unseen(w, i: int) -> None:
        """One update: 30 tokens, sentence A of 13 filler words not used before."""
        w.text_b.value = sentence(14, 7)
        w.text_a.value = " ".join(f"w{1000 + 13 * i + k}" for k in range(13))

    def set_size(w, i: int) -> None:
        """One update: 40 or 60 tokens in turn (sentence A of 7 or 27 words)."""
        w.text_b.value = text_b
        w.text_a.value = sentence(27 if i % 2 else 7, i)

    rep = InputRepresentationWidget(model, tokenizer, lang="en")
    mask = MaskingWidget(tokenizer, lang="en")
    fill = MaskingWidget(tokenizer, lang="en", model=model)  # with the model's guesses
    att = AttentionWidget(model, tokenizer, lang="en")
    nsp = NSPWidget(model, tokenizer, lang="en")
    # what the widget says, not timed apart: out of the 72 held-out sentences of one word
    scores = {"en": Accuracy(58, 72)}
    tune = FineTuneWidget(
        {"small": ScoredClassifier(BERTClassifier(model, NUM_TOPICS), tokenizer, scores),
         "MiniLM": ScoredClassifier(BERTClassifier(minilm[0], NUM_TOPICS), minilm[1], scores)},
        BERTTagger(model, len(TAGS)), tokenizer, class_names("topic", "en"), lang="en")
    # Six snapshots, as the shipped run has: the model's architecture, weights of their own.
    steps = (0, 50, 150, 300, 650, 1000)
    run = Snapshots({step: init_model(model.config, seed=step).state_dict() for step in steps},
                    [7.0 - 0.005 * i for i in range(1000)], [0.7 - 0.0002 * i for i in range(1000)])
    lapse = TimeLapseWidget(model, tokenizer, run, lang="en")
    sentences = [sentence(62, k) for k in range(8)]  # <cls> + 62 + <sep>
    for w in (rep, mask, att, nsp, lapse):
        set_texts(w, 0)
    set_texts(fill, 0)
    tune.text_a.value = sentences[0]
    assert len(att.encoded.tokens) == 64 and len(mask.encoded.tokens) == 64
    assert len(tune.encoded.tokens) == 64 and len(lapse.encoded.tokens) == 64

    def save(w, view: str | None = None, figure: str | None = None) -> Callable[[int], None]:
        def act(i: int) -> None:
            if view is not None:
                att.view.value = view
                att.head.value = 0
            if i == 0:  # the warm-up: 64 tokens, whatever the actions before left
                if w is tune:
                    tune.text_a.value = sentences[0]
                else:
                    set_texts(w, 0)
                if figure == "tally":
                    mask.tally_button.click()
            w.save(folder / f"{w.name}-{figure or 'main'}.png", figure=figure)
        return act

    def lapse_mask(i: int) -> None:
        """Another token masked in sentence A: every snapshot runs again."""
        options = [value for _, value in lapse.mask_a.options if value is not None]
        lapse.mask_a.value = options[i % len(options)]

    def set_view(value: str) -> Callable[[int], None]:
        def act(i: int) -> None:
            att.view.value = value
            att.layer.value = i % 2
        return act

    def change_head(i: int) -> None:
        att.view.value = "one"
        att.head.value = [0, 1, -1][i % 3]

    def step_by_step(control: str) -> Callable[[int], None]:
        def act(i: int) -> None:
            att.view.value = "querykey"
            if control != "head":
                att.head.value = 0  # one head: the mean has no single query and key
            if control == "query":
                att.query.value = i % 64
            elif control == "head":
                att.head.value = i % 2
            elif control == "layer":
                att.layer.value = i % 2
            elif control == "temperature":  # the next stop, back to τ = 1 after 4·√d
                stops = [t for _, t in att.temperature.options]
                att.temperature.value = stops[(stops.index(att.temperature.value) + 1)
                                              % len(stops)]
            else:
                att.padding.value = i % 9
        return act

    def model_view(control: str) -> Callable[[int], None]:
        def act(i: int) -> None:
            att.view.value = "model"
            if control == "text":
                set_texts(att, i)  # the model runs, and every layer and head is drawn
            else:  # another thumbnail drawn large
                att.head.value = [0, 1, -1][i % 3]
        return act

    def evidence(control: str) -> Callable[[int], None]:
        def act(i: int) -> None:
            att.view.value = "evidence"
            if control == "text":
                set_texts(att, i)  # the model runs, then every head switched off at once
            elif control == "masked":  # one token, then two: the model runs again
                content = [p for _, p in att.masked.options]
                att.masked.value = tuple(content[i % len(content):][: 1 + i % 2])
            else:  # another layer and head: the maps and the outlines redrawn
                att.layer.value, att.head.value = i % 2, [0, 1, -1][i % 3]
        return act

    return {
        "input representation: new text": lambda i: set_texts(rep, i),
        "input representation: new length": lambda i: set_length(rep, i),
        "input representation: new size": lambda i: set_size(rep, i),
        "input representation: unseen words": lambda i: set_unseen(rep, i),
        "masking: resample (new seed)": lambda i: mask.resample.click(),
        "masking: new text": lambda i: set_texts(mask, i),
        "masking: tally 300 resamples": lambda i: mask.tally_button.click(),
        "masking: save tally PNG": save(mask, figure="tally"),
        "masking: save PNG": save(mask),
        "masking: new mask ratio": lambda i: setattr(mask.mask_ratio, "value",
                                                     [0.15, 0.3, 0.5][i % 3]),
        "masking + model guesses: resample": lambda i: fill.resample.click(),
        "masking + model guesses: new text": lambda i: set_texts(fill, i),
        "attention: new text (model runs)": lambda i: set_texts(att, i),
        "attention: change head": change_head,
        "attention: change query token": lambda i: setattr(att.query, "value", i % 64),
        "attention: hide/show specials": lambda i: setattr(att.hide_specials, "value",
                                                           i % 2 == 1),
        "attention: all-heads grid, change layer": set_view("all"),
        "attention: save PNG": save(att, view="one"),
        "attention: step by step, change query": step_by_step("query"),
        "attention: step by step, change head": step_by_step("head"),
        "attention: step by step, change layer": step_by_step("layer"),
        "attention: step by step, change padding": step_by_step("padding"),
        "attention: step by step, change temperature": step_by_step("temperature"),
        "attention: step by step, save PNG": save(att, view="querykey"),
        "attention: every layer and head, new text": model_view("text"),
        "attention: every layer and head, pick one": model_view("pick"),
        "attention: every layer and head, save PNG": save(att, view="model"),
        "attention: evidence, new text (model runs)": evidence("text"),
        "attention: evidence, change masked tokens": evidence("masked"),
        "attention: evidence, change layer and head": evidence("pick"),
        "attention: evidence, save PNG": save(att, view="evidence"),
        # Last of the attention actions: the ones above assume 64 tokens.
        "attention: new length": lambda i: (setattr(att.view, "value", "one"),
                                            set_length(att, i)),
        "attention: new size": lambda i: set_size(att, i),
        "attention: unseen words": lambda i: set_unseen(att, i),
        "nsp: new text (model runs)": lambda i: set_texts(nsp, i),
        "nsp: swap A and B": lambda i: nsp.swap.click(),
        "nsp: save PNG": save(nsp),
        "input representation: save PNG": save(rep),
        "fine-tune: new text (models run)": lambda i: (setattr(tune.choice, "value", "small"),
                                                       setattr(tune.text_a, "value",
                                                               sentences[i % 8])),
        "fine-tune: switch classifier (models run)": lambda i: setattr(
            tune.choice, "value", ["MiniLM", "small"][i % 2]),
        "fine-tune: new text, MiniLM (models run)": lambda i: (
            setattr(tune.choice, "value", "MiniLM"), setattr(tune.text_a, "value",
                                                             sentences[i % 8])),
        "fine-tune: save PNG": save(tune),
        # One step after another, as the play button moves the slider: the cache re-sliced.
        "time-lapse: move the step slider": lambda i: setattr(lapse.play, "value", i % 6),
        "time-lapse: change head": lambda i: setattr(lapse.head, "value", [0, 1, -1][i % 3]),
        "time-lapse: change layer": lambda i: setattr(lapse.layer, "value", i % 2),
        "time-lapse: new masked token (6 snapshots run)": lapse_mask,
        "time-lapse: new text (6 snapshots run)": lambda i: set_texts(lapse, i),
        "time-lapse: save PNG": save(lapse),
        # What a saved notebook keeps beside each widget: a PNG of its figures, made once per
        # display (not per action), so it counts against the time a cell takes to show.
        "input representation: picture for the notebook": lambda i: rep._repr_mimebundle_(),
        "masking: picture for the notebook": lambda i: mask._repr_mimebundle_(),
        "attention: picture for the notebook": lambda i: att._repr_mimebundle_(),
        "time-lapse: picture for the notebook": lambda i: lapse._repr_mimebundle_(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--compare", action="store_true",
                        help="also time each action with one piece of the machinery off")
    parser.add_argument("--only", default="",
                        help="time only the actions whose name contains this text")
    args = parser.parse_args()
    torch.manual_seed(0)
    tokenizer = chapter_tokenizer()
    model = BERTModel(len(tokenizer.vocab), 128, 256, 2, 2, 0.2).eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # MiniLM ships no MLM or NSP head
        minilm = load_hf(minilm_directory())
    names = list(VARIANTS) if args.compare else ["all on"]
    per_variant = {}
    folder = Path(tempfile.mkdtemp(prefix="bench-widgets-"))
    for name in names:
        (folder / name).mkdir()
        with variant(name):
            per_variant[name] = widget_actions(model, tokenizer, folder / name, minilm)
    print(f"torch threads: {torch.get_num_threads()}; tokens per input: 64; "
          f"repeats: {args.repeats}")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.compare:
        print(f"{'action (wall p50 / p95 ms)':42s}" + "".join(f"{n:>18s}" for n in names)
              + "".join(f"{'p95 / all on':>14s}" for _ in names[1:]))
    else:
        print(f"{'action':42s} {'wall p50':>9s} {'wall p95':>9s} {'cpu p50':>8s} {'cpu p95':>8s}")
    for action in (a for a in per_variant["all on"] if args.only in a):
        figures = timings({name: per_variant[name][action] for name in names}, args.repeats)
        if args.compare:
            base = figures["all on"][1]
            print(f"{action:42s}" + "".join(f"{figures[n][0]:10.1f} /{figures[n][1]:6.1f}"
                                            for n in names)
                  + "".join(f"{figures[n][1] / base:13.2f}x" for n in names[1:]))
        else:
            print(f"{action:42s} " + " ".join(f"{x:8.1f} " for x in figures["all on"]))


if __name__ == "__main__":
    main()

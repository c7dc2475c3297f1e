"""Time every widget action on a model the size of the chapter's pretraining config.

vocab 20000, hidden 128, ffn 256, 2 heads, 2 blocks; inputs of 64 tokens. Prints p50/p95 in
milliseconds per action; the target is p95 <= 100 ms. Each action is one widget update, as when
a student edits one text box (the boxes redraw on Enter or leaving the box, not per key):
"new text" changes sentence A and keeps the 64 tokens, "new length" changes it to 56-64 tokens
(the figures keep their size), "new size" switches between 40 and 60 tokens, which resizes the
figure and so redraws all of it, and "unseen words" gives a 30-token pair a sentence A of 13
words never shown before (nothing of it is cached). Run:
    .venv/bin/python benchmarks/bench_widgets.py [--repeats 30]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import torch

from bertlib.model import BERTModel
from bertlib.tokenizer import WordPieceTokenizer
from bertlib.viz import AttentionWidget, InputRepresentationWidget, MaskingWidget, NSPWidget
from bertlib.vocab import SpecialTokens

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


def timings(action: Callable[[int], None], repeats: int) -> tuple[float, ...]:
    """p50/p95 of wall-clock and of this process's CPU time, in ms. On a shared machine the
    wall clock includes waiting for a core; the CPU time does not."""
    action(0)  # warm-up: first draw lays out the figure
    wall, cpu = [], []
    for i in range(1, repeats + 1):
        w0, c0 = time.perf_counter(), time.process_time()
        action(i)
        wall.append((time.perf_counter() - w0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
    return (*percentiles(wall), *percentiles(cpu))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    torch.manual_seed(0)
    tokenizer = chapter_tokenizer()
    model = BERTModel(len(tokenizer.vocab), 128, 256, 2, 2, 0.2).eval()
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
    att = AttentionWidget(model, tokenizer, lang="en")
    nsp = NSPWidget(model, tokenizer, lang="en")
    set_texts(mask, 0)
    set_texts(att, 0)
    assert len(att.encoded.tokens) == 64 and len(mask.encoded.tokens) == 64

    def set_view(value: str) -> Callable[[int], None]:
        def act(i: int) -> None:
            att.view.value = value
            att.layer.value = i % 2
        return act

    def change_head(i: int) -> None:
        att.view.value = "one"
        att.head.value = [0, 1, -1][i % 3]

    actions: dict[str, Callable[[int], None]] = {
        "input representation: new text": lambda i: set_texts(rep, i),
        "input representation: new length": lambda i: set_length(rep, i),
        "input representation: new size": lambda i: set_size(rep, i),
        "input representation: unseen words": lambda i: set_unseen(rep, i),
        "masking: resample (new seed)": lambda i: mask.resample.click(),
        "masking: new text": lambda i: set_texts(mask, i),
        "masking: tally 300 resamples": lambda i: mask.tally_button.click(),
        "attention: new text (model runs)": lambda i: set_texts(att, i),
        "attention: change head": change_head,
        "attention: change query token": lambda i: setattr(att.query, "value", i % 64),
        "attention: hide/show specials": lambda i: setattr(att.hide_specials, "value",
                                                           i % 2 == 1),
        "attention: all-heads grid, change layer": set_view("all"),
        # Last of the attention actions: the ones above assume 64 tokens.
        "attention: new length": lambda i: (setattr(att.view, "value", "one"),
                                            set_length(att, i)),
        "attention: new size": lambda i: set_size(att, i),
        "attention: unseen words": lambda i: set_unseen(att, i),
        "nsp: new text (model runs)": lambda i: set_texts(nsp, i),
        "nsp: swap A and B": lambda i: nsp.swap.click(),
    }
    print(f"torch threads: {torch.get_num_threads()}; tokens per input: 64; "
          f"repeats: {args.repeats}")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'action':42s} {'wall p50':>9s} {'wall p95':>9s} {'cpu p50':>8s} {'cpu p95':>8s}")
    for name, action in actions.items():
        figures = timings(action, args.repeats)
        print(f"{name:42s} " + " ".join(f"{x:8.1f} " for x in figures))


if __name__ == "__main__":
    main()

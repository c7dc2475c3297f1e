"""Write the labelled fine-tuning sets to ``bertlib/assets/tasks/{en,zh}.jsonl`` (package data).

The sentences are the neutral frames of ``scripts/word_classes.py`` with words of its six classes
filled in, so the sets may be redistributed under the project's licence. Each line is one
sentence:

* ``text``: the sentence;
* ``split``: ``"train"`` or ``"test"``: training sentences use the training frames and the seen
  words only; test sentences use the test frames, with seen words or with held-out words;
* ``words``: ``[start, end, class, held_out]`` for each class word: its character span, its class
  (NAME, PLACE, TIME, fruit, animal, sport) and whether it is one of the held-out words.

Sentences of one word serve the topic task and the tagger; sentences of two words, at least one
a name, a place or a time, serve the tagger and question answering.

    python scripts/make_tasks.py             # the shipped files (seed 0)
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from word_classes import (
    NEUTRAL_TEST,
    NEUTRAL_TRAIN,
    PAIR_TEST,
    PAIR_TRAIN,
    held_out_words,
    leak_check,
    one_word_items,
    pair_items,
)

OUT_DIR = Path(__file__).resolve().parent.parent / "bertlib" / "assets" / "tasks"
PAIRS = {"train": 400, "test": 200}  # two-word sentences per language, split and part


def write_tasks(out_dir: Path, seed: int) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    for lang in ("en", "zh"):
        held = held_out_words(lang)
        rows = []
        for split, part, frames, pair_frames in (
                ("train", "seen", NEUTRAL_TRAIN, PAIR_TRAIN),
                ("test", "seen", NEUTRAL_TEST, PAIR_TEST),
                ("test", "held", NEUTRAL_TEST, PAIR_TEST)):
            items = one_word_items(lang, frames[lang], part)
            items += pair_items(lang, pair_frames[lang], part, PAIRS[split], seed)
            rows += [{"text": x["text"], "split": split,
                      "words": [[s, e, cls, w in held] for s, e, cls, w in x["words"]]}
                     for x in items]
        leaks = leak_check(lang, [r["text"] for r in rows if r["split"] == "train"])
        if leaks:
            raise SystemExit(f"held-out words in {lang} training sentences: {leaks[:3]}")
        lines = [json.dumps(r, ensure_ascii=False) for r in rows]
        (out_dir / f"{lang}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT_DIR)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    write_tasks(args.out, args.seed)


if __name__ == "__main__":
    main()

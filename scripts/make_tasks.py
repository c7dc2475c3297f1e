"""Write the labelled fine-tuning sets to ``bertlib/assets/tasks/{en,zh}.jsonl`` (package data).

The sentences come from the same hand-written templates as the pretraining corpus
(``scripts/make_corpus.py``), so the sets may be redistributed under the project's licence. Each
line is one sentence of one generated story, with everything the three tasks of notebook 09
need:

* ``topic``: the story's topic (0-11, the order of ``EN_TOPICS``/``ZH_TOPICS``), for the
  sentence-level task;
* ``story``: which story the sentence belongs to, for the pair-level task (same story or not);
* ``spans``: ``[start, end, kind]`` character spans of the names, places and times the template
  filled in, for the token-level task;
* ``template``: ``"topic.step.wording"``, so that a split can hold out whole templates.

    python scripts/make_tasks.py             # the shipped files (seed 0, 20 stories per topic)
"""

from __future__ import annotations

import argparse
import json
import random
import string
from pathlib import Path

from make_corpus import EN_TOPICS, ZH_TOPICS, _fill_en, _fill_zh

OUT_DIR = Path(__file__).resolve().parent.parent / "bertlib" / "assets" / "tasks"

# Which filled-in slots are entities, and of which kind (bertlib.finetuning.tasks.TAGS names them).
ENTITY_SLOTS = {"Name": "NAME", "city": "PLACE", "day": "TIME", "time": "TIME"}


def fill(template: str, slots: dict[str, str]) -> tuple[str, list[list]]:
    """``template`` with its slots filled, and the character spans of the entity slots."""
    out, spans = "", []
    for literal, field, _, _ in string.Formatter().parse(template):
        out += literal
        if field is None:
            continue
        if field in ENTITY_SLOTS:
            spans.append([len(out), len(out) + len(slots[field]), ENTITY_SLOTS[field]])
        out += slots[field]
    return out, spans


def write_tasks(out_dir: Path, stories_per_topic: int, seed: int) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    for lang, topics, fill_slots in (("en", EN_TOPICS, _fill_en), ("zh", ZH_TOPICS, _fill_zh)):
        rng = random.Random(f"tasks-{seed}-{lang}")
        lines, story = [], 0
        for _ in range(stories_per_topic):
            for topic, steps in enumerate(topics):
                slots = fill_slots(rng)
                for step, wordings in enumerate(steps):
                    wording = rng.randrange(len(wordings))
                    sentence, spans = fill(wordings[wording], slots)
                    lines.append(json.dumps(
                        {"story": story, "topic": topic, "template": f"{topic}.{step}.{wording}",
                         "text": sentence, "spans": spans}, ensure_ascii=False))
                story += 1
        (out_dir / f"{lang}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT_DIR)
    parser.add_argument("--stories", type=int, default=20, help="per topic and language")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    write_tasks(args.out, args.stories, args.seed)


if __name__ == "__main__":
    main()

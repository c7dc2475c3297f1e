"""Run notebook 10's designed experiment over five fine-tuning seeds and write its figures to
``bertlib/assets/small_bert/experiment.json``, which the notebook prints.

For each task (topic, tags, question answering): the small BERT fine-tuned from its pretrained
weights, from random weights, and a bag-of-words baseline, scored on test sentences with seen
words and with held-out words, in each language (``bertlib.finetuning.experiment.compare``).
Then the learning curve: the topic task with 1, 4, 16, 64 and all 128 training sentences per
class and language. About 10 minutes on two cores with ``--jobs 2``.

    python scripts/what_pretraining_buys.py            # the shipped figures
"""

from __future__ import annotations

import argparse
import json
import os
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import torch

from bertlib.assets import SMALL_BERT_DIR, load_small_bert
from bertlib.finetuning.experiment import (
    CURVE,
    EXPERIMENT_FILE,
    RECIPE,
    SEEDS,
    compare,
    data_for,
    per_class,
)
from bertlib.finetuning.tasks import load_task_sentences, split_tasks

LANGS = ("en", "zh")
PARTS = ("held_out", "seen")


def run(job: tuple[str, int | None, Path]) -> tuple[str, int | None, dict, float]:
    """One task over every seed (``n`` training sentences per class, or all): the per-seed
    scores, keyed "start|lang|part"."""
    task, n, model = job
    torch.set_num_threads(1)  # the notebooks' setting: the same numbers on any machine
    start = time.perf_counter()
    bert, tokenizer = load_small_bert(model)
    split = split_tasks(load_task_sentences())
    max_len = bert.config.max_len
    tests = {(lang, part): data_for(task, getattr(split, part), tokenizer, max_len,
                                    words_only=True).select(lang)
             for lang in LANGS for part in PARTS}
    steps, lr = RECIPE[task]
    out: dict[str, list[float]] = {}
    for seed in SEEDS:
        train_sentences = split.train if n is None else per_class(split.train, n, seed)
        train = data_for(task, train_sentences, tokenizer, max_len)
        result = compare(task, bert, train, tests, (seed,), num_steps=steps, lr=lr)
        for (name, (lang, part)), mean in result.items():
            out.setdefault(f"{name}|{lang}|{part}", []).extend(mean.values)
    return task, n, out, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=SMALL_BERT_DIR)
    parser.add_argument("--out", type=Path, default=None, help="default: MODEL/experiment.json")
    parser.add_argument("--jobs", type=int, default=2, help="processes, one thread each")
    args = parser.parse_args()
    jobs = [(task, None, args.model) for task in RECIPE]
    jobs += [("topic", n, args.model) for n in CURVE if n != 128]
    began = time.perf_counter()
    report = {"seeds": list(SEEDS), "cores": os.cpu_count(), "jobs": args.jobs,
              "recipe": {k: list(v) for k, v in RECIPE.items()}, "curve_sizes": list(CURVE),
              "tasks": {}, "curve": {}, "seconds": {}}
    with ProcessPoolExecutor(args.jobs) as pool:
        for task, n, scores, seconds in pool.map(run, jobs):
            print(task, n, f"{seconds:.0f} s", flush=True)
            if n is None:
                report["tasks"][task] = scores
                if task == "topic":
                    report["curve"]["128"] = scores
            else:
                report["curve"][str(n)] = scores
            report["seconds"][f"{task} {n or 'all'}"] = round(seconds)
    report["wall_seconds"] = round(time.perf_counter() - began)
    out = args.out or args.model / EXPERIMENT_FILE
    out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

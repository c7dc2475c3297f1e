"""The in-class recipe's training, today's bertlib against an earlier commit's, side by side.

    python benchmarks/bench_in_class.py                    # against 704b277
    python benchmarks/bench_in_class.py --against REV --rounds 40 --steps 5 --threads 1

Both run the same training pairs (built once, by today's code, from the in-class recipe of
scripts/pretrain_small.py), the same model size, seeds and learning rate, with ``train_bert``
and ``fast_loss``, in one process (the earlier package is imported as ``bertlib_old``). They
alternate every few steps, the order swapped every round, so that machine drift hits both
alike; prints the median step of each (a burst of other work moves it little) and their ratio.
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent


def prepare(folder: Path) -> None:
    """The in-class training pairs and the model's sizes, written once for both variants."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from pretrain_small import IN_CLASS, build_data
    from safetensors.torch import save_file

    from bertlib.text.corpus import load_small_corpus
    from bertlib.text.tokenizer import WordPieceTokenizer

    r = IN_CLASS
    split = load_small_corpus(held_out=r["held_out_fraction"], seed=r["split_seed"])
    tokenizer = WordPieceTokenizer.train((s for p in split.train for s in p), r["vocab_size"])
    train_data, _ = build_data(r, split, tokenizer)
    save_file(dict(zip(FIELDS, train_data.tensors(), strict=True)), folder / "pairs.safetensors")
    (folder / "recipe.json").write_text(json.dumps({**r, "vocab_size": len(tokenizer.vocab)}))


FIELDS = ("tokens", "segments", "valid_lens", "pred_positions", "mlm_weights", "mlm_labels",
          "nsp_labels")


def load(package: str, folder: Path):
    """``package``'s train_bert with its model and data, as the recipe in ``folder`` says."""
    from safetensors.torch import load_file

    data_mod = importlib.import_module(f"{package}.data")
    model_mod = importlib.import_module(f"{package}.model")
    train_mod = importlib.import_module(f"{package}.train")
    try:
        fast = importlib.import_module(f"{package}.scale.fast")
    except ImportError:  # the layout before issue 37
        fast = importlib.import_module(f"{package}.fast")
    r = json.loads((folder / "recipe.json").read_text())
    tensors = load_file(folder / "pairs.safetensors")
    data = data_mod.PretrainBatch(*(tensors[name] for name in FIELDS))
    config = model_mod.BERTConfig(r["vocab_size"], r["num_hiddens"], r["ffn_num_hiddens"],
                                  r["num_heads"], r["num_blks"], r["dropout"], r["max_len"])
    model = train_mod.init_model(config, r["model_seed"])

    def train(steps: int, seed: int) -> list[float]:
        """Seconds of each of ``steps`` steps, callback and loader included."""
        ends = [time.perf_counter()]
        train_mod.train_bert(model, data, num_steps=steps, batch_size=r["batch_size"],
                             lr=r["lr"], seed=seed, loss_fn=fast.fast_loss, progress=False,
                             callback=lambda _: ends.append(time.perf_counter()))
        return [b - a for a, b in itertools.pairwise(ends)]

    return train


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", default="704b277",
                        help="the earlier commit (default: the landing three before issue 37)")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--steps", type=int, default=10, help="steps per variant and round")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.against, "bertlib"],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive, check=True)
        # the earlier package under another name, so that both live in this process
        old = tmp / "bertlib_old"
        (tmp / "bertlib").rename(old)
        for source in old.rglob("*.py"):
            source.write_text(re.sub(r"\bbertlib\b", "bertlib_old", source.read_text()))
        sys.path.insert(0, str(tmp))
        prepare(tmp)
        variants = {args.against: load("bertlib_old", tmp), "today": load("bertlib", tmp)}
        for train in variants.values():
            train(3, seed=0)  # warm-up
        steps = {name: [] for name in variants}
        for i in range(args.rounds):
            order = list(variants) if i % 2 == 0 else list(reversed(variants))
            for name in order:
                steps[name] += variants[name](args.steps, seed=i)
    medians = {name: statistics.median(values) * 1000 for name, values in steps.items()}
    print(f"in-class recipe, {args.threads} threads, {args.rounds} rounds of {args.steps} steps "
          "each, interleaved in one process; median step, ms (quartiles):")
    for name, values in steps.items():
        q1, _, q3 = statistics.quantiles(values, n=4)
        print(f"  {name:>10}: {medians[name]:7.1f}  ({q1 * 1000:.1f}-{q3 * 1000:.1f})")
    print(f"today / {args.against}: {medians['today'] / medians[args.against]:.3f}")


if __name__ == "__main__":
    main()

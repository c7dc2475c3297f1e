"""Train the shipped small bilingual BERT and write it to ``bertlib/assets/small_bert/``.

    python scripts/pretrain_small.py          # the shipped checkpoint (~5 min on one thread)

Steps: split the corpus in ``bertlib/assets/small_corpus`` by paragraph (10% held out), train a
WordPiece tokenizer on the training paragraphs, pretrain with MLM + NSP, then evaluate on the
held-out paragraphs and write config.json, model.safetensors, tokenizer.json and metrics.json.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch

from bertlib.assets import METRICS_FILE, SMALL_BERT_DIR
from bertlib.checkpoint import save_pretrained
from bertlib.corpus import load_small_corpus, tokenize_paragraphs
from bertlib.data import make_pretrain_data
from bertlib.fast import keep_freed_memory
from bertlib.model import BERTConfig
from bertlib.tokenizer import WordPieceTokenizer
from bertlib.train import evaluate_pretraining, init_model, train_bert

RECIPE = {
    "held_out_fraction": 0.1,
    "split_seed": 0,
    "vocab_size": 4000,  # an upper bound: the corpus yields fewer distinct pieces
    "max_len": 64,
    "train_rounds": 10,  # fresh NSP pairs and masks per round
    # NotNext partners from the same language: across languages NSP is language identification.
    "notnext_same_language": True,
    "train_data_seed": 1,
    "held_out_data_seed": 2,
    "model_seed": 3,
    "train_seed": 4,
    "num_hiddens": 128,
    "ffn_num_hiddens": 256,
    "num_heads": 2,
    "num_blks": 2,
    "dropout": 0.1,
    "batch_size": 128,
    "lr": 1e-3,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    # One thread by default: the result then does not depend on the machine's core count, and
    # on shared cores two threads waiting for each other were several times slower.
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", type=Path, default=SMALL_BERT_DIR)
    args = parser.parse_args()
    r = RECIPE
    torch.set_num_threads(args.threads)
    keep_freed_memory()  # a script of its own: keeping freed memory mapped is faster here

    split = load_small_corpus(held_out=r["held_out_fraction"], seed=r["split_seed"])
    tokenizer = WordPieceTokenizer.train((s for p in split.train for s in p), r["vocab_size"])
    vocab = tokenizer.vocab
    same = r["notnext_same_language"]
    train = make_pretrain_data(tokenize_paragraphs(split.train, tokenizer.tokenize), vocab,
                               r["max_len"], seed=r["train_data_seed"], rounds=r["train_rounds"],
                               groups=split.train_langs if same else None)
    held_out = make_pretrain_data(tokenize_paragraphs(split.held_out, tokenizer.tokenize),
                                  vocab, r["max_len"], seed=r["held_out_data_seed"],
                                  groups=split.held_out_langs if same else None)
    print(f"vocab {len(vocab)}, training pairs {len(train)}, held-out pairs {len(held_out)}")

    config = BERTConfig(len(vocab), r["num_hiddens"], r["ffn_num_hiddens"], r["num_heads"],
                        r["num_blks"], r["dropout"], r["max_len"])
    model = init_model(config, r["model_seed"])
    history = train_bert(model, train, num_steps=args.steps, batch_size=r["batch_size"],
                         lr=r["lr"], seed=r["train_seed"])
    metrics = evaluate_pretraining(model, held_out)
    print(json.dumps(metrics, indent=2))

    recipe = {**r, "num_steps": args.steps, "threads": args.threads}
    save_pretrained(model, args.out, recipe=recipe)
    tokenizer.save(args.out / "tokenizer.json")
    every = max(1, args.steps // 200)
    report = {
        "held_out": metrics,
        "recipe": recipe,
        "training": {
            "seconds": round(history.seconds, 1),
            "pairs_per_sec": round(history.pairs_per_sec, 1),
            "loss_every_steps": every,
            "mlm_loss": [round(x, 4) for x in history.mlm[::every]],
            "nsp_loss": [round(x, 4) for x in history.nsp[::every]],
        },
    }
    (args.out / METRICS_FILE).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

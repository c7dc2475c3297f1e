"""Pretraining-step throughput on the shipped corpus' real batches (sentence pairs / s).

    .venv/bin/python benchmarks/bench_pretrain.py [--rounds 5] [--batches 8]

The workload is the shipped small BERT's: its tokenizer, its training pairs (every pair padded
to max_len 64 by ``make_pretrain_data``, mean length about 30), its sizes (H = 128, FFN 256,
2 heads, 2 blocks, dropout 0.1) and mini-batches of 128 pairs. The variants:

(a) Hugging Face ``BertForPreTraining`` fed the way its data collator feeds it: random
    mini-batches, each padded to its longest pair; MLM logits only at the real prediction
    slots (gathered), not at every position; its Trainer's default optimizer (fused AdamW,
    no weight decay);
(b) the same, with the mini-batches grouped by length (the Trainer's ``group_by_length``);
(c) bertlib, the chapter's straightforward step: every pair padded to max_len, the model with
    ``pred_positions``, ``chapter_loss``, plain Adam;
(d) bertlib's default, what ``train_bert`` does: random mini-batches, each padded to its
    longest pair (``trim_padding``), ``fast_loss``, ``make_optimizer`` (fused Adam);
(e) the same with ``group_by_length=True``.

(a), (c) and (d) read the same random mini-batches, (b) and (e) the same pairs grouped by
length. All run in one process under the same (default) allocator settings, interleaved
round by round, each timed over the same mini-batches after a warm-up pass.

The "useful" FLOPs are those of each pair on its own, without any padding; their rate is
compared with the machine's fp32 matmul peak, measured in the same run with a large
``torch.mm``. (c) and (d) compute the same losses for the same weights and pairs: printed for
the first mini-batch with dropout off (dropout's draws depend on the padded shape), and tested
in tests/test_batches.py, tests/test_train.py and tests/scale/test_fast.py.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch.utils.flop_counter import FlopCounterMode
from transformers import BertConfig, BertForPreTraining

from bertlib.assets import load_small_bert
from bertlib.batches import LengthGroupedSampler, trim_padding
from bertlib.data import make_pretrain_data
from bertlib.loss import chapter_loss
from bertlib.model import BERTConfig
from bertlib.scale.fast import fast_loss
from bertlib.text.corpus import load_small_corpus, tokenize_paragraphs
from bertlib.train import init_model, make_optimizer, train_step

H, FFN, HEADS, BLKS, DROPOUT, T, B = 128, 256, 2, 2, 0.1, 64, 128

Batch = list[torch.Tensor]


def real_batches(n: int) -> tuple[list[Batch], list[Batch], int]:
    """``n`` length-grouped mini-batches of the shipped corpus' training pairs, the same pairs
    in ``n`` random mini-batches (all padded to max_len), and the vocabulary size."""
    _, tokenizer = load_small_bert()
    split = load_small_corpus()
    data = make_pretrain_data(tokenize_paragraphs(split.train, tokenizer.tokenize),
                              tokenizer.vocab, T, seed=1, groups=split.train_langs)
    groups = [torch.tensor(rows) for rows in LengthGroupedSampler(data.valid_lens, B, seed=0)]
    groups = [rows for rows in groups if len(rows) == B][:n]
    # The same pairs, shuffled across the mini-batches: both variants do the same useful work.
    pairs = torch.cat(groups)
    shuffled = pairs[torch.randperm(len(pairs), generator=torch.Generator().manual_seed(0))]
    random = [list(data[rows].tensors()) for rows in shuffled.split(B)]
    grouped = [list(data[rows].tensors()) for rows in groups]
    return random, grouped, len(tokenizer.vocab)


def hf_step(vocab_size: int) -> Callable[[Batch], None]:
    """One (fused) AdamW step of ``BertForPreTraining`` on a mini-batch padded to its longest
    pair, MLM logits only at the real slots."""
    config = BertConfig(vocab_size=vocab_size, hidden_size=H, num_hidden_layers=BLKS,
                        num_attention_heads=HEADS, intermediate_size=FFN,
                        hidden_dropout_prob=DROPOUT, attention_probs_dropout_prob=DROPOUT,
                        max_position_embeddings=T)
    with torch.random.fork_rng():
        torch.manual_seed(0)
        model = BertForPreTraining(config).train()
    # The optimizer the Trainer uses by default (optim="adamw_torch_fused", weight_decay=0).
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.0, fused=True)

    def step(batch: Batch) -> None:
        tokens, segments, valid_lens, pred_positions, weights, labels, nsp = trim_padding(batch)
        attention_mask = (torch.arange(tokens.shape[1]) < valid_lens[:, None]).long()
        opt.zero_grad(set_to_none=True)
        seq, pooled = model.bert(input_ids=tokens, attention_mask=attention_mask,
                                 token_type_ids=segments)[:2]
        real = weights > 0
        rows = torch.arange(len(tokens))[:, None].expand_as(pred_positions)
        logits = model.cls.predictions(seq[rows[real], pred_positions[real]])  # (K, V)
        loss = F.cross_entropy(logits, labels[real]) + F.cross_entropy(
            model.cls.seq_relationship(pooled), nsp)
        loss.backward()
        opt.step()

    return step


def bertlib_steps(vocab_size: int) -> dict[str, Callable[[Batch], None]]:
    config = BERTConfig(vocab_size, H, FFN, HEADS, BLKS, DROPOUT, T)
    chapter, default = init_model(config, 0), init_model(config, 0)
    chapter_opt = torch.optim.Adam(chapter.parameters(), lr=1e-3)  # as the chapter has it
    default_opt = make_optimizer(default, 1e-3)
    return {
        "chapter": lambda batch: train_step(chapter, chapter_opt, batch, chapter_loss),
        "default": lambda batch: train_step(default, default_opt, trim_padding(batch),
                                            fast_loss),
    }


def same_losses(vocab_size: int, batch: Batch) -> float:
    """|chapter step's total loss - default step's| for the same weights and pairs, dropout
    off."""
    model = init_model(BERTConfig(vocab_size, H, FFN, HEADS, BLKS, 0.0, T), 0)
    with torch.no_grad():
        full = chapter_loss(model, *batch).total
        trimmed = fast_loss(model, *trim_padding(batch)).total
    return abs(float(full - trimmed))


def useful_flops(vocab_size: int, batches: list[Batch]) -> float:
    """FLOPs of a forward and backward pass over every pair on its own (no padding), per
    pair."""
    model = init_model(BERTConfig(vocab_size, H, FFN, HEADS, BLKS, DROPOUT, T), 0).train()
    pairs = [[t[i:i + 1] for t in batch] for batch in batches[:2] for i in range(len(batch[0]))]
    with FlopCounterMode(display=False) as counter:
        for pair in pairs:
            fast_loss(model, *trim_padding(pair)).total.backward()
    return counter.get_total_flops() / len(pairs)


def matmul_peak_flops(n: int = 4096, repeats: int = 5) -> float:
    a, b = torch.randn(n, n), torch.randn(n, n)
    torch.mm(a, b)
    best = min(_timed(lambda: torch.mm(a, b)) for _ in range(repeats))
    return 2 * n**3 / best


def _timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--batches", type=int, default=8, help="mini-batches per round")
    args = parser.parse_args()
    random, grouped, vocab_size = real_batches(args.batches)
    lens = torch.cat([b[2] for b in random]).float()
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; vocab {vocab_size}, "
          f"hidden {H}, ffn {FFN}, {HEADS} heads, {BLKS} blocks, dropout {DROPOUT}, max_len "
          f"{T}, batch {B}; pair length mean {lens.mean():.1f}, max {lens.max():.0f}")
    for name, batches in (("random", random), ("grouped", grouped)):
        padded = sum(int(trim_padding(b)[0].numel()) for b in batches)
        real = sum(int(b[2].sum()) for b in batches)
        print(f"{name} mini-batches padded to their longest pair: {1 - real / padded:.0%} "
              f"padding (to max_len: {1 - real / (len(batches) * B * T):.0%})")

    hf = hf_step(vocab_size)
    ours = bertlib_steps(vocab_size)
    variants = {
        "(a) HF, padded to longest": (hf, random),
        "(b) HF, grouped by length": (hf, grouped),
        "(c) chapter, max_len": (ours["chapter"], random),
        "(d) bertlib default": (ours["default"], random),
        "(e) bertlib, grouped": (ours["default"], grouped),
    }
    for step, batches in variants.values():  # warm-up
        for batch in batches:
            step(batch)
    times: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(args.rounds):
        for name, (step, batches) in variants.items():
            times[name].append(_timed(lambda s=step, bs=batches: [s(b) for b in bs]))
    peak = matmul_peak_flops()
    flops = useful_flops(vocab_size, random)

    rates = {name: args.batches * B / statistics.median(t) for name, t in times.items()}
    base = rates["(a) HF, padded to longest"]
    print(f"\n{'variant':<28}{'pairs/s':>9}{'vs (a)':>8}{'useful GFLOP/s':>16}{'of peak':>9}")
    for name, rate in rates.items():
        useful = rate * flops
        print(f"{name:<28}{rate:9.0f}{rate / base:7.2f}x{useful / 1e9:16.1f}"
              f"{useful / peak:9.0%}")
    speedup = rates["(d) bertlib default"] / rates["(c) chapter, max_len"]
    print(f"\nfp32 matmul peak {peak / 1e9:.0f} GFLOP/s; useful work {flops / 1e6:.1f} MFLOP "
          f"per pair; (d) / (c) = {speedup:.2f}x")
    print(f"(c) vs (d) on the same weights and pairs, dropout off: |total loss difference| = "
          f"{same_losses(vocab_size, random[0]):.2e}")


if __name__ == "__main__":
    main()

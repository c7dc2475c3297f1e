"""Training-step throughput at the chapter's pretraining configuration (sentence pairs / s).

    .venv/bin/python benchmarks/bench_pretrain.py [--rounds 3]

(a) Hugging Face BertForPreTraining used the usual way: MLM labels on all B x T positions
    (-100 where nothing is predicted), so logits are computed for every token;
(b) Hugging Face, MLM logits only at the B x P gathered prediction slots;
(c) bertlib, the chapter's straightforward step (BERTModel with pred_positions, bert_loss);
(d) bertlib's default step (``train_step`` with ``fast_loss``), with and without the opt-in
    ``keep_freed_memory()``.

(c) and (d) compute the same losses and gradients: tests/test_fast.py checks it.

All four run in one process, interleaved round by round, each timed as a median over steps after
a warm-up step. (a)-(c) first run with glibc's default malloc; ``keep_freed_memory()`` cannot be
undone within a process, so (d) is measured in a second interleaved block together with (b) and
(c) again: ratios within that block compare the steps under the same malloc. Peak memory is the
largest rise of the resident set during one step (sampled every 2 ms) under the default malloc.
The matmul peak is measured in the same run with a large ``torch.mm``.
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time

import torch
import torch.nn.functional as F
from torch.utils.flop_counter import FlopCounterMode
from transformers import BertConfig, BertForPreTraining

from bertlib.fast import fast_loss, keep_freed_memory
from bertlib.loss import chapter_loss
from bertlib.model import BERTConfig
from bertlib.train import init_model, train_step

V, H, FFN, HEADS, BLKS, DROPOUT, T, B, P = 20256, 128, 256, 2, 2, 0.2, 64, 512, 10
PAGE = 4096


def make_batch(seed: int = 0) -> tuple[torch.Tensor, ...]:
    """Random valid lengths in [20, T]; round(0.15 * length) real prediction slots (<= P)."""
    g = torch.Generator().manual_seed(seed)
    valid_lens = torch.randint(20, T + 1, (B,), generator=g)
    tokens = torch.randint(5, V, (B, T), generator=g)
    tokens[torch.arange(T) >= valid_lens[:, None]] = 0
    segments = ((torch.arange(T) > valid_lens[:, None] // 2)
                & (torch.arange(T) < valid_lens[:, None])).long()
    pred_positions = torch.zeros(B, P, dtype=torch.long)
    weights = torch.zeros(B, P)
    for i, n in enumerate(valid_lens.tolist()):
        k = min(P, max(1, round(0.15 * n)))
        pos = torch.randperm(n - 2, generator=g)[:k].sort().values + 1
        pred_positions[i, :k] = pos
        weights[i, :k] = 1.0
    labels = torch.randint(5, V, (B, P), generator=g) * weights.long()
    nsp = torch.randint(0, 2, (B,), generator=g)
    return tokens, segments, valid_lens, pred_positions, weights, labels, nsp


def hf_step_fns(batch):
    tokens, segments, valid_lens, pred_positions, weights, labels, nsp = batch
    config = BertConfig(vocab_size=V, hidden_size=H, num_hidden_layers=BLKS,
                        num_attention_heads=HEADS, intermediate_size=FFN,
                        hidden_dropout_prob=DROPOUT, attention_probs_dropout_prob=DROPOUT,
                        max_position_embeddings=T)
    torch.manual_seed(0)
    model = BertForPreTraining(config).train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    attention_mask = (torch.arange(T) < valid_lens[:, None]).long()
    full_labels = torch.full((B, T), -100)
    rows = torch.arange(B)[:, None].expand(B, P)
    real = weights > 0
    full_labels[rows[real], pred_positions[real]] = labels[real]

    def usual():  # (a)
        opt.zero_grad(set_to_none=True)
        out = model(input_ids=tokens, attention_mask=attention_mask, token_type_ids=segments,
                    labels=full_labels, next_sentence_label=nsp)
        out.loss.backward()
        opt.step()

    def gathered():  # (b)
        opt.zero_grad(set_to_none=True)
        seq, pooled = model.bert(input_ids=tokens, attention_mask=attention_mask,
                                 token_type_ids=segments)[:2]
        logits = model.cls.predictions(seq[rows, pred_positions])  # (B, P, V)
        per_slot = F.cross_entropy(logits.flatten(0, 1), labels.flatten(), reduction="none")
        w = weights.flatten()
        loss = (per_slot * w).sum() / w.sum() + F.cross_entropy(
            model.cls.seq_relationship(pooled), nsp)
        loss.backward()
        opt.step()

    return usual, gathered


def bertlib_step_fns(batch):
    config = BERTConfig(V, H, FFN, HEADS, BLKS, DROPOUT, T)
    fns = {}
    for name, loss_fn in (("chapter", chapter_loss), ("fast", fast_loss)):
        model = init_model(config, 0)
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        fns[name] = (lambda m=model, o=opt, f=loss_fn: train_step(m, o, batch, f))
    return fns


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


def peak_rss_rise(fn) -> float:
    """Largest rise of the resident set while ``fn`` runs, in GB (sampled every 2 ms)."""
    base, peak, done = rss_bytes(), [0], threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], rss_bytes())
            time.sleep(0.002)

    thread = threading.Thread(target=sample)
    thread.start()
    fn()
    done.set()
    thread.join()
    return max(peak[0], rss_bytes()) - base


def matmul_peak_flops(n: int = 4096, repeats: int = 5) -> float:
    a, b = torch.randn(n, n), torch.randn(n, n)
    torch.mm(a, b)
    best = min(_timed(lambda: torch.mm(a, b)) for _ in range(repeats))
    return 2 * n**3 / best


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def run_block(fns: dict, rounds: int, steps: dict | None = None) -> dict[str, list[float]]:
    """Interleave the variants round by round; one warm-up step each first. ``steps``: timed
    steps per round for some variants (default 2)."""
    steps = steps or {}
    for fn in fns.values():
        fn()
    times = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            times[name] += [_timed(fn) for _ in range(steps.get(name, 2))]
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; vocab {V}, hidden {H}, "
          f"ffn {FFN}, {HEADS} heads, {BLKS} blocks, dropout {DROPOUT}, max_len {T}, batch {B}, "
          f"{P} prediction slots")
    batch = make_batch()
    real = int(batch[4].sum())
    print(f"real prediction slots: {real} of {B * P} ({1 - real / (B * P):.0%} padding)")
    usual, gathered = hf_step_fns(batch)
    ours = bertlib_step_fns(batch)
    fns = {"(a) HF usual": usual, "(b) HF gathered": gathered, "(c) chapter": ours["chapter"],
           "(d) default": ours["fast"]}

    peaks = {name: peak_rss_rise(fn) / 1e9 for name, fn in fns.items()}
    block1 = run_block(fns, args.rounds, {"(a) HF usual": 1})
    peak_flops = matmul_peak_flops()

    print("keep_freed_memory():", keep_freed_memory())
    block2 = run_block({"(b) HF gathered, kept": gathered, "(c) chapter, kept": ours["chapter"],
                        "(d) default": ours["fast"]}, args.rounds)
    peak_flops = max(peak_flops, matmul_peak_flops())

    with FlopCounterMode(display=False) as counter:
        ours["fast"]()
    step_flops = counter.get_total_flops()

    rates = {name: B / statistics.median(t) for name, t in block1.items() if name[1] != "d"}
    rates |= {name: B / statistics.median(t) for name, t in block2.items()}
    base = rates["(c) chapter"]
    print(f"\n{'variant':<22}{'pairs/s':>10}{'vs (c)':>9}{'peak GB':>10}")
    for name, rate in rates.items():
        peak = f"{peaks[name]:10.2f}" if name in peaks else f"{'':>10}"
        print(f"{name:<22}{rate:10.0f}{rate / base:8.2f}x{peak}")
    d = rates["(d) default"]
    print(f"\n(d) / (b) = {d / rates['(b) HF gathered']:.2f}x, (d) / (a) = "
          f"{d / rates['(a) HF usual']:.2f}x; with the same malloc setting: (d) / (b) = "
          f"{d / rates['(b) HF gathered, kept']:.2f}x, (d) / (c) = "
          f"{d / rates['(c) chapter, kept']:.2f}x")
    achieved = step_flops * d / B
    print(f"fp32 matmul peak {peak_flops / 1e9:.0f} GFLOP/s; (d) does {step_flops / 1e9:.1f} "
          f"GFLOP per step = {achieved / 1e9:.0f} GFLOP/s, {achieved / peak_flops:.0%} of peak")


if __name__ == "__main__":
    main()

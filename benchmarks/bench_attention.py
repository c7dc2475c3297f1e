"""Explicit softmax attention vs the fused ``scaled_dot_product_attention`` path.

``BERTEncoder`` takes the explicit path when attention weights are requested (the widgets need
them) and the fused path otherwise. This prints, side by side in one run, forward and
forward+backward sequences/s of the whole encoder for both paths, interleaved, medians of
several repeats after warm-up.

    .venv/bin/python benchmarks/bench_attention.py
"""

from __future__ import annotations

import statistics
import time

import torch

from bertlib import BERTEncoder

CONFIGS = {  # name: (num_hiddens, ffn_num_hiddens, num_heads, num_blks, batch, seq_len)
    "pretraining (128/2 heads, T=64, B=512)": (128, 256, 2, 2, 512, 64),
    "chapter demo (768/4 heads, T=128, B=32)": (768, 1024, 4, 2, 32, 128),
}


def step(encoder, tokens, segments, valid_lens, explicit: bool, backward: bool) -> None:
    out = encoder(tokens, segments, valid_lens, return_attention=explicit)
    X = out[0] if explicit else out
    if backward:
        X.sum().backward()


def main(repeats: int = 7) -> None:
    torch.manual_seed(0)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    print(f"{'configuration':42} {'pass':17} {'explicit':>10} {'fused':>10} {'ratio':>6}")
    for name, (H, F, nh, nb, B, T) in CONFIGS.items():
        encoder = BERTEncoder(20256, H, F, nh, nb, dropout=0.2, max_len=T)
        g = torch.Generator().manual_seed(0)
        tokens = torch.randint(0, 20256, (B, T), generator=g)
        segments = torch.zeros(B, T, dtype=torch.long)
        valid_lens = torch.randint(T // 4, T + 1, (B,), generator=g)
        for backward in (False, True):
            encoder.train(backward)
            times = {True: [], False: []}
            with torch.set_grad_enabled(backward):
                for i in range(repeats + 2):
                    for explicit in (True, False):  # interleaved, so drift hits both alike
                        start = time.perf_counter()
                        step(encoder, tokens, segments, valid_lens, explicit, backward)
                        if i >= 2:  # warm-up
                            times[explicit].append(time.perf_counter() - start)
            rate = {k: B / statistics.median(v) for k, v in times.items()}
            label = "forward+backward" if backward else "forward (eval)"
            print(f"{name:42} {label:17} {rate[True]:10.0f} {rate[False]:10.0f} "
                  f"{rate[False] / rate[True]:5.2f}x")
    print("(sequences/s; ratio = fused / explicit)")


if __name__ == "__main__":
    main()

"""Peak memory per byte of corpus: reading, tokenizing and making the pretraining data.

The figure behind ``bertlib.text.corpus.CORPUS_MAX_BYTES``. Corpora of the shipped corpus' real
sentences, shuffled into paragraphs of 2-6 (English + Chinese, or Chinese alone), go through
what the CLI does (``read_paragraphs``, ``tokenize_paragraphs`` with the shipped tokenizer,
``make_pretrain_data`` at ``max_len=64``), each in a fresh process whose peak resident memory
``/usr/bin/time -v`` reports; a process that only loads the tokenizer gives the baseline.

    .venv/bin/python benchmarks/bench_corpus_memory.py [MB ...]    (default: 2 4)
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from bertlib.assets import SMALL_CORPUS_DIR

PIPELINE = """
import sys
from bertlib.assets import SMALL_BERT_DIR
from bertlib.text.corpus import read_paragraphs, tokenize_paragraphs
from bertlib.data import make_pretrain_data
from bertlib.text.tokenizer import WordPieceTokenizer
tokenizer = WordPieceTokenizer.from_directory(SMALL_BERT_DIR)
if sys.argv[1] != "-":
    paragraphs = tokenize_paragraphs(read_paragraphs(sys.argv[1]), tokenizer.tokenize)
    make_pretrain_data(paragraphs, tokenizer.vocab, 64, seed=0)
"""


def make_corpus(langs: list[str], megabytes: float, path: Path) -> int:
    """Write about ``megabytes`` MB of shuffled shipped sentences; return the file's size."""
    sentences = [line for lang in langs for line in
                 (SMALL_CORPUS_DIR / f"{lang}.txt").read_text(encoding="utf-8").splitlines()
                 if line.strip()]
    rng, parts, size = random.Random(0), [], 0
    while size < megabytes * 1e6:
        paragraph = "\n".join(rng.choice(sentences) for _ in range(rng.randint(2, 6))) + "\n\n"
        parts.append(paragraph)
        size += len(paragraph.encode("utf-8"))
    path.write_text("".join(parts), encoding="utf-8")
    return path.stat().st_size


def peak_bytes(corpus: str) -> int:
    """The peak resident memory of the pipeline over ``corpus`` ("-": the baseline)."""
    run = subprocess.run(["/usr/bin/time", "-v", sys.executable, "-c", PIPELINE, corpus],
                         capture_output=True, text=True, check=True,
                         env=os.environ | {"OMP_NUM_THREADS": "1"})
    return int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", run.stderr)[1]) * 1024


def main(sizes: list[float]) -> None:
    base = peak_bytes("-")
    print(f"baseline (Python, torch, the tokenizer): {base / 1e9:.2f} GB")
    with tempfile.TemporaryDirectory() as tmp:
        for name, langs in (("en + zh", ["en", "zh"]), ("zh", ["zh"])):
            for megabytes in sizes:
                path = Path(tmp) / "corpus.txt"
                size = make_corpus(langs, megabytes, path)
                peak = peak_bytes(str(path))
                print(f"{name:8} {size / 1e6:5.1f} MB: peak {peak / 1e9:.2f} GB, "
                      f"{(peak - base) / size:.0f} bytes per byte over the baseline")


if __name__ == "__main__":
    main([float(mb) for mb in sys.argv[1:]] or [2.0, 4.0])

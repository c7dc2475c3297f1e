"""Pretraining corpora as paragraphs (lists of sentence strings): the shipped bilingual corpus
and WikiText-2; ``tokenize_paragraphs`` makes the token lists ``make_nsp_pairs`` expects."""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

from bertlib.assets import SMALL_CORPUS_DIR
from bertlib.support.checks import check_path
from bertlib.support.files import checked_path, read_text
from bertlib.support.i18n import CORPUS_LANGUAGES
from bertlib.support.rng import make_generator
from bertlib.text.vocab import check_word_tokens

# WikiText-2's largest file has 11 MB, the shipped corpus 0.45 MB. Reading, tokenizing and
# making pretraining data (max_len=64, as the CLI does) peaks at 60 bytes of memory per byte of
# text (benchmarks/bench_corpus_memory.py): 64 MiB x 60 + 0.24 GB stays within 4 GiB.
CORPUS_MAX_BYTES = 64 << 20


def read_paragraphs(path: str | Path) -> list[list[str]]:
    """A text file with one sentence per line and a blank line between paragraphs."""
    text = read_text(checked_path("path", path, CORPUS_MAX_BYTES))
    blocks = (block.strip() for block in text.split("\n\n"))
    return [[s.strip() for s in block.splitlines() if s.strip()] for block in blocks if block]


def read_folder(directory: str | Path) -> list[list[str]]:
    """Every ``*.txt`` file of ``directory`` in name order, within one file's limit in all."""
    check_path("directory", directory)
    files = sorted(Path(directory).glob("*.txt"))
    total = sum(f.stat().st_size for f in files if f.is_file())  # links are checked on reading
    if not files or total > CORPUS_MAX_BYTES:
        raise ValueError(f"corpus folder {str(directory)!r} must hold *.txt files of at most "
                         f"{CORPUS_MAX_BYTES:,} bytes in all; it holds {total:,} bytes in "
                         f"{len(files)} files")
    return [p for f in files for p in read_paragraphs(f)]


def read_wikitext(path: str | Path) -> list[list[list[str]]]:
    """WikiText-2's raw ``wiki.*.tokens`` file, read the way the chapter does.

    Each line is a paragraph; `` = Heading = `` lines are titles and are skipped. The text is
    lower-cased, split into sentences on `` . `` and into words on spaces (WikiText is already
    tokenized). As in d2l, only paragraphs with at least two sentences are kept, since NSP needs
    a sentence and its successor. Returns paragraphs of tokenized sentences; unlike d2l it does
    not shuffle them (``make_nsp_pairs`` draws its own randomness).
    """
    paragraphs = []
    for line in read_text(checked_path("path", path, CORPUS_MAX_BYTES)).splitlines():
        line = line.strip().lower()
        if not line or (line.startswith("= ") and line.endswith(" =")):
            continue
        sentences = [s.split() for s in line.split(" . ")]
        sentences = [s for s in sentences if s]
        if len(sentences) >= 2:
            paragraphs.append(sentences)
    return paragraphs


@dataclass
class CorpusSplit:  # paragraphs (sentence strings) and their languages
    train: list[list[str]]
    train_langs: list[str]
    held_out: list[list[str]]
    held_out_langs: list[str]


def load_small_corpus(directory: str | Path = SMALL_CORPUS_DIR, *, held_out: float = 0.1,
                      seed: int = 0) -> CorpusSplit:
    """The shipped English + Chinese corpus, the fraction ``held_out`` of each language's
    paragraphs (drawn from ``seed``) held out."""
    check_path("directory", directory)
    if isinstance(held_out, bool) or not isinstance(held_out, numbers.Real) or not (
            0.0 <= held_out < 1.0):
        raise ValueError(f"held_out must be a fraction in [0, 1); got {held_out!r:.80}")
    g = make_generator(seed=seed)
    split = CorpusSplit([], [], [], [])
    for lang in CORPUS_LANGUAGES:
        paragraphs = read_paragraphs(Path(directory) / f"{lang}.txt")
        order = torch.randperm(len(paragraphs), generator=g).tolist()
        n_held = round(held_out * len(paragraphs))
        for rank, i in enumerate(order):
            target, langs = ((split.held_out, split.held_out_langs) if rank < n_held
                             else (split.train, split.train_langs))
            target.append(paragraphs[i])
            langs.append(lang)
    return split


def tokenize_paragraphs(paragraphs: Sequence[Sequence[str]],
                        tokenize: Callable[[str], list[str]]) -> list[list[list[str]]]:
    """``tokenize`` (e.g. ``WordPieceTokenizer.tokenize``) applied to every sentence."""
    if isinstance(paragraphs, str) or not isinstance(paragraphs, Sequence):
        raise ValueError(f"paragraphs must be a list of paragraphs, each a list of sentence "
                         f"strings; got {paragraphs!r:.80}")
    for p, paragraph in enumerate(paragraphs):
        if (isinstance(paragraph, str) or not isinstance(paragraph, Sequence)
                or not all(isinstance(s, str) for s in paragraph)):
            raise ValueError(f"paragraphs[{p}] must be a paragraph, a list of sentence strings "
                             f"(a list of sentences is one paragraph: wrap it in a list); got "
                             f"{paragraph!r:.80}")
    # Every token a string object of its own (~55 bytes) would cost more than the text itself:
    # the tokens share one object per spelling instead, as an interned vocabulary would.
    shared: dict[str, str] = {}
    tokenized = []
    for p, paragraph in enumerate(paragraphs):
        tokenized.append([])
        for s, sentence in enumerate(paragraph):
            tokens = tokenize(sentence)
            check_word_tokens(f"tokenize(paragraphs[{p}][{s}])", tokens)
            tokenized[-1].append([shared.setdefault(t, t) for t in tokens])
    return tokenized

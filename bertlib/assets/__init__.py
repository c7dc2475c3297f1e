"""What ships with bertlib, as package data: the small pretrained BERT, its corpus and the
labelled fine-tuning sets."""

from __future__ import annotations

from pathlib import Path

from bertlib.model import BERTModel
from bertlib.support.files import checked_file, read_json
from bertlib.text.tokenizer import WordPieceTokenizer
from bertlib.weights.checkpoint import CONFIG_MAX_BYTES, load_pretrained

SMALL_BERT_DIR = Path(__file__).resolve().parent / "small_bert"
SMALL_CORPUS_DIR = Path(__file__).resolve().parent / "small_corpus"
TASKS_DIR = Path(__file__).resolve().parent / "tasks"  # scripts/make_tasks.py writes it
# A few lines written in WikiText's raw format (WikiText itself is CC BY-SA and not shipped).
WIKITEXT_SAMPLE = Path(__file__).resolve().parent / "wikitext" / "wiki.train.tokens"
METRICS_FILE = "metrics.json"  # the shipped model's losses and held-out figures


def load_small_bert(directory: str | Path = SMALL_BERT_DIR) -> tuple[BERTModel,
                                                                      WordPieceTokenizer]:
    """The shipped small bilingual BERT (eval mode) and its tokenizer."""
    return load_pretrained(directory), WordPieceTokenizer.from_directory(directory)


def small_bert_metrics(directory: str | Path = SMALL_BERT_DIR) -> dict:
    """The training run and held-out evaluation recorded next to the shipped small BERT."""
    return read_json(checked_file(directory, METRICS_FILE, CONFIG_MAX_BYTES))

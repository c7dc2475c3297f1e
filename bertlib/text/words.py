"""Which tokens make one word? The grouping that whole-word masking masks together.

WordPiece knows half of it (``##ing`` continues the word before it); BERT cuts Chinese into
single characters, whose words (车票, "ticket") come from a segmenter, as in Chinese BERT-wwm:
jieba.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Sequence

import jieba

from bertlib.support.checks import check_instance
from bertlib.text.tokenizer import WordPieceTokenizer, check_text


@functools.cache
def _segmenter() -> jieba.Tokenizer:
    """One private jieba dictionary for bertlib, loaded on first use (about a second); jieba's
    "Building prefix dict..." log is quieted meanwhile, and its logger left as it was."""
    segmenter, logger = jieba.Tokenizer(), jieba.default_logger
    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        segmenter.initialize()
    finally:
        logger.setLevel(level)
    return segmenter


def segment(text: str) -> list[str]:
    """``text`` cut into words by jieba; the words joined give ``text`` back."""
    check_text("text", text)
    return _segmenter().lcut(text, HMM=True)


def word_ids(tokenizer: WordPieceTokenizer, text: str,
             words: Sequence[str] | None = None) -> list[int]:
    """The word each WordPiece token of ``text`` belongs to, numbered 0, 1, ... in order.

    A token joins the word before it when WordPiece made it from the same word (``##`` pieces)
    or when it lies inside the same word of ``words``, a segmentation of ``text`` (by default
    :func:`segment`'s). Aligned with ``tokenizer.tokenize(text)``.
    """
    check_instance("tokenizer", tokenizer, WordPieceTokenizer, "a bertlib WordPieceTokenizer")
    check_text("text", text)
    if words is None:
        words = segment(text)
    elif (isinstance(words, str) or not isinstance(words, Sequence)
          or not all(isinstance(word, str) for word in words) or "".join(words) != text):
        raise ValueError("words must be a list of words (str) that, joined, give text back; "
                         f"got {words!r:.80}")
    word_of_char = [i for i, word in enumerate(words) for _ in word]
    encoding = tokenizer.encode(text)
    ids: list[int] = []
    previous = None
    for piece_word, (start, _) in zip(encoding.word_ids, encoding.offsets, strict=True):
        key = (piece_word, word_of_char[start])
        same_word = previous is not None and (key[0] == previous[0] or key[1] == previous[1])
        ids.append(ids[-1] if same_word else len(set(ids)))
        previous = key
    return ids

"""Which tokens make one word, for whole-word masking: WordPiece's ``##`` pieces, and for
Chinese, cut into characters, jieba's words (车票, "ticket"), as in Chinese BERT-wwm."""

from __future__ import annotations

import functools
import logging
from collections.abc import Sequence

import jieba

from bertlib.support.checks import check_instance
from bertlib.text.tokenizer import WordPieceTokenizer, check_text


@functools.cache
def _segmenter() -> jieba.Tokenizer:
    """A private jieba dictionary, loaded on first use (a second) with its log quieted."""
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
    """The word (0, 1, ...) of each token of ``tokenizer.tokenize(text)``: a token joins the
    previous one's when WordPiece cut both from one word or both lie in one of ``words`` (by
    default :func:`segment`'s)."""
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

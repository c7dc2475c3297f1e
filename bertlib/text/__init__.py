"""From raw text to tokens: the vocabulary, the WordPiece tokenizer, whole words, and the corpora a
model learns from.
"""

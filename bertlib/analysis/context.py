"""Context sensitivity: the same word gets a different BERT vector in every sentence: the
encoder's output at its first WordPiece, in eval mode (``contextual=False``: its row of the
token embeddings, the same in every sentence)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from jaxtyping import Float
from torch import Tensor

from bertlib.inputs import encode_pair, eval_mode, model_device, stack_inputs
from bertlib.model import BERTModel, checked
from bertlib.text.tokenizer import WordPieceTokenizer

# (sentence, word) pairs for the notebooks' demonstrations.
CRANE_EXAMPLES = (
    ("a crane is flying", "crane"),
    ("a crane driver came", "crane"),
)
BANK_EXAMPLES = (
    ("i went to the bank to deposit cash", "bank"),
    ("i went to the bank to sit down", "bank"),
    ("the boat drifted to the bank of the river", "bank"),
)


@dataclass(frozen=True)
class SimilarityTable:
    """Cosine similarities between word occurrences: ``matrix[i, j]`` for labels i and j."""

    matrix: torch.Tensor  # (N, N), float64
    labels: list[str]


def find_word(tokenizer: WordPieceTokenizer, sentence: str, word: str,
              occurrence: int = 0) -> tuple[list[str], int]:
    """The tokens of ``sentence`` and where ``word``'s ``occurrence``-th (from 0) starts."""
    encoding = tokenizer.encode(sentence, "sentence")
    tokens, word_ids = encoding.tokens, encoding.word_ids
    pieces = tokenizer.encode(word, "word").tokens
    n = len(pieces)

    def is_boundary(i: int) -> bool:  # a new pre-tokenized word starts at token i
        return i in (0, len(tokens)) or word_ids[i] != word_ids[i - 1]

    starts = [i for i in range(len(tokens) - n + 1)
              if tokens[i:i + n] == pieces and is_boundary(i) and is_boundary(i + n)]
    if occurrence >= len(starts) or occurrence < 0:
        raise ValueError(f"{word!r} ({pieces}) occurs {len(starts)} time(s) as a whole word in "
                         f"{sentence!r} ({tokens}); occurrence must be in [0, {len(starts)})")
    return tokens, starts[occurrence]


def word_vectors(model: BERTModel, tokenizer: WordPieceTokenizer,
                 occurrences: Sequence[tuple[str, str]], *,
                 contextual: bool = True) -> torch.Tensor:
    """One vector per ``(sentence, word)`` pair: (N, H)."""
    starts = [find_word(tokenizer, sentence, word)[1] for sentence, word in occurrences]
    inputs = [encode_pair(tokenizer, sentence) for sentence, _ in occurrences]
    device = model_device(model)
    tokens, segments, valid_lens = (t.to(device) for t in
                                    stack_inputs(inputs, tokenizer.vocab.pad_id))
    rows = torch.arange(len(inputs), device=device)
    positions = torch.tensor(starts, device=device) + 1  # + 1 for <cls>
    if not contextual:
        return model.encoder.token_embedding.weight.detach()[tokens[rows, positions]]
    with eval_mode(model):  # dropout off: the vector must not depend on chance
        encoded_X = model.encoder(tokens, segments, valid_lens)
    return encoded_X[rows, positions]


@checked
def cosine_similarity_matrix(vectors: Float[Tensor, "N H"]) -> Float[Tensor, "N N"]:
    """(N, H) -> (N, N) cosine similarities, in float64."""
    unit = torch.nn.functional.normalize(vectors.double(), dim=-1)
    # Rounding can push a vector's similarity with itself to 1 + 2e-16; cosines lie in [-1, 1].
    return (unit @ unit.T).clamp(-1.0, 1.0)


def similarity_table(model: BERTModel, tokenizer: WordPieceTokenizer,
                     occurrences: Sequence[tuple[str, str]], *,
                     contextual: bool = True) -> SimilarityTable:
    """Cosine similarities of ``(sentence, word)`` vectors, labelled by sentence."""
    vectors = word_vectors(model, tokenizer, occurrences, contextual=contextual)
    return SimilarityTable(cosine_similarity_matrix(vectors), [s for s, _ in occurrences])

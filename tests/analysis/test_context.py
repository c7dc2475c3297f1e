"""Context sensitivity, measured on the real all-MiniLM-L6-v2 weights."""


import pytest
import torch
from jaxtyping import TypeCheckError

from bertlib.analysis.context import (
    BANK_EXAMPLES,
    CRANE_EXAMPLES,
    cosine_similarity_matrix,
    find_word,
    similarity_table,
    word_vectors,
)
from bertlib.text.tokenizer import WordPieceTokenizer


@pytest.fixture
def tiny_tokenizer(tmp_path) -> WordPieceTokenizer:
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "bank", "token", "##ization",
             "我", "去", "银", "行"]
    (tmp_path / "vocab.txt").write_text("\n".join(words) + "\n", encoding="utf-8")
    return WordPieceTokenizer.from_directory(tmp_path)


def test_find_word_takes_whole_words_only(tiny_tokenizer):
    tokens, start = find_word(tiny_tokenizer, "token tokenization the token", "token",
                              occurrence=1)
    assert tokens == ["token", "token", "##ization", "the", "token"]
    assert start == 4  # "token" inside "tokenization" is not the word "token"
    assert find_word(tiny_tokenizer, "the tokenization", "tokenization")[1] == 1
    assert find_word(tiny_tokenizer, "我去银行", "银行")[1] == 2
    with pytest.raises(ValueError, match=r"'bank' \(\['bank'\]\) occurs 0 time"):
        find_word(tiny_tokenizer, "the token", "bank")
    with pytest.raises(ValueError, match=r"occurs 1 time\(s\).*must be in \[0, 1\)"):
        find_word(tiny_tokenizer, "the bank", "bank", occurrence=1)


def test_word_vector_is_the_encoder_output_at_the_first_piece(minilm):
    model, tokenizer = minilm
    vocab = tokenizer.vocab
    ids = [vocab.cls_id, *vocab[tokenizer.tokenize("a crane is flying")], vocab.sep_id]
    with torch.no_grad():
        alone = model.encoder(torch.tensor([ids]), torch.zeros(1, len(ids), dtype=torch.long))
    model.train()  # dropout on: the function must still compute in eval mode, then restore
    batched = word_vectors(model, tokenizer, [*CRANE_EXAMPLES, *BANK_EXAMPLES])
    assert model.training
    model.eval()
    assert batched.shape == (5, 384)
    assert (batched[0] - alone[0, 2]).abs().max() < 1e-5  # [CLS] a crane -> index 2


def test_financial_bank_differs_from_river_bank(minilm):
    table = similarity_table(*minilm, BANK_EXAMPLES)
    m = table.matrix
    assert table.labels == [s for s, _ in BANK_EXAMPLES]
    assert torch.allclose(m.diagonal(), torch.ones(3, dtype=torch.float64))
    # Same left context "i went to the bank", yet different vectors: BERT reads both sides.
    assert m[0, 1] < 0.95
    assert m[0, 1] > m[0, 2] and m[0, 1] > m[1, 2]


def test_crane_gets_two_vectors(minilm):
    assert similarity_table(*minilm, CRANE_EXAMPLES).matrix[0, 1] < 0.95


@pytest.mark.parametrize("examples", [CRANE_EXAMPLES, BANK_EXAMPLES])
def test_token_embeddings_ignore_context(minilm, examples):
    model, tokenizer = minilm
    vectors = word_vectors(model, tokenizer, examples, contextual=False)
    assert all(torch.equal(v, vectors[0]) for v in vectors)
    table = similarity_table(model, tokenizer, examples, contextual=False)
    assert (table.matrix - 1).abs().max() < 1e-12


def test_minilm_vocabulary_lacks_most_chinese_characters(minilm):
    _, tokenizer = minilm
    # "I went to the bank to deposit money": 4 of its 6 characters are unknown.
    assert tokenizer.tokenize("我去银行存钱") == ["我", "[UNK]", "[UNK]", "行", "[UNK]", "[UNK]"]


@pytest.mark.parametrize(("occurrences", "message"), [
    ([("the bank", None)], "word must be a string; got NoneType"),
    ([(None, "bank")], "sentence must be a string; got NoneType"),
])
def test_bad_occurrences_are_named(occurrences, message, small_model, tiny_tokenizer):
    """Before: TypeErrors for None."""
    for function in (word_vectors, similarity_table):
        with pytest.raises(ValueError, match=message):
            function(small_model, tiny_tokenizer, occurrences)


@pytest.mark.parametrize("vectors", [torch.ones(3), [[1.0, 2.0]]])
def test_cosine_similarity_needs_a_matrix_of_vectors(vectors):
    """Before: a 1-D input gave one number."""
    with pytest.raises(TypeCheckError, match="parameter 'vectors'"):
        cosine_similarity_matrix(vectors)


def test_a_lone_surrogate_is_a_value_error_naming_the_text(small_model, tiny_tokenizer):
    with pytest.raises(ValueError, match=r"sentence is not valid text: the character '\\ud800' at "
                                         r"position 4"):
        find_word(tiny_tokenizer, "the \ud800 bank", "bank")
    with pytest.raises(ValueError, match="word is not valid text"):
        find_word(tiny_tokenizer, "the bank", "\ud800")
    with pytest.raises(ValueError, match="sentence is not valid text"):
        word_vectors(small_model, tiny_tokenizer, [("\ud800 bank", "bank")])

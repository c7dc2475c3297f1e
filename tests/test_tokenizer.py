import pytest

from bertlib import HF_SPECIAL_TOKENS
from bertlib.corpus import load_small_corpus
from bertlib.tokenizer import WordPieceTokenizer

TEXTS = [
    "The cat sat on the mat.",
    "The dog ran to the park and the cat followed.",
    "Two dogs ran.",
    "猫坐在垫子上。",
    "狗跑到公园里，猫跟在后面。",
] * 20


@pytest.fixture(scope="module")
def trained() -> WordPieceTokenizer:
    return WordPieceTokenizer.train(TEXTS, vocab_size=200)


def test_trained_vocab_starts_with_chapter_specials(trained):
    assert trained.vocab.idx_to_token[:5] == ["<pad>", "<unk>", "<cls>", "<sep>", "<mask>"]
    assert len(trained) <= 200


def test_english_is_lowercased_and_chinese_split_per_character(trained):
    assert trained.tokenize("The CAT sat.") == ["the", "cat", "sat", "."]
    assert trained.tokenize("猫坐在垫子上") == ["猫", "坐", "在", "垫", "子", "上"]
    assert trained.tokenize("zebra")[0] in {"<unk>", "z"}


def test_unseen_words_break_into_word_pieces(trained):
    pieces = trained.tokenize("cats")
    assert pieces[0] == "cat" and all(p.startswith("##") for p in pieces[1:])
    assert trained.tokenize("龙") == ["<unk>"]


def test_save_and_reload(tmp_path, trained):
    trained.save(tmp_path / "tokenizer.json")
    again = WordPieceTokenizer.from_directory(tmp_path)
    assert again.vocab.idx_to_token == trained.vocab.idx_to_token
    assert again.tokenize("the dog ran") == trained.tokenize("the dog ran")


def test_vocab_txt_with_hf_spelling(tmp_path):
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "##s", "猫"]
    (tmp_path / "vocab.txt").write_text("\n".join(words) + "\n", encoding="utf-8")
    tok = WordPieceTokenizer.from_directory(tmp_path)
    assert tok.vocab.specials == HF_SPECIAL_TOKENS
    assert tok.tokenize("The cats 猫 dog") == ["the", "cat", "##s", "猫", "[UNK]"]
    assert tok.vocab[tok.tokenize("cats")] == [6, 7]


def test_directory_without_tokenizer(tmp_path):
    with pytest.raises(ValueError, match="neither tokenizer.json nor vocab.txt"):
        WordPieceTokenizer.from_directory(tmp_path)


def test_training_gives_the_same_vocabulary_every_time():
    """tokenizers alone numbers the "##" pieces in hash-map order, which changes the vocabulary
    between runs (huggingface/tokenizers#1794); the shipped model depends on it not changing."""
    texts = [s for p in load_small_corpus(held_out=0.1, seed=0).train for s in p]
    vocabs = []
    for _ in range(3):
        tokenizer = WordPieceTokenizer.train(texts, 4000)
        vocabs.append(tokenizer.vocab.to_tokens(list(range(len(tokenizer.vocab)))))
    assert vocabs[0] == vocabs[1] == vocabs[2]
    # The reserved "##" pieces are ordinary tokens again: only the five specials stay special.
    added = tokenizer.backend.get_added_tokens_decoder().values()
    assert [t.content for t in added] == vocabs[0][:5]
    # A special token typed into a text is text: only bertlib itself inserts the real one.
    pieces = tokenizer.tokenize("<mask> hello <cls>")
    assert not {"<mask>", "<cls>"} & set(pieces)
    assert "##ll" in pieces  # the rest is tokenized as usual


def test_a_token_on_two_lines_of_vocab_txt_is_refused(tmp_path):
    """Hugging Face numbers tokens by line: a repeated line would shift every later id."""
    lines = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "the", "dog"]
    (tmp_path / "vocab.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"lists 'the' twice, on lines 6 and 8"):
        WordPieceTokenizer.from_directory(tmp_path)


def test_unreadable_tokenizer_files_are_value_errors(tmp_path):
    (tmp_path / "tokenizer.json").write_text("{broken", encoding="utf-8")
    with pytest.raises(ValueError, match="is not a tokenizer.json the tokenizers library"):
        WordPieceTokenizer.from_directory(tmp_path)
    with pytest.raises(ValueError, match="has no other.json"):
        WordPieceTokenizer.from_file(tmp_path / "other.json")
    with pytest.raises(ValueError, match="directory must be an existing folder"):
        WordPieceTokenizer.from_directory(tmp_path / "nowhere")

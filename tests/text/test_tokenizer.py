import itertools
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

from bertlib import HF_SPECIAL_TOKENS, SpecialTokens
from bertlib.support.checks import InputError
from bertlib.text.corpus import load_small_corpus
from bertlib.text.tokenizer import WordPieceTokenizer

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


def test_a_save_that_fails_leaves_the_tokenizer_that_was_there(tmp_path, trained, monkeypatch):
    """The file is written beside its target and then moved over it: a save stopped before the
    move (here os.replace fails, as a kill would stop it) leaves the old file whole."""
    path = tmp_path / "tokenizer.json"
    path.write_text("the old file", encoding="utf-8")

    def stopped(*args):
        raise OSError("killed")

    monkeypatch.setattr(os, "replace", stopped)
    with pytest.raises(ValueError, match="cannot save the tokenizer"):
        trained.save(path)
    assert path.read_text(encoding="utf-8") == "the old file"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tokenizer.json"]  # nothing left
    monkeypatch.undo()
    trained.save(path)
    assert WordPieceTokenizer.from_directory(tmp_path).tokenize("the dog") == \
        trained.tokenize("the dog")


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
    hello = tokenizer.tokenize("hello")  # the rest is tokenized as usual
    assert len(hello) > 1 and any(pieces[i:i + len(hello)] == hello for i in range(len(pieces)))


def test_a_token_on_two_lines_of_vocab_txt_is_refused(tmp_path):
    """Hugging Face numbers tokens by line: a repeated line would shift every later id."""
    lines = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "the", "dog"]
    (tmp_path / "vocab.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"holds 'the' twice, at indices 5 and 7 \(lines 6 and 8"):
        WordPieceTokenizer.from_directory(tmp_path)


def test_vocab_txt_lines_end_where_the_tokenizers_library_ends_them(tmp_path):
    """A line ends at "\\n" only, as WordPiece.read_file reads it, not also at U+2028, U+0085
    or U+001C (str.splitlines), which would shift every later id by one; trailing white space
    ("\\r" of a Windows line end, U+3000) goes, as there, and U+001C stays, as there."""
    lines = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a\u2028b", "c\x85d", "e\x1cf",
             "g\r", "h\u3000", "i\x1c", " j", "the", "cat"]
    path = tmp_path / "vocab.txt"
    path.write_bytes(("\n".join(lines) + "\n").encode("utf-8"))
    expected = models.WordPiece.read_file(str(path))  # the tokenizers library's own reader
    tok = WordPieceTokenizer.from_vocab_txt(path)
    assert {t: tok.vocab[t] for t in tok.vocab.idx_to_token} == expected
    assert tok.vocab[["the", "cat"]] == [12, 13] and tok.tokenize("the cat") == ["the", "cat"]


def test_a_tokenizer_json_that_is_not_wordpiece_is_refused(tmp_path):
    """A BPE tokenizer.json (GPT-2's, RoBERTa's) holds the reserved tokens too, but cuts words
    unlike BERT: bertlib would run it as if it were BERT's."""
    backend = Tokenizer(models.BPE(unk_token="[UNK]"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    backend.train_from_iterator(["the cat sat on the mat"], trainers.BpeTrainer(
        vocab_size=40, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]))
    backend.save(str(tmp_path / "tokenizer.json"))
    with pytest.raises(ValueError, match=r"tokenizer.json: the tokenizer's model must be "
                                         r"WordPiece \(BERT's\); got BPE"):
        WordPieceTokenizer.from_directory(tmp_path)
    with pytest.raises(ValueError, match="must be WordPiece"):
        WordPieceTokenizer(backend)


def test_unreadable_tokenizer_files_are_value_errors(tmp_path):
    (tmp_path / "tokenizer.json").write_text("{broken", encoding="utf-8")
    with pytest.raises(ValueError, match="is not a tokenizer.json the tokenizers library"):
        WordPieceTokenizer.from_directory(tmp_path)
    with pytest.raises(ValueError, match="has no other.json"):
        WordPieceTokenizer.from_file(tmp_path / "other.json")
    with pytest.raises(ValueError, match="directory must be an existing folder"):
        WordPieceTokenizer.from_directory(tmp_path / "nowhere")


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"texts": "the cat sat on the mat"}, "texts must be a list of texts .*not one text"),
    ({"texts": [1, 2]}, r"texts\[0\] must be a string; got int 1"),
    ({"texts": ["a", None]}, r"texts\[1\] must be a string; got NoneType None"),
    ({"texts": []}, "texts must hold at least one text"),
    ({"vocab_size": 0}, r"vocab_size must be an integer in \[1, 1000000\].*; got 0"),
    ({"vocab_size": True}, r"vocab_size must be an integer in \[1, 1000000\].*; got True"),
    ({"vocab_size": -5}, r"vocab_size must be an integer in \[1, 1000000\].*; got -5"),
    ({"vocab_size": 30.5}, r"vocab_size must be an integer in \[1, 1000000\].*; got 30.5"),
    ({"min_frequency": -1}, "min_frequency must be a positive integer; got -1"),
    ({"min_frequency": float("nan")}, "min_frequency must be a positive integer; got nan"),
    ({"specials": ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")},
     "specials must be a SpecialTokens"),
    ({"specials": SpecialTokens(pad="the")}, r"specials \['the'\] are words of the texts"),
])
def test_bad_training_input_is_named(kwargs, message):
    args = {"texts": TEXTS, "vocab_size": 50} | kwargs
    with pytest.raises(ValueError, match=message):
        WordPieceTokenizer.train(args.pop("texts"), args.pop("vocab_size"), **args)


@pytest.mark.parametrize("text", [None, 123, ["the", "cat"], b"the cat"])
def test_tokenize_takes_a_str(trained, text):
    with pytest.raises(ValueError, match="text must be a string; got"):
        trained.tokenize(text)


@pytest.mark.parametrize(("call", "message"), [
    (lambda: WordPieceTokenizer("backend"), "backend must be a tokenizers.Tokenizer; got"),
    (lambda: WordPieceTokenizer.from_file(123), r"path must be a path \(str or pathlib.Path\)"),
    (lambda: WordPieceTokenizer.from_directory(None), "directory must be a path"),
    (lambda: WordPieceTokenizer.from_vocab_txt(None), "path must be a path"),
])
def test_bad_arguments_are_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_save_into_a_missing_folder_is_named(trained, tmp_path):
    with pytest.raises(ValueError, match="cannot save the tokenizer to '.*/no/dir/t.json'"):
        trained.save(tmp_path / "no" / "dir" / "t.json")


@pytest.mark.parametrize(("content", "message"), [
    ("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\ncaf\xe9\n".encode("latin-1"),
     r"vocab.txt must be UTF-8 text"),
    (b"[PAD]\n[UNK]\n[SEP]\n[MASK]\nthe\n",
     r"vocab.txt: vocabulary lacks the reserved tokens \['\[CLS\]'\]"),
    (b"<pad>\n<unk>\n<sep>\n<mask>\nthe\n",
     r"vocab.txt: vocabulary lacks the reserved tokens \['<cls>'\]"),
])
def test_bad_vocab_txt_is_named(tmp_path, content, message):
    (tmp_path / "vocab.txt").write_bytes(content)
    with pytest.raises(ValueError, match=message):
        WordPieceTokenizer.from_directory(tmp_path)


def test_a_fifo_or_a_symlink_loop_is_refused(tmp_path):
    os.mkfifo(tmp_path / "vocab.txt")
    with pytest.raises(ValueError, match="must be a regular file"):
        WordPieceTokenizer.from_directory(tmp_path)
    os.symlink(tmp_path / "tokenizer.json", tmp_path / "tokenizer.json")
    with pytest.raises(ValueError, match="tokenizer.json cannot be read"):
        WordPieceTokenizer.from_file(tmp_path / "tokenizer.json")


def test_from_tokens_is_bert_s_tokenizer_over_a_list_of_pieces(tmp_path):
    """The same pieces as a list or as a vocab.txt give the same ids and the same cuts."""
    pieces = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hug", "##s", "h", "##u", "##g"]
    (tmp_path / "vocab.txt").write_text("\n".join(pieces) + "\n", encoding="utf-8")
    listed = WordPieceTokenizer.from_tokens(pieces)
    from_file = WordPieceTokenizer.from_directory(tmp_path)
    assert listed.vocab.idx_to_token == from_file.vocab.idx_to_token
    assert listed.tokenize("Hugs hug") == ["hug", "##s", "hug"]
    assert listed.tokenize("hgu") == ["h", "##g", "##u"] and listed.tokenize("x") == ["[UNK]"]
    with pytest.raises(ValueError, match="lowercase must be True or False; got 'no'"):
        WordPieceTokenizer.from_vocab_txt(tmp_path / "vocab.txt", lowercase="no")
    for bad, message in [("hug", "tokens must be a list"), (["[PAD]", 3], r"tokens\[1\] must be"),
                         (["[PAD]", ""], r"tokens\[1\] must be a non-empty str")]:
        with pytest.raises(ValueError, match=message):
            WordPieceTokenizer.from_tokens(bad)


def _alphabet_size(texts: list[str]) -> int:
    """The reference: what the tokenizers library alone keeps at vocab_size=1 (the specials,
    every character and its "##" form), with BERT's normalizer and pre-tokenizer."""
    backend = Tokenizer(models.WordPiece(unk_token="<unk>"))
    backend.normalizer = normalizers.BertNormalizer()
    backend.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    backend.train_from_iterator(texts, trainers.WordPieceTrainer(
        vocab_size=1, special_tokens=SpecialTokens().as_list(), show_progress=False))
    return backend.get_vocab_size()


@pytest.mark.parametrize("texts", [
    TEXTS,
    ["aaaa bbbb", "ab ba"],
    [s for p in load_small_corpus(held_out=0.1, seed=0).train[:30] for s in p],
    ["Привет мир", "naïve café", "東京タワー"] * 3,
])
def test_a_vocabulary_never_has_more_than_vocab_size_tokens(texts):
    """tokenizers keeps every character whatever vocab_size says (train(..., 10) gave 21
    tokens): a smaller vocab_size is refused with the least one that can be kept."""
    least = _alphabet_size(texts)
    for size in (1, least - 1):
        with pytest.raises(ValueError, match=f"vocab_size must be at least {least} for these "
                                             f"texts; got {size}"):
            WordPieceTokenizer.train(texts, size)
    for size in (least, least + 1, least + 7, 2 * least):
        assert least <= len(WordPieceTokenizer.train(texts, size)) <= size


def test_vocab_size_that_would_abort_the_process_is_refused():
    """tokenizers reserves vocab_size hash-map entries first: 10**12 aborted Python (73 TB)."""
    code = ("from bertlib.text.tokenizer import WordPieceTokenizer\n"
            "try:\n"
            "    WordPieceTokenizer.train(['a b'], 10**12)\n"
            "except ValueError as err:\n"
            "    print(err)\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, cwd=Path(__file__).resolve().parents[2])
    assert run.returncode == 0, run.stderr[-500:]
    assert run.stdout.splitlines() == [
        "vocab_size must be an integer in [1, 1000000] (the largest BERT vocabularies hold "
        "about 250,000 pieces); got 1000000000000"]


def test_an_endless_generator_of_texts_is_refused(monkeypatch):
    monkeypatch.setattr("bertlib.text.tokenizer.TRAIN_MAX_CHARS", 1000)
    with pytest.raises(ValueError, match="texts hold more than 1,000 characters"):
        WordPieceTokenizer.train(itertools.repeat("the cat sat"), 50)
    texts = (s for s in ["the cat sat"] * 90)  # 990 characters: a generator is still welcome
    assert WordPieceTokenizer.train(texts, 50).tokenize("the cat") == ["the", "cat"]


def test_wrapping_a_tokenizer_leaves_the_caller_s_settings_alone(trained):
    backend = Tokenizer.from_str(trained.backend.to_str())
    backend.enable_truncation(max_length=4)
    backend.enable_padding(length=9)
    backend.encode_special_tokens = False
    before = backend.to_str()
    wrapped = WordPieceTokenizer(backend)
    assert backend.to_str() == before and backend.truncation["max_length"] == 4
    assert backend.padding["length"] == 9 and backend.encode_special_tokens is False
    assert len(backend.encode("the cat sat on the mat").ids) == 9  # still cut and padded
    assert len(wrapped.tokenize("the cat sat on the mat")) == 6  # bertlib's copy is not
    assert wrapped.tokenize("<mask>") != ["<mask>"]  # and types a special token as text


@pytest.mark.parametrize("call", [
    lambda t: t.tokenize("a\ud800b"),
    lambda t: t.encode("\udc00"),
    lambda t: WordPieceTokenizer.train(["the cat", "sat \ud800"], 50),
])
def test_a_lone_surrogate_is_refused_in_both_languages(trained, call):
    with pytest.raises(InputError, match=r"is not valid text: the character '\\ud[8c]00' at "
                                         r"position \d is half of a surrogate pair") as err:
        call(trained)
    assert err.value.key == "error_not_utf8" and "代理对" in err.value.message("zh")


def test_a_lone_surrogate_in_a_vocabulary_is_refused():
    with pytest.raises(ValueError, match=r"tokens\[5\] is not valid text"):
        WordPieceTokenizer.from_tokens([*SpecialTokens().as_list(), "\ud800"])

import os
import re
import runpy
from pathlib import Path

import pytest

import bertlib.text.corpus as corpus
from bertlib.assets import WIKITEXT_SAMPLE
from bertlib.text.corpus import (
    CORPUS_MAX_BYTES,
    SMALL_CORPUS_DIR,
    load_small_corpus,
    read_paragraphs,
    read_wikitext,
    tokenize_paragraphs,
)

FIXTURE = WIKITEXT_SAMPLE
ROOT = Path(__file__).resolve().parents[2]
CJK = re.compile(r"[\u4e00-\u9fff]")


def test_read_wikitext_follows_the_chapter():
    paragraphs = read_wikitext(FIXTURE)
    # Headings (even one containing " . ") and the one-sentence paragraph are gone; the text is
    # lower-cased; the last sentence keeps its final " ." as d2l's split leaves it.
    assert paragraphs == [
        [
            "harbour lights is a small lighthouse on the north coast".split(),
            "it was built in 1871 by the town council".split(),
            "the tower is 14 @.@ 5 metres tall .".split(),
        ],
        [
            "the first keeper lived in a cottage beside the tower".split(),
            "he kept a diary of every storm , and his diary survives today .".split(),
        ],
        [
            "in 1902 the pier was extended".split(),
            "fishing boats used it until the 1960s".split(),
            "today it is a popular walk @-@ way .".split(),
        ],
    ]


def test_read_paragraphs_splits_on_blank_lines(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("One.\nTwo.\n\n\nThree.\n  \nFour.\nFive.\n", encoding="utf-8")
    # A whitespace-only line is not a paragraph break: only empty lines are.
    assert read_paragraphs(path) == [["One.", "Two."], ["Three.", "Four.", "Five."]]


def test_small_corpus_language_mix_and_sentence_counts():
    split = load_small_corpus()
    paragraphs = split.train + split.held_out
    langs = split.train_langs + split.held_out_langs
    assert langs.count("en") == langs.count("zh") == 2000
    assert split.held_out_langs.count("en") == split.held_out_langs.count("zh") == 200
    # 400 stories of 5 or 6 sentences and 1600 class paragraphs of 4, per language.
    stories = [p for p in paragraphs if len(p) in (5, 6)]
    assert len(stories) == 800 and sum(len(p) == 4 for p in paragraphs) == 3200
    for paragraph, lang in zip(paragraphs, langs, strict=True):
        text = "".join(paragraph)
        cjk_share = len(CJK.findall(text)) / len(text)
        assert (cjk_share > 0.7) if lang == "zh" else (cjk_share == 0)
    # Stories are stories, not shuffled sentences: first sentences differ from the rest.
    first = {p[0] for p in stories}
    assert not first & {s for p in stories for s in p[2:]}


def test_small_corpus_split_is_fixed_by_seed_and_disjoint():
    a, b, c = load_small_corpus(seed=0), load_small_corpus(seed=0), load_small_corpus(seed=1)
    assert a.held_out == b.held_out
    assert a.held_out != c.held_out
    held = {tuple(p) for p in a.held_out}
    assert not held & {tuple(p) for p in a.train}
    assert len(a.train) + len(a.held_out) == 4000


def test_small_corpus_rejects_bad_fraction():
    with pytest.raises(ValueError, match="held_out"):
        load_small_corpus(held_out=1.0)


def test_shipped_corpus_is_what_the_generator_writes(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "scripts"))  # where make_corpus finds word_classes
    script = runpy.run_path(str(ROOT / "scripts" / "make_corpus.py"))
    script["write_corpus"](tmp_path, stories=400, class_paragraphs=1600, seed=0)
    for lang in ("en", "zh"):
        assert (tmp_path / f"{lang}.txt").read_bytes() == (SMALL_CORPUS_DIR /
                                                            f"{lang}.txt").read_bytes()


def test_tokenize_paragraphs_keeps_structure():
    out = tokenize_paragraphs([["a b", "c"], ["d e f"]], str.split)
    assert out == [[["a", "b"], ["c"]], [["d", "e", "f"]]]


@pytest.mark.parametrize("reader", [read_wikitext, read_paragraphs])
def test_a_fifo_or_a_device_is_refused_at_once(tmp_path, reader):
    """A FIFO would block the read forever, /dev/zero would fill the memory."""
    os.mkfifo(tmp_path / "f")
    with pytest.raises(ValueError, match="f must be a regular file; it is a device, pipe"):
        reader(tmp_path / "f")
    with pytest.raises(ValueError, match="/dev/zero must be a regular file"):
        reader("/dev/zero")


@pytest.mark.parametrize(("path", "message"), [
    ("nope.tokens", "has no nope.tokens"),
    (".", "must be a regular file; it is a folder"),
    (123, r"path must be a path \(str or pathlib.Path\); got 123"),
    ("a . b . c\n", "path must be the path of a file, not its text"),
    ("loop", "loop cannot be read: Too many levels of symbolic links"),
    ("latin1", "latin1 must be UTF-8 text"),
])
def test_bad_paths_are_named(tmp_path, monkeypatch, path, message):
    monkeypatch.chdir(tmp_path)
    os.symlink("loop", "loop")
    Path("latin1").write_bytes("caf\xe9 . au lait".encode("latin-1"))
    for reader in (read_wikitext, read_paragraphs):
        with pytest.raises(ValueError, match=message):
            reader(path)


def test_a_large_file_is_refused(tmp_path):
    """64 MiB: the largest file whose data fits in 4 GiB (60 bytes a byte measured); the
    256 MB allowed before exhausted 4 GiB."""
    assert CORPUS_MAX_BYTES == 64 * 2**20
    with open(tmp_path / "big.tokens", "wb") as f:
        f.truncate(CORPUS_MAX_BYTES + 1)  # sparse: no disk space used
    with pytest.raises(ValueError, match="big.tokens has 67,108,865 bytes; a big.tokens may "
                                         "have at most 67,108,864"):
        read_wikitext(tmp_path / "big.tokens")


def test_load_small_corpus_refuses_a_fifo(tmp_path):
    os.mkfifo(tmp_path / "en.txt")
    with pytest.raises(ValueError, match="en.txt must be a regular file"):
        load_small_corpus(tmp_path)
    with pytest.raises(ValueError, match="directory must be an existing folder"):
        load_small_corpus(tmp_path / "nope")


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"held_out": "0.1"}, "held_out must be a fraction in [0, 1); got '0.1'"),
    ({"held_out": False}, "held_out must be a fraction in [0, 1); got False"),
    ({"held_out": float("nan")}, "held_out must be a fraction in [0, 1); got nan"),
    ({"held_out": 1.0}, "held_out must be a fraction in [0, 1); got 1.0"),
    ({"seed": 0.7}, "seed must be an integer in [0, 2**63 - 1]; got 0.7"),
    ({"seed": True}, "seed must be an integer in [0, 2**63 - 1]; got True"),
    ({"seed": -1}, "seed must be an integer in [0, 2**63 - 1]; got -1"),
    ({"directory": None}, "directory must be a path"),
])
def test_load_small_corpus_arguments_are_checked(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        load_small_corpus(**kwargs)


def split_words(sentence: str) -> list[str]:
    return sentence.split()


@pytest.mark.parametrize(("paragraphs", "tokenize", "message"), [
    ("the cat . a dog", split_words, "paragraphs must be a list of paragraphs"),
    (["sentence one", "sentence two"], split_words,
     r"paragraphs\[0\] must be a paragraph, a list of sentence strings"),
    ([["a b", 3]], split_words, r"paragraphs\[0\] must be a paragraph"),
    ([["a b"]], lambda s: "x y", r"tokenize\(paragraphs\[0\]\[0\]\) must be a list of token "
                                 "strings, not a text"),
    ([["a b"]], lambda s: [1], r"tokenize\(paragraphs\[0\]\[0\]\) must be a list of token"),
])
def test_tokenize_paragraphs_checks_its_input(paragraphs, tokenize, message):
    with pytest.raises(ValueError, match=message):
        tokenize_paragraphs(paragraphs, tokenize)


def test_tokenized_paragraphs_share_one_string_per_spelling():
    """Each token its own str object cost ~55 bytes a token, more than the text itself; the
    memory figure of CORPUS_MAX_BYTES counts on shared ones."""
    paragraphs = tokenize_paragraphs([["the cat", "the dog"], ["a cat"]], str.split)
    assert paragraphs == [[["the", "cat"], ["the", "dog"]], [["a", "cat"]]]
    assert paragraphs[0][0][0] is paragraphs[0][1][0] and paragraphs[0][0][1] is \
        paragraphs[1][0][1]


@pytest.mark.parametrize(("tokenize", "message"), [
    (lambda s: [s], r"tokenize\(paragraphs\[0\]\[0\]\)\[0\] must be one token, non-empty and "
                    "without spaces; got 'the cat'"),
    (lambda s: ["the", ""], r"tokenize\(paragraphs\[0\]\[0\]\)\[1\] must be one token"),
])
def test_tokens_holding_spaces_are_refused_where_they_are_made(tokenize, message):
    """Before: accepted here, and later each such token became one <unk>."""
    with pytest.raises(ValueError, match=message.replace("; got", ": split the text first; got")):
        tokenize_paragraphs([["the cat"]], tokenize)


def test_a_corpus_folder_is_one_corpus_with_one_memory_limit(tmp_path, monkeypatch):
    """Each file of a folder within the limit, the folder past it: refused before reading, as
    the folder becomes one corpus in memory."""
    monkeypatch.setattr(corpus, "CORPUS_MAX_BYTES", 60)
    for name in ("a.txt", "b.txt"):
        (tmp_path / name).write_text("The cat sat.\nIt was warm.\n\n", encoding="utf-8")
    assert corpus.read_folder(tmp_path) == [["The cat sat.", "It was warm."]] * 2  # 54 bytes
    (tmp_path / "c.txt").write_text("The dog ran.\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"at most 60 bytes in all; it holds 67 bytes in 3"):
        corpus.read_folder(tmp_path)
    with pytest.raises(ValueError, match="holds 0 bytes in 0 files"):
        corpus.read_folder(tmp_path / "no folder")

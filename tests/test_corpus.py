import re
import runpy
from pathlib import Path

import pytest

from bertlib.corpus import (
    SMALL_CORPUS_DIR,
    load_small_corpus,
    read_paragraphs,
    read_wikitext,
    tokenize_paragraphs,
)

FIXTURE = Path(__file__).parent / "fixtures" / "wiki.train.tokens"
ROOT = Path(__file__).resolve().parent.parent
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
    assert langs.count("en") == langs.count("zh") == 800
    assert split.held_out_langs.count("en") == split.held_out_langs.count("zh") == 80
    sentences = [s for p in paragraphs for s in p]
    assert 8000 <= len(sentences) <= 10000  # 5 or 6 sentences per paragraph
    assert all(len(p) in (5, 6) for p in paragraphs)
    for paragraph, lang in zip(paragraphs, langs, strict=True):
        text = "".join(paragraph)
        cjk_share = len(CJK.findall(text)) / len(text)
        assert (cjk_share > 0.7) if lang == "zh" else (cjk_share == 0)
    # Paragraphs are stories, not shuffled sentences: first sentences differ from the rest.
    first = {p[0] for p in paragraphs}
    assert not first & {s for p in paragraphs for s in p[2:]}


def test_small_corpus_split_is_fixed_by_seed_and_disjoint():
    a, b, c = load_small_corpus(seed=0), load_small_corpus(seed=0), load_small_corpus(seed=1)
    assert a.held_out == b.held_out
    assert a.held_out != c.held_out
    held = {tuple(p) for p in a.held_out}
    assert not held & {tuple(p) for p in a.train}
    assert len(a.train) + len(a.held_out) == 1600


def test_small_corpus_rejects_bad_fraction():
    with pytest.raises(ValueError, match="held_out"):
        load_small_corpus(held_out=1.0)


def test_shipped_corpus_is_what_the_generator_writes(tmp_path):
    script = runpy.run_path(str(ROOT / "scripts" / "make_corpus.py"))
    script["write_corpus"](tmp_path, num_paragraphs=800, seed=0)
    for lang in ("en", "zh"):
        assert (tmp_path / f"{lang}.txt").read_bytes() == (SMALL_CORPUS_DIR /
                                                            f"{lang}.txt").read_bytes()


def test_tokenize_paragraphs_keeps_structure():
    out = tokenize_paragraphs([["a b", "c"], ["d e f"]], str.split)
    assert out == [[["a", "b"], ["c"]], [["d", "e", "f"]]]

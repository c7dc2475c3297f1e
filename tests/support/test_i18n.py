import re
import string
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bertlib.support import i18n
from bertlib.support.i18n import fill, table


def placeholders(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def test_every_string_exists_in_both_languages_with_the_same_placeholders():
    for key, entry in i18n.STRINGS.items():
        assert set(entry) == set(i18n.LANGUAGES), key
        assert entry["en"].strip() and entry["zh"].strip(), key
        assert placeholders(entry["en"]) == placeholders(entry["zh"]), key


def test_chinese_strings_are_translations_not_copies():
    for key, entry in i18n.STRINGS.items():
        assert entry["zh"] != entry["en"], key
        assert any("\u4e00" <= ch <= "\u9fff" for ch in entry["zh"]), key


def test_set_language_is_the_default_of_every_lang_none_and_cwd_plays_no_part(tmp_path,
                                                                            monkeypatch):
    assert i18n.get_language() == "en" and i18n.text("layer") == "layer"
    (tmp_path / "zh").mkdir()
    monkeypatch.chdir(tmp_path / "zh")  # a folder named like the Chinese edition changes nothing
    assert i18n.text("layer") == "layer"
    i18n.set_language("zh")
    monkeypatch.chdir(tmp_path)
    assert i18n.get_language() == "zh" and i18n.resolve_language(None) == "zh"
    assert i18n.text("layer") == "层"
    assert i18n.text("layer", "en") == "layer"  # an explicit lang= still wins
    i18n.set_language(None)
    assert i18n.get_language() == "en"
    with pytest.raises(ValueError,
                       match=r"lang must be one of \['en', 'zh', 'ja'\] or None; got 'fr'"):
        i18n.set_language("fr")
    assert i18n.get_language() == "en"


def test_text_fills_placeholders_in_each_language():
    assert i18n.text("head_name", "en", head=3) == "head 3"
    assert i18n.text("head_name", "zh", head=3) == "头 3"
    assert "0.250" in i18n.text("nsp_title", "zh", p=0.25)


@pytest.mark.parametrize("lang", ["fr", "EN", ""])
def test_bad_language_is_rejected_listing_the_allowed_ones(lang):
    with pytest.raises(ValueError, match=r"'en', 'zh'"):
        i18n.resolve_language(lang)
    with pytest.raises(ValueError, match="lang must be one of"):
        i18n.text("layer", lang)


def test_tr_gives_a_notebook_text_in_the_edition_language():
    """The catalog that tools/notebooks.py writes from the sources' strings cells."""
    english = "“{word}” in MiniLM (real weights)"
    zh = i18n._notebook_strings()["zh"][english]
    assert i18n.tr(english, word="bank") == "“bank” in MiniLM (real weights)"
    i18n.set_language("zh")
    assert i18n.tr(english, word="bank") == zh.format(word="bank") != english.format(word="bank")
    assert i18n.tr(english, "en", word="bank").startswith("“bank” in")  # lang= still wins
    # A text without a translation (a learner's edit) is shown as written, filled in.
    assert i18n.tr("my own {n} words", n=3) == "my own 3 words"


def test_every_notebook_translation_keeps_the_placeholders_and_is_chinese():
    for english, zh in i18n._notebook_strings()["zh"].items():
        assert placeholders(zh) == placeholders(english), english
        assert zh != english or not re.search("[a-z]{3}", english), english


def test_a_field_with_a_format_spec_is_filled():
    assert i18n.tr("{n:,} steps of {x.real}", n=12345, x=2) == "12,345 steps of 2"


CELLS = st.lists(st.sampled_from(["a", "词", "。", "x", "（", "1", "B"]), min_size=1,
                 max_size=8).map("".join)


@given(st.lists(st.lists(CELLS, min_size=1, max_size=4), min_size=1, max_size=5))
def test_table_columns_line_up_in_a_terminal_and_in_a_browser(rows):
    """Before every cell, each row holds as many wide characters (Chinese, U+3000) and as many
    narrow ones as the other rows: the columns line up whatever the two kinds measure (two
    columns and one in a terminal; a CJK font's and a Latin font's glyphs in a browser)."""
    lines = i18n.table(rows).split("\n")
    assert len(lines) == len(rows)
    before: dict[int, set[tuple[int, int]]] = {}
    for row, line in zip(rows, lines, strict=True):
        cells = list(re.finditer(r"[^ \u3000]+", line))
        assert [cell[0] for cell in cells] == row  # nothing lost, nothing added
        for column, cell in enumerate(cells):
            prefix = line[:cell.start()]
            wide = sum(unicodedata.east_asian_width(c) in "WF" for c in prefix)
            before.setdefault(column, set()).add((wide, len(prefix) - wide))
    assert all(len(kinds) == 1 for kinds in before.values()), (rows, lines)


def test_a_table_pads_with_ideographic_spaces_where_chinese_is_missing():
    # Column 0 holds up to 2 Chinese characters and up to 3 others; then a gap of 2.
    assert i18n.table([["模型", "x"], ["bag", "y"]]).split("\n") == [
        "模型" + " " * 3 + "  x", "bag" + "\u3000" * 2 + "  y"]


def display_width(line: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)


WORDS = st.sampled_from(["<cls>", "<sep>", "tokens", "max_len=64", "a", "embedding,", "掩",
                         "蔽", "词", "元", "。", "，", "：", "(3,", "4)", "x" * 30])


@given(st.lists(st.tuples(WORDS, st.sampled_from(["", " ", "  "])), max_size=80),
       st.integers(20, 100))
def test_fill_breaks_lines_between_words_never_inside_one(pieces, width):
    message = "".join(word + space for word, space in pieces)
    lines = fill(message, width).split("\n")
    # Nothing is lost or reordered but spaces (a break replaces them).
    assert "".join(lines).replace(" ", "") == message.replace(" ", "")
    for line in lines:
        # Within the width, but for Chinese punctuation kept with what it ends, unless a word
        # longer than the width stands alone.
        assert display_width(line.rstrip("。，：")) <= width or " " not in line.strip()
    # No word of Latin letters is cut: each whitespace-free run of the message that holds no
    # Chinese is found whole in one line.
    for word in re.findall(r"[^\s\u4e00-\u9fff。，：]+", message):
        assert any(word in line for line in lines)


def test_fill_keeps_chinese_punctuation_off_the_start_of_a_line():
    lines = fill("词" * 10 + "。" + "元" * 10, width=20).split("\n")
    # The full stop takes the character before it to the next line, as Chinese typesetting does.
    assert lines == ["词" * 9, "词。" + "元" * 8, "元" * 2]
    lines = fill("词" * 9 + "（元）", width=20).split("\n")
    assert lines == ["词" * 9, "（元）"]  # an opening bracket does not end a line


def test_an_edition_takes_its_examples_from_the_corpus_in_its_language_or_english():
    """The corpus and the tasks are English and Chinese: the Japanese edition's examples are
    English ones (its model knows no Japanese)."""
    assert i18n.CORPUS_LANGUAGES == ("en", "zh")
    assert [i18n.corpus_language(lang) for lang in ("en", "zh", "ja")] == ["en", "zh", "en"]
    i18n.set_language("ja")
    assert i18n.corpus_language() == "en"
    i18n.set_language("zh")
    assert i18n.corpus_language() == "zh"
    with pytest.raises(ValueError, match="lang must be one of"):
        i18n.corpus_language("fr")


def test_a_table_reads_a_generator_of_rows():
    assert table([a, b] for a, b in [("x", "1"), ("yy", "2")]) == "x   1\nyy  2"

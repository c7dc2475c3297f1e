import re
import string
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bertlib import i18n
from bertlib.i18n import fill


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
    with pytest.raises(ValueError, match=r"lang must be one of \['en', 'zh'\] or None; got 'fr'"):
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


def test_unknown_key_is_a_value_error():
    with pytest.raises(ValueError, match="unknown text key 'no_such_key'"):
        i18n.text("no_such_key", "en")


def test_a_notebook_table_follows_the_edition_language():
    table = {"title": {"en": "“{word}” in MiniLM", "zh": "MiniLM 中的“{word}”"}}
    label = i18n.labels(table)
    assert label("title", word="bank") == "“bank” in MiniLM"
    i18n.set_language("zh")
    assert label("title", word="bank") == "MiniLM 中的“bank”"
    with pytest.raises(ValueError, match=r"unknown text key 'nope'; known keys: \['title'\]"):
        label("nope")


@pytest.mark.parametrize(("call", "message"), [
    (lambda: i18n.text("ex_wrong", "en", foo=1), r"text 'ex_wrong' needs the fields \['hint'\]"),
    (lambda: i18n.text("ex_wrong"), r"needs the fields \['hint'\]; \['hint'\] not given"),
    (lambda: i18n.text(["weight"]), r"unknown text key \['weight'\]"),
    (lambda: i18n.text("weight", table="weights"), "table must be a dict of key -> "),
    (lambda: i18n.labels({"k": {"en": "x"}})("k", lang="zh"),
     "text 'k' has no 'zh' string; the table gives"),
    (lambda: i18n.labels("str"), "table must be a dict; got str|table must be a dict of key"),
])
def test_bad_text_requests_are_named(call, message):
    """Before: KeyError, TypeError, or the unformatted '{hint}' shown to the learner."""
    with pytest.raises(ValueError, match=message):
        call()


def test_a_field_with_a_format_spec_is_filled():
    table = {"k": {"en": "{n:,} steps of {x.real}", "zh": "{n:,} 步"}}
    assert i18n.text("k", "en", table=table, n=12345, x=2) == "12,345 steps of 2"


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

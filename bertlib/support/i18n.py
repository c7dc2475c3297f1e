"""bertlib's texts in English, Simplified Chinese and Japanese: its own by key from
``strings.json`` (:func:`text`), the notebooks' by their English text (:func:`tr`). ``lang=None``
means the language of :func:`set_language` ("en" until each edition's first cell sets it)."""

from __future__ import annotations

import functools
import itertools
import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from importlib import resources

LANGUAGES = ("en", "zh", "ja")  # the languages bertlib speaks (figures, widgets, messages)
# The languages bertlib's data is written in: the shipped corpus, the small model and the
# fine-tuning tasks are English and Chinese; the Japanese edition explains them in Japanese.
CORPUS_LANGUAGES = ("en", "zh")


# Every string, key -> {language: text}; strings.json groups them by the figure that shows them.
STRINGS: dict[str, dict[str, str]] = {
    key: texts for section in json.loads((resources.files("bertlib") / "strings.json")
                                         .read_text("utf-8")).values()
    for key, texts in section.items()}


_language: str | None = None  # set_language's choice; None: "en"


def set_language(lang: str | None) -> None:
    """Make ``lang`` the default of every ``lang=None`` in bertlib (None: back to "en")."""
    global _language
    _language = lang if lang is None else resolve_language(lang)


def get_language() -> str:
    """The language set by :func:`set_language`, "en" when none was."""
    return _language or "en"


def corpus_language(lang: str | None = None) -> str:
    """The language of an edition's corpus examples: its own, or English (no Japanese data)."""
    lang = resolve_language(lang)
    return lang if lang in CORPUS_LANGUAGES else "en"


def resolve_language(lang: str | None) -> str:
    """``lang`` itself when valid, :func:`get_language` when None."""
    if lang is None:
        return get_language()
    if lang not in LANGUAGES:
        raise ValueError(f"lang must be one of {list(LANGUAGES)} or None; got {lang!r}")
    return lang


def text(key: str, lang: str | None = None, **fmt) -> str:
    """``strings.json``'s ``key`` in ``lang``, ``{placeholders}`` filled from ``fmt``."""
    return STRINGS[key][resolve_language(lang)].format(**fmt)


@functools.cache
def _notebook_strings() -> dict[str, dict[str, str]]:
    """``notebook_strings.json``: per language, English text -> its translation."""
    path = resources.files("bertlib") / "notebook_strings.json"
    return json.loads(path.read_text("utf-8"))


def tr(message: str, /, lang: str | None = None, **fmt) -> str:
    """``message``, English text a notebook prints, in ``lang``, ``{placeholders}`` filled.
    Translations come from each notebook source's strings cell (collected by
    ``tools/notebooks.py``); a text without one (a learner's edit) is shown as written."""
    lang = resolve_language(lang)
    template = message if lang == "en" else _notebook_strings().get(lang, {}).get(message, message)
    return template.format(**fmt)


def table(rows: Iterable[Sequence[object]], gap: int = 2) -> str:
    """``rows`` of cells as lines whose columns line up in a terminal and in a browser (where a
    Chinese character is not twice a Latin letter): each cell is padded with ideographic spaces
    (U+3000) to its column's most Chinese characters, and with spaces to its most others."""
    rows = [[str(cell) for cell in row] for row in rows]
    columns = list(itertools.zip_longest(*rows, fillvalue=""))
    wide = [max(map(_wide, column)) for column in columns]
    narrow = [max(len(cell) - _wide(cell) for cell in column) for column in columns]
    lines = []
    for row in rows:
        cells = [cell + "\u3000" * (wide[i] - _wide(cell))
                 + " " * (narrow[i] - len(cell) + _wide(cell))
                 for i, cell in enumerate(row)]
        lines.append((" " * gap).join(cells).rstrip())
    return "\n".join(lines)


def _wide(cell: str) -> int:
    """The characters of ``cell`` that a terminal draws two columns wide (Chinese)."""
    return sum(unicodedata.east_asian_width(c) in "WF" for c in cell)


PAGE_COLUMNS = 88  # a printed line that fits JupyterLab's output area at 1280x720
# One character of Chinese text (a breaking point on its own), a run of anything else but
# spaces (never broken), or a run of spaces (a breaking point).
_PIECES = re.compile(r"[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]|[^\s\u2e80-\u9fff\uf900-\ufaff"
                     r"\uff00-\uffef]+|\s+")
# Chinese and Japanese punctuation that never begins a line (with the small kana and the long
# vowel mark, which Japanese typesetting keeps off a line's start too)...
_NO_LINE_START = set("，。、：；！？）》”’」』ーぁぃぅぇぉっゃゅょァィゥェォッャュョ")
_NO_LINE_END = set("（《“‘「『")  # ... nor ends one


def fill(message: str, width: int = PAGE_COLUMNS) -> str:
    """``message`` in lines of at most ``width`` columns (a Chinese character takes two), broken
    at a space or between Chinese characters: JupyterLab would break inside a word ("<cls|>")."""
    lines = []
    for paragraph in message.split("\n"):
        # Unbreakable units, each with the space before it ("" where two Chinese characters
        # meet); a Latin word glued to a Chinese character, or punctuation, joins its unit.
        units: list[list[str]] = []
        space, last = "", ""
        for piece in _PIECES.findall(paragraph):
            if piece.isspace():
                space = piece
            elif units and not space and not (_wide(last + piece) == len(last + piece) == 2
                                              and piece not in _NO_LINE_START
                                              and last not in _NO_LINE_END):
                units[-1][1] += piece
            else:
                units.append([space, piece])
                space = ""
            last = piece if not piece.isspace() else last
        line = ""
        for before, unit in units:
            if line and _width(line + before + unit) > width:
                lines.append(line)
                line = unit
            else:
                line += before + unit
        lines.append(line + space)
    return "\n".join(line.rstrip() for line in lines)


def _width(line: str) -> int:
    """Terminal columns: a Chinese character takes two."""
    return len(line) + _wide(line)

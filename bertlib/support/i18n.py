"""Every user-facing string of bertlib's figures, widgets and messages, in English, Simplified
Chinese and Japanese.

bertlib's own strings live in ``strings.json`` and are looked up by key with :func:`text`; the
notebooks print English text through :func:`tr`, translated in each notebook's strings cell.
Every function that shows text takes ``lang=``; without it, the language set by
:func:`set_language` is used ("en" until then): each edition's first code cell sets its own.
"""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from importlib import resources

LANGUAGES = ("en", "zh", "ja")  # the languages bertlib speaks (figures, widgets, messages)
# The languages bertlib's data is written in: the shipped corpus, the small model and the
# fine-tuning tasks are English and Chinese; the Japanese edition explains them in Japanese.
CORPUS_LANGUAGES = ("en", "zh")


def _load_strings() -> dict[str, dict[str, str]]:
    """``strings.json``: sections of ``key -> {language: text}``, flattened."""
    sections = json.loads((resources.files("bertlib") / "strings.json").read_text("utf-8"))
    return {key: texts for section in sections.values() for key, texts in section.items()}


# Every string, by key; strings.json groups them by the figure or widget that shows them.
STRINGS: dict[str, dict[str, str]] = _load_strings()


_language: str | None = None  # set_language's choice; None: "en"


def set_language(lang: str | None) -> None:
    """Make ``lang`` the default of every ``lang=None`` in bertlib (None: back to "en").

    The notebooks' first code cell calls it with the edition's language.
    """
    global _language
    _language = lang if lang is None else resolve_language(lang)


def get_language() -> str:
    """The language set by :func:`set_language`, "en" when none was."""
    return _language or "en"


def corpus_language(lang: str | None = None) -> str:
    """The language of the examples an edition takes from the corpus or the tasks: its own
    where they are written in it (:data:`CORPUS_LANGUAGES`), else English (the Japanese
    edition's: the small model knows no Japanese)."""
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
    """bertlib's own string ``key`` (``strings.json``) in ``lang``, with ``{placeholders}``
    filled from ``fmt``."""
    return STRINGS[key][resolve_language(lang)].format(**fmt)


@functools.cache
def _notebook_strings() -> dict[str, dict[str, str]]:
    """``notebook_strings.json``: per language, English text -> its translation."""
    path = resources.files("bertlib") / "notebook_strings.json"
    return json.loads(path.read_text("utf-8"))


def tr(message: str, /, lang: str | None = None, **fmt) -> str:
    """``message``, an English text a notebook prints or draws, in ``lang`` (default: the
    edition's), with ``{placeholders}`` filled from ``fmt``.

    The translations are written in each notebook's source, in its strings cell, beside the
    prose (``tools/notebooks.py`` collects them into ``notebook_strings.json``). A text that has
    none, such as one a learner has just edited, is shown as written.
    """
    lang = resolve_language(lang)
    template = message if lang == "en" else _notebook_strings().get(lang, {}).get(message, message)
    return template.format(**fmt)


def table(rows: Iterable[Sequence[object]], gap: int = 2) -> str:
    """``rows`` of cells (a generator too) as lines whose columns line up wherever the text is
    shown.

    A Chinese character is two columns wide in a terminal, but in a browser it is as wide as
    its font makes it, which is not twice a Latin letter. So each cell is padded to the column's
    most Chinese characters with ideographic spaces (U+3000, as wide as a Chinese character in
    either) and to its most other characters with spaces: every cell of a column then holds the
    same number of each kind, and the columns line up in both. ``gap`` spaces separate them.
    """
    rows = [[str(cell) for cell in row] for row in rows]
    columns = max(map(len, rows), default=0)
    wide = [max((_wide(row[i]) for row in rows if i < len(row)), default=0)
            for i in range(columns)]
    narrow = [max((len(row[i]) - _wide(row[i]) for row in rows if i < len(row)), default=0)
              for i in range(columns)]
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
    """``message`` broken into lines of at most ``width`` columns (a Chinese character takes
    two) at a space, or between two Chinese characters, never inside a word: a break at a space
    takes its place.

    JupyterLab wraps a long printed line wherever it reaches the edge, even inside a word
    ("<cls" on one line, ">" on the next); a line that is short enough is never wrapped.
    """
    lines = []
    for paragraph in message.split("\n"):
        # Unbreakable units, each with the space before it ("" where two Chinese characters
        # meet); a Latin word glued to a Chinese character, or punctuation, joins its unit.
        units: list[list[str]] = []
        space, last = "", ""
        for piece in _PIECES.findall(paragraph):
            if piece.isspace():
                space = piece
            elif units and not space and not (_is_cjk(last) and _is_cjk(piece)
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


def _is_cjk(piece: str) -> bool:
    return len(piece) == 1 and unicodedata.east_asian_width(piece) in "WF"


def _width(line: str) -> int:
    """Terminal columns: a Chinese character takes two."""
    return len(line) + _wide(line)

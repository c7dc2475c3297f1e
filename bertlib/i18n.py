"""Every user-facing string of bertlib's figures, widgets and messages, in English and
Simplified Chinese.

The strings themselves live in ``strings.json`` beside this module (a table, kept as data);
strings that only one notebook shows live in that notebook. The notebooks come in two editions,
``notebooks/en`` and ``notebooks/zh``, with identical code; a kernel runs in the notebook's
folder, so the folder name picks the language.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

LANGUAGES = ("en", "zh")


def _load_strings() -> dict[str, dict[str, str]]:
    """``strings.json``: sections of ``key -> {language: text}``, flattened."""
    sections = json.loads((resources.files("bertlib") / "strings.json").read_text("utf-8"))
    return {key: texts for section in sections.values() for key, texts in section.items()}


# Every string, by key; strings.json groups them by the figure or widget that shows them.
STRINGS: dict[str, dict[str, str]] = _load_strings()


def detect_language() -> str:
    """``"zh"`` inside a folder named ``zh`` (the Chinese notebooks), else ``"en"``."""
    return "zh" if Path.cwd().name == "zh" else "en"


def resolve_language(lang: str | None) -> str:
    """``lang`` itself when valid, :func:`detect_language` when None."""
    if lang is None:
        return detect_language()
    if lang not in LANGUAGES:
        raise ValueError(f"lang must be one of {list(LANGUAGES)} or None; got {lang!r}")
    return lang


def text(key: str, lang: str | None = None, **fmt) -> str:
    """The string ``key`` in ``lang``, with ``{placeholders}`` filled from ``fmt``."""
    lang = resolve_language(lang)
    if key not in STRINGS:
        raise ValueError(f"unknown text key {key!r}; known keys are listed in bertlib.i18n.STRINGS")
    template = STRINGS[key][lang]
    return template.format(**fmt) if fmt else template

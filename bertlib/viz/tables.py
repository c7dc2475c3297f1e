"""HTML tables beside the figures: the input tokens with their segments, and the MLM targets."""

from __future__ import annotations

import html
import unicodedata
from collections.abc import Sequence

from bertlib.analysis.fill_mask import Guess
from bertlib.inputs import EncodedInput
from bertlib.masking import MaskedTokens
from bertlib.support.i18n import resolve_language, text
from bertlib.viz.style import FATE_KEYS, SEGMENT_COLORS

# The token table wraps its tokens into lines that fit JupyterLab's output area (848 px on a
# 1280 px screen with the file browser open); each line starts with the three row names.
TABLE_WIDTH = 800  # px a line may take: the output area less the widget's margins
TOKEN_PX, SMALL_PX = 15, 13  # font sizes of the token, and of its position and segment
BLOCK_PADDING, BLOCK_GAP = 6, 3  # px: each side of a token's text, and between tokens
BLOCK_MIN = 24  # px: the least text width :func:`token_lines` counts a token (a safe margin)
# Dark text on the segment colours, whatever the theme's: 14.1:1 and 14.9:1; the unknown
# token's red 5.9:1 and 6.3:1 (WCAG AA asks 4.5:1).
TABLE_TEXT_COLOR = "#1A1A1A"
UNK_COLOR = "#B00020"
_ROWS = (("position", SMALL_PX, 18), ("token", TOKEN_PX, 22), ("segment", SMALL_PX, 18))


def text_width(s: str, px: float, *, bold: bool = False) -> float:
    """A generous width of ``s`` at ``px`` (wide CJK and m/w/M/W/@/% 1 em, others 0.65, 0.75
    bold), so a line that fits does."""
    narrow = 0.75 if bold else 0.65
    return px * sum(1.0 if unicodedata.east_asian_width(ch) in "WF" or ch in "mwMW@%"
                    else narrow for ch in s)


def _block_width(token: str, position: int) -> float:
    inner = max(text_width(token, TOKEN_PX), text_width(str(position), SMALL_PX), BLOCK_MIN)
    return inner + 2 * BLOCK_PADDING + BLOCK_GAP


def token_lines(tokens: Sequence[str], segments: Sequence[int], names: Sequence[str],
                width: float = TABLE_WIDTH) -> list[list[int]]:
    """The token indices of each line: one line if all fit ``width``, else sentence B starts
    a line of its own and each sentence fills lines as far as they go."""
    room = (width - max(text_width(n, SMALL_PX, bold=True) for n in names) - BLOCK_PADDING
            - BLOCK_GAP)
    widths = [_block_width(t, i) for i, t in enumerate(tokens)]
    if sum(widths) <= room:
        return [list(range(len(tokens)))] if tokens else []
    lines: list[list[int]] = []
    used = 0.0
    for i, w in enumerate(widths):
        if not lines or (lines[-1] and used + w > room) or segments[i] != segments[i - 1]:
            lines.append([])
            used = 0.0
        lines[-1].append(i)
        used += w
    return lines


def token_table_html(encoded: EncodedInput, lang: str | None, unk: str | None) -> str:
    """Position, token and segment of each token, a table a line; ``unk`` in red, outlined."""
    lang = resolve_language(lang)
    names = [text(key, lang) for key, _, _ in _ROWS]
    columns = []  # each token's three cells, one per row: a block in its segment's colour
    for i, (tok, seg) in enumerate(zip(encoded.tokens, encoded.segments, strict=True)):
        style = (f"background:{SEGMENT_COLORS[seg]};color:{TABLE_TEXT_COLOR};"
                 f"padding:0 {BLOCK_PADDING}px;text-align:center;"
                 f"white-space:nowrap")
        if tok == unk:
            style += f";color:{UNK_COLOR};font-weight:bold"
        corners = ("border-radius:3px 3px 0 0", "", "border-radius:0 0 3px 3px")
        columns.append([
            f"<td style='{style};font-size:{px}px;line-height:{h}px;{corner}"
            + (f";box-shadow:inset 0 0 0 2px {UNK_COLOR}" if tok == unk and key == "token"
               else "")
            + f"'>{html.escape(str(v))}</td>"
            for v, (key, px, h), corner in zip((i, tok, seg), _ROWS, corners, strict=True)])
    # A table a line, its rows led by their names in the theme's text colour; nowrap, else a
    # Chinese name ("位置") breaks after every character. A column's cells touch: one block.
    lines = []
    for line in token_lines(encoded.tokens, encoded.segments, names):
        rows = "".join(
            f"<tr><th style='text-align:left;padding:0 {BLOCK_PADDING}px 0 0;"
            f"white-space:nowrap;font-size:{px}px;line-height:{h}px'>{html.escape(name)}</th>"
            + "".join(columns[i][r] for i in line) + "</tr>"
            for r, (name, (_, px, h)) in enumerate(zip(names, _ROWS, strict=True)))
        lines.append(f"<table class='bertlib-token-line' style='border-collapse:separate;"
                     f"border-spacing:{BLOCK_GAP}px 0;margin:0 0 6px -{BLOCK_GAP}px'>"
                     f"{rows}</table>")
    return f"<div style='overflow-x:auto'>{''.join(lines)}</div>"


# No background of their own: the theme's text colour, said outright (rgba(0,0,0,.87) on white
# 16.1:1, white on JupyterLab Dark's #111111 18.9:1); rows 20 px high, not the widget's 28 px.
TARGETS_STYLE = "font-size:14px;line-height:20px;color:var(--jp-content-font-color1)"


def targets_table_html(tokens: list[str], masked: MaskedTokens, shown: list[str], lang: str,
                       guesses: Sequence[Guess] | None = None) -> str:
    """Each position chosen for prediction: original, what the model sees, fate, and with
    ``guesses`` (:func:`~bertlib.analysis.fill_mask.fill_mask`) the model's top tokens."""
    lang = resolve_language(lang)
    keys = ["position", "target_original", "target_input", "fate"]
    if guesses is not None:
        keys.append("model_guesses")
    head = "".join(f"<th style='padding:2px 10px;text-align:left;white-space:nowrap'>"
                   f"{text(k, lang)}</th>" for k in keys)
    rows = []
    for i, (pos, fate) in enumerate(zip(masked.positions, masked.fates, strict=True)):
        cells = [str(pos), f"<b>{html.escape(tokens[pos])}</b>", html.escape(shown[pos]),
                 html.escape(text(FATE_KEYS[fate], lang))]
        if guesses is not None:
            g = guesses[i]
            cells.append(" · ".join(
                (f"<b>{html.escape(t)} {p:.2f} ✓</b>" if t == g.original
                 else f"{html.escape(t)} {p:.2f}")
                for t, p in zip(g.tokens, g.probabilities, strict=True)))
        # Only the guesses wrap: a short fate ("→ mask token (80%)") stays on one line.
        rows.append("<tr>" + "".join(
            f"<td style='padding:2px 10px{'' if j == 4 else ';white-space:nowrap'}'>{c}</td>"
            for j, c in enumerate(cells)) + "</tr>")
    footer = ""
    if guesses:
        found = text("guesses_found", lang, found=sum(g.rank is not None for g in guesses),
                     total=len(guesses), k=len(guesses[0].tokens))
        footer = f"<div style='{TARGETS_STYLE}'>{html.escape(found)}</div>"
    return (f"<b>{html.escape(text('targets_title', lang))}</b>"
            f"<table style='{TARGETS_STYLE}'><tr>{head}</tr>{''.join(rows)}</table>{footer}")

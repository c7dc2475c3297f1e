"""HTML tables beside the figures: the input tokens with their segments, and the MLM targets."""

from __future__ import annotations

import html
from collections.abc import Sequence

from bertlib.checks import check_int_in, check_str, check_tokens
from bertlib.fill_mask import Guess
from bertlib.i18n import resolve_language, text
from bertlib.inputs import EncodedInput
from bertlib.masking import Fate, MaskedTokens
from bertlib.viz.style import FATE_KEYS, SEGMENT_COLORS


def token_table_html(encoded: EncodedInput, lang: str | None, unk: str | None) -> str:
    """Position, token and segment of every input token, coloured by segment; the unknown
    token ``unk`` (None: none) in red."""
    if not isinstance(encoded, EncodedInput):
        raise ValueError(f"encoded must be an EncodedInput (see bertlib.inputs.encode_pair); "
                         f"got {type(encoded).__name__}")
    check_tokens("encoded.tokens", encoded.tokens)
    if len(encoded.segments) != len(encoded.tokens) or any(
            isinstance(s, bool) or s not in (0, 1) for s in encoded.segments):
        raise ValueError(f"encoded.segments must hold one 0 (sentence A) or 1 (sentence B) per "
                         f"token; got {encoded.segments!r:.80}")
    if unk is not None:
        check_str("unk", unk)
    lang = resolve_language(lang)
    cells = {"position": [], "token": [], "segment": []}
    for i, (tok, seg) in enumerate(zip(encoded.tokens, encoded.segments, strict=True)):
        style = f"background:{SEGMENT_COLORS[seg]};padding:2px 6px;text-align:center;"
        if tok == unk:
            style += "color:#B00020;font-weight:bold;"
        cells["position"].append(f"<td style='{style}'>{i}</td>")
        cells["token"].append(f"<td style='{style}font-size:15px'>{html.escape(tok)}</td>")
        cells["segment"].append(f"<td style='{style}'>{seg}</td>")
    # nowrap: a narrow Chinese header ("位置") would otherwise break after every character.
    rows = "".join(f"<tr><th style='text-align:left;padding-right:8px;white-space:nowrap'>"
                   f"{text(key, lang)}</th>{''.join(tds)}</tr>" for key, tds in cells.items())
    return (f"<div style='overflow-x:auto'><table style='border-collapse:separate;"
            f"border-spacing:2px;font-size:13px'>{rows}</table></div>")


def targets_table_html(tokens: list[str], masked: MaskedTokens, shown: list[str], lang: str,
                       guesses: Sequence[Guess] | None = None) -> str:
    """Each position chosen for prediction: the original token, what the model sees, and how
    it was corrupted; with ``guesses`` (from :func:`bertlib.fill_mask.fill_mask`), the model's
    top tokens there, the original in bold."""
    check_tokens("tokens", tokens)
    check_tokens("shown", shown)
    if not isinstance(masked, MaskedTokens):
        raise ValueError(f"masked must be a MaskedTokens (see bertlib.mask_tokens); got "
                         f"{type(masked).__name__}")
    if len(shown) != len(tokens):
        raise ValueError(f"shown must have one entry per token ({len(tokens)}); got "
                         f"{len(shown)}")
    for pos, fate in zip(masked.positions, masked.fates, strict=True):
        check_int_in("masked.positions[i]", pos, 0, len(tokens) - 1, " (a token index)")
        if not isinstance(fate, Fate):
            raise ValueError(f"masked.fates must hold bertlib.masking.Fate values; got "
                             f"{fate!r:.80}")
    if guesses is not None and len(guesses) != len(masked.positions):
        raise ValueError(f"guesses must hold one Guess per position ({len(masked.positions)}); "
                         f"got {len(guesses)}")
    lang = resolve_language(lang)
    keys = ["position", "target_original", "target_input", "fate"]
    if guesses is not None:
        keys.append("model_guesses")
    head = "".join(f"<th style='padding:2px 10px;text-align:left'>{text(k, lang)}</th>"
                   for k in keys)
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
        rows.append("<tr>" + "".join(f"<td style='padding:2px 10px'>{c}</td>" for c in cells)
                    + "</tr>")
    footer = ""
    if guesses:
        found = text("guesses_found", lang, found=sum(g.rank is not None for g in guesses),
                     total=len(guesses), k=len(guesses[0].tokens))
        footer = f"<div style='font-size:14px'>{html.escape(found)}</div>"
    return (f"<b>{html.escape(text('targets_title', lang))}</b>"
            f"<table style='font-size:14px'><tr>{head}</tr>{''.join(rows)}</table>{footer}")

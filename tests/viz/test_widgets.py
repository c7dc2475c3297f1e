import contextlib
import html
import io
import os
import re
import stat
import struct
import sys
import unicodedata
from html.parser import HTMLParser
from pathlib import Path

import ipywidgets
import matplotlib
import numpy as np
import PIL.Image
import pytest
import torch
from conftest import contrast

from bertlib import load_small_bert
from bertlib.inputs import EncodedInput, encode_pair
from bertlib.masking import Fate, MaskedTokens, mask_tokens
from bertlib.model import BERTModel
from bertlib.support.checks import InputError
from bertlib.support.i18n import set_language, text
from bertlib.support.rng import make_generator
from bertlib.text.tokenizer import WordPieceTokenizer
from bertlib.text.vocab import HF_SPECIAL_TOKENS
from bertlib.viz import tables, tally_masks
from bertlib.viz._widget import DEFAULT_TEXTS, ERROR_STYLE, NOTICE_STYLE, InputNotice
from bertlib.viz.attention_widget import AttentionWidget
from bertlib.viz.live import SAVE_DPI, SaveError
from bertlib.viz.widgets import (
    InputRepresentationWidget,
    MaskingWidget,
    NSPWidget,
)

CORPUS = [
    "the crane lifted a heavy steel beam",
    "then it put the beam on the roof",
    "a crane flew over the river bank",
    "the bird sat on the bank of the river",
    "she went to the bank to get money",
    "起重机吊起了钢梁",
    "一只鹤飞过河岸",
] * 5
# The widgets' own defaults are sentences of the shipped corpus; these tests use a tokenizer
# trained on CORPUS, so they start from its sentences.
TEXTS = {"text_a": CORPUS[0], "text_b": CORPUS[1]}


def make_tokenizer(specials=None) -> WordPieceTokenizer:
    return WordPieceTokenizer.train(CORPUS, vocab_size=120, specials=specials)


def make_model(tokenizer: WordPieceTokenizer, max_len: int = 40) -> BERTModel:
    torch.manual_seed(0)
    return BERTModel(len(tokenizer.vocab), 16, 32, 2, 2, 0.1, max_len=max_len)


@pytest.fixture(scope="module")
def tokenizer() -> WordPieceTokenizer:
    return make_tokenizer()


@pytest.fixture(scope="module")
def model(tokenizer) -> BERTModel:
    """In eval mode, so that the reference outputs below have no dropout either."""
    return make_model(tokenizer).eval()


def test_widgets_run_without_dropout_and_leave_the_model_mode_alone(tokenizer):
    model = make_model(tokenizer).train()  # dropout 0.1
    attention = AttentionWidget(model, tokenizer, "en", **TEXTS)
    nsp = NSPWidget(model, tokenizer, "en", **TEXTS)
    first = (attention.attentions.copy(), nsp.is_next_probability)
    attention.refresh()
    nsp.refresh()
    np.testing.assert_array_equal(attention.attentions, first[0])  # dropout would change them
    assert nsp.is_next_probability == first[1]
    assert model.training


def reference_inputs(tokenizer, a, b=None):
    tokens_a = tokenizer.tokenize(a)
    tokens = [tokenizer.vocab.specials.cls, *tokens_a, tokenizer.vocab.specials.sep]
    segments = [0] * len(tokens)
    if b is not None:
        tokens_b = tokenizer.tokenize(b)
        tokens += [*tokens_b, tokenizer.vocab.specials.sep]
        segments += [1] * (len(tokens_b) + 1)
    return tokens, torch.tensor([tokenizer.vocab[tokens]]), torch.tensor([segments])


# --- construction and display ---------------------------------------------------------------


def test_widgets_display_through_their_ui(model, tokenizer):
    for w in (InputRepresentationWidget(model, tokenizer, "en", **TEXTS),
              MaskingWidget(tokenizer, "en", **TEXTS),
              AttentionWidget(model, tokenizer, "en", **TEXTS),
              NSPWidget(model, tokenizer, "en", **TEXTS)):
        assert (w.text_a.value, w.text_b.value) == (CORPUS[0], CORPUS[1])
        bundle = w._repr_mimebundle_()
        assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == w.ui.model_id
        assert w.message == ""


@pytest.mark.parametrize("lang", ["en", "zh", "ja"])
def test_default_texts_suit_the_shipped_model(lang):
    """The default pair is in the notebook's language, every piece of it is in the shipped
    model's vocabulary, its NSP head calls it IsNext, and Swap asks again about B, A. (Whether
    the swap is NotNext is the learner's question: the shipped model's NotNext partners all
    came from other paragraphs, so it was never taught order; notebook 05, exercise 6.)"""
    model, tokenizer = load_small_bert()
    widgets = (InputRepresentationWidget(model, tokenizer, lang), MaskingWidget(tokenizer, lang),
               AttentionWidget(model, tokenizer, lang), NSPWidget(model, tokenizer, lang))
    for w in widgets:
        assert (w.text_a.value, w.text_b.value) == DEFAULT_TEXTS[lang]
        assert w.message == ""  # no unknown pieces, no truncation
    nsp = widgets[-1]
    assert nsp.is_next_probability > 0.7
    before = nsp.is_next_probability
    nsp.swap.click()
    assert (nsp.text_a.value, nsp.text_b.value) == DEFAULT_TEXTS[lang][::-1]
    assert nsp.is_next_probability != before


@pytest.mark.parametrize("cls", [InputRepresentationWidget, AttentionWidget, NSPWidget])
def test_vocab_size_mismatch_is_refused(cls, tokenizer):
    torch.manual_seed(0)
    wrong = BERTModel(len(tokenizer.vocab) + 1, 16, 32, 2, 1, 0.1, max_len=16)
    with pytest.raises(ValueError, match=r"tokenizer has \d+ tokens but the model's vocab_size"):
        cls(wrong, tokenizer)


# --- input representation -------------------------------------------------------------------


def test_input_representation_draws_the_model_embeddings(model, tokenizer):
    w = InputRepresentationWidget(model, tokenizer, "en", **TEXTS)
    w.text_a.value, w.text_b.value = "the crane flew", "over the river"
    tokens, ids, segments = reference_inputs(tokenizer, "the crane flew", "over the river")
    assert w.encoded.tokens == tokens and w.encoded.segments == segments[0].tolist()
    enc = model.encoder
    with torch.no_grad():
        expected = [enc.token_embedding(ids)[0], enc.segment_embedding(segments)[0],
                    enc.pos_embedding[0, : len(tokens)], enc.embed(ids, segments)[0]]
    for image, ref in zip(w.plot.images, expected, strict=True):
        np.testing.assert_allclose(image.get_array(), ref.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(w.parts.token + w.parts.segment + w.parts.position,
                               w.parts.total, rtol=1e-5, atol=1e-6)
    assert w.image.value[:8] == b"\x89PNG\r\n\x1a\n"
    for tok in tokens:
        assert f">{tok.replace('<', '&lt;').replace('>', '&gt;')}<" in w.table.value
    lines = token_table_lines(w.table.value)
    assert len(lines) == 1  # a short pair: one line
    names = [text(k, "en") for k in ("position", "token", "segment")]
    assert lines[0][0] == names
    assert lines[0][1:] == [[str(i), tok, str(seg)] for i, (tok, seg) in
                            enumerate(zip(tokens, segments[0].tolist(), strict=True))]


class _TokenTable(HTMLParser):
    """The token table's lines (one table each), each a list of blocks: the row names first,
    then each token's column, the texts of its three cells; and the style of each token's
    cell."""

    def __init__(self):
        super().__init__()
        self.rows: list[list[list[str]]] = []  # per line, its rows of cell texts
        self.styles: list[str] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "table":
            assert attrs.get("class") == "bertlib-token-line"
            self.rows.append([])
        elif tag == "tr":
            self.rows[-1].append([])
        elif tag in ("th", "td"):
            self.rows[-1][-1].append("")
            if tag == "td" and len(self.rows[-1]) == 2:
                self.styles.append(attrs.get("style", ""))

    def handle_data(self, data):
        if self.rows and self.rows[-1] and self.rows[-1][-1]:
            self.rows[-1][-1][-1] += data

    @property
    def lines(self) -> list[list[list[str]]]:
        return [[list(column) for column in zip(*rows, strict=True)] for rows in self.rows]


def token_table_lines(value: str) -> list[list[list[str]]]:
    parser = _TokenTable()
    parser.feed(value)
    return parser.lines


OUTPUT_WIDTH = 848  # px: JupyterLab's output area at 1280 x 720 with the file browser open


def rendered_width(s: str, px: float, *, bold: bool = False) -> float:
    """``s``'s width at ``px`` in DejaVu Sans (wider than most sans-serif fonts a browser
    picks), a CJK character 1 em, as Noto Sans CJK draws it."""
    from matplotlib import font_manager, ft2font

    path = font_manager.findfont(font_manager.FontProperties(
        family="DejaVu Sans", weight="bold" if bold else "normal"))
    font = ft2font.FT2Font(path)
    font.set_size(px, 72)
    wide = sum(unicodedata.east_asian_width(c) in "WF" for c in s)
    font.set_text("".join(c for c in s if unicodedata.east_asian_width(c) not in "WF"))
    return font.get_width_height()[0] / 64 + wide * px


def line_width(line: list[list[str]]) -> float:
    """A line of the token table as Chromium lays it out: the row names (bold, 13 px) and
    6 px padding, then each block (the token 15 px, its position 13 px, at least 24 px wide)
    with 6 px padding a side, 3 px apart."""
    names, *blocks = line
    width = max(rendered_width(n, 13, bold=True) for n in names) + 6
    for position, token, _ in blocks:
        width += 3 + 12 + max(rendered_width(token, 15), rendered_width(position, 13), 24)
    return width


@pytest.mark.parametrize("lang", ["en", "zh", "ja"])
def test_the_token_table_fits_the_output_area(lang):
    """The default pair (1172 px as one row of columns) wraps: sentence A on one line, B on
    the next, each led by the row names, none wider than the output area."""
    model, tokenizer = load_small_bert()
    w = InputRepresentationWidget(model, tokenizer, lang)
    enc = w.encoded
    lines = token_table_lines(w.table.value)
    names = [text(k, lang) for k in ("position", "token", "segment")]
    assert [line[0] for line in lines] == [names] * len(lines)
    blocks = [block for line in lines for block in line[1:]]
    assert blocks == [[str(i), tok, str(seg)] for i, (tok, seg) in
                      enumerate(zip(enc.tokens, enc.segments, strict=True))]
    assert [len(line) - 1 for line in lines] == [enc.boundary, len(enc.tokens) - enc.boundary]
    for line in lines:
        assert line_width(line) <= OUTPUT_WIDTH - 8, line  # the widget's margins
    sizes = {int(px) for px in re.findall(r"font-size:(\d+)px", w.table.value)}
    assert min(sizes) >= 13
    nsp = NSPWidget(model, tokenizer, lang)
    assert nsp.table.value == w.table.value


def test_a_long_input_wraps_onto_more_lines(model, tokenizer):
    w = InputRepresentationWidget(model, tokenizer, "en", text_a=" ".join(CORPUS[:3]),
                                  text_b=" ".join(CORPUS[3:5]))
    lines = token_table_lines(w.table.value)
    assert len(lines) > 2 and len(w.encoded.tokens) == model.config.max_len
    assert sum(len(line) - 1 for line in lines) == len(w.encoded.tokens)
    for line in lines:
        assert line_width(line) <= OUTPUT_WIDTH - 8
    # A token too wide for any line gets a line of its own, not an empty line before it.
    assert tables.token_lines(["a" * 200, "b", "c" * 200], [0, 0, 0], ["x"]) == [[0], [1], [2]]


def backgrounds_and_colours(value: str) -> list[tuple[str, str]]:
    """(background, text colour) of every style in ``value`` that sets a background; one
    without a colour of its own gets the theme's, "white" in JupyterLab Dark."""
    pairs = []
    for style in re.findall(r"style='([^']*)'", value):
        props = dict(p.split(":", 1) for p in style.split(";") if ":" in p)
        if "background" in props:
            pairs.append((props["background"], props.get("color", "#FFFFFF")))
    return pairs


def test_the_token_table_sets_dark_text_on_its_light_colours(model, tokenizer):
    w = InputRepresentationWidget(model, tokenizer, "en", text_a="the zebra", text_b="")
    pairs = backgrounds_and_colours(w.table.value)
    assert len(pairs) == 3 * len(w.encoded.tokens)  # position, token, segment
    for background, colour in pairs:
        assert contrast(colour, background) >= 4.5, (colour, background)
    parser = _TokenTable()
    parser.feed(w.table.value)
    unk = tokenizer.vocab.specials.unk
    marked = [tables.UNK_COLOR in style for style in parser.styles]
    assert marked == [tok == unk for tok in w.encoded.tokens] and any(marked)
    assert contrast("#8A5300", "#111111") < 3  # the old notice colour, to check the check


def theme_colours(theme: str) -> dict[str, str]:
    """JupyterLab's ``--jp-*`` colours in its light or dark theme, as #RRGGBB over the page
    (--jp-layout-color0)."""
    css = (Path(sys.prefix) / "share/jupyter/lab/themes/@jupyterlab" /
           f"theme-{theme}-extension/index.css")
    # JupyterLab is a dev dependency (make test installs it): no theme is a broken set-up.
    assert css.is_file(), f"JupyterLab's {theme} theme is missing at {css}: run `make setup`"
    raw = dict(re.findall(r"(--jp-[\w-]+):\s*([^;]+);", css.read_text("utf-8")))

    def resolve(value: str) -> str:
        value = value.strip()
        if value.startswith("var("):
            name, _, fallback = value[4:-1].partition(",")
            return resolve(raw.get(name.strip(), fallback))
        return value

    colours = {}
    page = _hex(resolve(raw["--jp-layout-color0"]), "#FFFFFF")
    for name, value in raw.items():
        with contextlib.suppress(ValueError, KeyError):  # not a colour
            colours[name] = _hex(resolve(value), page)
    return colours


def _hex(value: str, page: str) -> str:
    """#RGB, #RRGGBB, white or rgba(r, g, b, a) over ``page``, as #RRGGBB."""
    named = {"white": "#FFFFFF", "black": "#000000"}
    value = named.get(value.lower(), value)
    if re.fullmatch(r"#[0-9a-fA-F]{3}", value):
        value = "#" + "".join(c * 2 for c in value[1:])
    if re.fullmatch(r"#[0-9a-fA-F]{6}", value):
        return value.upper()
    m = re.fullmatch(r"rgba\(([\d.]+),\s*([\d.]+),\s*([\d.]+),\s*([\d.]+)\)", value)
    if not m:
        raise ValueError(value)
    *rgb, alpha = (float(x) for x in m.groups())
    base = [int(page[i:i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(alpha * c + (1 - alpha) * b):02X}"
                         for c, b in zip(rgb, base, strict=True))


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_notices_and_errors_read_in_both_themes(tokenizer, theme):
    """The status line's boxes bring their own background and text colour (AA: 4.5:1), and
    stand apart from the theme's page; the tally's hint is in the theme's text colour."""
    colours = theme_colours(theme)
    page = colours["--jp-layout-color0"]
    assert page == {"light": "#FFFFFF", "dark": "#111111"}[theme]
    for style in (NOTICE_STYLE, ERROR_STYLE):
        assert contrast(style["color"], style["background"]) >= 4.5
    assert contrast(colours["--jp-content-font-color1"], page) >= 4.5
    w = MaskingWidget(tokenizer, "en", **TEXTS)
    assert "var(--jp-content-font-color1)" in w.tally_note.value
    w._show(["a notice"])
    assert f"background:{NOTICE_STYLE['background']};color:{NOTICE_STYLE['color']}" \
        in w.status.value
    w._show(["an error"], error=True)
    assert f"background:{ERROR_STYLE['background']};color:{ERROR_STYLE['color']}" \
        in w.status.value
    for background, colour in backgrounds_and_colours(w.targets.value):
        assert contrast(colour, background) >= 4.5


def test_saving_adds_its_line_to_the_notices_on_screen(model, tokenizer, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    w = InputRepresentationWidget(model, tokenizer, "zh", text_a="the zebra", text_b="")
    unknown = w.message
    assert unknown == text("unknown", "zh", count=w.encoded.unknown,
                           unk=tokenizer.vocab.specials.unk)
    w.save_buttons["png"].click()
    assert w.message == f"{unknown}\n{text('saved', 'zh', path='input-representation.png')}"
    w.save_buttons["svg"].click()  # the new line replaces the last one, the notice stays
    assert w.message == f"{unknown}\n{text('saved', 'zh', path='input-representation.svg')}"
    assert w.status.value.count(html.escape(unknown)) == 1
    w.text_a.value = "the crane"  # a new text: its own notices (none), no old "saved" line
    assert w.message == ""
    w.save_buttons["pdf"].click()
    assert w.message == text("saved", "zh", path="input-representation.pdf")


def _controls(widget: ipywidgets.Widget):
    yield widget
    for child in getattr(widget, "children", ()):
        yield from _controls(child)


@pytest.mark.parametrize("lang", ["en", "zh", "ja"])
def test_every_control_shows_its_whole_label(model, tokenizer, lang):
    """No button cut to "all layers and he…" (ipywidgets' default 148 px), every toggle
    with a tooltip, and every slider wide enough to drag (not squeezed to a few pixels
    beside wide buttons)."""
    for w in _all_widgets(model, tokenizer, lang):
        rows = [c for c in _controls(w.ui) if isinstance(c, ipywidgets.HBox)]
        for control in _controls(w.ui):
            if isinstance(control, ipywidgets.Button):
                assert control.layout.width == "auto", control.description
            if isinstance(control, ipywidgets.ToggleButtons):
                assert control.style.button_width == "auto"
                assert control.layout.display == "flex"  # its label beside it, not above
                assert len(control.tooltips) == len(control.options)
                assert all(control.tooltips)
            if isinstance(control, ipywidgets.IntSlider | ipywidgets.FloatSlider):
                assert int(control.layout.min_width.removesuffix("px")) >= 240
                row = next((r for r in rows if control in r.children), None)
                if row is None:  # a row of its own
                    assert control in w.ui.children
                else:
                    assert row.layout.flex_flow == "row wrap"
                    assert not any(isinstance(c, ipywidgets.ToggleButtons)
                                   for c in row.children)


def test_empty_text_shows_a_message_instead_of_figures(model, tokenizer):
    w = InputRepresentationWidget(model, tokenizer, "en", **TEXTS)
    w.text_a.value = "   "
    assert w.message == text("empty_text", "en")
    assert w.image.layout.display == "none"
    w.text_a.value = "the crane"
    assert w.message == "" and w.image.layout.display is None


def test_overlong_text_is_truncated_with_a_notice(model, tokenizer):
    w = InputRepresentationWidget(model, tokenizer, "zh", **TEXTS)
    w.text_b.value = ""
    w.text_a.value = " ".join(["the river bank"] * 30)  # 90 words, max_len 40
    assert len(w.encoded.tokens) == model.config.max_len
    assert w.parts.total.shape[0] == model.config.max_len
    assert w.message == text("truncated", "zh", total=92, kept=40, max_len=40)


def test_unknown_words_show_as_unk(model, tokenizer):
    w = AttentionWidget(model, tokenizer, "en", **TEXTS)
    w.text_b.value = ""
    w.text_a.value = "the zebra"  # 'z' never occurs in the corpus
    unk = tokenizer.vocab.specials.unk
    assert unk in w.encoded.tokens
    assert unk in w.plot.query_labels.tokens
    assert w.message == text("unknown", "en", count=w.encoded.tokens.count(unk), unk=unk)


# --- masking --------------------------------------------------------------------------------


def test_chips_show_mask_tokens_with_the_same_seed(tokenizer):
    w = MaskingWidget(tokenizer, "en", seed=5, **TEXTS)
    ids = w.encoded.ids
    for seed in (5, 6, 7):
        ref = mask_tokens(ids, tokenizer.vocab, mask_ratio=0.15, seed=seed)
        assert w.seed.value == seed
        assert [(p, f) for p, f in enumerate(w.chips.fates) if f is not None] == list(
            zip(ref.positions, ref.fates, strict=True))
        shown = tokenizer.vocab.to_tokens(ref.masked_ids)
        drawn = [t.get_text() for t in w.chips.bottom_texts if t.get_visible()]
        assert drawn == [f"→ {shown[p]}" for p in ref.positions]
        for pos in ref.positions:
            assert f"<b>{w.encoded.tokens[pos]}</b>" in w.targets.value
        w.resample.click()


def test_mask_ratio_slider_changes_how_many_are_chosen(tokenizer):
    w = MaskingWidget(tokenizer, "en", **TEXTS)
    w.mask_ratio.value = 0.5
    # Half of the whole sequence, <cls> and two <sep> included; all are word pieces but those 3.
    assert w.masked.num_candidates == len(w.encoded.ids) - 3
    assert len(w.masked.positions) == round(0.5 * len(w.encoded.ids))


def test_tally_counts_many_draws_and_converges_to_80_10_10(tokenizer):
    w = MaskingWidget(tokenizer, "en", seed=3, **TEXTS)
    w.num_samples.value = 2000
    assert w.tally is None
    w.tally_button.click()
    tally = w.tally
    assert tally.samples == 2000 and w.tally_image.layout.display is None
    # Recount with the same generator, independently of the widget.
    g = make_generator(seed=3)
    draws = [mask_tokens(w.encoded.ids, tokenizer.vocab, mask_ratio=0.15, generator=g)
             for _ in range(2000)]
    per_pos = np.bincount([p for d in draws for p in d.positions], minlength=len(w.encoded.ids))
    np.testing.assert_array_equal(tally.selection_counts, per_pos)
    n_sel = tally.fate_counts[-1].sum()
    assert n_sel == 2000 * tally.selected
    for fate, p in zip(range(3), (0.8, 0.1, 0.1), strict=True):
        sd = np.sqrt(p * (1 - p) / n_sel)
        assert abs(tally.fate_fractions[-1, fate] - p) < 4 * sd
    maskable = [i for i, t in enumerate(w.encoded.ids)
                if t not in tokenizer.vocab.structural_ids]
    expected = tally.selected / tally.candidates
    assert tally.candidates == len(maskable)
    assert np.all(np.abs(tally.selection_fractions[maskable] - expected) < 4 * np.sqrt(
        expected * (1 - expected) / 2000))
    assert tally.selection_counts[0] == 0  # <cls> is never chosen
    w.text_a.value = "the bird"  # new input: the old tally no longer applies
    assert w.tally is None and w.tally_image.layout.display == "none"
    assert w.tally_save.layout.display == "none"


# --- attention ------------------------------------------------------------------------------


def test_heatmap_equals_the_model_attention_for_each_layer_and_head(model, tokenizer):
    w = AttentionWidget(model, tokenizer, "en", **TEXTS)
    tokens, ids, segments = reference_inputs(tokenizer, w.text_a.value, w.text_b.value)
    with torch.no_grad():
        _, attentions = model.encoder(ids, segments, return_attention=True)
    for layer in range(2):
        for head in (0, 1, -1):
            w.layer.value, w.head.value = layer, head
            ref = attentions[layer][0]
            ref = ref.mean(0) if head == -1 else ref[head]
            np.testing.assert_allclose(w.plot.image.get_array(), ref.numpy(), rtol=1e-5)
    assert w.current.boundary == w.encoded.segments.index(1)
    w.query.value = 3
    np.testing.assert_allclose([path.vertices[:, 0].max() for path in w.plot.bars.get_paths()],
                               attentions[1][0].mean(0)[3].numpy(), rtol=1e-5)
    assert w.plot.ax_row.get_title() == f"Where “{tokens[3]}” attends"


def test_all_heads_grid_and_mean(model, tokenizer):
    w = AttentionWidget(model, tokenizer, "en", **TEXTS)
    _, ids, segments = reference_inputs(tokenizer, w.text_a.value, w.text_b.value)
    with torch.no_grad():
        _, attentions = model.encoder(ids, segments, return_attention=True)
    w.view.value = "all"
    w.layer.value = 1
    assert w.image.layout.display == "none" and w.grid_image.layout.display is None
    ref = attentions[1][0].numpy()
    for image, data in zip(w.grid_plot.images, [*ref, ref.mean(0)], strict=True):
        np.testing.assert_allclose(image.get_array(), data, rtol=1e-5)


def test_hiding_special_tokens_drops_their_rows_and_columns():
    hf_tokenizer = make_tokenizer(HF_SPECIAL_TOKENS)  # a checkpoint's [CLS]/[SEP] spelling
    model = make_model(hf_tokenizer)
    w = AttentionWidget(model, hf_tokenizer, "en", **TEXTS)
    assert w.encoded.tokens[0] == "[CLS]"
    full = w.plot.image.get_array().copy()
    w.query.value = 2  # the token at position 2
    w.hide_specials.value = True
    keep = [i for i, t in enumerate(w.encoded.tokens) if t not in ("[CLS]", "[SEP]")]
    np.testing.assert_allclose(w.plot.image.get_array(), full[np.ix_(keep, keep)])
    assert w.plot.query_labels.tokens == [w.encoded.tokens[i] for i in keep]
    assert w.shown[w.query.value] == 2  # still the same token
    assert w.current.boundary == sum(w.encoded.segments[i] == 0 for i in keep)
    assert w.plot.note.get_text() == text("rows_not_renormalised", "en")


def test_attention_titles_follow_the_language(model, tokenizer):
    set_language("zh")
    zh = AttentionWidget(model, tokenizer, **TEXTS)  # lang=None: the edition's language
    en = AttentionWidget(model, tokenizer, "en", **TEXTS)
    assert zh.lang == "zh"
    assert zh.plot.ax_map.get_title() == "注意力权重：层 0、头 0"
    assert en.plot.ax_map.get_title() == "Attention weights, layer 0, head 0"
    assert zh.layer.description == "层" and en.layer.description == "layer"


# --- NSP ------------------------------------------------------------------------------------


def test_nsp_probability_is_the_softmax_of_the_nsp_logits(model, tokenizer):
    w = NSPWidget(model, tokenizer, "en", **TEXTS)
    for a, b in (("the crane flew", "over the river"), ("she went", "to the bank")):
        w.text_a.value, w.text_b.value = a, b
        _, ids, segments = reference_inputs(tokenizer, a, b)
        with torch.no_grad():
            logits = model(ids, segments)[2][0]
        assert w.is_next_probability == pytest.approx(logits.softmax(-1)[1].item(), rel=1e-6)
        assert [b.get_width() for b in w.plot.bars] == pytest.approx(w.probabilities.tolist())
        assert w.encoded.segments == segments[0].tolist()
    before = w.is_next_probability
    w.swap.click()
    assert (w.text_a.value, w.text_b.value) == ("to the bank", "she went")
    _, ids, segments = reference_inputs(tokenizer, "to the bank", "she went")
    with torch.no_grad():
        p = model(ids, segments)[2][0].softmax(-1)[1].item()
    assert w.is_next_probability == pytest.approx(p, rel=1e-6) != before


def test_nsp_without_sentence_b_explains_itself(model, tokenizer):
    w = NSPWidget(model, tokenizer, "zh", **TEXTS)
    w.text_b.value = ""
    assert w.message == text("need_b", "zh")
    assert w.image.layout.display == "none" and w.table.layout.display == "none"
    assert f"color:{ERROR_STYLE['color']}" in w.status.value


def test_a_tokenizer_the_widget_cannot_use_is_refused_up_front(tmp_path):
    (tmp_path / "vocab.txt").write_text("\n".join(HF_SPECIAL_TOKENS.as_list()), encoding="utf-8")
    no_words = WordPieceTokenizer.from_directory(tmp_path)  # every word is [UNK]
    with pytest.raises(ValueError, match=r"vocab has no ordinary words.*\[PAD\]"):
        MaskingWidget(no_words, "zh", text_a="the bird", text_b="")


def test_an_error_the_widget_did_not_foresee_is_shown_not_raised(tokenizer):
    w = MaskingWidget(tokenizer, "en", **TEXTS)
    w.tokenizer.vocab.word_ids, saved = [], w.tokenizer.vocab.word_ids  # broken behind its back
    try:
        w.refresh()
    finally:
        w.tokenizer.vocab.word_ids = saved
    assert w.message.startswith(text("error", "en", message="vocab has no ordinary words"))
    assert w.image.layout.display == "none"


def test_a_refusal_in_both_languages_is_shown_in_the_widget_language(tokenizer):
    w = MaskingWidget(tokenizer, "zh", **TEXTS)

    def action() -> list[str]:  # what a model shorter than the widget's input would raise
        raise InputError("error_too_long", seq_len=70, max_len=64)

    w._guarded(action, [w.image])
    assert w.message == "无法显示此输入：序列长度 70 超过了 max_len=64，即学到的位置嵌入的个数；" \
        "请把输入截断到至多 64 个词元"
    assert w.image.layout.display == "none"


# Texts a class types, on purpose or not: nothing, spaces, emoji only, special-token spellings,
# control and zero-width characters, a dollar amount, a page of one word, a page of characters.
HOSTILE_TEXTS = ["", "  ", "🙂🙂", "<unk>", "[MASK] <mask>", "<cls> <sep>", "\x00\x07",
                 "\u200b", "$5 at $10", "\t\n", "bank " * 200, "词" * 300, "日本語の文です。",
                 "\ud800"]


@pytest.mark.parametrize("lang", ["zh", "ja"])
@pytest.mark.parametrize("make", [
    lambda m, t, lang: InputRepresentationWidget(m, t, lang),
    lambda m, t, lang: MaskingWidget(t, lang),
    lambda m, t, lang: AttentionWidget(m, t, lang),
    lambda m, t, lang: NSPWidget(m, t, lang),
], ids=["input", "masking", "attention", "nsp"])
def test_what_a_class_types_is_answered_in_the_widget_language(model, tokenizer, make, lang):
    w = make(model, tokenizer, lang)
    for a in HOSTILE_TEXTS:
        for b in ["", "🙂", "河岸"]:
            w.text_a.value, w.text_b.value = a, b
            # Token spellings (<unk>) and argument names (max_len=40) may appear; an English
            # word of the library's may not.
            code = re.sub(r"<\w+>|\w+=\d+", "", w.message)
            english = re.findall(r"[A-Za-z]{3,}", code)
            assert not english, (a, b, w.message)


def test_special_tokens_typed_into_a_text_are_text(tokenizer):
    w = MaskingWidget(tokenizer, "en", text_a="the <mask> bird [CLS]", text_b="")
    assert f"color:{ERROR_STYLE['color']}" not in w.status.value  # a notice at most
    specials = tokenizer.vocab.structural_ids
    assert [t in specials for t in w.encoded.ids].count(True) == 2  # only <cls> ... <sep>


def _all_widgets(model, tokenizer, lang):
    return (InputRepresentationWidget(model, tokenizer, lang, **TEXTS),
            MaskingWidget(tokenizer, lang, **TEXTS),
            AttentionWidget(model, tokenizer, lang, **TEXTS),
            NSPWidget(model, tokenizer, lang, **TEXTS))


@pytest.mark.parametrize("fmt", ["png", "svg", "pdf"])
def test_every_widget_saves_the_figure_on_screen(model, tokenizer, tmp_path, fmt):
    for w in _all_widgets(model, tokenizer, "zh"):
        before = w.shown_figure().png()
        path = w.save(tmp_path / f"{w.name}.{fmt}", dpi=200)
        data = path.read_bytes()
        if fmt == "png":
            assert data[:8] == b"\x89PNG\r\n\x1a\n"
            width, height = struct.unpack(">II", data[16:24])  # the IHDR chunk
            size = w.shown_figure().figure.get_size_inches() * 200
            assert (width, height) == pytest.approx(tuple(size), abs=1)
        elif fmt == "svg":
            svg = data.decode("utf-8")
            assert "<svg" in svg
            # Text stays text (the Chinese labels can be edited), not glyph outlines.
            assert re.search(r"<text[^>]*>[^<]*[\u4e00-\u9fff]", svg), w.name
        else:
            assert data.startswith(b"%PDF") and b"FontFile2" in data  # TrueType embedded
        # The widget goes on drawing the same picture, and nothing process-wide changed.
        assert w.shown_figure().png() == before
        assert matplotlib.rcParams["svg.fonttype"] == "path"


def test_the_save_button_saves_into_the_current_folder(model, tokenizer, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    w = AttentionWidget(model, tokenizer, "zh", **TEXTS)
    w.view.value = "all"
    w.save_buttons["svg"].click()
    assert (tmp_path / "attention.svg").is_file()
    assert w.message == text("saved", "zh", path="attention.svg")


def test_the_tally_is_saved_once_it_is_on_screen(tokenizer, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    w = MaskingWidget(tokenizer, "zh", **TEXTS)
    assert w.tally_save.layout.display == "none"
    with pytest.raises(InputNotice, match=text("save_no_tally", "zh")):
        w.save(tmp_path / "tally.png", figure="tally")
    w.tally_button.click()
    assert w.tally_save.layout.display is None
    for fmt in ("png", "svg", "pdf"):
        data = w.save(tmp_path / f"tally.{fmt}", figure="tally").read_bytes()
        assert data[:4] in (b"\x89PNG", b"<?xm", b"%PDF")
    svg = (tmp_path / "tally.svg").read_text("utf-8")
    assert text("tally_selection_title", "zh") in svg  # the tally's own title, as text
    w.tally_save.children[0].click()  # its PNG button
    assert w.message == text("saved", "zh", path="masking-tally.png")
    assert (tmp_path / "masking-tally.png").is_file()
    w.save_buttons["png"].click()  # the chips' own
    assert (tmp_path / "masking.png").is_file()
    w.mask_ratio.value = 0.3  # a new draw: the old tally no longer applies
    assert w.tally_save.layout.display == "none"
    w.tally_save.children[1].click()
    assert w.message == text("save_no_tally", "zh")
    with pytest.raises(ValueError, match=r"figure must be one of \['chips', 'tally'\]; got 'x'"):
        w.save(tmp_path / "x.png", figure="x")


def test_a_saved_png_is_the_picture_on_screen_at_a_higher_resolution(model, tokenizer,
                                                                      tmp_path):
    w = AttentionWidget(model, tokenizer, "en", **TEXTS)
    for view, change in (("querykey", ("query", 3)), ("querykey", ("head", 1)),
                         ("querykey", ("temperature", 1.0)), ("model", ("layer", 1)),
                         ("all", ("layer", 0)), ("evidence", ("head", 0))):
        w.view.value = view
        getattr(w, change[0]).value = change[1]
        plot = w.shown_figure()
        on_screen = pixels(plot.png())
        same = pixels(w.save(tmp_path / "same.png", dpi=int(plot.figure.dpi)).read_bytes())
        assert same.shape == on_screen.shape
        differ = np.abs(same - on_screen).max(-1) > 8  # stamped titles: a few levels apart
        assert differ.mean() < 0.001, view
        data = w.save(tmp_path / "slide.png").read_bytes()  # at SAVE_DPI, 120
        width, height = struct.unpack(">II", data[16:24])
        inches = plot.figure.get_size_inches()
        assert (width, height) == pytest.approx(tuple(inches * SAVE_DPI), abs=1)
        assert data[37:41] == b"pHYs"  # the file says 120 dpi: 4724 pixels per metre
        assert struct.unpack(">IIB", data[41:50]) == (4724, 4724, 1)
        assert plot.figure.dpi == 90 and pixels(plot.png()).shape == on_screen.shape


def pixels(png: bytes) -> np.ndarray:
    return np.asarray(PIL.Image.open(io.BytesIO(png)).convert("RGB"), dtype=int)


@pytest.mark.parametrize(("path", "dpi", "message"), [
    ("figure.jpg", 300, r"path must end in one of \['.png', '.svg', '.pdf'\]; got '.*figure.jpg'"),
    ("figure", 300, "path must end in one of"),
    ("figure.png", 10, r"dpi must be an integer in \[50, 1200\]; got 10"),
    ("figure.png", 300.0, "dpi must be an integer"),
])
def test_bad_save_arguments_are_named(model, tokenizer, tmp_path, path, dpi, message):
    w = NSPWidget(model, tokenizer, "en", **TEXTS)
    with pytest.raises(ValueError, match=message):
        w.save(tmp_path / path, dpi=dpi)


def test_masking_widget_with_a_model_shows_its_guesses(tokenizer, model):
    w = MaskingWidget(tokenizer, "zh", model=model, top_k=3, **TEXTS)
    assert [g.position for g in w.guesses] == w.masked.positions
    assert all(len(g.tokens) == 3 for g in w.guesses)
    assert text("model_guesses", "zh") in w.targets.value
    found = sum(g.rank is not None for g in w.guesses)
    assert text("guesses_found", "zh", found=found, total=len(w.guesses), k=3) in w.targets.value
    assert w.targets.value.count("✓") == found
    before = w.guesses
    w.resample.click()  # a new draw, new guesses
    assert w.guesses != before
    assert MaskingWidget(tokenizer, "en", **TEXTS).guesses is None  # no model, no guesses
    with pytest.raises(ValueError, match="top_k must be a positive integer"):
        MaskingWidget(tokenizer, "en", model=model, top_k=0)


@pytest.mark.parametrize("cls", [InputRepresentationWidget, AttentionWidget, NSPWidget])
@pytest.mark.parametrize(("texts", "message"), [
    ({"text_a": 123}, "text_a must be a string; got int 123"),
    ({"text_b": ["the", "cat"]}, r"text_b must be a string; got list \['the', 'cat'\]"),
])
def test_texts_that_are_not_strings_are_named(model, tokenizer, cls, texts, message):
    with pytest.raises(ValueError, match=message):
        cls(model, tokenizer, "en", **texts)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"text_a": 5}, "text_a must be a string; got int 5"),
    ({"max_len": 0}, r"max_len must be an integer in \[5, 512\] \(<cls> A <sep> B <sep> needs"),
    ({"max_len": 1.5}, r"max_len must be an integer in \[5, 512\]"),
    ({"max_len": -3}, r"max_len must be an integer in \[5, 512\]"),
    ({"max_len": 10**6}, r"max_len must be an integer in \[5, 512\]"),
    ({"seed": -1}, r"seed must be an integer in \[0, 2147483647\]; got -1"),
    ({"seed": 1.5}, r"seed must be an integer in \[0, 2147483647\]; got 1.5"),
    ({"seed": "0"}, r"seed must be an integer in \[0, 2147483647\]; got '0'"),
])
def test_bad_masking_widget_arguments_are_named(tokenizer, kwargs, message):
    with pytest.raises(ValueError, match=message):
        MaskingWidget(tokenizer, "en", **kwargs)


def test_the_shortest_masking_input_still_draws(tokenizer):
    w = MaskingWidget(tokenizer, "en", max_len=5, **TEXTS)
    assert len(w.encoded.tokens) == 5 and len(w.chips.top_texts) == 5


def test_no_widget_changes_matplotlib_settings(model, tokenizer):
    before = dict(matplotlib.rcParams)
    AttentionWidget(model, tokenizer, "zh", **TEXTS).view.value = "all"
    MaskingWidget(tokenizer, "zh", **TEXTS).tally_button.click()
    assert dict(matplotlib.rcParams) == before


@pytest.fixture
def encoded(tokenizer) -> EncodedInput:
    return encode_pair(tokenizer, *TEXTS.values())


@pytest.mark.parametrize(("samples", "seed", "message"), [
    (0, 0, r"samples must be an integer in \[1, 100000\] \(draws; each takes"),
    (2.5, 0, r"samples must be an integer in \[1, 100000\]"),
    (True, 0, r"samples must be an integer in \[1, 100000\] .*; got True"),
    (-1, 0, r"samples must be an integer in \[1, 100000\]"),
    (10**8, 0, r"samples must be an integer in \[1, 100000\] .*; got 100000000"),
    (10, 1.5, r"seed must be an integer in \[0, 2\*\*63 - 1\]; got 1.5"),
    (10, -1, r"seed must be an integer in \[0, 2\*\*63 - 1\]; got -1"),
])
def test_bad_tally_arguments_are_named(tokenizer, encoded, samples, seed, message):
    with pytest.raises(ValueError, match=message):
        tally_masks(encoded, tokenizer.vocab, 0.15, samples, seed)


def test_tables_render(encoded):
    tokens = encoded.tokens
    masked = MaskedTokens([0] * len(tokens), [1], [0], [Fate.MASK], len(tokens) - 3)
    assert "<b>" in tables.targets_table_html(tokens, masked, tokens, "en")
    assert "crane" in tables.token_table_html(encoded, None, None)  # no unknown token to mark


# --- a lone surrogate, and saves that cannot be written --------------------------------------


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_lone_surrogate_typed_into_a_text_box_gets_a_notice(model, tokenizer, lang):
    """Before: TypeError: TextInputSequence must be str, out of every widget's callback."""
    for w in _all_widgets(model, tokenizer, lang):
        for box, label in ((w.text_a, "sentence_a"), (w.text_b, "sentence_b")):
            before = box.value
            box.value = "bank \ud800 river"
            assert w.message == text("lone_surrogate", lang, box=text(label, lang),
                                     code="\\ud800"), w.name
            assert f"color:{ERROR_STYLE['color']}" in w.status.value
            box.value = before
            assert w.message == ""


def test_a_surrogate_given_when_built_is_a_notice_too(model, tokenizer):
    w = NSPWidget(model, tokenizer, "zh", text_a="\udfff", text_b="河岸")
    assert w.message == text("lone_surrogate", "zh", box=text("sentence_a", "zh"),
                             code="\\udfff")


def test_a_save_that_cannot_be_written_is_said_and_keeps_the_old_file(model, tokenizer,
                                                                     tmp_path, monkeypatch):
    """Before: the button said nothing (an OSError in the callback), and an interrupted save
    left a truncated file where the good one was."""
    monkeypatch.chdir(tmp_path)
    w = AttentionWidget(model, tokenizer, "zh", **TEXTS)
    w.save_buttons["png"].click()
    good = (tmp_path / "attention.png").read_bytes()
    real = Path.write_bytes

    def disk_full(path, data):  # half the file, then the disk is full
        real(path, data[:len(data) // 2])
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "write_bytes", disk_full)
    w.head.value = 1  # another picture, which cannot be saved
    w.save_buttons["png"].click()
    assert w.message == text("save_failed", "zh", path="attention.png",
                             reason=text("save_disk_full", "zh"))
    assert (tmp_path / "attention.png").read_bytes() == good
    assert sorted(p.name for p in tmp_path.iterdir()) == ["attention.png"]  # no leftovers
    monkeypatch.setattr(Path, "write_bytes", real)
    (tmp_path / "attention.svg").mkdir()  # a folder where the file should be
    w.save_buttons["svg"].click()
    assert w.message == text("save_failed", "zh", path="attention.svg",
                             reason=text("save_is_folder", "zh"))
    assert w.image.layout.display is None  # the figure stays on screen


def test_a_read_only_file_is_kept_and_any_name_the_folder_allows_is_saved(model, tokenizer,
                                                                          tmp_path):
    """Before: a read-only (0444) file was replaced by a 0644 one; a name of 250 characters
    was refused (the temporary name beside it was longer), one of 304 raised a bare OSError."""
    w = NSPWidget(model, tokenizer, "zh", **TEXTS)
    kept = tmp_path / "kept.png"
    kept.write_bytes(b"mine")
    kept.chmod(0o444)  # root may write it anyway: the mode says it is not to be replaced
    with pytest.raises(SaveError) as refused:
        w.save(kept)
    assert refused.value.message("zh") == text("save_failed", "zh", path=str(kept),
                                               reason=text("save_read_only", "zh"))
    assert kept.read_bytes() == b"mine" and stat.S_IMODE(kept.stat().st_mode) == 0o444
    limit = os.pathconf(tmp_path, "PC_NAME_MAX")
    longest = tmp_path / ("a" * (limit - len(".png")) + ".png")
    assert w.save(longest) == longest and longest.read_bytes().startswith(b"\x89PNG")
    with pytest.raises(SaveError, match="the file name is longer than the file system allows"):
        w.save(tmp_path / ("a" * (limit + 45) + ".png"))
    assert sorted(tmp_path.iterdir()) == sorted([kept, longest])  # nothing else written


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_save_into_a_folder_that_is_missing_or_read_only_is_refused_clearly(
        model, tokenizer, tmp_path, monkeypatch, lang):
    w = NSPWidget(model, tokenizer, lang, **TEXTS)
    missing = tmp_path / "nowhere" / "nsp.png"
    with pytest.raises(ValueError, match="Could not save the figure as .*nowhere.*: its folder "
                                         "does not exist"):
        w.save(missing)
    for bad in (42, b"nsp.png"):
        with pytest.raises(ValueError, match="path must be a path"):
            w.save(bad)

    real_open = os.open

    def read_only(path, flags, *args, **kwargs):  # as in a folder the reader may not write in
        if flags & os.O_CREAT and Path(path).parent.resolve() == tmp_path.resolve():
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(os, "open", read_only)  # tests run as root, who may write anywhere
    w.save_buttons["pdf"].click()
    assert w.message == text("save_failed", lang, path=f"{w.name}.pdf",
                             reason=text("save_no_permission", lang))
    assert list(tmp_path.iterdir()) == []

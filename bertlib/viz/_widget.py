"""Private plumbing shared by the widgets: text boxes, the status line, errors shown in the
reader's language, saving, and the static picture beside the live widget."""

from __future__ import annotations

import contextlib
import html
import io
import re
import threading
from collections.abc import Callable
from pathlib import Path

import ipywidgets as widgets
import numpy as np
from PIL import Image

from bertlib.inputs import EmptyTextError, EncodedInput, check_model_and_tokenizer, encode_pair
from bertlib.model import BERTModel
from bertlib.support.checks import InputError, check_str
from bertlib.support.i18n import resolve_language, text
from bertlib.text.tokenizer import WordPieceTokenizer
from bertlib.viz._render import encode_png
from bertlib.viz.live import SAVE_DPI, SAVE_FORMATS, LiveFigure, SaveError
from bertlib.viz.modelview import MEAN_HEAD
from bertlib.viz.style import DPI, new_figure

# Consecutive sentences of one story in bertlib/assets/small_corpus: the small model knows their
# words, and NSP tells their order (P(IsNext) 0.80, swapped 0.03 in English; 0.82, 0.03 in zh).
DEFAULT_TEXTS = {
    "en": ("Then Peter made a great play and scored.",
           "When the final whistle blew, his team had won."),
    "zh": ("小明从小就喜欢打篮球。", "星期六，球队有一场重要的比赛。"),
}
# The model knows no Japanese (kana are <unk> to it): the Japanese edition starts from English.
DEFAULT_TEXTS["ja"] = DEFAULT_TEXTS["en"]


# The status boxes' own colours read the same in light and dark themes (WCAG AA asks 4.5:1):
# notices #5C3B00 on #FFF3D6 9.15:1, errors #8B0000 on #FDE8E8 8.53:1.
NOTICE_STYLE = {"background": "#FFF3D6", "color": "#5C3B00", "border": "#E69F00"}
ERROR_STYLE = {"background": "#FDE8E8", "color": "#8B0000", "border": "#B00020"}


# Half of a UTF-16 pair, which a browser can send alone (a paste cut inside an emoji).
SURROGATE = re.compile("[\ud800-\udfff]")


class InputNotice(ValueError):
    """Bad input the widget explains in the reader's language."""


# A selected toggle button (a view, a classifier) in bold on the figures' blue, not in
# JupyterLab's shade of grey a step darker (1.6:1 from the others): white on #0072B2 (5.2:1) in
# the light theme, black on #9AD4F5 (13.1:1) in the dark one, each 3:1 or more from that
# theme's grey buttons, as WCAG asks of a state (the browser test's FAINT_TOGGLES measures it).
# The rule lives in a hidden <style> of the widget's own, for its buttons alone.
TOGGLES = "bertlib-toggles"
TOGGLE_CSS = (f"<style>.{TOGGLES} .widget-toggle-button.mod-active {{background: #0072B2; "
              "color: #FFFFFF; font-weight: bold} "
              f"body[data-jp-theme-light='false'] .{TOGGLES} .widget-toggle-button.mod-active "
              "{background: #9AD4F5; color: #000000}</style>")


def toggle_buttons(**kwargs) -> widgets.ToggleButtons:
    """ToggleButtons whose selected button reads as selected (see :func:`toggle_style`)."""
    buttons = widgets.ToggleButtons(**kwargs)
    buttons.add_class(TOGGLES)
    return buttons


def toggle_style() -> widgets.HTML:
    """The rule that inverts a selected toggle button, to put in the widget beside them."""
    return widgets.HTML(TOGGLE_CSS, layout=widgets.Layout(display="none"))


# A row of controls wraps where the output area is too narrow for it, rather than squeezing them.
WRAP = {"flex_flow": "row wrap"}


def control(cls: type, key: str, lang: str, width: str, min_width: str | None = None,
            **kwargs) -> widgets.Widget:
    """A ``cls`` labelled ``text(key, lang)``, the label as wide as it needs."""
    return cls(description=text(key, lang), style={"description_width": "initial"},
               layout=widgets.Layout(width=width, min_width=min_width), **kwargs)


def text_box(key: str, value: str, lang: str) -> widgets.Text:
    return control(widgets.Text, key, lang, "98%", value=value, continuous_update=False)


def text_row(box_a: widgets.Text, box_b: widgets.Text) -> widgets.HBox:
    """Sentence A and B side by side: the figure and its controls fit a projector's window."""
    for box in (box_a, box_b):
        box.layout.width = "50%"
    return widgets.HBox([box_a, box_b], layout=widgets.Layout(width="98%"))


# The notebook's visible area is the window's height less JupyterLab's bars (121 px of a
# 720-pixel window): a figure box is at most that less its widget's controls above it.
LAB_BARS = 121
FIGURE_ROOM = 140  # px: the text boxes, a row of controls and two notices
TABLE_HEIGHT = 120  # px: two lines of a token table (bertlib.viz.tables), and a little


def figure_height(controls: int = FIGURE_ROOM) -> str:
    """The CSS max-height of a figure under ``controls`` px of controls: the controls and the
    figure box on screen at once, at any window height."""
    return f"calc(100vh - {LAB_BARS + controls}px)"


def captioned(png: bytes, caption: str, lang: str) -> bytes:
    """``png`` under a line of ``caption`` (11 points, 14 px), white like the figures."""
    image = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))
    fig = new_figure(image.shape[1] / DPI, 0.3, lang)
    fig.text(0.1 / fig.get_figwidth(), 0.5, caption, fontsize=11, style="italic",
             color="#333333", va="center")
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI)
    line = np.asarray(Image.open(buffer).convert("RGB"))[:, : image.shape[1]]
    return encode_png(np.vstack([line, image]))


class FigureView(widgets.Box):
    """A figure's PNG (``value``) at its drawn size, so its text is, in a box at most
    ``max_height`` tall (CSS): a taller figure (a long input's) scrolls inside it, under the
    controls, which stay on screen."""

    def __init__(self, max_height: str = figure_height()):
        self.image = widgets.Image(format="png", layout=widgets.Layout(
            max_width="none", width="auto", height="auto", flex="0 0 auto"))
        super().__init__([self.image], layout=widgets.Layout(
            overflow="auto", max_width="100%", max_height=max_height,
            align_items="flex-start"))

    @property
    def value(self) -> bytes:
        return self.image.value

    def show(self, plot: LiveFigure, *args) -> None:  # plot.update(*args), shown
        plot.update(*args)
        self.image.value = plot.png()


class Widget:
    """The language, a status line, errors shown instead of raised, saving a figure."""

    ui: widgets.Widget
    name = "figure"  # what a saved figure's file is called
    empty_text = "empty_text"  # the key of what an empty sentence A is answered with

    def _figures(self) -> dict[str, tuple[LiveFigure, widgets.Widget]]:
        """The figures by name, the main one first, each with its output."""
        return {self.name: (self.plot, self.image)}

    def _hidden(self, figure: str) -> str:
        return text("save_hidden", self.lang)

    def shown_figure(self, figure: str | None = None) -> LiveFigure:
        """The main figure, or the one named ``figure``; InputNotice when it is hidden."""
        figures = self._figures()
        name = next(iter(figures)) if figure is None else figure
        if name not in figures:
            raise ValueError(f"figure must be one of {list(figures)}; got {figure!r:.80}")
        plot, output = figures[name]
        if output.layout.display == "none":
            raise InputNotice(self._hidden(name))
        return plot

    def save(self, path: str | Path | None = None, *, dpi: int = SAVE_DPI,
             figure: str | None = None) -> Path:
        """Save :meth:`shown_figure` by ``path``'s suffix (default ``<name>[-<figure>].png``)."""
        with self._lock:
            plot = self.shown_figure(figure)
            return plot.save(f"{self._stem(figure)}.png" if path is None else path, dpi=dpi)

    def _stem(self, figure: str | None) -> str:
        main = next(iter(self._figures()))
        return self.name if figure in (None, main) else f"{self.name}-{figure}"

    def _save_controls(self, figure: str | None = None) -> widgets.HBox:
        """A save button per format, as wide as its label, never "Save P…" (default 148 px)."""
        buttons = {fmt: widgets.Button(description=text("save_as", self.lang, fmt=fmt.upper()),
                                       icon="download", layout=widgets.Layout(width="auto"),
                                       tooltip=text("save_tooltip", self.lang, fmt=fmt.upper()))
                   for fmt in SAVE_FORMATS}
        for fmt, button in buttons.items():
            button.on_click(lambda _, fmt=fmt: self._guarded(
                lambda: self._save_as(f"{self._stem(figure)}.{fmt}", figure), []))
        if figure is None:
            self.save_buttons = buttons
        return widgets.HBox(list(buttons.values()))

    def _save_as(self, path: str, figure: str | None) -> list[str]:
        """Save, and say so under the notices, in place of an earlier "saved"."""
        try:
            saved = text("saved", self.lang, path=self.save(path, figure=figure))
        except SaveError as err:  # said as it is, not as an input that cannot be shown
            raise InputNotice(err.message(self.lang)) from None
        kept = [m for m in self._notices_shown if m != self._saved]
        self._saved = saved
        return [*kept, saved]

    def __init__(self, lang: str | None):
        self.lang = resolve_language(lang)
        self.status = widgets.HTML()
        self.message = ""
        self.encoded: EncodedInput | None = None  # the text behind what is drawn
        self._notices_shown: list[str] = []  # the notices on screen (none while an error is)
        self._saved = ""  # the last "saved" line
        # JupyterLab may run two callbacks at once on two threads (a redraw while Save SVG
        # swapped the canvas); re-entrant: setting a control runs its callback inside.
        self._lock = threading.RLock()
        self._busy = False  # while controls are reset (_quiet): their events draw nothing

    @contextlib.contextmanager
    def _quiet(self):  # set controls without their callbacks redrawing
        self._busy = True
        try:
            yield
        finally:
            self._busy = False

    def _text_boxes(self, text_a: str | None,
                    text_b: str | None) -> tuple[widgets.Text, widgets.Text]:
        for name, value in (("text_a", text_a), ("text_b", text_b)):
            if value is not None:
                check_str(name, value)
        default_a, default_b = DEFAULT_TEXTS[self.lang]
        return (text_box("sentence_a", default_a if text_a is None else text_a, self.lang),
                text_box("sentence_b", default_b if text_b is None else text_b, self.lang))

    def _encode(self, tokenizer: WordPieceTokenizer, max_len: int, *, require_b: bool = False,
                unknown: str = "unknown") -> tuple[EncodedInput, list[str]]:
        """The two boxes' :func:`encode_pair`, with notices of truncation and unknown words."""
        for box in (self.text_a, self.text_b):
            if (half := SURROGATE.search(box.value)) is not None:
                raise InputNotice(text("lone_surrogate", self.lang, box=box.description,
                                       code=ascii(half.group())[1:-1]))
        try:
            enc = encode_pair(tokenizer, self.text_a.value, self.text_b.value, max_len,
                              require_b=require_b)
        except EmptyTextError as err:
            raise InputNotice(text(self.empty_text if err.which == "a" else "need_b",
                                   self.lang)) from None
        notices = []
        if enc.truncated:
            notices.append(text("truncated", self.lang, total=enc.total, kept=max_len,
                                max_len=max_len))
        if enc.unknown:
            notices.append(text(unknown, self.lang, count=enc.unknown,
                                unk=tokenizer.vocab.specials.unk))
        return enc, notices

    def _repr_mimebundle_(self, **kwargs):
        # A picture beside the live widget, for GitHub, nbviewer and unexecuted notebooks,
        # under a line that says running the cell brings the controls.
        bundle = self.ui._repr_mimebundle_(**kwargs)
        picture = self.picture()
        if picture is not None:
            bundle["image/png"] = captioned(picture, text("run_for_controls", self.lang),
                                            self.lang)
        return bundle

    def picture(self) -> bytes | None:
        """The figures on screen, one under the other, as one PNG (None: none is)."""
        with self._lock:
            shown = [plot.png() for plot, output in self._figures().values()
                     if output.layout.display != "none"]
        if len(shown) < 2:
            return shown[0] if shown else None
        images = [np.asarray(Image.open(io.BytesIO(png)).convert("RGB")) for png in shown]
        width = max(i.shape[1] for i in images)  # the narrower ones padded white on the right
        return encode_png(np.vstack([np.pad(i, ((0, 0), (0, width - i.shape[1]), (0, 0)),
                                            constant_values=255) for i in images]))

    def _show(self, messages: list[str], *, error: bool = False) -> None:
        self.message = "\n".join(messages)
        self._notices_shown = [] if error else list(messages)
        style = ERROR_STYLE if error else NOTICE_STYLE
        self.status.value = "".join(
            f"<div style='background:{style['background']};color:{style['color']};"
            f"border-left:4px solid {style['border']};padding:3px 8px;margin:2px 0;"
            f"font-size:14px;line-height:1.4;white-space:normal'>{html.escape(m)}</div>"
            for m in messages)

    def _guarded(self, action: Callable[[], list[str]], outputs: list[widgets.Widget]) -> None:
        """Run ``action`` (it returns notices) under the lock; on ValueError hide ``outputs``
        and show the message, never a traceback. Muted while controls are reset (_quiet)."""
        with self._lock:
            if self._busy:
                return
            try:
                messages, error = action(), False
            except InputNotice as err:
                messages, error = [str(err)], True
            except InputError as err:
                messages, error = [text("error", self.lang, message=err.message(self.lang))], True
            except ValueError as err:  # a library error nobody foresaw here: English, as raised
                messages, error = [text("error", self.lang, message=str(err))], True
            for w in outputs:
                w.layout.display = "none" if error else None
            self._show(messages, error=error)


class ModelWidget(Widget):
    """Runs ``model`` on the pair in its two text boxes, again (:meth:`refresh`) on a change."""

    def __init__(self, model: BERTModel, tokenizer: WordPieceTokenizer, lang: str | None,
                 text_a: str | None, text_b: str | None):
        super().__init__(lang)
        check_model_and_tokenizer(model, tokenizer)
        self.model, self.tokenizer = model, tokenizer
        self._notices: list[str] = []  # about the current text, kept across redraws
        self.text_a, self.text_b = self._text_boxes(text_a, text_b)
        for box in (self.text_a, self.text_b):
            box.observe(lambda _: self.refresh(), names="value")

    def _table_and_figure(self, plot: LiveFigure, *controls: widgets.Widget) -> None:
        """The text boxes, ``controls``, the token table and ``plot``'s figure, drawn."""
        # The table two lines of tokens tall at most, a long input's further lines scrolling
        # inside it: with the text boxes and two notices, the figure still has 369 px of a
        # 720-pixel window.
        self.table = widgets.HTML(layout=widgets.Layout(max_height=f"{TABLE_HEIGHT}px",
                                                        overflow="auto"))
        self.image, self.plot = FigureView(figure_height(TABLE_HEIGHT + 110)), plot
        self.ui = widgets.VBox([text_row(self.text_a, self.text_b), *controls, self.status,
                                self.table, self.image, self._save_controls()])
        self.refresh()

    def refresh(self) -> None:  # the table and figure of the subclass' _draw
        self._guarded(self._draw, [self.table, self.image])

    def _layer_head(self, widths: tuple[str, str]) -> tuple[widgets.Dropdown, widgets.Dropdown]:
        """The layer and head choices (the head's last: the mean)."""
        cfg = self.model.config
        layer = widgets.Dropdown(options=list(range(cfg.num_blks)), value=0,
                                 description=text("layer", self.lang),
                                 layout=widgets.Layout(width=widths[0]))
        head = widgets.Dropdown(
            options=[*((str(h), h) for h in range(cfg.num_heads)),
                     (text("mean_heads", self.lang), MEAN_HEAD)],
            value=0, description=text("head", self.lang), layout=widgets.Layout(width=widths[1]))
        return layer, head

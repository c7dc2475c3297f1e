"""End-to-end: every notebook of the three editions, run in JupyterLab in headless Chromium.

Each notebook runs once per `make test`, here. Right after its run-all, before any widget is
touched, every code cell's outputs are compared with the committed notebook's as strict nbval
compares them (tests/e2e/nbval_compare.py: nbval's own functions, the sanitize rules of
notebooks/sanitize.cfg); a mismatch names the notebook and nbval's cell number and shows the
committed output against this run's, both sanitized. As for nbval in `make test-all`, the lab
serves copies of the editions in a temporary folder outside the repository, named edition-1,
edition-2 and edition-3, after no language, and each kernel starts in its notebook's folder: a
notebook that needs the repository's layout or guesses its language from its folder fails.

Then what a student sees: no error or warning output, no JavaScript error, every widget
rendered and reacting to its controls, and (Chinese and Japanese editions) CJK markdown drawn
with the CJK font the project ships, not tofu boxes.

Every widget's wording (control labels, tooltips, dropdown options, tables, status lines) is in
the edition's language: no Han characters in English, no English words in Chinese; the tokens
a widget shows are vocabulary items and exempt. Beyond operating the first control of each kind,
the attention and masking widgets are driven by their labels (from bertlib/strings.json): the
attention widget's model view (layer, head), step-by-step view (query, head, layer, padding,
the temperature, down to τ = 1, where the figure must say the scores are unscaled, and the
notice for the mean of heads) and evidence view (masked tokens, head), the masking widget's
fill-mask guesses across a resample, and the time-lapse widget's play button and step slider.
Last, a sentence of about 60 tokens in the edition's language (LONG_SENTENCES) is typed into
every widget's sentence box, and the widget measured again (every view of the attention widget)
for what a long input can break: nothing wider than the notebook, controls and figure within
the visible area, no text under 10 px, no cut label (see problems_at_long_input).
Each of these figures is saved as SVG with its button: the status line must say so in the
edition's language, the file must be on the server, and every text in the figure must be in
the edition's language. 03_encoder, 08_evaluation and 09_real_bert must have an attention
widget (08's with its evidence view), 04_masked_lm a masking widget with the model's guesses,
07_watching_it_learn a time-lapse widget.

Every picture drawn and legible on a classroom projector: in a 1280×720 window with the file
browser open, in JupyterLab's light theme and again in its dark one, as the run left the outputs
and in each view of the attention widget (problems_on_page): no figure shown as its repr
("<Figure size ...>", also in the outputs as saved, before the run); nothing beyond its output's
right edge, nothing scrolling sideways; no widget whose controls and main figure are taller than
the notebook's visible area; no text under 10 px, no figure drawn narrower than 0.97 of its own
width; no button, label, dropdown or progress description cut, nor a one-word one broken over
lines; every slider's track at least 80 × 4 px; every text at WCAG AA contrast (4.5:1, 3:1 when
large) with what it is drawn on; a selected toggle button at 3:1 from the others. Each failure
names the notebook, the theme, the output (a widget by its number, cell, first label and view)
and the element with its text, and what was measured.

A notebook that fails leaves a screenshot of itself in test-artifacts/e2e/ (every notebook
does with E2E_SCREENSHOTS=1: a tall page takes seconds to capture). Needs a Chromium: run
`.ci/install-browser` (Debian's, or Playwright's elsewhere).
"""

from __future__ import annotations

import contextlib
import functools
import html
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import nbformat
import pytest
from nbval_compare import mismatches
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Locator, Page, sync_playwright

from bertlib.support import i18n
from bertlib.viz.fonts import cjk_font_path
from bertlib.viz.timelapse import TOKEN_GID

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK_ROOT = REPO / "notebooks"
EDITIONS = ("en", "zh", "ja")
# The folders the lab serves the editions from: named after no language (see the docstring).
LAB_FOLDERS = {"en": "edition-1", "zh": "edition-2", "ja": "edition-3"}
ARTIFACTS = REPO / "test-artifacts" / "e2e"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",  # we run as root, where Chromium's sandbox cannot start
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
RUN_TIMEOUT_MS = 300_000  # generous: a notebook may train a small model
# A laptop on a classroom projector; JupyterLab's file browser stays open beside the notebook.
VIEWPORT = {"width": 1280, "height": 720}
CHANGE_TIMEOUT_MS = 15_000  # one widget callback, including drawing a figure
# The highest numbers first, whose kernels run longest (06, 09, 10 train or load models): handed
# out in this order (`--dist load`), the two workers end on short notebooks, not one on 10 while
# the other waits.
NOTEBOOKS = sorted(
    (p.relative_to(NOTEBOOK_ROOT).as_posix()
     for edition in EDITIONS
     for p in (NOTEBOOK_ROOT / edition).glob("*.ipynb")),
    key=lambda path: (-int(path.split("/")[1][:2]), path),
)

STDERR = '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'
# The plain-text repr ipywidgets falls back to when the front end cannot draw a widget.
WIDGET_REPR = re.compile(r"^\w+\((children|value|options|description|layout)=")
USES_WIDGETS = re.compile(r"\bipywidgets\b|\w+Widget\(")
KERNEL_ERROR = re.compile(r'"msg_type":\s*"error"')
# Notebooks that must show a widget the test drives by its labels, and which (see
# problems_in_widgets): the widgets each chapter is about.
MUST_DRIVE = {"03_encoder": {"attention"}, "04_masked_lm": {"fill-mask"},
              "07_watching_it_learn": {"time-lapse"}, "08_evaluation": {"attention", "evidence"},
              "09_real_bert": {"attention"}}

# The edition's language. Tokens are vocabulary items, shown as they are in any edition (the
# small model's vocabulary has both languages; 09 runs an English model in both editions).
LANGUAGE = {"en": "English", "zh": "Chinese", "ja": "Japanese"}
# Han characters, and the CJK punctuation a Chinese string brings along (，。：（）).
CHINESE = re.compile(
    "[\u2e80-\u2fdf\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef"
    "\U00020000-\U0003134f]")
# What Chinese text legitimately writes in Latin letters: special tokens, code names with their
# value, the file a figure was saved to, two functions spelt as formulas and code spell them
# (strings.json: "3. softmax：权重 w", "LayerNorm(求和)"), and a model's name, which Chinese
# writes as it is (10's classifier buttons: "MiniLM（预训练）"). Single letters (the formulas'
# q, k, d, w; sentence A and B) and acronyms (PNG, MLM, BERT) are not words to translate either.
NOT_ENGLISH = re.compile(
    r"<\w+>|\[[A-Z]+\]"  # <cls>, [SEP]
    r"|\b[A-Za-z_]\w*=\S*"  # max_len=64
    r"|\b[\w-]+\.(?:png|svg|pdf)\b"  # attention.svg
    r"|\b(?:softmax|LayerNorm|MiniLM)\b",
    re.ASCII)
LATIN_WORD = re.compile(r"[A-Za-z]+")
MATH = re.compile(r"(?<!\\)\$.*(?<!\\)\$")  # a mathtext: its TeX commands are no words
TEX_COMMAND = re.compile(r"\\(?:[A-Za-z]+|.)")
QUOTED = re.compile("[“「]([^”」]*)[”」]")  # “token” or 「token」, as a title quotes a token
# Table columns (header over the cells) and rows (header left of them) that hold tokens, by
# their header's strings.json key. The fill-mask column's cells hold the model's guesses,
# "token 0.37 · token 0.15 ✓ · ...", the original token marked (tokens hold no spaces).
TOKEN_HEADERS = ("token", "target_original", "target_input")
# Dropdowns whose options ("3: token") pick a token of the text, by their labels' keys.
TOKEN_DROPDOWNS = ("query_token", "masked_tokens", "tl_mask_a", "tl_mask_b")
# A long sentence, as a learner pastes one, in each edition's language: 58, 57 and 55 tokens
# of the small model's WordPiece (the Japanese one mostly <unk>). Typed into a widget's first
# sentence box, with sentence B it fills the 64 positions the small model reads (see
# problems_at_long_input).
LONG_SENTENCES = {
    "en": "On Saturday morning the whole family went to the station early, because my "
          "grandmother wanted to take the first train to the city and visit the old market near "
          "the river before the crowds arrived, and we came home with fresh bread and fruit.",
    "zh": "星期六早上，我们全家很早就去了火车站，因为奶奶想坐第一班火车进城，"
          "在人多之前去河边的老市场买一些新鲜的水果和蔬菜。",
    "ja": "土曜日の朝、家族みんなで早く駅へ行きました。祖母が始発の電車で町へ行き、"
          "混む前に川の近くの古い市場で新鮮な果物と野菜を買いたかったからです。",
}
SENTENCE_BOXES = ("sentence_a", "ft_sentence")  # the first sentence box's label, by its key
GUESS = re.compile(r"(\S+) ([01]\.\d\d)( ✓)?")
GUESSES = re.compile(f"{GUESS.pattern}(?: · {GUESS.pattern})*")
SVG_TEXT = "{http://www.w3.org/2000/svg}text"

# JavaScript run in the page. `window.jupyterapp` exists because of --expose-app-in-browser.
HELPERS = """
const findNotebook = (path) => window.jupyterapp && Array.from(
  window.jupyterapp.shell.widgets('main')).find((w) => w.context && w.context.path === path);
const kernelOf = (nb) => nb && nb.sessionContext.session && nb.sessionContext.session.kernel;
// The output areas the notebook model says are widget views, in order.
const widgetAreas = (path) => findNotebook(path).content.widgets
  .filter((cell) => cell.model.type === 'code')
  .flatMap((cell) => Array.from({ length: cell.model.outputs.length }, (_, i) => [
    cell.model.outputs.get(i).data['application/vnd.jupyter.widget-view+json'],
    cell.outputArea.widgets[i]]))
  .filter(([view, child]) => view && child)
  .map(([, child]) => child.node.querySelector('.jp-OutputArea-output'));
"""


def with_helpers(function: str) -> str:
    """A page function that can use the helpers above."""
    return f"(() => {{ {HELPERS} return {function.strip()}; }})()"


# One JupyterLab page per worker serves every notebook, opened as a student opens the next one
# from the file browser: loading the whole application again took 6 to 10 s per notebook.
APP_RESTORED = "async () => { await window.jupyterapp.restored; }"
OPEN_NOTEBOOK = """
async (path) => {
  await window.jupyterapp.commands.execute('docmanager:open', { path, factory: 'Notebook' });
}
"""
FILE_BROWSER_SHOWN = """
() => { const panel = document.getElementById('filebrowser');
        return !!panel && panel.getBoundingClientRect().width > 100; }
"""
# Every document closed without the save prompt (a notebook that ran has unsaved outputs).
CLOSE_ALL = """
() => {
  for (const widget of Array.from(window.jupyterapp.shell.widgets('main'))) {
    if (widget.context) widget.context.model.dirty = false;
    widget.dispose();
  }
}
"""
KERNEL_READY = with_helpers("""
(path) => {
  const nb = findNotebook(path), kernel = kernelOf(nb);
  const bar = document.querySelector('#jp-main-statusbar');
  return !!kernel && nb.context.isReady && kernel.connectionStatus === 'connected'
    && kernel.status === 'idle' && !!bar && bar.textContent.includes('Idle');
}
""")
START_RUN_ALL = with_helpers("""
(path) => {
  const app = window.jupyterapp;
  app.shell.activateById(findNotebook(path).id);
  window.e2eRunAll = undefined;
  app.commands.execute('notebook:run-all-cells').then(
    (ok) => { window.e2eRunAll = String(ok); }, (err) => { window.e2eRunAll = String(err); });
}
""")
RUN_FINISHED = with_helpers("""
(path) => {
  const nb = findNotebook(path), kernel = kernelOf(nb);
  const busy = Array.from(nb.node.querySelectorAll('.jp-InputPrompt'))
    .some((p) => p.textContent.includes('[*]'));
  const settled = !!kernel && ['idle', 'dead'].includes(kernel.status);
  return window.e2eRunAll !== undefined && (!busy || kernel.status === 'dead') && settled;
}
""")
# Each code cell's outputs as nbformat JSON, from the notebook model (what a save would write).
OUTPUTS = with_helpers("""
(path) => findNotebook(path).content.widgets
  .filter((cell) => cell.model.type === 'code').map((cell) => cell.model.outputs.toJSON())
""")
NOT_EXECUTED = with_helpers("""
(path) => findNotebook(path).content.widgets
  .map((cell, i) => [cell, i + 1])
  .filter(([cell]) => cell.model.type === 'code' && cell.model.sharedModel.getSource().trim()
    && cell.model.executionCount === null)
  .map(([, i]) => i)
""")
SOURCES = with_helpers("""
(path) => findNotebook(path).content.widgets
  .filter((cell) => cell.model.type === 'code').map((cell) => cell.model.sharedModel.getSource())
""")
KERNEL_STATUS = with_helpers("""
(path) => { const k = kernelOf(findNotebook(path)); return k ? k.status : 'gone'; }
""")
KERNEL_IDLE = f"(path) => ({KERNEL_STATUS})(path) === 'idle'"
# The notebook's widget models (ipywidgets' front end), kept in the page for WIDGETS_QUIET: from
# the widget manager that every widget output's renderer holds.
WIDGET_MODELS = with_helpers("""
async (path) => {
  const renderers = findNotebook(path).content.widgets
    .filter((cell) => cell.model.type === 'code')
    .flatMap((cell) => cell.outputArea.widgets.flatMap((child) => child.widgets || []))
    .filter((widget) => widget._manager && widget._manager.promise);
  const manager = renderers.length ? await renderers[0]._manager.promise : null;
  window.e2eWidgetModels = manager ? await Promise.all(Object.values(manager._models)) : [];
  return window.e2eWidgetModels.length;
}
""")
# Every message a widget sent the kernel has been handled, and none waits to be sent: ipywidgets
# sends a model's next update only once the kernel went idle after its last one (it buffers
# the rest), so a control operated several times, or a button clicked right after, can still
# have its message on the way after the kernel went idle once. A condition, not a pause: on a
# loaded classroom laptop any fixed wait is too short some day.
WIDGETS_QUIET = f"""
(path) => ({KERNEL_IDLE})(path)
  && (window.e2eWidgetModels || []).every((m) => !m._pending_msgs && !m._msg_buffer)
"""
# Finds the outputs the notebook model says are widget views, marks each and its operable
# controls, and tells whether it is drawn. (The DOM alone cannot tell: a widget output carries
# no mime type attribute.)
WIDGET_OUTPUTS = with_helpers("""
(path) => widgetAreas(path).map((area, index) => {
    area.dataset.e2eWidget = index;
    // Marks of an earlier call, on controls since hidden or made inactive, would be found twice.
    area.querySelectorAll('[data-e2e-control]').forEach((c) => delete c.dataset.e2eControl);
    const text = area.textContent;
    const drawn = !!area.querySelector('.jupyter-widgets') && !text.includes('Loading widget')
      && !text.includes('Error displaying widget');
    // A selected toggle or radio button, or a one-option dropdown, has nothing to change to.
    const controls = Array.from(area.querySelectorAll(
      '.noUi-handle, select, button, input, textarea')).filter((c) => !c.disabled
        && c.offsetParent !== null && !(c.tagName === 'INPUT' && c.type === 'hidden')
        && !(c.type === 'radio' && c.checked) && !(c.tagName === 'SELECT' && c.length < 2)
        && !(c.closest('.widget-toggle-buttons') && c.classList.contains('mod-active')));
    const kinds = controls.map((c, j) => {
      c.dataset.e2eControl = j;
      if (c.classList.contains('noUi-handle')) return 'slider';
      if (c.tagName === 'INPUT' && ['checkbox', 'radio'].includes(c.type)) return 'checkbox';
      if (c.tagName === 'INPUT' && c.type === 'number') return 'number';
      if (c.tagName === 'INPUT' || c.tagName === 'TEXTAREA') return 'text';
      return c.tagName.toLowerCase();
    });
    const labels = controls.map((c) => (c.tagName === 'BUTTON' ? c.textContent
      : c.closest('.widget-inline-hbox, .widget-inline-vbox')
        ?.querySelector('.widget-label')?.textContent ?? '').replace('\u200b', '').trim());
    return {drawn, text: text.trim().slice(0, 200), kinds, labels};
  })
""")
# Marks each widget output as WIDGET_OUTPUTS does, leaving its controls' marks as they are.
MARK_WIDGETS = with_helpers("""
(path) => widgetAreas(path).forEach((area, index) => { area.dataset.e2eWidget = index; })
""")
WIDGETS_SETTLED = f"""
(path) => ({WIDGET_OUTPUTS})(path)
  .every((w) => w.drawn || w.text.includes('Error displaying widget'))
"""
# What a widget (or one figure of it) shows, leaving out the controls' own state (a slider's
# readout moves even when nothing else does): text, images (and which are on screen: a view
# switched to may show a figure drawn before), canvases and SVG.
SIGNATURE = """
(area) => {
  const clone = area.cloneNode(true);
  clone.querySelectorAll('.widget-readout, select, input, textarea, button')
    .forEach((n) => n.remove());
  return JSON.stringify([
    clone.textContent,
    [area, ...area.querySelectorAll('img')].filter((i) => i.tagName === 'IMG')
      .map((i) => [i.src, i.offsetParent !== null]),
    Array.from(area.querySelectorAll('canvas')).map((c) => c.toDataURL()),
    Array.from(area.querySelectorAll('svg')).map((s) => s.outerHTML),
  ]);
}
"""
CHANGED = f"([area, before]) => ({SIGNATURE})(area) !== before"
# A play button at rest (its icon "play", not "pause"): a playing one would move its slider
# once more, a second after the last step.
AT_REST = "(button) => button.querySelector('i.fa-play') !== null"
# A slider's handle at its last value, its play button at rest: played through every step.
PLAYED = f"""
([handle, button]) => handle.getAttribute('aria-valuenow') === handle.getAttribute('aria-valuemax')
  && ({AT_REST})(button)
"""
# The words of one marked widget, for the language checks: text outside table cells (labels,
# buttons, headers, messages), tooltips and placeholders; each dropdown's options with its
# label; the tables, cell by cell (th or not), so that token cells are told by their header; and
# the text typed into it (its tokens show in the figures).
WIDGET_TEXTS = """
(index) => {
  const area = document.querySelector(`[data-e2e-widget="${index}"]`);
  // ipywidgets writes a dropdown option's spaces as no-break spaces, and an empty label as a
  // zero-width space.
  const clean = (s) => s.replace(/\\u00a0/g, ' ').replace(/\\u200b/g, '').trim();
  const texts = [];
  const walker = document.createTreeWalker(area, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    // A <style>'s rules are no wording.
    if (!node.parentElement.closest('td, select, style, script')) {
      texts.push(clean(node.textContent));
    }
  }
  for (const node of area.querySelectorAll('[title], [placeholder]')) {
    // "null": ipywidgets 8 sets a description label's title to the widget's tooltip, null
    // when it has none (ToggleButtons, HTML); no string of the project's.
    if (node.title !== 'null') texts.push(clean(node.title));
    if (node.placeholder) texts.push(clean(node.placeholder));
  }
  const label = (node) => clean(node.closest('.widget-inline-hbox')
    ?.querySelector('.widget-label')?.textContent ?? '');
  return {
    texts: texts.filter(Boolean),
    options: Array.from(area.querySelectorAll('select'),
      (s) => [label(s), Array.from(s.options, (o) => clean(o.textContent))]),
    tables: Array.from(area.querySelectorAll('table'), (t) => Array.from(t.rows,
      (r) => Array.from(r.cells, (c) => [c.tagName === 'TH', clean(c.textContent)]))),
    typed: Array.from(area.querySelectorAll('input[type="text"], textarea'), (i) => i.value),
  };
}
"""
# The widget's status line or message that reads "<prefix>...<suffix>" (false until one does).
SAYS = """
([area, prefix, suffix]) => Array.from(area.querySelectorAll('.widget-html-content'),
  (n) => n.textContent.trim()).find((t) => t.length >= prefix.length + suffix.length
    && t.startsWith(prefix) && t.endsWith(suffix)) || false
"""
# Every status line and message of the widget (their start), to say what it showed instead.
MESSAGES = """
(area) => Array.from(area.querySelectorAll('.widget-html-content'),
  (n) => n.textContent.trim().slice(0, 200)).filter(Boolean)
"""
# Wraps each visible text node holding Han characters, in markdown and in outputs (widget
# labels and tables included), in a marked <span> of its own, so Chromium's font report for
# the span covers exactly that text; returns the text, its Han count and whether it is markdown.
MARK_CHINESE = """
() => {
  const texts = [];
  const roots = '.jp-MarkdownCell .jp-RenderedMarkdown, .jp-Cell-outputArea';
  // Worked answers unfolded: a closed <details> draws no glyph, and its text is checked too.
  for (const details of document.querySelectorAll('.jp-RenderedMarkdown details')) {
    details.open = true;
  }
  for (const root of document.querySelectorAll(roots)) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      // Dropdown options are drawn outside the page's layout: no font report for them.
      if (/[\\p{sc=Hani}\\p{sc=Hira}\\p{sc=Kana}]/u.test(node.textContent)
          && !node.parentElement.closest('select')
          && node.parentElement.getClientRects().length) texts.push([node, root]);
    }
  }
  return texts.map(([node, root], i) => {
    const span = document.createElement('span');
    span.dataset.e2eCjk = i;
    node.replaceWith(span);
    span.appendChild(node);
    const han = node.textContent.match(/[\\p{sc=Hani}\\p{sc=Hira}\\p{sc=Kana}]/gu)
      .length;
    return [node.textContent.trim().slice(0, 40), han, root.matches('.jp-RenderedMarkdown')];
  });
}
"""
# Hides the file browser and returns the height that shows the whole notebook.
SCREENSHOT_HEIGHT = with_helpers("""
(path) => {
  const nb = findNotebook(path);
  if (window.jupyterapp) window.jupyterapp.shell.collapseLeft();
  if (!nb) return window.innerHeight;  // the notebook never opened: shoot what is there
  const scroller = nb.content.node.querySelector('.jp-WindowedPanel-outer') || nb.content.node;
  scroller.scrollTop = 0;
  return scroller.scrollHeight + window.innerHeight - scroller.clientHeight;
}
""")


# What a learner sees on a classroom projector (a 1280×720 window, the file browser open), in
# the light theme and in the dark one (see problems_on_page). Each check is one page function
# over the notebook's top-level outputs, all of them or one widget's (its data-e2e-widget index),
# returning its failures, worded but for the notebook and the theme.
#
# LAYOUT_HELPERS: which outputs; how a failure names an output ("widget 2 (cell 27, "Sentence
# A", showing "one head")", "cell 5, output 1 (image/png)") and an element ('button.widget-button
# "Save PNG"'); whether an element is drawn; an output's texts (each element holding a visible
# text node, and each input and dropdown, which show their value); failures grouped.
LAYOUT_HELPERS = r"""
// What CUT_LABELS checks: buttons (toggle buttons too), descriptions, a checkbox's label,
// dropdowns, and a progress bar's texts (tqdm writes its description and its count, rate and
// losses in HTML widgets beside the bar).
const LABELS = 'button, .widget-label, .widget-label-basic, .widget-dropdown select, '
  + '.widget-hbox:has(> .widget-hprogress) > .widget-html > .widget-html-content';
const clean = (s) => s.replace(/[\u00a0\u2007\u202f]/g, ' ').replace(/\u200b/g, '')
  .replace(/\s+/g, ' ').trim();
const short = (s, n = 40) => { s = clean(s); return s.length > n ? `${s.slice(0, n - 1)}…` : s; };
const drawn = (el) => el.getClientRects().length > 0
  && getComputedStyle(el).visibility !== 'hidden';
const valueOf = (el) => ['INPUT', 'TEXTAREA'].includes(el.tagName) ? el.value
  : el.tagName === 'SELECT' ? (el.selectedOptions[0]?.textContent ?? '') : el.textContent;
const element = (el) => {
  const classes = Array.from(el.classList)
    .filter((c) => !/^(lm-|jp-mod-|jupyter-widgets$|mod-)/.test(c)).slice(0, 2);
  const text = short(valueOf(el));
  return [el.tagName.toLowerCase(), ...classes].join('.')
    + (text ? ` ${JSON.stringify(text)}` : '');
};
const topOutputs = (widget) => Array.from(
  document.querySelectorAll('.jp-Notebook .jp-Cell .jp-OutputArea-output'))
  .filter((o) => !o.parentElement.closest('.jp-OutputArea-output'))
  .filter((o) => widget === null || o.dataset.e2eWidget === String(widget));
const output = (o) => {
  const cell = Array.from(document.querySelectorAll('.jp-Notebook .jp-Cell'))
    .indexOf(o.closest('.jp-Cell')) + 1;
  if (o.dataset.e2eWidget === undefined) {
    const siblings = Array.from(o.closest('.jp-OutputArea').children,
      (child) => child.querySelector(':scope > .jp-OutputArea-output'));
    return `cell ${cell}, output ${siblings.indexOf(o) + 1} (${o.dataset.mimeType || 'widget'})`;
  }
  const first = Array.from(o.querySelectorAll('.widget-label, button, .widget-html-content'))
    .filter(drawn).map((el) => short(el.textContent, 30)).find(Boolean);
  const views = Array.from(o.querySelectorAll('.widget-toggle-button.mod-active'))
    .filter(drawn).map((el) => JSON.stringify(short(el.textContent, 30)));
  return `widget ${Number(o.dataset.e2eWidget) + 1} (cell ${cell}`
    + (first ? `, ${JSON.stringify(first)}` : '')
    + (views.length ? `, showing ${views.join(' and ')})` : ')');
};
const texts = (o) => {
  const holders = new Set();
  const walker = document.createTreeWalker(o, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const el = node.parentElement;
    if (clean(node.textContent) && !el.closest('svg, select, textarea, script, style')
        && drawn(el)) holders.add(el);
  }
  const fields = 'input:not([type="checkbox"]):not([type="radio"]), select, textarea';
  for (const el of o.querySelectorAll(fields)) {
    if (drawn(el) && clean(valueOf(el) || el.placeholder || '')) holders.add(el);
  }
  return Array.from(holders);
};
// [key, failure] pairs of one output, one failure told per key: "<failure> (and 11 more like it)".
const grouped = (failures) => {
  const groups = new Map();
  for (const [key, message] of failures) {
    const group = groups.get(key);
    if (group) group.more += 1; else groups.set(key, {message, more: 0});
  }
  return Array.from(groups.values(),
    (g) => g.message + (g.more ? ` (and ${g.more} more like it)` : ''));
};
"""


def with_layout_helpers(function: str) -> str:
    """A page function that can use LAYOUT_HELPERS (and HELPERS)."""
    return with_helpers(f"(() => {{ {LAYOUT_HELPERS} return {function.strip()}; }})()")


# A matplotlib figure shown as its repr, "<CJKFigure size 1080x288 with 5 Axes>", instead of
# drawn: in any text output (text/plain, stdout).
FIGURE_REPRS = with_layout_helpers(r"""
(widget) => topOutputs(widget).flatMap((o) => [o, ...o.querySelectorAll('.jp-RenderedText')]
  .filter((text) => text.matches('.jp-RenderedText'))
  .flatMap((text) => text.textContent.match(/<\w*Figure size [\d.]+x[\d.]+ with \d+ Axes>/g) || [])
  .map((repr) => `${output(o)}: a figure shown as text, not drawn: ${repr}`))
""")
# Nothing reaches beyond its output's right edge (the outermost such element is named); nothing
# is wider inside than outside, scrollWidth > clientWidth + 1 (the innermost is named, unless
# an element beyond the edge explains it). Labels, buttons and dropdowns: CUT_LABELS.
OVERFLOW = with_layout_helpers(r"""
(widget) => topOutputs(widget).flatMap((o) => {
  const edge = o.getBoundingClientRect().right;
  const beyond = [], wide = [];
  for (const el of [o, ...o.querySelectorAll('*')]) {
    if (!(el instanceof HTMLElement) || !drawn(el)) continue;
    if (el.getBoundingClientRect().right > edge + 1 && !beyond.some((b) => b.contains(el))) {
      beyond.push(el);
    }
    // A slider's handle sticks out of its track at either end by design (see SHORT_SLIDERS);
    // a text box scrolls the text typed into it, longer than the box, by design too.
    if (el.clientWidth > 0 && el.scrollWidth > el.clientWidth + 1 && !el.matches(LABELS)
        && !el.closest('.slider-container') && !el.matches('input, textarea')) wide.push(el);
  }
  return beyond.map((el) => {
    const right = el.getBoundingClientRect().right;
    return `${output(o)}: ${element(el)} reaches ${Math.round(right - edge)} px beyond the `
      + `output's right edge (its right at ${Math.round(right)} px, the output's at `
      + `${Math.round(edge)} px)`;
  }).concat(wide
    .filter((el) => !wide.some((w) => w !== el && el.contains(w))
      && !beyond.some((b) => el.contains(b)))
    .map((el) => `${output(o)}: ${element(el)} overflows sideways: scrollWidth `
      + `${el.scrollWidth} px > clientWidth ${el.clientWidth} px`));
})
""")
# Each widget's controls and its main figure fit in the notebook's visible scrolling area, on
# screen at once: from the widget's top to the bottom of its first figure (of the whole widget
# when it shows none), or of the box the figure scrolls in, where it is in one (FigureView caps
# its height: a long input's figure scrolls inside it, under its controls). What comes after
# the figure (save buttons, a table of targets) may need a scroll.
TALL_WIDGETS = with_layout_helpers(r"""
([path, widget]) => {
  const nb = findNotebook(path);
  const limit = (nb.content.node.querySelector('.jp-WindowedPanel-outer') || nb.content.node)
    .clientHeight;
  return topOutputs(widget).filter((o) => o.dataset.e2eWidget !== undefined).flatMap((o) => {
    const box = o.querySelector(':scope > .jupyter-widgets');
    if (!box || !drawn(box)) return [];
    const figure = Array.from(box.querySelectorAll('img')).find(drawn);
    const top = box.getBoundingClientRect().top;
    let bottom = (figure || box).getBoundingClientRect().bottom;
    for (let n = figure?.parentElement; n && n !== box; n = n.parentElement) {
      if (/auto|scroll|hidden/.test(getComputedStyle(n).overflowY)) {
        bottom = Math.min(bottom, n.getBoundingClientRect().bottom);
      }
    }
    const height = Math.round(bottom - top);
    return height > limit ? [`${output(o)}: its controls and ${figure ? 'figure' : 'contents'}`
      + ` are ${height} px tall, more than the notebook's visible area (${limit} px)`] : [];
  });
}
""")
# Every text at least 10 px; every image drawn at least 0.97 of its own width (a figure scaled
# down, by max-width or a width, shrinks its text).
SMALL_TEXT = with_layout_helpers(r"""
(widget) => topOutputs(widget).flatMap((o) => grouped(texts(o).flatMap((el) => {
  const size = parseFloat(getComputedStyle(el).fontSize);
  return size < 10 ? [[size, `${output(o)}: ${element(el)} has font-size ${size} px, `
    + 'less than 10 px']] : [];
})).concat(Array.from(o.querySelectorAll('img')).filter((img) => drawn(img) && img.naturalWidth)
  .flatMap((img) => {
    const width = img.getBoundingClientRect().width, scale = width / img.naturalWidth;
    return scale < 0.97 ? [`${output(o)}: ${element(img)} (${img.naturalWidth}×`
      + `${img.naturalHeight} px) is drawn ${Math.round(width)} px wide, ${scale.toFixed(2)} `
      + 'of its width (at least 0.97)'] : [];
  })))
""")
# Buttons, toggle buttons, labels, dropdowns and progress-bar descriptions show their whole
# text: not cut (wider inside than outside, drawn with an ellipsis or ending in one), and a text
# with no space to break at (one word; a CJK label) not broken over lines. A dropdown's selected
# option is measured against the room the dropdown gives it.
CUT_LABELS = with_layout_helpers(r"""
(widget) => {
  const canvas = document.createElement('canvas').getContext('2d');
  return topOutputs(widget).flatMap((o) => Array.from(o.querySelectorAll(LABELS))
    .filter((el) => drawn(el) && clean(valueOf(el))).flatMap((el) => {
      const style = getComputedStyle(el), failures = [];
      const what = `${output(o)}: ${element(el)}`;
      if (el.tagName === 'SELECT') {
        canvas.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
        const needs = canvas.measureText(valueOf(el).trim()).width;
        const room = el.clientWidth - parseFloat(style.paddingLeft)
          - parseFloat(style.paddingRight);
        if (needs > room + 1) {
          failures.push(`${what} is cut: its option needs ${Math.ceil(needs)} px, the `
            + `dropdown has ${Math.floor(room)} px`);
        }
      } else if (el.clientWidth > 0 && el.scrollWidth > el.clientWidth + 1) {
        failures.push(`${what} is cut: scrollWidth ${el.scrollWidth} px > clientWidth `
          + `${el.clientWidth} px`
          + (style.textOverflow === 'ellipsis' ? ' (drawn with an ellipsis)' : ''));
      } else if (/(…|\.\.\.)$/.test(clean(valueOf(el)))) {
        failures.push(`${what} is cut: it ends with an ellipsis`);
      }
      // Any space breaks, the en spaces tqdm writes between its numbers too.
      if (el.tagName !== 'SELECT' && !/\s/.test(valueOf(el).trim())) {
        // Its text's boxes (a checkbox beside them is no line), a line per vertical run.
        const boxes = [];
        const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          const range = document.createRange();
          range.selectNodeContents(node);
          boxes.push(...Array.from(range.getClientRects()).filter((r) => r.width > 0));
        }
        boxes.sort((a, b) => a.top - b.top);
        let lines = 0, bottom = -Infinity;
        for (const box of boxes) {
          if (box.top >= bottom - 2) lines += 1;
          bottom = box.top >= bottom - 2 ? box.bottom : Math.max(bottom, box.bottom);
        }
        const height = boxes.length ? Math.max(...boxes.map((r) => r.bottom))
          - Math.min(...boxes.map((r) => r.top)) : 0;
        const line = parseFloat(style.lineHeight) || 1.2 * parseFloat(style.fontSize);
        if (lines > 1 || height > 1.6 * line) {
          failures.push(`${what}, one word (no space to break at), is broken over ${lines} `
            + `lines (${Math.round(height)} px tall; its line-height ${Math.round(line)} px)`);
        }
      }
      return failures;
    }));
}
""")
# A slider's track (noUiSlider's target) is at least 80 px long and 4 px thick.
SHORT_SLIDERS = with_layout_helpers(r"""
(widget) => topOutputs(widget).flatMap((o) => Array.from(
  o.querySelectorAll('.widget-slider .noUi-target')).filter(drawn).flatMap((track) => {
    const box = track.getBoundingClientRect();
    const [length, thickness] = track.classList.contains('noUi-vertical')
      ? [box.height, box.width] : [box.width, box.height];
    const label = track.closest('.widget-slider').querySelector('.widget-label');
    const what = `${output(o)}: the slider ${JSON.stringify(clean(label?.textContent ?? ''))}'s `
      + `track (${element(track)})`;
    return (length < 80 ? [`${what} is ${Math.round(length)} px long, less than 80 px`] : [])
      .concat(thickness < 4 ? [`${what} is ${Math.round(thickness)} px thick, less than 4 px`]
        : []);
  }))
""")
# A selected toggle button (a view of the attention widget, 09's classifier) stands out from
# the others by more than a shade: its background at least 3:1 against theirs (WCAG's contrast
# for a state of a control), not JupyterLab's default grey a step darker (1.2:1).
FAINT_TOGGLES = with_layout_helpers(r"""
(widget) => {
  const context = document.createElement('canvas').getContext('2d', {willReadFrequently: true});
  const rgb = (color) => {
    context.clearRect(0, 0, 1, 1);
    context.fillStyle = getComputedStyle(document.querySelector('.jp-Notebook')).backgroundColor;
    context.fillRect(0, 0, 1, 1);
    context.fillStyle = color;
    context.fillRect(0, 0, 1, 1);
    return Array.from(context.getImageData(0, 0, 1, 1).data.slice(0, 3));
  };
  const luminance = (c) => c.map((v) => v / 255)
    .map((v) => (v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4))
    .reduce((sum, v, i) => sum + v * [0.2126, 0.7152, 0.0722][i], 0);
  return topOutputs(widget).flatMap((o) => Array.from(
    o.querySelectorAll('.widget-toggle-buttons')).filter(drawn).flatMap((group) => {
      const buttons = Array.from(group.querySelectorAll('button')).filter(drawn);
      const active = buttons.find((b) => b.classList.contains('mod-active'));
      const other = buttons.find((b) => !b.classList.contains('mod-active'));
      if (!active || !other) return [];
      const [a, b] = [active, other].map((el) => rgb(getComputedStyle(el).backgroundColor));
      const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x);
      const ratio = (light + 0.05) / (dark + 0.05);
      return ratio < 3 ? [`${output(o)}: the selected ${element(active)} differs from `
        + `${element(other)} by a contrast of ${ratio.toFixed(2)}:1 (rgb(${a}) against `
        + `rgb(${b})), less than 3:1`] : [];
    }));
}
""")
# WCAG AA: each text against what it is drawn on (its ancestors' background colours, composed
# down to the first opaque one, the page's white below them), its colour faded by its alpha and
# its ancestors' opacity: 4.5:1, or 3:1 for large text (24 px, or 18.66 px bold). Disabled
# controls are exempt (WCAG's inactive components); figures are images, with their own ground.
LOW_CONTRAST = with_layout_helpers(r"""
(widget) => {
  const context = document.createElement('canvas').getContext('2d', {willReadFrequently: true});
  const rgba = (color) => {  // any CSS colour, as the canvas paints it
    context.clearRect(0, 0, 1, 1);
    context.fillStyle = '#000';
    context.fillStyle = color;
    context.fillRect(0, 0, 1, 1);
    const [r, g, b, a] = context.getImageData(0, 0, 1, 1).data;
    return a ? [r / a * 255, g / a * 255, b / a * 255, a / 255] : [0, 0, 0, 0];
  };
  const over = ([r, g, b, a], [R, G, B]) => [
    r * a + R * (1 - a), g * a + G * (1 - a), b * a + B * (1 - a), 1];
  const luminance = (c) => c.slice(0, 3).map((v) => v / 255)
    .map((v) => (v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4))
    .reduce((sum, v, i) => sum + v * [0.2126, 0.7152, 0.0722][i], 0);
  const css = (c) => `rgb(${c.slice(0, 3).map(Math.round).join(', ')})`;
  return topOutputs(widget).flatMap((o) => grouped(texts(o)
    .filter((el) => !el.closest(':disabled')).flatMap((el) => {
      const style = getComputedStyle(el);
      const placeholder = ['INPUT', 'TEXTAREA'].includes(el.tagName) && !el.value;
      const color = rgba(placeholder ? getComputedStyle(el, '::placeholder').color : style.color);
      const layers = [];
      let opacity = 1;
      for (let n = el; n; n = n.parentElement) {
        const s = getComputedStyle(n), background = rgba(s.backgroundColor);
        opacity *= parseFloat(s.opacity);
        if (background[3] > 0) layers.push(background);
        if (background[3] >= 1) break;
      }
      const ground = layers.reverse().reduce((below, layer) => over(layer, below),
        [255, 255, 255, 1]);
      const text = over([...color.slice(0, 3), color[3] * opacity], ground);
      const [light, dark] = [luminance(text), luminance(ground)].sort((a, b) => b - a);
      const ratio = (light + 0.05) / (dark + 0.05);
      const size = parseFloat(style.fontSize), bold = parseInt(style.fontWeight, 10) >= 700;
      const limit = size >= 24 || (size >= 18.66 && bold) ? 3 : 4.5;
      return ratio < limit ? [[`${css(text)} ${css(ground)} ${limit}`,
        `${output(o)}: ${element(el)} has contrast ${ratio.toFixed(2)}:1 (${css(text)} on `
          + `${css(ground)}, ${size} px${bold ? ' bold' : ''}), less than ${limit}:1`]] : [];
    })));
}
""")
# Waits until every image in the outputs is decoded (a widget's new figure is laid out only
# then), and a frame is drawn.
IMAGES_READY = with_layout_helpers("""
() => Promise.race([
  Promise.all(topOutputs(null).flatMap((o) => Array.from(o.querySelectorAll('img')))
    .map((img) => img.decode().catch(() => null))),
  new Promise((r) => setTimeout(r, 10000))])  // a figure never drawn: the checks name it
  .then(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))))
""")
# The widget's view is drawn: one figure on screen, loaded (a view's first figure comes from the
# kernel after the toggle button shows the view's empty image).
VIEW_DRAWN = """
(area) => { const shown = Array.from(area.querySelectorAll('img')).filter((i) => i.offsetParent);
  return shown.length === 1 && shown[0].complete && shown[0].naturalWidth > 0; }
"""
# JupyterLab's themes, and whether one is on the page (its stylesheet loaded and applied).
THEMES = {"light": "JupyterLab Light", "dark": "JupyterLab Dark"}
# A change of theme shows JupyterLab's splash screen, which removes itself 200 ms after it
# fades: the next change waits for that (two overlapping ones remove it twice, which throws), and
# is a change (loading the theme on the page again throws too).
SET_THEME = """
(theme) => document.body.dataset.jpThemeName === theme
  || window.jupyterapp.commands.execute('apputils:change-theme', {theme})
"""
THEME_SET = """
() => !!document.body.dataset.jpThemeName && !document.getElementById('jupyterlab-splash')
"""
THEME_APPLIED = """
([theme, light]) => {
  const [r, g, b] = getComputedStyle(document.querySelector('.jp-Notebook')).backgroundColor
    .match(/[\\d.]+/g).map(Number);
  return document.body.dataset.jpThemeName === theme
    && document.body.dataset.jpThemeLight === String(light) && (r + g + b > 384) === light
    && !document.getElementById('jupyterlab-splash');
}
"""
# How problems_on_page names the view a widget shows.
VIEW = re.compile(r', showing "[^"]*"(?: and "[^"]*")*')
# The attention widget's views, by their toggle buttons' strings.json keys.
ATTENTION_VIEWS = ("view_one", "view_all", "view_model", "view_query_key", "view_evidence")
# The checks of problems_on_page, in order.
SCREEN_CHECKS = (FIGURE_REPRS, OVERFLOW, TALL_WIDGETS, SMALL_TEXT, CUT_LABELS, SHORT_SLIDERS,
                 LOW_CONTRAST, FAINT_TOGGLES)


@dataclass
class Lab:
    """A running JupyterLab server."""

    url: str
    token: str
    log: Path

    def api(self, method: str, path: str) -> object:
        """Calls the REST API with the token; returns the decoded JSON (None when empty)."""
        request = urllib.request.Request(
            f"{self.url}{path}", method=method, headers={"Authorization": f"token {self.token}"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            body = response.read()
        return json.loads(body) if body else None


def lab_path(notebook: str) -> str:
    """Where the lab serves a notebook ("en/03_encoder.ipynb"): "edition-1/03_encoder.ipynb"."""
    lang, name = notebook.split("/")
    return f"{LAB_FOLDERS[lang]}/{name}"


def in_repo(path: str) -> str:
    """The notebook the lab serves at ``path``, as the repository's notebooks/ names it."""
    folder, name = path.split("/")
    return f"{dict(map(reversed, LAB_FOLDERS.items()))[folder]}/{name}"


def free_port() -> int:
    """A port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def write_settings(settings_dir: Path) -> None:
    """Lab settings for a quiet, deterministic page.

    No news or update checks (they reach the internet); every cell attached to the DOM
    (windowing would leave off-screen outputs unrendered, so nothing could be checked there).
    """
    settings = {
        "apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
        "notebook-extension/tracker": {"windowingMode": "none"},
    }
    for plugin, values in settings.items():
        path = settings_dir / "@jupyterlab" / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory):
    """JupyterLab on 127.0.0.1 with a random token, serving temporary copies of the editions,
    each in a folder named after no language (LAB_FOLDERS)."""
    tmp = tmp_path_factory.mktemp("jupyterlab")
    root = tmp / "notebooks"
    for lang, folder in LAB_FOLDERS.items():
        shutil.copytree(NOTEBOOK_ROOT / lang, root / folder,
                        ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    write_settings(tmp / "settings")
    port, token = free_port(), secrets.token_hex(24)
    # Config, data, runtime and IPython dirs in temp, so no user state leaks in or out.
    env = dict(os.environ, PYTHONUNBUFFERED="1", IPYTHONDIR=str(tmp / "ipython"))
    # Every kernel may use every core, its idle OpenMP threads asleep (OMP_WAIT_POLICY=PASSIVE):
    # a kernel then has both cores while the other worker measures its page, and two kernels
    # running at once do not spin-wait on each other's cores. Spinning, two kernels of two
    # threads took 314 s for the English editions against 222 s with one thread each; asleep,
    # 06, 08, 09 and 10 on two workers took 181 s against 202 s with one thread each. The printed
    # outputs are the same either way: the test compares them with the committed ones.
    env["OMP_NUM_THREADS"] = str(len(os.sched_getaffinity(0)))
    env["OMP_WAIT_POLICY"] = "PASSIVE"
    for name in ("CONFIG", "DATA", "RUNTIME"):
        env[f"JUPYTER_{name}_DIR"] = str(tmp / name.lower())
    log = tmp / "jupyter-server.log"
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--allow-root",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--ServerApp.port_retries=0",
        f"--ServerApp.token={token}",
        f"--ServerApp.root_dir={root}",
        f"--LabApp.user_settings_dir={tmp / 'settings'}",
        f"--LabApp.workspaces_dir={tmp / 'workspaces'}",
        "--LabApp.expose_app_in_browser=True",
        "--LabApp.extension_manager=readonly",
        "--LabApp.check_for_updates_class=jupyterlab.handlers.announcements.NeverCheckForUpdate",
    ]
    with log.open("wb") as log_file:
        server = subprocess.Popen(
            command,
            cwd=tmp,
            env=env,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    try:
        lab = Lab(f"http://127.0.0.1:{port}", token, log)
        deadline = time.monotonic() + 90
        while True:
            assert server.poll() is None, f"JupyterLab exited:\n{log.read_text()[-3000:]}"
            assert time.monotonic() < deadline, f"JupyterLab not up:\n{log.read_text()[-3000:]}"
            try:
                lab.api("GET", "/api/status")
                break
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.5)
        yield lab
    finally:
        # SIGTERM lets the server shut its kernels down; the group kill catches stragglers.
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, 9)
            server.wait()
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        # One log per pytest-xdist worker (gw0, gw1, ...).
        name = f"jupyter-server-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}.log"
        (ARTIFACTS / name).write_text(log.read_text().replace(token, "<token>"))


def fontconfig_file(tmp: Path, font: Path) -> Path:
    """A fonts.conf giving Chromium the system fonts plus the project's CJK font."""
    font_dir = tmp / "fonts"
    font_dir.mkdir()
    (font_dir / font.name).symlink_to(font)
    conf = tmp / "fonts.conf"
    conf.write_text(
        '<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n'
        '  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>\n'
        f"  <dir>{font_dir}</dir>\n  <cachedir>{tmp / 'fontcache'}</cachedir>\n</fontconfig>\n"
    )
    return conf


def cjk_font_names(font: Path) -> set[str]:
    """Family and PostScript names of every face in the font file."""
    from fontTools.ttLib import TTCollection, TTFont

    faces = (
        TTCollection(str(font), lazy=True).fonts
        if font.suffix.lower() in (".ttc", ".otc")
        else [TTFont(str(font), lazy=True)]
    )
    return {face["name"].getDebugName(n) for face in faces for n in (1, 6)} - {None}


@pytest.fixture(scope="session")
def browser(tmp_path_factory: pytest.TempPathFactory):
    """Headless Chromium with a fresh profile and the project's CJK font available."""
    tmp = tmp_path_factory.mktemp("chromium")
    env = dict(os.environ, FONTCONFIG_FILE=str(fontconfig_file(tmp, cjk_font_path())))
    with sync_playwright() as playwright:
        # Debian's chromium where it is installed, else Playwright's own build. Never a skip:
        # without a browser the test fails and says how to get one.
        executable = CHROMIUM if CHROMIUM.exists() else Path(playwright.chromium.executable_path)
        if not executable.exists():
            pytest.fail(f"no Chromium at {CHROMIUM} or {executable}: run "
                        "`.ci/install-browser .venv/bin/python`")
        context = playwright.chromium.launch_persistent_context(
            user_data_dir=tmp / "profile",
            executable_path=executable,
            headless=True,
            args=CHROMIUM_ARGS,
            env=env,
            viewport=VIEWPORT,
        )
        try:
            yield context
        finally:
            context.close()


class LabPage:
    """The worker's JupyterLab page: loaded once, with an empty workspace, and loaded afresh
    after a notebook whose test failed, so that no failure carries over to the next one."""

    def __init__(self, lab: Lab, browser) -> None:
        self.lab, self.browser, self.page = lab, browser, None
        # This run's stage times (Stopwatch), one file per pytest-xdist worker, begun afresh.
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        self.stages = ARTIFACTS / f"stages-{worker}.tsv"
        self.stages.write_text("")

    def get(self) -> Page:
        if self.page is None:
            self.page = self.browser.new_page()
            # ?reset: start from an empty workspace, so no earlier session's notebooks reopen.
            self.page.goto(f"{self.lab.url}/lab?reset&token={self.lab.token}")
            self.page.wait_for_function("() => !!window.jupyterapp", timeout=120_000)
            self.page.evaluate(APP_RESTORED)
            self.page.evaluate(CLOSE_ALL)  # the launcher
        # The file browser open beside the notebook, as on a laptop in class.
        self.page.evaluate("() => window.jupyterapp.commands.execute('filebrowser:activate')")
        self.page.wait_for_function(FILE_BROWSER_SHOWN, timeout=30_000)
        self.page.set_viewport_size(VIEWPORT)  # save_screenshot made it as tall as a notebook
        return self.page

    def done(self, passed: bool) -> None:
        """Closes the notebooks, and the page too unless the test passed."""
        try:
            if passed:
                self.page.evaluate(CLOSE_ALL)
        finally:
            if not passed:
                self.page.close()
                self.page = None
            for session in self.lab.api("GET", "/api/sessions"):
                self.lab.api("DELETE", f"/api/sessions/{session['id']}")


@pytest.fixture(scope="session")
def lab_page(lab: Lab, browser):
    pages = LabPage(lab, browser)
    yield pages
    if pages.page is not None:
        pages.page.close()


def problems_in_outputs(page: Page, notebook: str) -> list[str]:
    """Cells not run, error and stderr outputs, widgets shown as plain text."""
    problems = [f"cell {i} was not executed" for i in page.evaluate(NOT_EXECUTED, notebook)]
    for text in page.locator(STDERR).all_inner_texts():
        problems.append(f"error/stderr output: {text.strip()[-800:]}")
    plain = page.locator('.jp-OutputArea-output[data-mime-type="text/plain"]')
    for text in plain.all_inner_texts():
        if WIDGET_REPR.match(text.strip()):
            problems.append(f"widget shown as text, not drawn: {text.strip()[:200]}")
    return problems


def operate(control, kind: str) -> None:
    """Changes one control the way a student would."""
    if kind == "slider":
        at_max = control.get_attribute("aria-valuenow") == control.get_attribute("aria-valuemax")
        control.focus()
        control.press("ArrowLeft" if at_max else "ArrowRight")
    elif kind == "select":
        count = control.locator("option").count()
        current = control.evaluate("(s) => s.selectedIndex")
        control.select_option(index=(current + 1) % count)
    elif kind == "number":
        control.fill(str(float(control.input_value() or 0) + 1).removesuffix(".0"))
        control.press("Enter")
    elif kind == "text":
        control.fill(control.input_value() + " the")
        control.press("Enter")
    else:
        control.click()


def reacts(page: Page, notebook: str, watched: Locator, act: Callable[[], object]) -> bool:
    """Does ``act`` (operates a control); whether what ``watched`` shows (a widget, or one
    figure of it) then changes."""
    element = watched.element_handle()
    before = element.evaluate(SIGNATURE)
    act()
    try:
        page.wait_for_function(CHANGED, arg=[element, before], timeout=CHANGE_TIMEOUT_MS)
    except PlaywrightError:
        # Not yet: on a loaded machine the callback may still be running. Judge once the
        # kernel has handled every message of the widgets and the page has drawn the result.
        settle(page, notebook)
        return element.evaluate(SIGNATURE) != before
    finally:
        # Let the kernel finish this callback before the next control is operated.
        settle(page, notebook)
    return True


def settle(page: Page, notebook: str) -> None:
    """Waits until the kernel has handled every message the widgets sent (WIDGETS_QUIET) and
    the page has decoded and drawn the figures they brought."""
    page.evaluate(WIDGET_MODELS, notebook)
    page.wait_for_function(WIDGETS_QUIET, arg=notebook, timeout=RUN_TIMEOUT_MS)
    page.evaluate(IMAGES_READY)


def exact(label: str) -> re.Pattern[str]:
    """A label as the whole text of an element (has_text alone matches a part of it)."""
    return re.compile(rf"^\s*{re.escape(label)}\s*$")


def button(area: Locator, label: str) -> Locator:
    """The widget's button (toggle buttons too) labelled ``label``, of those on screen (the
    masking widget's tally has its own save buttons, hidden until there is a tally)."""
    return area.locator("button:visible").filter(has_text=exact(label))


def labelled(area: Locator, label: str, control: str) -> Locator:
    """The ``control`` (``select``, ``.noUi-handle``) of the widget's control described as
    ``label``."""
    description = area.page.locator(".widget-label", has_text=exact(label))
    return area.locator(".widget-inline-hbox", has=description).locator(control)


def selected(select: Locator) -> str:
    """The dropdown's selected option, as WIDGET_TEXTS reads it."""
    return select.evaluate("(s) => s.options[s.selectedIndex].textContent").replace(
        "\N{NO-BREAK SPACE}", " ").strip()


def guesses(cell: str) -> list[tuple[str, float, bool]] | None:
    """A fill-mask cell's guesses, "token 0.37 · token 0.15 ✓ · ...", as (token, probability,
    marked as the original); None when the cell is not such a list."""
    if not GUESSES.fullmatch(cell):
        return None
    return [(m[1], float(m[2]), bool(m[3])) for m in GUESS.finditer(cell)]


@dataclass
class Wording:
    """What one widget shows as text: its own wording (labels, options, headers, messages),
    which must be in the edition's language, apart from the tokens it shows."""

    texts: list[str]
    is_token: Callable[[str], bool]
    tables: list[list[list[tuple[bool, str]]]]  # rows of (is a header, text) cells


def wording(page: Page, index: int, lang: str) -> Wording:
    """The widget's wording, its table cells told apart by their header: token cells (tokens
    and fill-mask guesses) from the rest. Tokens are also the options ("3: token") of the
    dropdowns and lists that pick a token (TOKEN_DROPDOWNS) and the WordPiece pieces of the text
    typed into the widget (its chips and the figures' tick labels show those)."""
    shown = page.evaluate(WIDGET_TEXTS, index)
    texts, tokens = list(shown["texts"]), set()
    pick_token = {i18n.text(key, lang) for key in TOKEN_DROPDOWNS}
    for label, options in shown["options"]:
        for option in options:
            picked = re.fullmatch(r"\d+: (.+)", option)
            if label in pick_token and picked:
                tokens.add(picked[1])
            else:
                texts.append(option)  # the time-lapse's "none" among its tokens
    token_headers = {i18n.text(key, lang) for key in TOKEN_HEADERS}
    for rows in shown["tables"]:
        top = [cell for _, cell in rows[0]] if rows and all(th for th, _ in rows[0]) else []
        for row in rows:
            side = row[0][1] if row and row[0][0] else None  # the row's header, if any
            for column, (th, cell) in enumerate(row):
                header = side if side is not None else top[column] if column < len(top) else None
                guessed = guesses(cell) if header == i18n.text("model_guesses", lang) else None
                if not th and header in token_headers:
                    tokens.add(cell)
                elif not th and guessed is not None:
                    tokens.update(token for token, _, _ in guessed)
                else:
                    texts.append(cell)
    typed = [t.lower() for t in shown["typed"]]

    def is_token(text: str) -> bool:
        piece = text.removeprefix("##").lower()
        return text in tokens or (bool(piece) and any(piece in t for t in typed))

    return Wording(texts, is_token, shown["tables"])


def not_in_language(text: str, lang: str, is_token: Callable[[str], bool]) -> list[str]:
    """What in a widget's or figure's text is not in the edition's language: in English, Han
    characters and CJK punctuation; in Chinese, English words (two letters or more, not an
    acronym, not one of NOT_ENGLISH). Tokens are left out (a text that is one, a masking chip's
    "→ token", the token a title quotes), and so are a mathtext's TeX commands."""
    if is_token(text.removeprefix("→ ")):
        return []
    text = QUOTED.sub(lambda quoted: "" if is_token(quoted[1]) else quoted[0], text)
    if MATH.search(text):
        text = TEX_COMMAND.sub(" ", text)
    if lang == "en":
        return CHINESE.findall(text)
    words = LATIN_WORD.findall(NOT_ENGLISH.sub(" ", text))
    return [word for word in words if len(word) > 1 and not word.isupper()]


def problems_in_wording(page: Page, count: int, lang: str) -> list[str]:
    """Each of the ``count`` widgets words everything in the edition's language."""
    problems = []
    for index in range(count):
        shown = wording(page, index, lang)
        for text in shown.texts:
            if foreign := not_in_language(text, lang, shown.is_token):
                problems.append(f"widget {index + 1}: {text!r} is not in {LANGUAGE[lang]} "
                                f"({' '.join(foreign)})")
    return problems


def figure_texts(svg: str) -> list[str]:
    """Every text a matplotlib SVG draws: its <text> elements (bertlib saves with svg.fonttype
    "none") and its comments, where matplotlib writes each mathtext's source (its <text> holds
    one <tspan> per glyph) and, with svg.fonttype "path", every text. Left out: the texts a
    figure marks as tokens, in a group with the id TOKEN_GID (the time-lapse's guesses, any
    token of the vocabulary)."""
    parser = ET.XMLParser(target=ET.TreeBuilder(insert_comments=True))
    texts = []

    def walk(node: ET.Element) -> None:
        if node.get("id") == TOKEN_GID:
            return
        if node.tag is ET.Comment:
            texts.append(html.unescape(node.text or "").strip())
        elif node.tag == SVG_TEXT and not len(node):
            texts.append((node.text or "").strip())
        for child in node:
            walk(child)

    walk(ET.fromstring(svg, parser))
    return [text for text in texts if text]


def says(page: Page, notebook: str, area: Locator, prefix: str, suffix: str = "") -> str | None:
    """The widget's message reading "<prefix>...<suffix>", once it shows one (None if it does
    not in time); either way the kernel has finished the callback when this returns."""
    try:
        return page.wait_for_function(SAYS, arg=[area.element_handle(), prefix, suffix],
                                      timeout=CHANGE_TIMEOUT_MS).json_value()
    except PlaywrightError:
        settle(page, notebook)  # a loaded machine: judge once every message is handled
        return page.evaluate(SAYS, [area.element_handle(), prefix, suffix]) or None
    finally:
        settle(page, notebook)


def saved_figure(page: Page, notebook: str, lab: Lab, area: Locator, lang: str,
                 what: str) -> tuple[list[str], list[str]]:
    """Clicks the widget's "Save SVG": its status line must say where, in the edition's words,
    and the server must hold the file, in the notebook's folder (the kernel's working one).
    Returns the problems and the saved figure's texts; the file is deleted."""
    prefix, suffix = i18n.text("saved", lang, path="\0").split("\0")
    button(area, i18n.text("save_as", lang, fmt="SVG")).click()
    status = says(page, notebook, area, prefix, suffix)
    if status is None:
        expected = i18n.text("saved", lang, path="…")
        return [f"{what}: after a click on Save SVG it says {area.evaluate(MESSAGES)}, not "
                f"{expected!r}"], []
    name = status[len(prefix):len(status) - len(suffix)]
    if not name.endswith(".svg"):
        return [f"{what}: Save SVG saved {name!r}, not an .svg file"], []
    path = urllib.parse.quote(f"{PurePosixPath(notebook).parent}/{name}")
    try:
        svg = lab.api("GET", f"/api/contents/{path}?content=1&format=text")["content"]
    except urllib.error.HTTPError as err:
        return [f"{what}: it says {status!r}, but the server has no {path}: {err}"], []
    lab.api("DELETE", f"/api/contents/{path}")
    return [], figure_texts(svg)


def problems_in_figure(page: Page, notebook: str, lab: Lab, area: Locator, index: int,
                       lang: str, what: str, expected: list[str]) -> list[str]:
    """The figure on screen, saved as SVG, has the ``expected`` texts, and all its texts are
    in the edition's language (the widget's tokens aside)."""
    problems, texts = saved_figure(page, notebook, lab, area, lang, what)
    if problems:
        return problems
    is_token = wording(page, index, lang).is_token
    problems = [f"{what}: the saved figure has no text {text!r}" for text in expected
                if text not in texts]
    for text in texts:
        if foreign := not_in_language(text, lang, is_token):
            problems.append(f"{what}: the saved figure's text {text!r} is not in "
                            f"{LANGUAGE[lang]} ({' '.join(foreign)})")
    return problems


def drive_attention(page: Page, notebook: str, lab: Lab, index: int,
                    lang: str) -> tuple[list[str], bool]:
    """The attention widget's model view, step-by-step view and evidence view, their controls
    found by their labels: every change redraws the figure; each view's figure is saved (the
    step-by-step view's at τ = 1, which it must name); the mean of heads, in the step-by-step
    view, gives a notice instead of a figure. Returns the problems and whether the widget has
    the evidence view."""
    def label(key: str, **fmt: object) -> str:
        return i18n.text(key, lang, **fmt)

    area = page.locator(f'[data-e2e-widget="{index}"]')
    figure = area.locator("img:visible")  # the figure of the view on screen
    layer, head = labelled(area, label("layer"), "select"), labelled(area, label("head"), "select")
    query = labelled(area, label("query_token"), "select")
    problems = []

    def redraws(what: str, act: Callable[[], object], watched: Locator = figure) -> None:
        """``act`` changes what ``watched`` (the figure on screen, or the whole widget) shows,
        and leaves one figure on screen."""
        if figure.count() != 1:  # a view shows one figure, or a message instead
            problems.append(f"widget {index + 1}: before {what}, {figure.count()} figures on "
                            f"screen, and the messages {area.evaluate(MESSAGES)}")
        elif not reacts(page, notebook, watched, act) or figure.count() != 1:
            problems.append(f"widget {index + 1}: {what} did not redraw the figure (messages: "
                            f"{area.evaluate(MESSAGES)})")

    def other_head() -> None:
        """A head other than the one selected, and not the mean of heads."""
        heads = [h.strip() for h in head.locator("option").all_text_contents()
                 if h.strip().isdigit()]
        now = selected(head)
        head.select_option(label=heads[(heads.index(now) + 1) % len(heads)]
                           if now in heads else heads[0])

    def show(key: str) -> str:
        """Switches to the view (unless it is on screen already); returns its name."""
        view, toggle = f"the view {label(key)!r}", button(area, label(key))
        if "mod-active" not in (toggle.get_attribute("class") or "").split():
            redraws(view, toggle.click, watched=area)
        return view

    view = show("view_model")
    redraws(f"{view}: another {label('layer')!r}", functools.partial(operate, layer, "select"))
    redraws(f"{view}: another {label('head')!r}", other_head)
    title = label("attention_title", layer=selected(layer),
                  head=label("head_name", head=selected(head)))
    problems += problems_in_figure(page, notebook, lab, area, index, lang,
                                   f"widget {index + 1}, {view}",
                                   [label("model_view_title"), title])

    view = show("view_query_key")
    redraws(f"{view}: another {label('query_token')!r}",
            functools.partial(operate, query, "select"))
    redraws(f"{view}: another {label('head')!r}", other_head)
    redraws(f"{view}: another {label('layer')!r}", functools.partial(operate, layer, "select"))
    redraws(f"{view}: {label('padding')!r} moved",
            functools.partial(operate, labelled(area, label("padding"), ".noUi-handle"),
                              "slider"))
    temperature = labelled(area, label("temperature"), ".noUi-handle")
    redraws(f"{view}: {label('temperature')!r} moved",
            functools.partial(operate, temperature, "slider"))

    def unscaled() -> None:
        """The temperature down to its first stop, τ = 1, one key press per stop."""
        temperature.focus()
        for _ in range(round(float(temperature.get_attribute("aria-valuenow")))):
            temperature.press("ArrowLeft")
        # Every press sent before the figure is judged: on a busy machine the kernel can go
        # idle between two presses, and the figure then saved would be an earlier stop's.
        temperature.element_handle().wait_for_element_state("stable")
        page.wait_for_function("h => Number(h.getAttribute('aria-valuenow')) === 0",
                               arg=temperature.element_handle(), timeout=CHANGE_TIMEOUT_MS)
        settle(page, notebook)  # the last press's message handled, not merely sent

    redraws(f"{view}: {label('temperature')!r} down to 1", unscaled)
    title = label("qk_title", layer=selected(layer), head=selected(head),
                  token=selected(query).partition(": ")[2])
    problems += problems_in_figure(page, notebook, lab, area, index, lang,
                                   f"widget {index + 1}, {view}",
                                   [label("qk_scores_title"), title,
                                    label("qk_temperature_none")])

    head.select_option(label=label("mean_heads"))
    notice = label("qk_mean_head")
    said = says(page, notebook, area, notice) or area.evaluate(MESSAGES)
    if said != notice or figure.count():
        problems.append(f"widget {index + 1}, {view}: {label('mean_heads')!r} shows "
                        f"{figure.count()} figures and says {said!r}, not {notice!r} alone")

    if not button(area, label("view_evidence")).count():
        return problems, False
    # A head again (the mean of heads left no figure), the evidence view, one other token
    # masked (the model runs again), then another head: each redraws.
    reacts(page, notebook, area, other_head)
    masked = labelled(area, label("masked_tokens"), "select")
    view = show("view_evidence")

    def mask_next() -> None:
        count = masked.locator("option").count()
        masked.select_option(index=(masked.evaluate("(s) => s.selectedIndex") + 1) % count)

    redraws(f"{view}: another of {label('masked_tokens')!r}", mask_next)
    redraws(f"{view}: another {label('head')!r}", other_head)
    title = label("ev_raw_title", layer=selected(layer),
                  head=label("head_name", head=selected(head)))
    problems += problems_in_figure(page, notebook, lab, area, index, lang,
                                   f"widget {index + 1}, {view}",
                                   [label("ev_norm_title"), title])
    return problems, True


def fill_mask_rows(page: Page, index: int, lang: str) -> list[tuple[str, str]] | None:
    """(original token, guesses) of each row of the masking widget's targets table; None when
    the table has no fill-mask column (no model given)."""
    for rows in wording(page, index, lang).tables:
        headers = [cell for th, cell in rows[0] if th]
        if i18n.text("model_guesses", lang) in headers:
            original = headers.index(i18n.text("target_original", lang))
            column = headers.index(i18n.text("model_guesses", lang))
            return [(row[original][1], row[column][1]) for row in rows[1:]]
    return None


def problems_in_guesses(rows: list[tuple[str, str]], texts: list[str], lang: str) -> list[str]:
    """Each row's guesses: tokens with probabilities, most probable first, the original token
    (and only it) marked; under the table, how often the original was among them."""
    if not rows:
        return ["the fill-mask table has no rows"]
    problems, found, sizes = [], 0, set()
    for original, cell in rows:
        guessed = guesses(cell)
        if not guessed:
            problems.append(f"fill-mask guesses {cell!r} are not 'token 0.37 · token 0.15 ...'")
            continue
        probabilities = [p for _, p, _ in guessed]
        if probabilities != sorted(probabilities, reverse=True) or sum(probabilities) > 1.01:
            problems.append(f"fill-mask guesses {cell!r}: not probabilities, most probable first")
        marked = [token for token, _, mark in guessed if mark]
        if marked != [token for token, _, _ in guessed if token == original]:
            problems.append(f"fill-mask guesses {cell!r}: the original {original!r} marked wrong")
        found += bool(marked)
        sizes.add(len(guessed))
    summary = i18n.text("guesses_found", lang, k=max(sizes, default=0), found=found,
                        total=len(rows))
    if not problems and summary not in texts:
        problems.append(f"no {summary!r} under the fill-mask table")
    return problems


def drive_masking(page: Page, notebook: str, lab: Lab, index: int,
                  lang: str) -> tuple[list[str], bool]:
    """The masking widget: with the model, its fill-mask column holds the guesses, which change
    with a resample; its chips are saved as SVG. Returns the problems and whether it has the
    fill-mask column."""
    area = page.locator(f'[data-e2e-widget="{index}"]')
    what = f"widget {index + 1} (masking)"
    before = fill_mask_rows(page, index, lang)
    problems = []
    if before is not None:
        problems += [f"{what}: {problem}" for problem in
                     problems_in_guesses(before, wording(page, index, lang).texts, lang)]
        header = page.locator("th", has_text=exact(i18n.text("model_guesses", lang)))
        table = area.locator(".widget-html", has=header)
        changed = reacts(page, notebook, table, button(area, i18n.text("resample", lang)).click)
        after = fill_mask_rows(page, index, lang) or []
        if not changed or [cell for _, cell in after] == [cell for _, cell in before]:
            problems.append(f"{what}: {i18n.text('resample', lang)!r} left the model's guesses "
                            f"as they were: {before}")
        else:
            problems += [f"{what}, resampled: {problem}" for problem in
                         problems_in_guesses(after, wording(page, index, lang).texts, lang)]
    problems += problems_in_figure(page, notebook, lab, area, index, lang, what,
                                   [i18n.text("fate_mask", lang)])
    return problems, before is not None


def drive_timelapse(page: Page, notebook: str, lab: Lab, index: int, lang: str) -> list[str]:
    """The time-lapse widget: its play button runs through the snapshots to the last one, the
    step slider then moves back one; each redraws the figure, whose title names the step on
    the slider, and the figure saved as SVG is worded in the edition's language."""
    def label(key: str, **fmt: object) -> str:
        return i18n.text(key, lang, **fmt)

    area = page.locator(f'[data-e2e-widget="{index}"]')
    figure = area.locator("img:visible")
    handle = labelled(area, label("tl_step"), ".noUi-handle")
    readout = labelled(area, label("tl_step"), ".widget-readout")
    play = area.locator(".widget-play button").first
    what = f"widget {index + 1} (time-lapse)"
    problems = []
    # At rest first: operating the widget's first button may have set it playing.
    page.wait_for_function(AT_REST, arg=play.element_handle(), timeout=RUN_TIMEOUT_MS)
    if not reacts(page, notebook, figure, play.click):
        problems.append(f"{what}: the play button did not redraw the figure (messages: "
                        f"{area.evaluate(MESSAGES)})")
    try:  # played to the end: the slider's handle at its last step
        page.wait_for_function(PLAYED, arg=[handle.element_handle(), play.element_handle()],
                               timeout=RUN_TIMEOUT_MS)
    except PlaywrightError:
        problems.append(f"{what}: the play button left the slider at {readout.inner_text()!r}")
    page.wait_for_function(KERNEL_IDLE, arg=notebook, timeout=RUN_TIMEOUT_MS)
    last = readout.inner_text().strip()
    problems += problems_in_figure(page, notebook, lab, area, index, lang, f"{what}, played",
                                   [label("tl_title", step=last, last=last)])

    def back() -> None:
        handle.focus()
        handle.press("ArrowLeft")

    if not reacts(page, notebook, figure, back):
        problems.append(f"{what}: moving the slider {label('tl_step')!r} back from {last} did "
                        "not redraw the figure")
    step = readout.inner_text().strip()
    if step == last:
        problems.append(f"{what}: the slider {label('tl_step')!r} stayed at {last}")
    problems += problems_in_figure(page, notebook, lab, area, index, lang,
                                   f"{what}, at step {step}",
                                   [label("tl_title", step=step, last=last)])
    return problems


# What a long input can break: the layout, the widget's height, its texts and labels.
LONG_INPUT_CHECKS = (OVERFLOW, TALL_WIDGETS, SMALL_TEXT, CUT_LABELS)


def problems_at_long_input(page: Page, notebook: str, index: int, lang: str, *,
                           every_view: bool = False) -> list[str]:
    """The widget's first sentence box (if it has one) given LONG_SENTENCES[lang]: once it
    redraws, its controls and figure still fit the visible area, nothing sticks out or scrolls
    sideways, no text is under 10 px, no label is cut (LONG_INPUT_CHECKS, in the light theme);
    ``every_view``: in each view of the attention widget."""
    area = page.locator(f'[data-e2e-widget="{index}"]')
    boxes = [labelled(area, i18n.text(key, lang), 'input[type="text"]:visible')
             for key in SENTENCE_BOXES]
    box = next((b.first for b in boxes if b.count()), None)
    if box is None:
        return []
    sentence, what = LONG_SENTENCES[lang], f"widget {index + 1}"
    context = "with a long sentence (LONG_SENTENCES)"
    # One head, not their mean (which the step-by-step view answers with a notice alone).
    head = labelled(area, i18n.text("head", lang), "select")
    if head.count() and selected(head) == i18n.text("mean_heads", lang):
        reacts(page, notebook, area, lambda: head.select_option(index=0))

    def type_it() -> None:
        box.fill(sentence)
        box.press("Enter")

    if box.input_value() != sentence and not reacts(page, notebook, area, type_it):
        return [f"{what}: typing a long sentence into its sentence box changed nothing "
                f"(messages: {area.evaluate(MESSAGES)})"]
    measure = functools.partial(problems_on_page, page, notebook, "light", index,
                                LONG_INPUT_CHECKS, context)
    if not every_view:
        return measure()

    def toggle(key: str) -> Locator:
        return button(area, i18n.text(key, lang))

    problems = []
    for key in ATTENTION_VIEWS:
        if not toggle(key).count():
            continue
        if "mod-active" not in (toggle(key).first.get_attribute("class") or "").split():
            reacts(page, notebook, area, toggle(key).first.click)
        with contextlib.suppress(PlaywrightError):  # a view that draws nothing is told above
            page.wait_for_function(VIEW_DRAWN, arg=area.element_handle(),
                                   timeout=CHANGE_TIMEOUT_MS)
        settle(page, notebook)
        problems += measure()
    return problems


def problems_in_widgets(page: Page, notebook: str, lab: Lab) -> tuple[list[str], set[str]]:
    """Every widget drawn, worded in the edition's language, and the first control of each
    kind in it changes what it shows; then the attention and masking widgets driven by their
    labels. Returns the problems and which of "attention", "evidence" (its evidence view) and
    "fill-mask" (a masking widget with the model's guesses) were driven."""
    lang = in_repo(notebook).split("/")[0]
    with contextlib.suppress(PlaywrightError):  # the checks below name what is missing
        page.wait_for_function(WIDGETS_SETTLED, arg=notebook, timeout=RUN_TIMEOUT_MS)
    widgets = page.evaluate(WIDGET_OUTPUTS, notebook)
    problems = [
        f"widget {i + 1} not drawn: {w['text']!r}" for i, w in enumerate(widgets) if not w["drawn"]
    ]
    sources = page.evaluate(SOURCES, notebook)
    if not widgets and any(USES_WIDGETS.search(source) for source in sources):
        problems.append("the code uses widgets but no widget was displayed")
    problems += problems_in_wording(page, len(widgets), lang)
    # Each view of the attention widget, as the notebook left it (its texts the notebook's).
    for index in range(len(widgets)):
        if button(page.locator(f'[data-e2e-widget="{index}"]'),
                  i18n.text("view_query_key", lang)).count():
            problems += problems_in_attention_views(page, notebook, index, lang)
    for index, widget in enumerate(widgets):
        area = page.locator(f'[data-e2e-widget="{index}"]')
        # The first control of each kind (text box, slider, dropdown, button, ...) it has.
        for kind in dict.fromkeys(widget["kinds"]):
            # Marked afresh: an earlier change may have redrawn the controls.
            now = page.evaluate(WIDGET_OUTPUTS, notebook)[index]
            if kind not in now["kinds"]:
                continue
            number = now["kinds"].index(kind)
            act = functools.partial(operate, area.locator(f'[data-e2e-control="{number}"]'), kind)
            # A second try, as one step may legitimately draw the same (a ratio rounding
            # to the same count).
            if not any(reacts(page, notebook, area, act) for _ in range(2)):
                label = now["labels"][number]
                problems.append(
                    f"widget {index + 1}: operating its first {kind} {label!r} changed neither "
                    "its figure nor its text"
                )
    # Each kind of widget driven through once per notebook, by its first instance that has
    # what is to be driven (03 shows three attention widgets: the same class on other models,
    # each of their views measured above, in both themes).
    driven = set()
    for index in range(len(widgets)):
        area = page.locator(f'[data-e2e-widget="{index}"]')
        # Told by their controls: the attention widget by its step-by-step view, the masking
        # widget by its resample button.
        if button(area, i18n.text("view_query_key", lang)).count() and (
                "attention" not in driven or ("evidence" not in driven and button(
                    area, i18n.text("view_evidence", lang)).count())):
            attention, evidence = drive_attention(page, notebook, lab, index, lang)
            problems += attention
            driven.update({"attention", "evidence"} if evidence else {"attention"})
        if button(area, i18n.text("resample", lang)).count() and "fill-mask" not in driven:
            masking, fill_mask = drive_masking(page, notebook, lab, index, lang)
            problems += masking
            if fill_mask:
                driven.add("fill-mask")
        if (labelled(area, i18n.text("tl_step", lang), ".noUi-handle").count()
                and "time-lapse" not in driven):
            problems += drive_timelapse(page, notebook, lab, index, lang)
            driven.add("time-lapse")
    # A long sentence typed into every widget that has a sentence box (the attention widget's
    # views measured in its first instance).
    measured = False
    for index in range(len(widgets)):
        area = page.locator(f'[data-e2e-widget="{index}"]')
        attention = bool(button(area, i18n.text("view_query_key", lang)).count())
        problems += problems_at_long_input(page, notebook, index, lang,
                                           every_view=attention and not measured)
        measured = measured or attention
    # Again after all that: what the operations brought on screen.
    problems += problems_in_wording(page, len(widgets), lang)
    return list(dict.fromkeys(problems)), driven


def problems_in_chinese(page: Page, names: set[str]) -> list[str]:
    """Chinese and Japanese text on the page (Han characters and kana) is drawn with the
    project's CJK font (per Chromium's report)."""
    marked = page.evaluate(MARK_CHINESE)
    problems = [] if any(markdown for *_, markdown in marked) else ["no CJK markdown"]
    cdp = page.context.new_cdp_session(page)
    try:
        cdp.send("DOM.enable")
        cdp.send("CSS.enable")
        root = cdp.send("DOM.getDocument", {"depth": 0})["root"]["nodeId"]
        tofu = []
        for index, (text, han, _) in enumerate(marked):
            node = cdp.send(
                "DOM.querySelector", {"nodeId": root, "selector": f'[data-e2e-cjk="{index}"]'}
            )["nodeId"]
            fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]
            cjk = sum(
                f["glyphCount"] for f in fonts if {f["familyName"], f["postScriptName"]} & names
            )
            if cjk < han:
                used = {f["familyName"]: f["glyphCount"] for f in fonts}
                tofu.append(
                    f"{text!r}: {han} Chinese characters but only {cjk} glyphs from the CJK "
                    f"font (fonts used: {used})"
                )
        more = [f"... and {len(tofu) - 10} more texts like these"] if len(tofu) > 10 else []
        return problems + tofu[:10] + more
    finally:
        cdp.detach()


def set_theme(page: Page, theme: str) -> None:
    """Switches the page to JupyterLab's light or dark theme and waits until it is drawn."""
    page.wait_for_function(THEME_SET, timeout=30_000)  # the theme the page started with
    page.evaluate(SET_THEME, THEMES[theme])
    page.wait_for_function(THEME_APPLIED, arg=[THEMES[theme], theme == "light"], timeout=30_000)
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")


def problems_on_page(page: Page, notebook: str, theme: str, widget: int | None = None,
                     checks: tuple[str, ...] = SCREEN_CHECKS, context: str = "") -> list[str]:
    """What a learner on a projector cannot read in the outputs (all, or one widget's) in the
    theme on the page: a figure shown as its repr; anything sticking out of its output or
    scrolling sideways; a widget's controls and figure taller than the visible area; a text
    under 10 px or a figure scaled down; a label cut or broken mid-word; a slider's track under
    80 × 4 px; a text under WCAG AA contrast. ``checks``: some of them; ``context``: what the
    failures say after the theme ("with a 58-token sentence")."""
    page.evaluate(MARK_WIDGETS, notebook)  # the failures name the widgets
    page.evaluate(IMAGES_READY)
    problems = []
    for check in checks:
        problems += page.evaluate(check, [notebook, widget] if check is TALL_WIDGETS else widget)
    name = in_repo(notebook).removesuffix(".ipynb")
    where = f"{theme} theme, {context}" if context else f"{theme} theme"
    return [f"{name}, {where}: {problem}" for problem in problems]


def in_both_themes(page: Page, check: Callable[[str], list[str]]) -> list[str]:
    """``check(theme)`` in the light theme, then in the dark one (the page back in the light
    theme after); a failure found in both is told once, for both themes."""
    light = check("light")
    set_theme(page, "dark")
    try:
        dark = check("dark")
    finally:
        set_theme(page, "light")
    both = ", light and dark themes: "
    light_only = [p for p in light if p.replace(", light theme: ", ", dark theme: ") not in dark]
    return ([p.replace(", light theme: ", both) for p in light if p not in light_only]
            + light_only + [p for p in dark if p.replace(", dark theme: ", ", light theme: ")
                            not in light])


def problems_on_screen(page: Page, notebook: str) -> list[str]:
    """problems_on_page for every output, as the run left them, in both themes."""
    with contextlib.suppress(PlaywrightError):  # problems_in_widgets names a widget not drawn
        page.wait_for_function(WIDGETS_SETTLED, arg=notebook, timeout=RUN_TIMEOUT_MS)
    return in_both_themes(page, functools.partial(problems_on_page, page, notebook))


def problems_in_attention_views(page: Page, notebook: str, index: int, lang: str) -> list[str]:
    """problems_on_page for the attention widget in each of its views, in both themes: from
    the view on screen through the others in the light theme, and back in the dark one."""
    area = page.locator(f'[data-e2e-widget="{index}"]')

    def toggle(key: str) -> Locator:
        return button(area, i18n.text(key, lang))

    def active(key: str) -> bool:
        return bool(toggle(key).count()) and "mod-active" in (
            toggle(key).first.get_attribute("class") or "").split()

    def show(key: str) -> None:
        """Switches to the view (drive_attention checks that it redraws), once it is drawn."""
        if not active(key):
            reacts(page, notebook, area, toggle(key).first.click)
        with contextlib.suppress(PlaywrightError):  # drive_attention names a figure missing
            page.wait_for_function(VIEW_DRAWN, arg=area.element_handle(),
                                   timeout=CHANGE_TIMEOUT_MS)
        page.wait_for_function(KERNEL_IDLE, arg=notebook, timeout=RUN_TIMEOUT_MS)

    views = [key for key in ATTENTION_VIEWS if toggle(key).count()]
    views.sort(key=lambda key: not active(key))  # the view on screen first
    problems = [f"widget {index + 1}: no view {i18n.text(key, lang)!r}"
                for key in ATTENTION_VIEWS if key not in views]

    def every_view(theme: str) -> list[str]:
        found = []
        for key in views if theme == "light" else views[::-1]:
            show(key)
            found += problems_on_page(page, notebook, theme, index)
        return found

    return problems + in_both_themes(page, every_view)


def one_by_one(problems: list[str]) -> list[str]:
    """The problems without repeats, a problem of a widget's control told for the first view
    that shows it (the attention widget's toggle buttons are the same in each view)."""
    seen, unique = set(), []
    for problem in problems:
        key = VIEW.sub("", problem)
        if key not in seen:
            seen.add(key)
            unique.append(problem)
    return unique


def save_screenshot(page: Page, notebook: str) -> None:
    """The whole notebook, as a student would scroll through it."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    height = page.evaluate(SCREENSHOT_HEIGHT, notebook)
    # Chromium cannot capture beyond about 16k pixels.
    page.set_viewport_size({"width": VIEWPORT["width"],
                            "height": max(VIEWPORT["height"], min(int(height), 16_000))})
    page.evaluate(IMAGES_READY)  # laid out and drawn at the new size
    page.screenshot(path=ARTIFACTS / in_repo(notebook).replace("/", "_").replace(".ipynb", ".png"))


class Stopwatch:
    """The seconds each stage of one notebook's test took, appended as a line (notebook, then
    stage=seconds) to the worker's test-artifacts/e2e/stages-<worker>.tsv: where the time goes."""

    def __init__(self) -> None:
        self.start, self.stages = time.monotonic(), {}

    def lap(self, stage: str) -> None:
        now = time.monotonic()
        self.stages[stage], self.start = round(now - self.start, 1), now

    def save(self, notebook: str, stages: Path) -> None:
        with stages.open("a") as out:
            out.write("\t".join([notebook, *(f"{k}={v}" for k, v in self.stages.items())]) + "\n")


@pytest.mark.parametrize("notebook", NOTEBOOKS or ["<no notebooks>"])
def test_notebook_in_jupyterlab(notebook: str, lab: Lab, lab_page: LabPage) -> None:
    """Runs all cells of one notebook in the browser, compares the outputs with the committed
    ones as strict nbval does, and checks what the page shows."""
    assert notebook in NOTEBOOKS, f"no notebooks in {NOTEBOOK_ROOT}/{EDITIONS}"
    path = lab_path(notebook)  # in the lab; ``notebook`` names it in failures
    times = Stopwatch()
    page = lab_page.get()
    page_errors: list[str] = []
    kernel_errors: list[str] = []
    page.on("pageerror", on_error := lambda err: page_errors.append(str(err)))

    def watch_kernel(ws) -> None:
        # Errors from widget callbacks reach only the log console; catch them on the wire.
        def on_frame(payload) -> None:
            text = payload if isinstance(payload, str) else payload.decode("utf-8", "replace")
            if KERNEL_ERROR.search(text):
                found = re.search(r'"ename":\s*"([^"]*)",\s*"evalue":\s*"((?:[^"\\]|\\.)*)"', text)
                kernel_errors.append(": ".join(found.groups()) if found else text[:300])

        if "/api/kernels/" in ws.url:
            ws.on("framereceived", on_frame)

    page.on("websocket", watch_kernel)
    log_start = lab.log.stat().st_size
    passed = False
    try:
        page.evaluate(OPEN_NOTEBOOK, path)
        page.wait_for_function(KERNEL_READY, arg=path, timeout=120_000, polling=250)
        set_theme(page, "light")  # an earlier test's dark theme may be in the saved settings
        times.lap("open")
        # The figures as saved, what a learner sees before running anything.
        saved = [f"{notebook.removesuffix('.ipynb')}, as saved: {problem}"
                 for problem in page.evaluate(FIGURE_REPRS, None)]
        page.evaluate(START_RUN_ALL, path)
        page.wait_for_function(RUN_FINISHED, arg=path, timeout=RUN_TIMEOUT_MS, polling=250)
        status = page.evaluate(KERNEL_STATUS, path)
        assert status == "idle", f"{notebook}: the kernel is {status} after running all cells"
        times.lap("run")
        # What nbval checks, on the outputs as the run left them, before any widget is touched.
        committed = nbformat.read(NOTEBOOK_ROOT / notebook, as_version=4)
        problems = mismatches(notebook, committed, page.evaluate(OUTPUTS, path))
        problems += saved + problems_in_outputs(page, path)
        times.lap("compare")
        problems += problems_on_screen(page, path)
        times.lap("screen")
        widget_problems, driven = problems_in_widgets(page, path, lab)
        times.lap("widgets")
        problems += widget_problems
        problems += [f"no {kind} widget to drive (see MUST_DRIVE)"
                     for kind in sorted(MUST_DRIVE.get(Path(notebook).stem, set()) - driven)]
        if notebook.startswith(("zh/", "ja/")):
            problems += problems_in_chinese(page, cjk_font_names(cjk_font_path()))
            times.lap("cjk")
        problems += [f"JavaScript error: {err}" for err in page_errors]
        problems += [f"kernel error: {err}" for err in kernel_errors]
        with lab.log.open("rb") as log:
            log.seek(log_start)
            server_log = log.read().decode("utf-8", "replace")
        if "Traceback (most recent call last)" in server_log:
            problems.append(f"traceback in the server/kernel log:\n{server_log[-2000:]}")
        problems = one_by_one(problems)
        assert not problems, f"{notebook}:\n- " + "\n- ".join(problems)
        passed = True
    finally:
        try:
            if not passed or os.environ.get("E2E_SCREENSHOTS") == "1":
                save_screenshot(page, path)
                times.lap("screenshot")
        finally:
            times.save(notebook, lab_page.stages)
            page.remove_listener("pageerror", on_error)
            page.remove_listener("websocket", watch_kernel)
            lab_page.done(passed)

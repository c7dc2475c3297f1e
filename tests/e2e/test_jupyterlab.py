"""End-to-end: every notebook of both editions, run in JupyterLab in headless Chromium.

nbval checks the kernel side; this checks what a student sees: no error or warning output, no
JavaScript error, every widget rendered and reacting to its controls, and (Chinese edition)
Chinese markdown drawn with the CJK font the project ships, not tofu boxes. One screenshot per
notebook goes to test-artifacts/e2e/. Needs a Chromium: run `.ci/install-browser` (Debian's, or
Playwright's elsewhere).
"""

from __future__ import annotations

import contextlib
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
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Page, sync_playwright

from bertlib.viz.fonts import cjk_font_path

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK_ROOT = REPO / "notebooks"
EDITIONS = ("en", "zh")
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
CHANGE_TIMEOUT_MS = 15_000  # one widget callback, including drawing a figure
NOTEBOOKS = sorted(
    p.relative_to(NOTEBOOK_ROOT).as_posix()
    for edition in EDITIONS
    for p in (NOTEBOOK_ROOT / edition).glob("*.ipynb")
)

STDERR = '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'
# The plain-text repr ipywidgets falls back to when the front end cannot draw a widget.
WIDGET_REPR = re.compile(r"^\w+\((children|value|options|description|layout)=")
USES_WIDGETS = re.compile(r"\bipywidgets\b|\w+Widget\(")
KERNEL_ERROR = re.compile(r'"msg_type":\s*"error"')

# JavaScript run in the page. `window.jupyterapp` exists because of --expose-app-in-browser.
HELPERS = """
const findNotebook = (path) => window.jupyterapp && Array.from(
  window.jupyterapp.shell.widgets('main')).find((w) => w.context && w.context.path === path);
const kernelOf = (nb) => nb && nb.sessionContext.session && nb.sessionContext.session.kernel;
"""


def with_helpers(function: str) -> str:
    """A page function that can use the helpers above."""
    return f"(() => {{ {HELPERS} return {function.strip()}; }})()"


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
# Finds the outputs the notebook model says are widget views, marks each and its operable
# controls, and tells whether it is drawn. (The DOM alone cannot tell: a widget output carries
# no mime type attribute.)
WIDGET_OUTPUTS = with_helpers("""
(path) => findNotebook(path).content.widgets
  .filter((cell) => cell.model.type === 'code')
  .flatMap((cell) => Array.from({ length: cell.model.outputs.length }, (_, i) => [
    cell.model.outputs.get(i).data['application/vnd.jupyter.widget-view+json'],
    cell.outputArea.widgets[i]]))
  .filter(([view, child]) => view && child)
  .map(([, child], index) => {
    const area = child.node.querySelector('.jp-OutputArea-output');
    area.dataset.e2eWidget = index;
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
WIDGETS_SETTLED = f"""
(path) => ({WIDGET_OUTPUTS})(path)
  .every((w) => w.drawn || w.text.includes('Error displaying widget'))
"""
# What a widget shows, leaving out the controls' own state (a slider's readout moves even
# when nothing else does): text, images, canvases and SVG.
SIGNATURE = """
(area) => {
  const clone = area.cloneNode(true);
  clone.querySelectorAll('.widget-readout, select, input, textarea, button')
    .forEach((n) => n.remove());
  return JSON.stringify([
    clone.textContent,
    Array.from(area.querySelectorAll('img')).map((i) => i.src),
    Array.from(area.querySelectorAll('canvas')).map((c) => c.toDataURL()),
    Array.from(area.querySelectorAll('svg')).map((s) => s.outerHTML),
  ]);
}
"""
CHANGED = f"([area, before]) => ({SIGNATURE})(area) !== before"
# Wraps each visible text node holding Han characters, in markdown and in outputs (widget
# labels and tables included), in a marked <span> of its own, so Chromium's font report for
# the span covers exactly that text; returns the text, its Han count and whether it is markdown.
MARK_CHINESE = """
() => {
  const texts = [];
  const roots = '.jp-MarkdownCell .jp-RenderedMarkdown, .jp-Cell-outputArea';
  for (const root of document.querySelectorAll(roots)) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      // Dropdown options are drawn outside the page's layout: no font report for them.
      if (/\\p{Script=Han}/u.test(node.textContent) && !node.parentElement.closest('select')
          && node.parentElement.getClientRects().length) texts.push([node, root]);
    }
  }
  return texts.map(([node, root], i) => {
    const span = document.createElement('span');
    span.dataset.e2eCjk = i;
    node.replaceWith(span);
    span.appendChild(node);
    const han = node.textContent.match(/\\p{Script=Han}/gu).length;
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
    """JupyterLab on 127.0.0.1 with a random token, serving a temporary copy of notebooks/."""
    tmp = tmp_path_factory.mktemp("jupyterlab")
    root = tmp / "notebooks"
    shutil.copytree(NOTEBOOK_ROOT, root, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    write_settings(tmp / "settings")
    port, token = free_port(), secrets.token_hex(24)
    # Config, data, runtime and IPython dirs in temp, so no user state leaks in or out.
    env = dict(os.environ, PYTHONUNBUFFERED="1", IPYTHONDIR=str(tmp / "ipython"))
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
        (ARTIFACTS / log.name).write_text(log.read_text().replace(token, "<token>"))


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
            viewport={"width": 1280, "height": 900},
        )
        try:
            yield context
        finally:
            context.close()


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


def reacts(page: Page, notebook: str, area, control, kind: str) -> bool:
    """Operates the control; whether the widget's figure or text then changes."""
    before = area.evaluate(SIGNATURE)
    operate(control, kind)
    try:
        page.wait_for_function(
            CHANGED, arg=[area.element_handle(), before], timeout=CHANGE_TIMEOUT_MS
        )
    except PlaywrightError:
        return False
    finally:
        # Let the kernel finish this callback before the next control is operated.
        page.wait_for_function(KERNEL_IDLE, arg=notebook, timeout=RUN_TIMEOUT_MS)
    return True


def problems_in_widgets(page: Page, notebook: str) -> list[str]:
    """Every widget drawn, and the first control of each kind in it changes what it shows."""
    with contextlib.suppress(PlaywrightError):  # the checks below name what is missing
        page.wait_for_function(WIDGETS_SETTLED, arg=notebook, timeout=30_000)
    widgets = page.evaluate(WIDGET_OUTPUTS, notebook)
    problems = [
        f"widget {i + 1} not drawn: {w['text']!r}" for i, w in enumerate(widgets) if not w["drawn"]
    ]
    sources = page.evaluate(SOURCES, notebook)
    if not widgets and any(USES_WIDGETS.search(source) for source in sources):
        problems.append("the code uses widgets but no widget was displayed")
    if notebook.startswith("zh/"):
        # Every control a Chinese reader operates is labelled in Chinese (token spellings such
        # as <cls>, code names such as max_len=64 and acronyms such as PNG aside).
        for index, widget in enumerate(widgets):
            english = [label for label in widget["labels"]
                       if re.search(r"[A-Za-z]*[a-z]{3,}", re.sub(r"<\w+>|\w+=\d+", "", label))]
            if english:
                problems.append(f"widget {index + 1}: controls labelled in English: {english}")
    for index, widget in enumerate(widgets):
        area = page.locator(f'[data-e2e-widget="{index}"]')
        # The first control of each kind (text box, slider, dropdown, button, ...) it has.
        for kind in dict.fromkeys(widget["kinds"]):
            # Marked afresh: an earlier change may have redrawn the controls.
            now = page.evaluate(WIDGET_OUTPUTS, notebook)[index]
            if kind not in now["kinds"]:
                continue
            number = now["kinds"].index(kind)
            control = area.locator(f'[data-e2e-control="{number}"]')
            # A second try, as one step may legitimately draw the same (a ratio rounding
            # to the same count).
            if not any(reacts(page, notebook, area, control, kind) for _ in range(2)):
                label = now["labels"][number]
                problems.append(
                    f"widget {index + 1}: operating its first {kind} {label!r} changed neither "
                    "its figure nor its text"
                )
    return problems


def problems_in_chinese(page: Page, names: set[str]) -> list[str]:
    """Chinese text on the page is drawn with the project's CJK font (per Chromium's report)."""
    marked = page.evaluate(MARK_CHINESE)
    problems = [] if any(markdown for *_, markdown in marked) else ["no Chinese markdown"]
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


def save_screenshot(page: Page, notebook: str) -> None:
    """The whole notebook, as a student would scroll through it."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    height = page.evaluate(SCREENSHOT_HEIGHT, notebook)
    # Chromium cannot capture beyond about 16k pixels.
    page.set_viewport_size({"width": 1280, "height": max(900, min(int(height), 16_000))})
    page.wait_for_timeout(300)  # one layout pass at the new size
    page.screenshot(path=ARTIFACTS / notebook.replace("/", "_").replace(".ipynb", ".png"))


@pytest.mark.parametrize("notebook", NOTEBOOKS or ["<no notebooks>"])
def test_notebook_in_jupyterlab(notebook: str, lab: Lab, browser) -> None:
    """Runs all cells of one notebook in the browser and checks what the page shows."""
    assert notebook in NOTEBOOKS, f"no notebooks in {NOTEBOOK_ROOT}/{{en,zh}}"
    page = browser.new_page()
    page_errors: list[str] = []
    kernel_errors: list[str] = []
    page.on("pageerror", lambda err: page_errors.append(str(err)))

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
    try:
        # ?reset: start from an empty workspace, so earlier notebooks are not reopened.
        page.goto(f"{lab.url}/lab/tree/{notebook}?reset&token={lab.token}")
        page.wait_for_function(KERNEL_READY, arg=notebook, timeout=120_000, polling=250)
        page.evaluate(START_RUN_ALL, notebook)
        page.wait_for_function(RUN_FINISHED, arg=notebook, timeout=RUN_TIMEOUT_MS, polling=250)
        status = page.evaluate(KERNEL_STATUS, notebook)
        assert status == "idle", f"{notebook}: the kernel is {status} after running all cells"
        problems = problems_in_outputs(page, notebook)
        problems += problems_in_widgets(page, notebook)
        if notebook.startswith("zh/"):
            problems += problems_in_chinese(page, cjk_font_names(cjk_font_path()))
        problems += [f"JavaScript error: {err}" for err in page_errors]
        problems += [f"kernel error: {err}" for err in kernel_errors]
        with lab.log.open("rb") as log:
            log.seek(log_start)
            server_log = log.read().decode("utf-8", "replace")
        if "Traceback (most recent call last)" in server_log:
            problems.append(f"traceback in the server/kernel log:\n{server_log[-2000:]}")
        assert not problems, f"{notebook}:\n- " + "\n- ".join(problems)
    finally:
        try:
            save_screenshot(page, notebook)
        finally:
            page.close()
            for session in lab.api("GET", "/api/sessions"):
                lab.api("DELETE", f"/api/sessions/{session['id']}")

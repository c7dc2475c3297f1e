"""The built website (`make site`, then `make site-test`): every page of the three editions
opened from the folder in headless Chromium, at 1280×720 and at 390×844.

Marked `site`, which `make test` leaves out, and skipped when build/site has not been built.
Checks: every picture loads (figures and the widgets' pictures, none printed as "VBox(...)"),
no request leaves file://, the language switch leads to the same page of the other edition and
is in view, uncovered and whole, no text of the header or the sidebar is cut or covered, the CJK
text of the zh and ja pages is drawn with the font the site ships, the worked answers
(<details>) open, math is MathML, search finds a word and shows excerpts (from the folder and
over http), nothing is wider than the phone's screen, the front page leads to every page, the
run page has the README's commands, and text contrast meets WCAG AA in the light and dark themes.
"""

from __future__ import annotations

import functools
import http.server
import re
import threading
from pathlib import Path

import pytest

playwright_api = pytest.importorskip("playwright.sync_api")

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "build" / "site"
EDITIONS = ("en", "zh", "ja")
CHROMIUM = Path("/usr/bin/chromium")
DESKTOP = {"width": 1280, "height": 720}
PHONE = {"width": 390, "height": 844}
EDITION_NAMES = {"en": "English", "zh": "中文", "ja": "日本語"}
CJK = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
# A word of each edition that search must find, and a page it is on.
SEARCH = {
    "en": ("attention", "03_encoder"),
    "zh": ("注意力", "03_encoder"),
    "ja": ("アテンション", "03_encoder"),
}

pytestmark = [
    pytest.mark.site,
    pytest.mark.skipif(not (SITE / "index.html").exists(), reason="no build/site: run `make site`"),
]


def pages(lang: str) -> list[str]:
    names = sorted(p.stem for p in (ROOT / "notebooks" / lang).glob("*.ipynb"))
    return [*names, "GLOSSARY", "run"]


@pytest.fixture(scope="module")
def browser():
    with playwright_api.sync_playwright() as playwright:
        executable = CHROMIUM if CHROMIUM.exists() else Path(playwright.chromium.executable_path)
        if not executable.exists():
            pytest.fail(f"no Chromium at {CHROMIUM}: run `.ci/install-browser .venv/bin/python`")
        browser = playwright.chromium.launch(
            executable_path=executable,
            headless=True,
            args=["--no-sandbox", "--disable-gpu", "--no-first-run"],
        )
        try:
            yield browser
        finally:
            browser.close()


def confined(browser, viewport: dict, origin: str):
    """A new page in its own context whose requests outside ``origin`` (and data:, blob:) are
    refused and recorded in ``page.outside``."""
    context = browser.new_context(viewport=viewport)
    outside: list[str] = []

    def route(r):
        if r.request.url.startswith((origin, "data:", "blob:")):
            r.continue_()
        else:
            outside.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    page = context.new_page()
    page.outside = outside
    return context, page, outside


@pytest.fixture(params=[DESKTOP, PHONE], ids=["1280x720", "390x844"])
def page(browser, request):
    """A page whose every request outside file:// is refused and recorded."""
    context, page, outside = confined(browser, request.param, "file://")
    page.width = request.param["width"]
    yield page
    context.close()
    assert not outside, f"requests that left the folder: {outside}"


def url(lang: str, name: str) -> str:
    return (SITE / lang / f"{name}.html").as_uri()


# Text cut or hidden in the parts of the page given by a selector: for each visible element with
# text of its own, whether it lies outside the window (a sticky header's text must be inside it)
# or outside an ancestor that clips its overflow, overflows its own box (scrollWidth), or is
# under another element (elementFromPoint at its centre and near its ends, when it lies in the
# window and in every scrolled ancestor: a sidebar scrolled to the current page is not a cut).
CUT = """(selector) => {
  const out = [];
  const own = e => [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
  for (const root of document.querySelectorAll(selector)) {
    if (!root.checkVisibility({visibilityProperty: true})) continue;
    const rr = root.getBoundingClientRect();
    if (rr.right <= 0 || rr.left >= innerWidth) continue;  // an off-canvas drawer, closed
    const rs = getComputedStyle(root);  // a sticky header, not a scrolled sidebar:
    const sticky = rs.position === 'sticky' && rs.overflowY === 'visible';
    for (const e of [root, ...root.querySelectorAll('*')]) {
      const shown = e.checkVisibility({opacityProperty: true, visibilityProperty: true});
      if (!own(e) || !shown) continue;
      const r = e.getBoundingClientRect();
      if (!r.width || !r.height) continue;
      const text = e.textContent.trim().slice(0, 30);
      const where = `${e.tagName.toLowerCase()}.${e.className} "${text}"`;
      if (sticky && (r.top < -0.5 || r.bottom > innerHeight + 0.5 || r.left < -0.5
                     || r.right > innerWidth + 0.5)) {
        out.push(`${where}: outside the window (${Math.round(r.top)}, ${Math.round(r.left)})`);
        continue;
      }
      let inView = true;
      for (let a = e.parentElement; a; a = a.parentElement) {
        const st = getComputedStyle(a);
        if (st.overflowX === 'visible' && st.overflowY === 'visible') continue;
        const ar = a.getBoundingClientRect();
        const outX = r.left < ar.left - 0.5 || r.right > ar.right + 0.5;
        const outY = r.top < ar.top - 0.5 || r.bottom > ar.bottom + 0.5;
        if (!outX && !outY) continue;
        const cuts = v => /hidden|clip/.test(v);  // 'auto' or 'scroll': scrolled out of view
        if ((outX && cuts(st.overflowX)) || (outY && cuts(st.overflowY)))
          out.push(`${where}: clipped by ${a.tagName.toLowerCase()}.${a.className}`);
        inView = false;
      }
      const st = getComputedStyle(e);
      const box = st.display !== 'inline' && st.overflowX !== 'visible';
      if (box && e.scrollWidth > e.clientWidth + 1)
        out.push(`${where}: overflows its box`);
      if (!inView || r.top < 0 || r.left < 0 || r.bottom > innerHeight || r.right > innerWidth)
        continue;
      const h = Math.min(r.height / 2 - 1, 6), w = Math.min(r.width / 2 - 1, 6);
      for (const [x, y] of [[r.left + r.width / 2, r.top + r.height / 2], [r.left + w, r.top + h],
                            [r.right - w, r.bottom - h]]) {
        const hit = document.elementFromPoint(x, y);
        if (!hit || !(hit === e || e.contains(hit) || hit.contains(e))) {
          out.push(`${where}: under ${hit && hit.tagName.toLowerCase()}.${hit && hit.className}`);
          break;
        }
      }
    }
  }
  return out;
}"""


PAGE_FACTS = """() => {
  const imgs = [...document.querySelectorAll('main img')];
  return {
    images: imgs.length,
    broken: imgs.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.getAttribute('src')),
    reprs: [...document.querySelectorAll('.cell_output pre')]
             .map(p => p.textContent).filter(t => /^\\s*(VBox|HBox)\\(/.test(t)).length,
    details: document.querySelectorAll('main details').length,
    switch: [...document.querySelectorAll('.bd-header-article .language-switch a[hreflang]')]
              .map(a => [a.hreflang, a.href]),
    text: document.querySelector('main').innerText,
    lang: document.documentElement.lang,
    overflow: document.documentElement.scrollWidth - window.innerWidth,
    run: !!document.querySelector('a.run-link[href$="run.html"]'),
    cut: (CUT)('.bd-header-article, .bd-sidebar-primary'),
  };
}""".replace("(CUT)", f"({CUT})")

CJK_FONT = """async () => {
  await document.fonts.ready;
  return [...document.fonts].filter(f => f.family.includes('Site CJK')).map(f => f.status);
}"""


@pytest.mark.parametrize("lang", EDITIONS)
def test_every_page(page, lang):
    """Every page of the edition: pictures loaded, no widget repr, the language switch to the
    same page, the run link, CJK text in its shipped font, nothing wider than the screen."""
    for name in pages(lang):
        page.goto(url(lang, name), wait_until="load")
        facts = page.evaluate(PAGE_FACTS)
        where = f"{lang}/{name} at {page.width}px"
        assert not facts["broken"], f"{where}: pictures that did not load: {facts['broken']}"
        assert facts["reprs"] == 0, f"{where}: a widget printed as text"
        assert facts["overflow"] <= 1, f"{where}: {facts['overflow']} px wider than the window"
        assert facts["run"] or name == "run", f"{where}: no link to how to run it"
        assert not facts["cut"], f"{where}: text cut or covered: {facts['cut']}"
        others = dict(facts["switch"])
        assert set(others) == set(EDITIONS) - {lang}, f"{where}: language switch {others}"
        for other, href in others.items():
            assert href == url(other, name), f"{where}: {other} leads to {href}"
            assert (SITE / other / f"{name}.html").exists()
        if name[:2].isdigit() and name != "00_index":
            assert facts["images"] > 0, f"{where}: no figure or widget picture"
        if lang != "en":
            assert facts["lang"].startswith(lang)
            assert len(CJK.findall(facts["text"])) > 100, f"{where}: little CJK text"
            statuses = page.evaluate(CJK_FONT)
            assert "loaded" in statuses, f"{where}: the shipped CJK font is not used: {statuses}"


def test_widget_pictures_and_worked_answers(page):
    """A notebook with widgets and exercises: a picture per widget, hints and answers open."""
    for lang in EDITIONS:
        page.goto(url(lang, "04_masked_lm"))
        facts = page.evaluate(PAGE_FACTS)
        assert facts["images"] >= 1 and facts["details"] >= 3, facts
        summary = page.locator("main details > summary").first
        summary.scroll_into_view_if_needed()
        summary.click()
        assert page.locator("main details").first.get_attribute("open") is not None
        assert page.locator("main details").first.locator("p, li").count() >= 1  # markdown inside
        page.goto(url(lang, "05_next_sentence"))
        assert page.locator("main details pre").count() >= 1  # a worked answer's listing
        page.goto(url(lang, "03_encoder"))
        assert page.locator("main math").count() > 0  # MathML, drawn without a script


def test_the_download_button_gives_the_committed_notebook(page):
    """The theme's download button: the notebook as committed, to open in JupyterLab (its links
    lead to the other editions' notebooks), not the site's staged copy."""
    for lang in EDITIONS:
        page.goto(url(lang, "04_masked_lm"))
        hrefs = page.eval_on_selector_all('a[href$=".ipynb"]', "as => as.map(a => a.href)")
        assert len(hrefs) == 1, hrefs
        downloaded = Path(hrefs[0].removeprefix("file://"))
        committed = ROOT / "notebooks" / lang / "04_masked_lm.ipynb"
        assert downloaded.read_bytes() == committed.read_bytes()


def test_language_switch_keeps_the_page(page):
    page.goto(url("en", "05_next_sentence"))
    for lang in ("zh", "ja", "en"):
        page.locator(f'.bd-header-article .language-switch a[hreflang="{lang}"]').click()
        page.wait_for_load_state()
        assert page.url == url(lang, "05_next_sentence")


def wait_for_results(page):
    """The search page's results, once the last one is shown with its excerpt."""
    page.wait_for_function(
        "() => /\\d/.test(document.querySelector('#search-results .search-summary')?.innerText)",
        timeout=15_000,
    )
    return page.eval_on_selector_all(
        "#search-results ul.search li",
        "lis => lis.map(li => [li.querySelector('a').getAttribute('href'),"
        " li.querySelector('p.context')?.innerText || ''])",
    )


@pytest.mark.parametrize("lang", EDITIONS)
def test_search_finds_a_word(page, lang):
    """From the folder: the results, each with an excerpt around the word, and no error (Sphinx
    fetches the pages for the excerpts, which the browser refuses under file://; the site's
    site-search.js gives it their text instead)."""
    word, where = SEARCH[lang]
    errors = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{(SITE / lang / 'search.html').as_uri()}?q={word}")
    results = wait_for_results(page)
    assert any(where in href for href, _ in results), results
    assert all(word.lower() in text.lower() for _, text in results), results
    assert not errors, errors
    summary = page.inner_text("#search-results .search-summary")
    assert str(len(results)) in summary and (lang == "en") == ("Search" in summary), summary


@pytest.fixture(scope="module")
def server():
    """The site served over http by Python's http.server, on a free port."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(SITE))
    handler.log_message = lambda *args: None
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_search_over_http(browser, server):
    """Served from a host, search shows the same results with excerpts, and loads nothing from
    elsewhere."""
    context, page, outside = confined(browser, DESKTOP, server)
    try:
        for lang in EDITIONS:
            word, where = SEARCH[lang]
            page.goto(f"{server}/{lang}/search.html?q={word}")
            results = wait_for_results(page)
            assert any(where in href for href, _ in results), results
            assert all(word.lower() in text.lower() for _, text in results), results
    finally:
        context.close()
    assert not outside, outside


SWITCH = """() => [...document.querySelectorAll('.bd-header-article .language-switch > *')]
  .filter(e => e.checkVisibility({visibilityProperty: true}))
  .map(e => {
    const r = e.getBoundingClientRect();
    const hits = [[0.5, 0.5], [0.1, 0.15], [0.9, 0.85]].map(([fx, fy]) =>
      document.elementFromPoint(r.left + fx * r.width, r.top + fy * r.height));
    return {
      text: e.textContent.trim(),
      href: e.getAttribute('href'),
      box: [r.left, r.top, r.right, r.bottom].map(Math.round),
      inside: r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth,
      covered: hits.filter(h => !(h && (h === e || e.contains(h))))
                   .map(h => h && `${h.tagName}.${h.className}`),
      clipped: e.scrollWidth > e.clientWidth + 1 || e.scrollHeight > e.clientHeight + 1,
    };
  })"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280x720", "390x844"])
def test_language_switch_is_in_view(browser, viewport, scheme):
    """The switch's entries lie inside the window, on top (nothing covers them) and whole (no
    text clipped), on opening a page and after scrolling down it (the header is sticky), in
    each edition, light and dark; clicking them works."""
    context = browser.new_context(viewport=viewport, color_scheme=scheme)
    page = context.new_page()
    try:
        for lang in EDITIONS:
            for name in ("00_index", "04_masked_lm", "GLOSSARY", "run"):
                page.goto(url(lang, name))
                for scroll in (0, 1500):
                    page.evaluate(f"window.scrollTo(0, {scroll})")
                    page.wait_for_timeout(50)
                    entries = page.evaluate(SWITCH)
                    where = f"{lang}/{name} at {viewport['width']}px, {scheme}, scrolled {scroll}"
                    assert {e["text"] for e in entries} >= set(EDITION_NAMES.values()), where
                    for e in entries:
                        assert e["inside"], f"{where}: {e['text']} outside the window {e['box']}"
                        assert not e["covered"], f"{where}: {e['text']} under {e['covered']}"
                        assert not e["clipped"], f"{where}: {e['text']} clipped"
            other = "ja" if lang != "ja" else "en"
            page.locator(f'.bd-header-article .language-switch a[hreflang="{other}"]').click()
            page.wait_for_load_state()
            assert page.url == url(other, "run")
    finally:
        context.close()


def test_the_front_page_leads_to_every_page(page):
    """The front page: each edition with its index, every notebook, the glossary and how to
    run them, each link to a page that exists; its Chinese and Japanese in the shipped fonts;
    nothing wider than the window."""
    assert (SITE / ".nojekyll").exists()  # GitHub Pages would drop _static and _images
    page.goto((SITE / "index.html").as_uri())
    hrefs = page.eval_on_selector_all("a", "as => as.map(a => a.href)")
    for lang in EDITIONS:
        for name in pages(lang):
            assert url(lang, name) in hrefs, f"the front page has no link to {lang}/{name}"
    for href in hrefs:
        assert href.startswith(SITE.as_uri()), href
        assert Path(href.removeprefix("file://")).exists(), f"{href}: no such page"
    overflow = page.evaluate("document.documentElement.scrollWidth - innerWidth")
    assert overflow <= 1, f"{overflow} px wider than the window at {page.width}px"
    fonts = page.evaluate(
        """async () => { await document.fonts.ready;
           return [...document.fonts].filter(f => f.status === 'loaded').map(f => f.family); }"""
    )
    assert any("SC" in f for f in fonts) and any("JP" in f for f in fonts), fonts
    text = page.inner_text("body")
    assert len(CJK.findall(text)) > 200, "little Chinese or Japanese on the front page"


def readme_commands() -> tuple[list[str], list[str]]:
    """The README's set-up commands (their comments aside) and its %pip lines."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = re.search(r"^## Set-up.*?(?=^## )", readme, re.S | re.M)[0]
    block = re.search(r"^```\w*\n(.*?)^```", section, re.S | re.M)[1]
    commands = [line.partition("#")[0].strip() for line in block.splitlines()]
    return [c for c in commands if c], re.findall(r"`(%pip install [^`]+)`", section)


@pytest.mark.parametrize("lang", EDITIONS)
def test_the_run_page_has_the_readmes_commands(page, lang):
    """Each edition's "how to run" page, in its language, with the README's commands."""
    page.goto(url(lang, "run"))
    blocks = page.eval_on_selector_all("main article pre", "ps => ps.map(p => p.innerText)")
    commands, pip = readme_commands()
    shown = [[line.partition("#")[0].strip() for line in b.splitlines()] for b in blocks]
    shown = [[line for line in b if line] for b in shown]
    assert commands in shown, f"{lang}: the README's set-up commands are not on the page: {shown}"
    assert pip in shown, f"{lang}: the README's %pip lines are not on the page: {shown}"
    assert "Colab" in page.inner_text("main article")
    if page.width == DESKTOP["width"]:  # the commands and their comments fit without scrolling
        widths = page.eval_on_selector_all(
            "main article pre", "ps => ps.map(p => [p.scrollWidth, p.clientWidth])")
        assert all(scroll <= client for scroll, client in widths), f"{lang}: {widths}"


# Text contrast (WCAG 2.x AA): the ratio of each visible text's colour to the colour behind it,
# 4.5:1, or 3:1 for large text (24 px, or 18.66 px bold). The colour behind a text is found by
# walking up its ancestors and compositing their background colours (over the page's canvas);
# a colour's alpha and the opacity of the element and its ancestors count. Left out: text in
# pictures (figures, widget pictures: they are images), hidden text (display, visibility or
# opacity 0, as the headings' "#" link before hovering), text placed outside the page (the
# "skip to main content" link until it is focused) and disabled controls (WCAG exempts them).
# Placeholders are measured too (::placeholder).
CONTRAST = """() => {
  document.getAnimations().forEach(a => a.finish());  // the colours as they settle (theme fades)
  const canvas = document.createElement('canvas');
  canvas.width = canvas.height = 1;
  const ctx = canvas.getContext('2d', {willReadFrequently: true});
  const cache = new Map();
  const rgba = c => {
    if (!cache.has(c)) {
      ctx.clearRect(0, 0, 1, 1);
      ctx.fillStyle = '#000'; ctx.fillStyle = c; ctx.fillRect(0, 0, 1, 1);
      const d = ctx.getImageData(0, 0, 1, 1).data;
      cache.set(c, [d[0], d[1], d[2], d[3] / 255]);
    }
    return cache.get(c);
  };
  const over = (top, bottom) => [0, 1, 2].map(i => top[i] * top[3] + bottom[i] * (1 - top[3]));
  const dark = matchMedia('(prefers-color-scheme: dark)').matches
               && /dark/.test(getComputedStyle(document.documentElement).colorScheme);
  const canvasColour = dark ? [18, 18, 18, 1] : [255, 255, 255, 1];
  const background = e => {
    const layers = [];
    for (let a = e; a; a = a.parentElement) {
      const c = rgba(getComputedStyle(a).backgroundColor);
      if (c[3] > 0) layers.push(c);
      if (c[3] >= 1) break;
    }
    return layers.reverse().reduce((acc, c) => [...over(c, acc), 1], canvasColour);
  };
  const opacity = e => {
    let o = 1;
    for (let a = e; a; a = a.parentElement) o *= parseFloat(getComputedStyle(a).opacity);
    return o;
  };
  const lum = c => {
    const [r, g, b] = c.slice(0, 3).map(v => {
      v /= 255;
      return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const ratio = (a, b) => {
    const [l1, l2] = [lum(a), lum(b)].sort((x, y) => y - x);
    return (l1 + 0.05) / (l2 + 0.05);
  };
  const results = [];
  const measure = (e, colour, text) => {
    const st = getComputedStyle(e);
    const bg = background(e);
    const fg = rgba(colour);
    const shown = [...over([fg[0], fg[1], fg[2], fg[3] * opacity(e)], bg), 1];
    const size = parseFloat(st.fontSize);
    const large = size >= 24 || (size >= 18.66 && parseInt(st.fontWeight) >= 700);
    results.push({
      ratio: ratio(shown, bg), need: large ? 3 : 4.5, text: text.slice(0, 40),
      where: `${e.tagName.toLowerCase()}.${String(e.className).split(' ')[0]}`,
      colours: [colour, `rgb(${bg.slice(0, 3).map(Math.round)})`],
    });
  };
  for (const e of document.querySelectorAll('body *')) {
    if (e.closest('svg, img, canvas, video, [disabled]')) continue;
    if (e.matches('input[placeholder], textarea[placeholder]') && !e.value
        && e.checkVisibility({visibilityProperty: true}))
      measure(e, getComputedStyle(e, '::placeholder').color, e.placeholder);
    const text = [...e.childNodes].filter(n => n.nodeType === 3).map(n => n.textContent)
                   .join('').trim();
    if (!text || !e.checkVisibility({opacityProperty: true, visibilityProperty: true})) continue;
    const r = e.getBoundingClientRect();
    if (!r.width || !r.height || r.right + scrollX <= 0 || r.bottom + scrollY <= 0) continue;
    measure(e, getComputedStyle(e).color, text);
  }
  return results;
}"""
CONTRAST_PAGES = ["00_index", "04_masked_lm", "GLOSSARY", "run", "search"]
WORST: dict[str, tuple[float, str]] = {}


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_contrast_meets_wcag_aa(browser, scheme):
    """Light and dark, as a reader's system setting picks them (the site follows it until the
    reader chooses with the theme button): the front page, and in each edition the index, a
    notebook with widget pictures, the glossary, how to run, and search with its results."""
    context = browser.new_context(viewport=DESKTOP, color_scheme=scheme)
    page = context.new_page()
    worst, failures, measured = (99.0, ""), [], 0
    try:
        targets = [(SITE / "index.html").as_uri()]
        for lang in EDITIONS:
            targets += [url(lang, name) for name in CONTRAST_PAGES]
        for target in targets:
            if target.endswith("search.html"):
                word = SEARCH[target.split("/")[-2]][0]
                page.goto(f"{target}?q={word}")
                wait_for_results(page)
            else:
                page.goto(target)
            if "/index.html" not in target:  # a Sphinx page: the theme took the reader's mode
                assert page.evaluate("document.documentElement.dataset.theme") == scheme, target
            name = target.removeprefix(SITE.as_uri() + "/")
            for r in page.evaluate(CONTRAST):
                measured += 1
                if r["ratio"] < worst[0]:
                    worst = (r["ratio"], f"{name} {r['where']} {r['text']!r} {r['colours']}")
                if r["ratio"] < r["need"]:
                    failures.append(
                        f"{name}: {r['where']} {r['text']!r} {r['ratio']:.2f} "
                        f"< {r['need']} {r['colours']}"
                    )
    finally:
        context.close()
    WORST[scheme] = worst
    print(f"\ncontrast, {scheme}: {measured} texts, worst {worst[0]:.2f}:1 ({worst[1]})")
    assert measured > 1000
    assert not failures, f"{len(failures)} texts below WCAG AA:\n" + "\n".join(failures[:40])

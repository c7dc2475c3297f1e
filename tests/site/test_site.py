"""The built website (`make site`, then `make site-test`): every page of the three editions
opened from the folder in headless Chromium, at 1280×720 and at 390×844.

Marked `site`, which `make test` leaves out, and skipped when build/site has not been built.
Checks: every picture loads (figures and the widgets' pictures, none printed as "VBox(...)"),
no request leaves file://, the language switch leads to the same page of the other edition,
the CJK text of the zh and ja pages is drawn with the font the site ships, the worked answers
(<details>) open, math is MathML, search finds a word, nothing is wider than the phone's screen.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

playwright_api = pytest.importorskip("playwright.sync_api")

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "build" / "site"
EDITIONS = ("en", "zh", "ja")
CHROMIUM = Path("/usr/bin/chromium")
DESKTOP = {"width": 1280, "height": 720}
PHONE = {"width": 390, "height": 844}
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


@pytest.fixture(params=[DESKTOP, PHONE], ids=["1280x720", "390x844"])
def page(browser, request):
    """A page whose every request outside file:// is refused and recorded."""
    context = browser.new_context(viewport=request.param)
    outside: list[str] = []

    def route(r):
        if r.request.url.startswith(("file://", "data:", "blob:")):
            r.continue_()
        else:
            outside.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    page = context.new_page()
    page.outside = outside
    page.width = request.param["width"]
    yield page
    context.close()
    assert not outside, f"requests that left the folder: {outside}"


def url(lang: str, name: str) -> str:
    return (SITE / lang / f"{name}.html").as_uri()


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
  };
}"""

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
        others = dict(facts["switch"])
        assert set(others) == set(EDITIONS) - {lang}, f"{where}: language switch {others}"
        for other, href in others.items():
            assert href == url(other, name), f"{where}: {other} leads to {href}"
            assert (SITE / other / f"{name}.html").exists()
        if name[:2].isdigit() and name != "00_index":
            assert facts["images"] > 0, f"{where}: no figure or widget picture"
        if lang != "en":
            assert facts["lang"].startswith(lang)
            if name != "run":  # the README's set-up, in English
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


def test_language_switch_keeps_the_page(page):
    page.goto(url("en", "05_next_sentence"))
    for lang in ("zh", "ja", "en"):
        page.locator(f'.bd-header-article .language-switch a[hreflang="{lang}"]').click()
        page.wait_for_load_state()
        assert page.url == url(lang, "05_next_sentence")


@pytest.mark.parametrize("lang", EDITIONS)
def test_search_finds_a_word(page, lang):
    word, where = SEARCH[lang]
    page.goto(f"{(SITE / lang / 'search.html').as_uri()}?q={word}")
    results = page.locator("#search-results ul.search li a")
    results.first.wait_for(timeout=10_000)
    hrefs = [results.nth(i).get_attribute("href") for i in range(results.count())]
    assert any(where in h for h in hrefs), hrefs


def test_the_front_page_leads_to_the_three_editions(page):
    page.goto((SITE / "index.html").as_uri())
    hrefs = page.eval_on_selector_all("a", "as => as.map(a => a.href)")
    assert hrefs == [url(lang, "00_index") for lang in EDITIONS]

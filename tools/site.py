"""Build the website of the three editions (`make site`): build/site/{en,zh,ja}/ and an index.

From the committed notebooks with their outputs, nothing executed and nothing fetched: each
edition is staged in build/site-src/<lang>/ (links between editions and to the glossary made
links between pages, a hidden table of contents, how to run them in its language with the
README's set-up commands) and built by Sphinx with myst-nb (configuration: tools/site/conf.py).
Then the pages' text is written out for the search excerpts, the CJK font the project ships
(noto-cjk-sans-otc) is cut down to the characters each edition's pages and the front page use,
as WOFF2, the front page is written, and the pages are checked to load nothing from outside
the folder.

    python tools/site.py [--out build/site] [--jobs 1]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from html import escape
from html.parser import HTMLParser
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONF = ROOT / "tools" / "site"
sys.path.insert(0, str(ROOT))  # bertlib, for the font, where it is not installed
EDITIONS = {"en": "English", "zh": "中文", "ja": "日本語"}
# Which face of the Noto Sans CJK collection each edition's CJK text is drawn with (its index in
# the .ttc): Japanese draws 直, 骨, 写... differently from Simplified Chinese (bertlib.viz.fonts).
FACES = {
    "en": ("Noto Sans CJK SC", 2),
    "zh": ("Noto Sans CJK SC", 2),
    "ja": ("Noto Sans CJK JP", 0),
}
# CJK punctuation, kana, ideographs and full-width forms: the shipped font draws these only.
CJK_RANGES = "U+2E80-2FFF, U+3000-30FF, U+3100-9FFF, U+F900-FAFF, U+FE30-FE4F, U+FF00-FFEF"
LINK = re.compile(r"\[([^\]]+)\]\(\.\./(en|zh|ja)/([\w.-]+)\.ipynb(#[^)]*)?\)")


def edition_link(m: re.Match) -> str:
    """[中文](../zh/04_masked_lm.ipynb) as a link to the page of the zh edition's folder."""
    return f'<a href="../{m[2]}/{m[3]}.html{m[4] or ""}" hreflang="{m[2]}">{m[1]}</a>'


def stage(lang: str, src: Path) -> None:
    """Copy the edition's notebooks into src, with links that a static site can follow."""
    if src.exists():
        shutil.rmtree(src)
    src.mkdir(parents=True)
    names = []
    for path in sorted((ROOT / "notebooks" / lang).glob("*.ipynb")):
        nb = json.loads(path.read_text(encoding="utf-8"))
        for cell in nb["cells"]:
            if cell["cell_type"] != "markdown":
                continue
            text = "".join(cell["source"])
            # Another edition's notebook: the same page of that edition's folder. A link to a
            # page outside this Sphinx project is an HTML link (the target is built beside it).
            text = LINK.sub(edition_link, text)
            text = text.replace("](../GLOSSARY.md", "](GLOSSARY.md")
            cell["source"] = text
        if path.stem == "00_index":  # a cell for the table of contents
            toc_cell = {"cell_type": "markdown", "id": "site-toc", "metadata": {}, "source": ""}
            nb["cells"].append(toc_cell)
        names.append(path.stem)
        (src / path.name).write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")
    index = json.loads((src / "00_index.ipynb").read_text(encoding="utf-8"))
    index_cell = index["cells"][-1]
    toc = [n for n in names if n != "00_index"] + ["GLOSSARY", "run"]
    index_cell["source"] = "```{toctree}\n:hidden:\n\n" + "\n".join(toc) + "\n```\n"
    (src / "00_index.ipynb").write_text(json.dumps(index, ensure_ascii=False), encoding="utf-8")
    shutil.copy(ROOT / "notebooks" / "GLOSSARY.md", src / "GLOSSARY.md")
    (src / "run.md").write_text(run_page(lang), encoding="utf-8")


# The comments of the README's set-up commands, in each edition's language. A comment the table
# does not know (the README changed) stays in English, and the build says so.
LAB = "creates .venv, installs the pinned versions, opens JupyterLab on notebooks/"
TEST = "the same set-up, then ruff, notebooks --check, unit tests, browser test (CI: .ci/run)"
RUN_COMMENTS = {
    "zh": {
        LAB: "创建 .venv，安装固定版本的依赖，并在 notebooks/ 上打开 JupyterLab",
        TEST: "同样的安装步骤，然后运行 ruff、notebooks --check、单元测试和浏览器测试"
        "（CI：.ci/run）",
    },
    "ja": {
        LAB: ".venv を作り、固定したバージョンをインストールして、notebooks/ で JupyterLab を開く",
        TEST: "同じ準備をしてから、ruff、notebooks --check、単体テスト、ブラウザテストを実行する"
        "（CI：.ci/run）",
    },
}


def readme_setup() -> tuple[str, list[str]]:
    """The README's set-up commands: its code block, and the `%pip install` lines for a kernel
    on JupyterHub, Colab or in VS Code. The run page takes them from there, so they cannot drift."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = re.search(r"^## Set-up.*?(?=^## )", readme, re.S | re.M)
    block = section and re.search(r"^```(\w*)\n(.*?)^```", section[0], re.S | re.M)
    pip = section and re.findall(r"`(%pip install [^`]+)`", section[0])
    if not (block and pip):
        raise SystemExit("site: the README's set-up section has no command block or %pip line")
    return block[0], pip


def run_page(lang: str) -> str:
    """How to run the notebooks, in the edition's language (tools/site/run/<lang>.md), with the
    README's set-up commands and %pip lines put in where the page marks them."""
    block, pip = readme_setup()
    comments = RUN_COMMENTS.get(lang, {})

    def translate(line: str) -> str:
        """The command under its comment (side by side, they are wider than the page)."""
        command, sep, comment = line.partition("# ")
        if not sep:
            return line
        comment = comment.strip()
        if lang != "en" and comment not in comments:
            print(f"site: {lang}: no translation of the README's comment {comment!r}")
        return f"# {comments.get(comment, comment)}\n{command.rstrip()}"

    commands = "\n".join(translate(line) for line in block.splitlines()[1:-1])
    # A comment longer than the column wraps (tools/site/_static/site.css) rather than scrolls.
    block = f"```{{code-block}} bash\n:class: run-commands\n\n{commands}\n```"
    page = (CONF / "run" / f"{lang}.md").read_text(encoding="utf-8")
    page = page.replace("<!-- README: set-up -->", block)
    indent = re.search(r"^( *)<!-- README: pip -->", page, re.M)[1]
    pip_block = "\n".join(indent + line for line in ["```ipython3", *pip, "```"])
    return page.replace(indent + "<!-- README: pip -->", pip_block)


def build(lang: str, src: Path, out: Path, jobs: int) -> None:
    # The edition's title: its index notebook's heading, as on the front page.
    env = dict(os.environ, SITE_EDITION=lang, SITE_TITLE=notebook_titles(lang)["00_index"])
    cmd = [
        sys.executable,
        "-m",
        "sphinx",
        "-b",
        "html",
        "-q",
        "-j",
        str(jobs),
        "-c",
        str(CONF),
        "-d",
        str(src.parent / f".doctrees-{lang}"),
        str(src),
        str(out),
    ]
    subprocess.run(cmd, env=env, check=True)


def ship_font(lang: str, out: Path, extra: str = "") -> None:
    """The edition's CJK face, cut down to the characters of its pages (and extra, the front
    page's, which draws its Chinese and Japanese with these files), and the CSS using it."""
    from fontTools import subset
    from fontTools.ttLib import TTFont

    from bertlib.viz.fonts import cjk_font_path

    family, number = FACES[lang]
    text = set()
    for path in out.rglob("*"):
        if path.suffix in {".html", ".js"} and path.is_file():
            text |= set(path.read_text(encoding="utf-8", errors="ignore"))
    text = {c for c in text | set(extra) if ord(c) >= 0x2E80}
    options = subset.Options()
    options.flavor = "woff2"
    options.layout_features = ["*"]
    options.name_IDs = ["*"]
    options.font_number = number
    font = TTFont(cjk_font_path(), fontNumber=number, lazy=True)
    subsetter = subset.Subsetter(options)
    subsetter.populate(text="".join(sorted(text)))
    subsetter.subset(font)
    fonts = out / "_static" / "fonts"
    fonts.mkdir(parents=True, exist_ok=True)
    name = family.replace(" ", "") + "-subset.woff2"
    font.flavor = "woff2"
    font.save(fonts / name)
    (fonts / "LICENSE-NotoSansCJK.txt").write_text(font_licence(), encoding="utf-8")
    (out / "_static" / "cjk.css").write_text(
        "/* The project's CJK font (Noto Sans CJK, OFL 1.1), shipped with the site and cut down\n"
        "   to the characters of this edition; Latin text keeps the theme's fonts. */\n"
        "@font-face {\n  font-family: 'Site CJK';\n"
        f"  src: url('fonts/{name}') format('woff2');\n"
        f"  unicode-range: {CJK_RANGES};\n  font-display: swap;\n}}\n"
        "html {\n  --pst-font-family-base: 'Site CJK', var(--pst-font-family-base-system);\n"
        "  --pst-font-family-heading: 'Site CJK', var(--pst-font-family-base-system);\n"
        "  --pst-font-family-monospace: var(--pst-font-family-monospace-system), 'Site CJK';\n}\n",
        encoding="utf-8",
    )


def font_licence() -> str:
    """The font's licence (SIL OFL 1.1), which travels with the font."""
    from importlib import metadata

    try:
        files = metadata.distribution("noto-cjk-sans-otc").files or []
        licence = next(f for f in files if f.name.upper().startswith("LICENSE"))
        return licence.read_text(encoding="utf-8")
    except (metadata.PackageNotFoundError, StopIteration):  # Debian's fonts-noto-cjk
        return (
            "Noto Sans CJK, (c) 2014-2021 Adobe (http://www.adobe.com/), "
            "licensed under the SIL Open Font License, Version 1.1: "
            "https://openfontlicense.org\n"
        )


def notebook_titles(lang: str) -> dict[str, str]:
    """Each notebook's title: its first heading ("04 · Masked language modelling")."""
    titles = {}
    for path in sorted((ROOT / "notebooks" / lang).glob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
        titles[path.stem] = re.search(r"^# (.+)$", text, re.M)[1].strip()
    return titles


def readme_minutes() -> dict[str, int]:
    """The estimated class time of each notebook, by number, from the README's table."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    return {m[1]: int(m[2]) for m in re.finditer(r"^\| (\d\d) [^|]*\| (\d+) \|", readme, re.M)}


# The front page (build/site/index.html), in the three languages: what the collection is, and
# each edition with its notebooks.
FRONT = {
    "en": {
        "name": "English",
        "about": "An interactive notebook collection that teaches BERT from first principles, "
        "following the BERT section of <i>Dive into Deep Learning</i>. Every step is code you can "
        "run and change; the model code is a small, tested package, <code>bertlib</code>.",
        "line": "The English edition: twelve short notebooks, each fits one 45-minute class.",
        "index": "Index",
        "glossary": "Glossary",
        "run": "How to run the notebooks",
        "minutes": "{} min",
        "start": "Start here",
    },
    "zh": {
        "name": "简体中文",
        "about": "一套交互式笔记本，对照《动手学深度学习》中 BERT 一节，从零开始讲解 BERT。"
        "每一步都是可以运行、可以修改的代码；"
        "模型代码集中在经过测试的小软件包 <code>bertlib</code> 中。",
        "line": "中文版：十二个短小的笔记本，每个都能在一节 45 分钟的课内讲完。",
        "index": "目录",
        "glossary": "术语表",
        "run": "如何运行笔记本",
        "minutes": "{} 分钟",
        "start": "从这里开始",
    },
    "ja": {
        "name": "日本語",
        "about": "BERT を基礎から学ぶ、対話的なノートブック集です。<i>Dive into Deep Learning</i>"
        "（d2l）の BERT の節に沿って、すべての手順を実行して書き換えられるコードで示します。"
        "モデルのコードはテスト済みの小さなパッケージ <code>bertlib</code> にまとめてあります。",
        "line": "日本語版：12 本の短いノートブック。どれも 45 分の授業 1 回に収まります。",
        "index": "目次",
        "glossary": "用語集",
        "run": "ノートブックの動かし方",
        "minutes": "{} 分",
        "start": "ここから始める",
    },
}


def front_page() -> str:
    """The site's front page: the collection in three languages, each edition's notebooks."""
    minutes = readme_minutes()
    css = (CONF / "front.css").read_text(encoding="utf-8").replace("CJK_RANGES", CJK_RANGES)
    titles = {lang: notebook_titles(lang) for lang in EDITIONS}
    about, cards = [], []
    for lang, t in FRONT.items():
        about.append(f'<p lang="{lang}">{t["about"]}</p>')
        items = []
        for name, title in titles[lang].items():
            label = f"00 · {t['index']}" if name == "00_index" else title
            m = minutes.get(name[:2])
            extra = f'<span class="min">{t["minutes"].format(m)}</span>' if m else ""
            items.append(f'<li><a href="{lang}/{name}.html">{escape(label)}</a>{extra}</li>')
        cards.append(
            f'<section class="edition" lang="{lang}" aria-labelledby="ed-{lang}">\n'
            f'<h2 id="ed-{lang}">{t["name"]}</h2>\n'
            f'<p class="title">{escape(titles[lang]["00_index"])}</p>\n'
            f'<p class="line">{t["line"]}</p>\n'
            f'<a class="start" href="{lang}/00_index.html" hreflang="{lang}">{t["start"]} →</a>\n'
            "<ol>\n" + "\n".join(items) + "\n</ol>\n"
            f'<ul class="more"><li><a href="{lang}/GLOSSARY.html">{t["glossary"]}</a></li>'
            f'<li><a href="{lang}/run.html">{t["run"]}</a></li></ul>\n</section>'
        )
    heads = "".join(
        f'<span lang="{c}">{escape(titles[c]["00_index"])}</span>' for c in ("zh", "ja")
    )
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{' · '.join(escape(titles[c]['00_index']) for c in EDITIONS)}</title>\n"
        f"<style>\n{css}</style>\n</head>\n<body>\n"
        '<div class="page">\n<header>\n'
        f"<h1>{escape(titles['en']['00_index'])}</h1>\n"
        f'<p class="titles">{heads}</p>\n</header>\n'
        '<div class="about">\n' + "\n".join(about) + "\n</div>\n"
        '<main class="editions">\n' + "\n".join(cards) + "\n</main>\n</div>\n</body>\n</html>\n"
    )


# What a search excerpt leaves out of a page: the headings' link symbols, scripts, and the parts
# around the article (its header, the on-page contents, the print-only contents, prev/next).
SKIP = re.compile(
    r"\b(headerlink|onlyprint|bd-header-article|bd-sidebar-secondary|prev-next-area)\b"
)
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}


class MainText(HTMLParser):
    """The text of a page's [role=main] element with its sections and their ids, which is what
    Sphinx's search cuts an excerpt from (Search.htmlToText), less the parts in SKIP."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.main = 0  # depth of <main> elements, once inside the one with role="main"
        self.skip: list[str] = []  # the open elements of a part left out

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if not self.main:
            self.main = int(tag == "main" and a.get("role") == "main")
        elif tag in VOID:
            pass
        elif self.skip or tag in {"script", "style"} or SKIP.search(a.get("class") or ""):
            self.skip.append(tag)
        elif tag == "main":
            self.main += 1
        elif tag == "section" and a.get("id"):
            self.parts.append(f'<section id="{escape(a["id"])}">')

    def handle_startendtag(self, tag, attrs):
        pass

    def handle_endtag(self, tag):
        if not self.main or tag in VOID:
            return
        if self.skip:
            if tag == self.skip[-1]:
                self.skip.pop()
        elif tag == "section":
            self.parts.append("</section>")
        elif tag == "main":
            self.main -= 1

    def handle_data(self, data):
        if self.main and not self.skip:
            self.parts.append(escape(data, quote=False))


def search_texts(out: Path) -> None:
    """_static/search-texts.js: each page's text, which the search page's excerpts are cut from
    (tools/site/_static/site-search.js): from a folder, the browser refuses the fetch() of the
    pages that Sphinx's search uses."""
    texts = {}
    for page in sorted(out.glob("*.html")):
        if page.stem in {"search", "genindex"}:
            continue
        parser = MainText()
        parser.feed(page.read_text(encoding="utf-8"))
        texts[page.stem] = '<div role="main">' + "".join(parser.parts) + "</div>"
    (out / "_static" / "search-texts.js").write_text(
        "window.SITE_SEARCH_TEXTS = " + json.dumps(texts, ensure_ascii=False) + ";\n",
        encoding="utf-8",
    )


REMOTE = re.compile(
    r"""<(?:script|link|img|iframe|source)\b[^>]*\b(?:src|href)=["']?(?:https?:)?//""", re.I
)


def remote_loads(out: Path) -> list[str]:
    """Pages that load a script, style sheet, picture or frame from outside the folder."""
    return [
        str(p.relative_to(out))
        for p in sorted(out.rglob("*.html"))
        if REMOTE.search(p.read_text(encoding="utf-8"))
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "site")
    parser.add_argument("--jobs", type=int, default=1, help="Sphinx processes per edition")
    parser.add_argument("--editions", nargs="*", default=list(EDITIONS))
    args = parser.parse_args()
    start = time.monotonic()
    front = front_page()
    for lang in args.editions:
        t = time.monotonic()
        src = ROOT / "build" / "site-src" / lang
        stage(lang, src)
        build(lang, src, args.out / lang, args.jobs)
        # The download button's .ipynb: the committed notebook, not the staged copy (whose
        # links lead to pages of the site and whose index holds the table of contents).
        for notebook in (ROOT / "notebooks" / lang).glob("*.ipynb"):
            shutil.copyfile(notebook, args.out / lang / "_sources" / notebook.name)
        search_texts(args.out / lang)
        ship_font(lang, args.out / lang, front)
        print(f"site: {lang} in {time.monotonic() - t:.0f} s")
    (args.out / "index.html").write_text(front, encoding="utf-8")
    # GitHub Pages runs Jekyll on a published folder, which drops folders whose names start with
    # "_" (Sphinx's _static, _images); an empty .nojekyll file turns that off.
    (args.out / ".nojekyll").write_text("", encoding="utf-8")
    bad = remote_loads(args.out)
    if bad:
        print(f"site: pages loading from outside the folder: {bad}", file=sys.stderr)
        return 1
    print(f"site: {args.out} in {time.monotonic() - start:.0f} s; open {args.out / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

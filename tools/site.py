"""Build the website of the three editions (`make site`): build/site/{en,zh,ja}/ and an index.

From the committed notebooks with their outputs, nothing executed and nothing fetched: each
edition is staged in build/site-src/<lang>/ (links between editions and to the glossary made
links between pages, a hidden table of contents, the README's set-up as a page) and built by
Sphinx with myst-nb (configuration: tools/site/conf.py). Then the CJK font the project ships
(noto-cjk-sans-otc) is cut down to the characters each edition's pages use, as WOFF2, and the
pages are checked to load nothing from outside the folder.

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
    (src / "run.md").write_text(run_page(), encoding="utf-8")


def run_page() -> str:
    """The README's set-up section, as the page each notebook links to ("how to run")."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = re.search(r"^## Set-up.*?(?=^## )", readme, re.S | re.M)[0]
    # Links to the repository's files: their path, which the reader finds in the project folder.
    section = re.sub(r"\[([^\]]+)\]\((?!https?:)[^)]+\)", r"\1", section)
    section = section.replace("## Set-up", "# How to run the notebooks: set-up", 1)
    return section + (
        "\nThen open `notebooks/en/`, `notebooks/zh/` or `notebooks/ja/` in JupyterLab and run the "
        "notebook of the page you were reading (Run → Run All Cells). This site shows each "
        "notebook as it was saved, with its outputs; its widgets appear as pictures, and "
        "they respond only in a running notebook.\n"
    )


def build(lang: str, src: Path, out: Path, jobs: int) -> None:
    env = dict(os.environ, SITE_EDITION=lang)
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


def ship_font(lang: str, out: Path) -> None:
    """The edition's CJK face, cut down to the characters of its pages, and the CSS using it."""
    from fontTools import subset
    from fontTools.ttLib import TTFont

    from bertlib.viz.fonts import cjk_font_path

    family, number = FACES[lang]
    text = set()
    for path in out.rglob("*"):
        if path.suffix in {".html", ".js"} and path.is_file():
            text |= set(path.read_text(encoding="utf-8", errors="ignore"))
    text = {c for c in text if ord(c) >= 0x2E80}
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


def root_index(out: Path) -> None:
    links = "\n".join(
        f'  <li><a href="{c}/00_index.html" lang="{c}" hreflang="{c}">{n}</a></li>'
        for c, n in EDITIONS.items()
    )
    (out / "index.html").write_text(
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        "<title>BERT from first principles · 从零开始学 BERT · ゼロから学ぶ BERT</title>\n"
        '<link rel="stylesheet" href="zh/_static/cjk.css">\n'
        "<style>body{font-family:'Site CJK',system-ui,sans-serif;max-width:40rem;"
        "margin:3rem auto;padding:0 1rem;line-height:1.6}</style>\n</head>\n<body>\n"
        "<h1>BERT from first principles</h1>\n<p>Three editions of one notebook collection:</p>\n"
        f"<ul>\n{links}\n</ul>\n</body>\n</html>\n",
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
    for lang in args.editions:
        t = time.monotonic()
        src = ROOT / "build" / "site-src" / lang
        stage(lang, src)
        build(lang, src, args.out / lang, args.jobs)
        ship_font(lang, args.out / lang)
        print(f"site: {lang} in {time.monotonic() - t:.0f} s")
    root_index(args.out)
    bad = remote_loads(args.out)
    if bad:
        print(f"site: pages loading from outside the folder: {bad}", file=sys.stderr)
        return 1
    print(f"site: {args.out} in {time.monotonic() - start:.0f} s; open {args.out / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

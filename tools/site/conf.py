"""Sphinx configuration of one edition of the website (`make site`, tools/site.py).

tools/site.py stages an edition's committed notebooks in build/site-src/<lang>/ and runs Sphinx
with this folder as its configuration (-c), the edition given as SITE_EDITION. Nothing is
executed and nothing is fetched: myst-nb reads the saved outputs, math is turned into MathML
when the page is built (latex2mathml: no script), the theme's fonts and icons are its own
files, and tools/site.py adds the CJK font, cut down to the characters the edition uses.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

EDITION = os.environ.get("SITE_EDITION", "en")
EDITIONS = {"en": "English", "zh": "中文", "ja": "日本語"}
# The edition's title: the heading of its index notebook (tools/site.py passes it).
TITLE = os.environ.get("SITE_TITLE", "BERT from first principles")
RUN_LABEL = {
    "en": "How to run this notebook",
    "zh": "如何运行本笔记本",
    "ja": "このノートブックの動かし方",
}

project = TITLE
html_title = TITLE
author = "bert-notebooks"
language = {"en": "en", "zh": "zh_CN", "ja": "ja"}[EDITION]
root_doc = "00_index"

extensions = ["myst_nb", "mathml"]
html_math_renderer = "mathml"
templates_path = ["_templates"]
html_static_path = ["_static"]
html_css_files = ["site.css", "cjk.css"]
exclude_patterns = ["_build", "**.ipynb_checkpoints"]

# The committed outputs as they are: never execute.
nb_execution_mode = "off"
# A widget's output holds the widget view, a PNG picture of it and its repr ("VBox(...)"): no
# widget manager is loaded (it would come from a CDN), so the picture is the one shown.
nb_mime_priority_overrides = [("*", "application/vnd.jupyter.widget-view+json", None)]
nb_ipywidgets_js = {}
myst_enable_extensions = ["dollarmath", "amsmath", "html_image"]
myst_heading_anchors = 3
suppress_warnings = ["myst.header", "mystnb.unknown_mime_type"]

html_theme = "sphinx_book_theme"
html_theme_options = {
    "article_header_end": ["language-switch.html", "article-header-buttons.html"],
    "use_download_button": True,
    "use_fullscreen_button": False,
    "show_toc_level": 2,
    "navigation_with_keys": False,
    # No top bar: pydata's default puts a second search field there, above the sticky article
    # header, and the two overlapped (the sidebar keeps its search field; the header its button).
    "navbar_persistent": [],
}
html_sidebars = {
    "**": [
        "navbar-logo.html",
        "search-button-field.html",
        "sbt-sidebar-nav.html",
    ]
}
html_context = {
    "edition": EDITION,
    "editions": EDITIONS,
    "run_label": RUN_LABEL[EDITION],
    # The reader's system setting until they pick one (without it, the theme logs an error).
    "default_mode": "auto",
}
html_show_sourcelink = False
html_copy_source = True  # the .ipynb, for the theme's download button
html_last_updated_fmt = None


def setup(app):
    """On the search page only, site-search.js: it gives Sphinx's search the pages' text for the
    excerpts (_static/search-texts.js, written by tools/site.py), as the browser refuses the
    fetch() of the pages under file://, and the line that ends a search in zh and ja."""

    def search_page(app, pagename, templatename, context, doctree):
        if pagename == "search":
            app.add_js_file("site-search.js")

    app.connect("html-page-context", search_page)

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
TITLES = {"en": "BERT from first principles", "zh": "从零开始学 BERT", "ja": "ゼロから学ぶ BERT"}
RUN_LABEL = {
    "en": "How to run this notebook",
    "zh": "如何运行本笔记本（英文）",
    "ja": "このノートブックの実行方法（英語）",
}

project = TITLES[EDITION]
html_title = TITLES[EDITION]
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
}
html_sidebars = {
    "**": [
        "navbar-logo.html",
        "language-switch.html",
        "search-button-field.html",
        "sbt-sidebar-nav.html",
    ]
}
html_context = {"edition": EDITION, "editions": EDITIONS, "run_label": RUN_LABEL[EDITION]}
html_show_sourcelink = False
html_copy_source = True  # the .ipynb, for the theme's download button
html_last_updated_fmt = None

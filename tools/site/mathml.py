"""A Sphinx math renderer that writes MathML when the page is built (latex2mathml), so a page's
formulas need no script and no web font: browsers draw MathML themselves."""

from __future__ import annotations

from docutils import nodes
from latex2mathml.converter import convert
from sphinx.application import Sphinx


def _mathml(latex: str, display: str) -> str:
    return convert(latex.strip(), display=display)


def visit_math(self, node: nodes.Element) -> None:
    self.body.append(f'<span class="math notranslate">{_mathml(node.astext(), "inline")}</span>')
    raise nodes.SkipNode


def visit_math_block(self, node: nodes.Element) -> None:
    if node.get("label"):
        self.body.append(f'<span class="eqno">({node["number"]})</span>')
    latex = node.astext()
    self.body.append(f'<div class="math notranslate">{_mathml(latex, "block")}</div>')
    raise nodes.SkipNode


def setup(app: Sphinx) -> dict:
    app.add_html_math_renderer("mathml", (visit_math, None), (visit_math_block, None))
    return {"parallel_read_safe": True, "parallel_write_safe": True}

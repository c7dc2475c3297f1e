"""Cosine similarities between word vectors as a plain, one-shot matplotlib heatmap."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure

from bertlib.support.checks import check_tokens, number_array
from bertlib.support.i18n import resolve_language, text
from bertlib.viz.style import MAX_INCHES, literal, new_figure

# Rows and columns at most: a label each, legible (0.5 inch a column) within the largest figure.
MAX_SIDE = 200
# Values written in their cells up to 30 x 30: each costs a text to draw (14,400 of them at
# 120 x 120 took minutes); a larger matrix is read from its colours and colour bar.
MAX_WRITTEN = 900


def plot_similarity(matrix, row_labels: Sequence[str], col_labels: Sequence[str],
                    title: str | None = None, lang: str | None = None) -> Figure:
    """A cosine-similarity heatmap on [-1, 1], values written in up to 30 x 30 cells."""
    lang = resolve_language(lang)
    values = number_array("matrix", matrix).astype(float)
    check_tokens("row_labels", row_labels)
    check_tokens("col_labels", col_labels)
    if values.ndim != 2 or values.size == 0:
        raise ValueError(f"matrix must be a non-empty 2-D array; got shape {values.shape}")
    R, C = values.shape
    if max(R, C) > MAX_SIDE:
        raise ValueError(f"matrix must have at most {MAX_SIDE} rows and columns (a label each, "
                         f"within a figure of {MAX_INCHES} inches a side); got {R}x{C}")
    if len(row_labels) != R or len(col_labels) != C:
        raise ValueError(f"need one label per row and column: matrix is {R}x{C}, got "
                         f"{len(row_labels)} row labels and {len(col_labels)} column labels")
    tolerance = 1e-4  # cosine similarities computed in float32 can overshoot 1 slightly
    if not np.isfinite(values).all() or np.abs(values).max() > 1 + tolerance:
        raise ValueError("matrix must hold cosine similarities: finite values in [-1, 1]")
    # An inch per column and 0.6 per row, within new_figure's largest size.
    fig = new_figure(min(max(4.0, 1.0 * C + 2.5), MAX_INCHES),
                     min(max(3.0, 0.6 * R + 1.8), MAX_INCHES), lang)
    fig.set_layout_engine("constrained")
    ax = fig.add_subplot()
    image = ax.imshow(values, cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto")
    written = values if values.size <= MAX_WRITTEN else np.empty((0, 0))
    for (r, c), v in np.ndenumerate(written):
        ax.text(c, r, f"{v:.2f}", ha="center", va="center", fontsize=11,
                color="white" if abs(v) > 0.6 else "black")
    # Upright where the labels fit their columns (a few Chinese characters); longer ones slant.
    upright = max(len(c) for c in col_labels) <= 6
    ax.set_xticks(range(C), [literal(c) for c in col_labels], rotation=0 if upright else 30,
                  ha="center" if upright else "right")
    ax.set_yticks(range(R), [literal(r) for r in row_labels])
    ax.set_title(text("similarity_title", lang) if title is None else literal(title))
    fig.colorbar(image, ax=ax).set_label(text("similarity_title", lang))
    return fig

"""Every layer and head at once, a thumbnail each, and the chosen one enlarged beside them."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from jaxtyping import Float
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from torch import Tensor

from bertlib.model import checked
from bertlib.support.checks import check_int_in, check_tokens, number_array
from bertlib.support.i18n import text
from bertlib.viz._render import TokenLabels, heatmap, pin_labels, show_image, spines
from bertlib.viz.attention import map_side
from bertlib.viz.fonts import add_cjk_fallback
from bertlib.viz.live import LiveFigure
from bertlib.viz.style import MAX_INCHES, MIN_FONT, PAGE_WIDTH, literal, thinned, token_font

THUMB, MIN_THUMB = 1.4, 0.2  # inches per thumbnail when there is room, and at the least
LEFT, TOP = 0.9, 0.8  # inches for the row labels, and for the title and the column labels
# Inches right of the grid: the large heatmap's token labels, and beyond it its colour bar.
DETAIL_LEFT, DETAIL_RIGHT, BELOW = 1.2, 1.0, 1.0
MAX_GRID_HEIGHT = 3.6  # inches: the view and its controls fit a 720-pixel window
MAX_DETAIL = 3.6  # inches: the large map's side at most, beside the grid on the page
LABEL_SIZE = 10  # points, for the row and column labels; smaller only where they must be
MEAN_HEAD = -1  # the head that stands for the mean over heads
# The largest view: BERT-large's 24 layers, 64 heads, BERT's longest input: within 100 inches
# a side and drawn in seconds (a thumbnail is an axes: 48 x 64 took 100 s on 2 busy cores).
MAX_BLKS, MAX_HEADS, MAX_TOKENS = 24, 64, 512


def head_name(head: int, lang: str) -> str:  # "head 3", or the mean for MEAN_HEAD
    return (text("mean_heads", lang) if head == MEAN_HEAD
            else text("head_name", lang, head=head))


class ModelViewPlot(LiveFigure):
    """A layer x head grid of heatmaps, each on its own scale (a head that spreads its
    attention would look empty), the chosen one outlined and drawn large on the right."""

    def __init__(self, num_blks: int, num_heads: int, lang: str | None = None):
        check_int_in("num_blks", num_blks, 1, MAX_BLKS, " (one row of thumbnails each)")
        check_int_in("num_heads", num_heads, 1, MAX_HEADS, " (one thumbnail each per layer)")
        self.shape = (num_blks, num_heads)
        self.side = self.gap = 0.0  # the thumbnails', set by _layout
        super().__init__(PAGE_WIDTH, 5, lang)
        fig = self.figure
        self.thumbs = [[fig.add_axes((0, 0, 1, 1), xticks=[], yticks=[])
                        for _ in range(num_heads)] for _ in range(num_blks)]
        self.images = [heatmap(ax) for row in self.thumbs for ax in row]
        self.row_labels = [fig.text(0, 0, text("layer_name", self.lang, layer=layer),
                                    ha="right", va="center", fontsize=LABEL_SIZE)
                           for layer in range(num_blks)]
        self.column_labels = [fig.text(0, 0, "", ha="center", va="bottom")
                              for _ in range(num_heads)]
        self.head_label = fig.text(0, 0, text("head", self.lang), ha="right", va="bottom",
                                   fontsize=LABEL_SIZE)
        self.outline = fig.add_artist(Rectangle((0, 0), 1, 1, fill=False, edgecolor="#E69F00",
                                                linewidth=3, transform=fig.dpi_scale_trans))
        self.ax_detail = fig.add_axes((0, 0, 1, 1))
        self.detail = heatmap(self.ax_detail)
        self.cax = fig.add_axes((0, 0, 1, 1))
        self.colorbar = fig.colorbar(self.detail, cax=self.cax, label=text("weight", self.lang))
        self.ax_detail.set_ylabel(text("query_axis", self.lang))
        self.ax_detail.set_xlabel(text("key_axis", self.lang))
        self.title = fig.suptitle(text("model_view_title", self.lang), fontsize=12, va="top")
        # The thumbnails change with the input only, like the tokens: picking one redraws the
        # outline and the large one alone (72 thumbnails for MiniLM).
        self.blitter.animate(*self.images, *spines(ax for row in self.thumbs for ax in row),
                             with_tokens=True)
        self.blitter.animate(self.outline, self.detail, self.colorbar.ax, self.ax_detail.title,
                             *spines([self.ax_detail]))
        self._shown = np.zeros(0)  # the attentions the thumbnails show
        self.query_labels = TokenLabels(self.ax_detail, self.blitter, "y")
        self.key_labels = TokenLabels(self.ax_detail, self.blitter, "x", rotation=90)
        self._side: float | None = None  # the detail's side laid out for
        self._height = 0.0  # the figure's, in inches

    def _fit_column_labels(self) -> None:
        """"head 0", "head 1"... as large as fits down to MIN_FONT; else numbers, "head" once."""
        renderer = self.figure.canvas.get_renderer()
        for h, label in enumerate(self.column_labels):
            label.set_text(text("head_name", self.lang, head=h))
            add_cjk_fallback(label)  # measured with the font they are drawn in
        self.head_label.set_visible(False)
        for size in range(LABEL_SIZE, int(MIN_FONT) - 1, -1):
            for label in self.column_labels:
                label.set_fontsize(size)
            widest = max(label.get_window_extent(renderer).width for label in self.column_labels)
            if widest <= 0.9 * self.side * self.figure.dpi:
                return
        for h, label in enumerate(self.column_labels):
            label.set_text(str(h))
        self.head_label.set_visible(True)

    def _detail_side(self, T: int) -> float:
        """The large map's side: :func:`map_side`, at most what the page's width leaves beside
        the grid at MIN_THUMB a thumbnail, and at most MAX_DETAIL (a long input's labels are
        thinned)."""
        num_heads = self.shape[1]
        grid = (1.08 * num_heads - 0.08) * MIN_THUMB
        room = PAGE_WIDTH - LEFT - DETAIL_LEFT - DETAIL_RIGHT - grid
        return min(map_side(T), MAX_DETAIL, max(room, map_side(0)))  # many heads: scrolls

    def _layout(self, T: int) -> None:  # in inches from the top left
        num_blks, num_heads = self.shape
        side = self._detail_side(T)
        # The grid takes the width the page leaves, at least MIN_THUMB a thumbnail.
        room = PAGE_WIDTH - LEFT - DETAIL_LEFT - side - DETAIL_RIGHT
        self.side = max(MIN_THUMB, min(THUMB, room / (1.08 * num_heads - 0.08),
                                       MAX_GRID_HEIGHT / (1.08 * num_blks - 0.08)))
        self.gap = 0.08 * self.side
        step = self.side + self.gap
        grid_height = num_blks * self.side + (num_blks - 1) * self.gap
        grid_width = num_heads * self.side + (num_heads - 1) * self.gap
        detail_left = LEFT + grid_width + DETAIL_LEFT
        width = detail_left + side + DETAIL_RIGHT
        height = TOP + max(grid_height, side + BELOW)
        self.figure.set_size_inches(width, height)

        def box(x: float, top: float, w: float = 0, h: float = 0) -> tuple[float, ...]:
            return x / width, 1 - (top + h) / height, w / width, h / height

        for layer, row in enumerate(self.thumbs):
            top = TOP + layer * step
            for head, ax in enumerate(row):
                ax.set_position(box(LEFT + head * step, top, self.side, self.side))
            self.row_labels[layer].set_position(box(LEFT - 0.1, top + self.side / 2)[:2])
        self._fit_column_labels()
        for head, label in enumerate(self.column_labels):
            label.set_position(box(LEFT + head * step + self.side / 2, TOP - 0.06)[:2])
        self.head_label.set_position(box(LEFT - 0.1, TOP - 0.06)[:2])
        self.title.set_y(1 - 0.1 / height)
        self.ax_detail.set_position(box(detail_left, TOP, side, side))
        self.cax.set_position(box(detail_left + side + 0.12, TOP, 0.15, side))
        pin_labels(self.ax_detail, x_label=-(BELOW - 0.25) / side,
                   y_label=-(DETAIL_LEFT - 0.3) / side)
        self._side = side
        self._height = height

    def update(self, attentions: np.ndarray, tokens: list[str], layer: int = 0,
               head: int = 0) -> Figure:
        """attentions: (num_blks, num_heads, T, T); ``layer``, ``head`` the one drawn large."""
        T = attentions.shape[-1]
        if self._detail_side(T) != self._side:
            self._layout(T)
        if not np.array_equal(attentions, self._shown):
            for image, weights in zip(self.images, attentions.reshape(-1, T, T), strict=True):
                self._show(image, weights)
            self._shown = attentions
            self.blitter.tokens_changed()
        picked = attentions[layer].mean(axis=0) if head == MEAN_HEAD else attentions[layer, head]
        self._show(self.detail, picked)
        for labels in (self.query_labels, self.key_labels):
            labels.set(thinned(tokens, self._side), token_font(T, self._side))
        first, last = (0, self.shape[1] - 1) if head == MEAN_HEAD else (head, head)
        step, pad = self.side + self.gap, self.gap / 2
        self.outline.set_bounds(LEFT + first * step - pad,
                                self._height - TOP - layer * step - self.side - pad,
                                (last - first) * step + self.side + 2 * pad, self.side + 2 * pad)
        self.ax_detail.set_title(literal(text("attention_title", self.lang, layer=layer,
                                              head=head_name(head, self.lang))), y=1.0, pad=6)
        return self.figure

    @staticmethod
    def _show(image, weights: np.ndarray) -> None:
        show_image(image, weights, 0, float(weights.max()) or 1.0, limits=True)


@checked
def plot_model_view(attentions: Float[np.ndarray | Tensor, "L nh T T"], tokens: Sequence,
                    layer: int = 0, head: int = 0, lang: str | None = None) -> Figure:
    """Every layer and head, the chosen one large. attentions: (num_blks, num_heads, T, T)."""
    attentions = number_array("attentions", attentions)
    L, nh, _, T = attentions.shape
    check_tokens("tokens", tokens)
    if T > MAX_TOKENS:  # 1,350 tokens made a figure 149 inches tall
        raise ValueError(f"attentions must cover at most {MAX_TOKENS} tokens (a figure is "
                         f"at most {MAX_INCHES} inches a side); got {T}")
    if len(tokens) != T:
        raise ValueError(f"tokens must name the {T} positions of attentions; got "
                         f"{len(tokens)}")
    check_int_in("layer", layer, 0, L - 1)
    check_int_in("head", head, MEAN_HEAD, nh - 1, " (-1: the mean of heads)")
    return ModelViewPlot(*attentions.shape[:2], lang).once(attentions, tokens, layer, head)

"""The time-lapse's frame at one training step; :mod:`bertlib.viz.timelapse_widget` moves it
through the steps."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import NullFormatter
from matplotlib.transforms import offset_copy

from bertlib.analysis.fill_mask import Guess
from bertlib.support.i18n import text
from bertlib.viz._render import NumberText, StampedText, hbar_verts, pin_labels, spines
from bertlib.viz.attention import TokenMapPlot, map_side
from bertlib.viz.style import PAGE_WIDTH, literal

MAX_MASKED = 2  # one masked token in sentence A, one in B: two guess panels at most
TOP_K = 3  # guesses shown per masked token
MLM_COLOR, NSP_COLOR = "#0072B2", "#E69F00"
GUESS_COLOR, RIGHT_COLOR = "#0072B2", "#009E73"  # the original token's bar in green
TOKEN_GID = "token"  # marks the guessed tokens in a saved SVG: vocabulary items, not wording


@dataclass(frozen=True)
class TimeLapseFrame:
    """One step: the head's (T, T) weights, tokens (``<mask>`` where masked), vmax (one for
    every step, so steps compare), the guesses at each masked token and P(original)."""

    step: int
    last_step: int
    weights: np.ndarray
    tokens: list[str]
    boundary: int | None
    vmax: float
    title: str
    guesses: Sequence[Guess]
    original_probabilities: Sequence[float]
    is_next: float


class TimeLapsePlot(TokenMapPlot):
    """One head's attention at one step; beside it the guesses at each masked token (the
    original's bar green), P(IsNext), and the run's losses with the step marked."""

    def __init__(self, lang: str | None = None, *, top_k: int = TOP_K):
        super().__init__(9, 5, lang)
        self.top_k = top_k
        fig, lang = self.figure, self.lang
        self._add_map(fig.add_axes((0, 0, 1, 1)))
        # Not bold: the CJK font has no bold face, and matplotlib would warn on stderr.
        self.step_title = fig.text(0, 0, "", fontsize=13, va="baseline")
        # One axes per masked token: bars of its top guesses, their tokens left of the frame and
        # their probabilities right of it, written as numbers (no tick labels to lay out).
        self.ax_guesses = [fig.add_axes((0, 0, 1, 1)) for _ in range(MAX_MASKED)]
        self.guess_bars, self.guess_tokens, self.guess_numbers = [], [], []
        # Titles of their own, placed by _layout: over the whole column, tokens included.
        self.guess_titles = [fig.text(0, 0, "", fontsize=10, va="baseline")
                             for _ in range(MAX_MASKED)]
        self.nsp_title = fig.text(0, 0, "", fontsize=10, va="baseline")
        for ax in self.ax_guesses:
            ax.set(xlim=(0, 1), ylim=(top_k - 0.5, -0.5), xticks=[], yticks=[])
            self.guess_bars.append(ax.add_collection(PolyCollection([]), autolim=False))
            left, right = (offset_copy(ax.get_yaxis_transform(), fig, x=x, y=-0.35 * 10,
                                       units="points") for x in (-4, 4))
            tokens = [ax.add_artist(StampedText(0, i, "", transform=left, ha="right",
                                                va="baseline", fontsize=10, clip_on=False,
                                                stamps=self.blitter.stamps, gid=TOKEN_GID))
                      for i in range(top_k)]
            numbers = [ax.add_artist(NumberText(1, i, "", transform=right, fontsize=10,
                                                clip_on=False, stamps=self.blitter.stamps))
                       for i in range(top_k)]
            self.guess_tokens.append(tokens)
            self.guess_numbers.append(numbers)
        self.ax_nsp = fig.add_axes((0, 0, 1, 1), xlim=(0, 1), ylim=(-0.5, 0.5), yticks=[])
        self.ax_nsp.set_xticks([0, 0.5, 1], ["0", "0.5", "1"])
        self.nsp_bar = self.ax_nsp.add_collection(PolyCollection([], facecolors=NSP_COLOR),
                                                  autolim=False)
        # Animated too, so that it is drawn over the bar, as a full draw would.
        self.half = self.ax_nsp.axvline(0.5, color="black", linestyle="--", linewidth=1,
                                        zorder=3)
        self.ax_loss = fig.add_axes((0, 0, 1, 1))
        self.loss_lines = {name: self.ax_loss.plot([], [], color=color, linewidth=0.8,
                                                   label=text(f"train_{name}_loss", lang))[0]
                           for name, color in (("mlm", MLM_COLOR), ("nsp", NSP_COLOR))}
        self.ax_loss.set(yscale="log", xlabel=text("train_step", lang),
                         ylabel=text("train_loss", lang))
        self.ax_loss.yaxis.set_minor_formatter(NullFormatter())  # 4×10⁻¹ and the like
        # Top right, in the room set_losses leaves above the curves.
        self.ax_loss.legend(loc="upper right", fontsize=9, frameon=False, borderaxespad=0.2,
                            handlelength=1.5)
        self.marker = self.ax_loss.axvline(0, color="black", linewidth=1.2)
        self.dots = Line2D([], [], linestyle="none", marker="o", markersize=6, clip_on=False,
                           markeredgecolor="black", markerfacecolor="white")
        self.ax_loss.add_line(self.dots)
        self.blitter.animate(
            self.image, self.hline, self.vline, self.colorbar.ax, self.ax_map.title,
            self.step_title, *self.guess_bars, *(t for ts in self.guess_tokens for t in ts),
            *(n for ns in self.guess_numbers for n in ns), *self.guess_titles,
            self.nsp_bar, self.half, self.nsp_title, self.marker, self.dots,
            *spines([self.ax_map, *self.ax_guesses, self.ax_nsp]))
        self.losses: tuple[list[float], list[float]] = ([], [])
        self._layout_for: tuple[int, int] | None = None

    def set_losses(self, mlm: Sequence[float], nsp: Sequence[float]) -> None:
        """The run's losses, index s - 1 for step s, drawn once."""
        mlm, nsp = np.asarray(mlm), np.asarray(nsp)
        steps = np.arange(1, len(mlm) + 1)
        self.loss_lines["mlm"].set_data(steps, mlm)
        self.loss_lines["nsp"].set_data(steps, nsp)
        # Room above the curves for the legend: a factor 4 on the log scale.
        low, high = min(mlm.min(), nsp.min()) / 1.3, max(mlm.max(), nsp.max()) * 4
        self.ax_loss.set_xlim(0, len(mlm))
        self.ax_loss.set_ylim(low, high)
        # Round values a reader can place: 0.5, 1, 2, 5 ... within the range.
        ticks = [m * 10.0**e for e in range(math.floor(math.log10(low)),
                                           math.ceil(math.log10(high)) + 1) for m in (1, 2, 5)]
        self.ax_loss.set_yticks([t for t in ticks if low <= t <= high],
                                [f"{t:g}" for t in ticks if low <= t <= high])
        self.losses = (mlm.tolist(), nsp.tolist())
        self.blitter.invalidate()  # the curves are part of the background

    def _layout(self, T: int, masked: int) -> None:
        left, below, top = 1.0, 0.9, 0.4
        colorbar, labels, bars, numbers = 1.0, 0.8, 1.75, 0.45
        # Never smaller than the column beside it needs; a long input's within the page's
        # width (its labels thinned, see TokenMapPlot._draw_map).
        room = PAGE_WIDTH - (left + colorbar + labels + bars + numbers)
        side = max(3.3, min(map_side(T), room))
        width = left + side + colorbar + labels + bars + numbers
        height = below + side + top
        self.figure.set_size_inches(width, height)

        def at(x: float, y: float, w: float = 0, h: float = 0) -> tuple[float, ...]:
            return x / width, y / height, w / width, h / height

        self._place_map(left, below, side, T)
        x = left + side + colorbar + labels  # the column's bars start here
        self.step_title.set_position(at(x - labels, height - top + 0.12)[:2])
        # The column, top down: a guess panel per masked token, P(IsNext), the losses; each
        # panel's title over the whole column, from the tokens' left.
        y = height - top - 0.28  # under the step's title, room for the first panel's title
        row = 0.18
        for i, (ax, title) in enumerate(zip(self.ax_guesses, self.guess_titles, strict=True)):
            ax.set_visible(i < masked)
            title.set_visible(i < masked)
            if i < masked:
                title.set_position(at(x - labels, y + 0.06)[:2])
                ax.set_position(at(x, y - row * self.top_k, bars, row * self.top_k))
                y -= row * self.top_k + 0.32
        self.nsp_title.set_position(at(x - labels, y + 0.06)[:2])
        self.ax_nsp.set_position(at(x, y - 0.2, bars, 0.2))
        y -= 0.2 + 0.45  # the bar's tick labels, then the losses
        bottom = 0.5  # the losses' step labels
        wide = bars + numbers - 0.25  # room right of it for the last step's label
        self.ax_loss.set_position(at(x, bottom, wide, y - bottom))
        pin_labels(self.ax_loss, x_label=-0.3 / (y - bottom), y_label=-0.5 / wide)
        self._layout_for = (T, masked)

    def update(self, frame: TimeLapseFrame) -> Figure:
        weights, T, masked = frame.weights, len(frame.tokens), len(frame.guesses)
        if self._layout_for != (T, masked):
            self._layout(T, masked)
        self._draw_map(frame.tokens, weights, frame.vmax, frame.boundary, frame.title)
        self.step_title.set_text(text("tl_title", self.lang, step=frame.step,
                                      last=frame.last_step))
        for i, (guess, p) in enumerate(zip(frame.guesses, frame.original_probabilities,
                                           strict=True)):
            self._draw_guess(i, guess, float(p))
        self.nsp_bar.set_verts(hbar_verts([frame.is_next], 0.3))
        self.nsp_title.set_text(text("tl_nsp_title", self.lang, p=frame.is_next))
        self.marker.set_xdata([frame.step, frame.step])
        if frame.step == 0:  # before training: no loss yet
            self.dots.set_data([], [])
        else:
            mlm, nsp = self.losses
            self.dots.set_data([frame.step] * 2, [mlm[frame.step - 1], nsp[frame.step - 1]])
        return self.figure

    def _draw_guess(self, i: int, guess: Guess, original: float) -> None:
        shown = len(guess.tokens)
        self.guess_bars[i].set_verts(hbar_verts(guess.probabilities, 0.35))
        self.guess_bars[i].set_facecolors([RIGHT_COLOR if t == guess.original else GUESS_COLOR
                                           for t in guess.tokens])
        for j, (token, number) in enumerate(zip(self.guess_tokens[i], self.guess_numbers[i],
                                                strict=True)):
            token.set_text(literal(guess.tokens[j]) if j < shown else "")
            number.set_text(f"{guess.probabilities[j]:.2f}" if j < shown else "")
        self.guess_titles[i].set_text(
            text("tl_guess_title", self.lang, token=literal(guess.original), p=original))

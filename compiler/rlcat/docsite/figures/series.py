"""A metric per step as a line chart: every run's series of one metric overlaid, and the reported
figures of the same metric marked as horizontal lines (a band for a range such as 0.835–0.839),
each labelled with where it comes from."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

from rlcat.docsite.figures.svg import CACHED_FIGURES, axes_at, figure, plain, svg_text, text_width

# a palette that stays apart for colour-blind readers (Okabe and Ito)
CURVE_COLOURS = ("#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#f0e442", "#000000")
MARK_COLOUR = "#555555"


@dataclass(frozen=True)
class Curve:
    """One run's series: its label (the result's name) and its points."""

    label: str
    steps: tuple[int, ...]
    values: tuple[float, ...]


@dataclass(frozen=True)
class Mark:
    """A reported figure: its value (and upper end), labelled with its result and source."""

    label: str
    value: float
    high: float | None = None

    @property
    def shown(self) -> str:
        return f"{self.value:.4g}" + (f"–{self.high:.4g}" if self.high is not None else "")


def series_svg(curves: Sequence[Curve], marks: Sequence[Mark], *, title: str, ylabel: str, name: str) -> str:
    """The chart as SVG; curves and marks keep the order given, so the same data draws the same
    bytes. A recipe's chart shows on its page and on each of its results' pages: drawn once."""
    return _series_svg(tuple(curves), tuple(marks), title, ylabel, name)


@functools.lru_cache(maxsize=CACHED_FIGURES)
def _series_svg(
    curves: tuple[Curve, ...], marks: tuple[Mark, ...], title: str, ylabel: str, name: str
) -> str:
    from matplotlib.artist import Artist
    from matplotlib.ticker import MaxNLocator

    labels = [plain(c.label) for c in curves] + [plain(f"{m.label}: {m.shown}") for m in marks]
    # inches: tick labels and the y label on the left, the step label below, the title above, the
    # legend (a line per run or figure) on the right
    left, bottom, plot_w, plot_h, top = 0.8, 0.5, 4.6, 2.3, 0.35
    legend_w = 0.6 + max((text_width(label, 7) for label in labels), default=0.0)
    height = max(bottom + plot_h + top, bottom + 0.16 * len(labels) + 0.3)
    with figure(left + plot_w + legend_w, height) as fig:
        ax = axes_at(fig, left=left, bottom=height - top - plot_h, width=plot_w, height=plot_h)
        handles: list[Artist] = []
        for i, curve in enumerate(curves):
            colour = CURVE_COLOURS[i % len(CURVE_COLOURS)]
            (line,) = ax.plot(
                curve.steps,
                curve.values,
                color=colour,
                lw=1.4,
                marker="o" if len(curve.steps) < 30 else None,
                ms=3,
            )
            handles.append(line)
        dashes = ("--", ":", "-.")
        for i, mark in enumerate(marks):
            style = dashes[i % len(dashes)]
            line = ax.axhline(mark.value, color=MARK_COLOUR, lw=1.0, ls=style)
            if mark.high is not None:
                ax.axhspan(mark.value, mark.high, color=MARK_COLOUR, alpha=0.15, lw=0)
            handles.append(line)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("step")
        ax.set_ylabel(plain(ylabel))
        ax.grid(True, color="#dddddd", lw=0.5)
        ax.set_title(plain(title), fontsize=9, loc="left")
        if handles:
            ax.legend(
                handles=handles,
                labels=labels,
                loc="upper left",
                bbox_to_anchor=(1.02, 1.0),
                fontsize=7,
                frameon=False,
            )
        return svg_text(fig, name)

"""A metric per step as a line chart: every run's series of one metric overlaid, and the reported
figures of the same metric marked as horizontal lines (a band for a range such as 0.835–0.839),
each labelled with where it comes from."""

from __future__ import annotations

from dataclasses import dataclass

from rlcat.docsite.figures.svg import figure, plain, svg_text

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


def series_svg(curves: list[Curve], marks: list[Mark], *, title: str, ylabel: str, name: str) -> str:
    """The chart as SVG; curves and marks keep the order given, so the same data draws the same
    bytes."""
    from matplotlib.artist import Artist
    from matplotlib.ticker import MaxNLocator

    with figure(7.0, 3.4) as fig:
        ax = fig.add_axes((0.09, 0.14, 0.56, 0.74))
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
            line.set_label(plain(curve.label))
            handles.append(line)
        dashes = ("--", ":", "-.")
        for i, mark in enumerate(marks):
            style = dashes[i % len(dashes)]
            line = ax.axhline(mark.value, color=MARK_COLOUR, lw=1.0, ls=style)
            if mark.high is not None:
                ax.axhspan(mark.value, mark.high, color=MARK_COLOUR, alpha=0.15, lw=0)
            shown = f"{mark.value:.4g}" + (f"–{mark.high:.4g}" if mark.high is not None else "")
            line.set_label(plain(f"{mark.label}: {shown}"))
            handles.append(line)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("step")
        ax.set_ylabel(plain(ylabel))
        ax.grid(True, color="#dddddd", lw=0.5)
        ax.set_title(plain(title), fontsize=9, loc="left")
        if handles:
            ax.legend(
                handles=handles,
                labels=[str(h.get_label()) for h in handles],
                loc="upper left",
                bbox_to_anchor=(1.02, 1.0),
                fontsize=7,
                frameon=False,
            )
        return svg_text(fig, name)

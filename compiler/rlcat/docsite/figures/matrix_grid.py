"""The support matrix as a coloured grid: a row per platform, a column per mode × engine × backend,
each cell coloured by its status and linking to its evidence.

Every cell is one matplotlib patch whose SVG group has the id `rlc-cell--PLATFORM--MODE--ENGINE--
BACKEND` (`cell_gid`) and whose link is the page that shows why (the recipe's section for that
platform, or the platform's support list), so a reader and a browser test can find each cell.
The statuses come from `rlcat.docsite.matrix` (`grid_cells`), the same judgement as its tables.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rlcat.docsite.figures.svg import axes_at, figure, plain, svg_text, text_width
from rlcat.docsite.md import safe_target

if TYPE_CHECKING:
    from matplotlib.axes import Axes

STATUSES = ("supported", "untested", "known-broken", "does-not-compile")
STATUS_COLOURS: dict[str, str] = {
    "supported": "#2e7d32",
    "untested": "#9e9e9e",
    "known-broken": "#e65100",
    "does-not-compile": "#b71c1c",
}
# a mark in each cell as well as its colour, for readers who do not tell the colours apart
STATUS_MARKS = {"supported": "✓", "untested": "?", "known-broken": "!", "does-not-compile": "✗"}
STATUS_LABELS = {
    "supported": "supported",
    "untested": "untested",
    "known-broken": "known issue",
    "does-not-compile": "does not compile",
}


def slug(name: str) -> str:
    """A name safe in an id: letters, digits, `_` and `.` kept, every other run one `-`, so a slug
    never holds the `--` that separates the parts of a cell's id."""
    return re.sub(r"[^A-Za-z0-9_.]+", "-", name).strip("-") or "-"


def cell_gid(platform: str, mode: str, engine: str, backend: str) -> str:
    return "rlc-cell--" + "--".join(slug(part) for part in (platform, mode, engine, backend))


@dataclass(frozen=True)
class GridCell:
    platform: str
    mode: str
    engine: str
    backend: str
    status: str  # one of STATUSES
    href: str  # the evidence, relative to the page the grid is on

    @property
    def column(self) -> tuple[str, str, str]:
        return self.mode, self.engine, self.backend


def matrix_grid_svg(
    cells: list[GridCell],
    platforms: list[str],
    columns: list[tuple[str, str, str]],
    *,
    labels: dict[str, str],
    name: str = "matrix-grid",
) -> str:
    """The grid as SVG. `columns` are (mode, engine, backend) in their display order; `labels`
    maps each mode, engine and backend to how it is shown. A (platform, column) without a cell is
    left blank (nothing known)."""
    from matplotlib.patches import Patch

    handles = [
        Patch(facecolor=STATUS_COLOURS[s], label=f"{STATUS_MARKS[s]} {STATUS_LABELS[s]}") for s in STATUSES
    ]
    handles.append(Patch(facecolor="white", edgecolor="#dddddd", label="nothing known"))
    # inches: platform names on the left, three lines of column labels on top, the legend below
    cell_w, cell_h = 0.72, 0.36
    left = 0.15 + max((text_width(p, 7) for p in platforms), default=0.5)
    grid_w, grid_h = cell_w * len(columns), cell_h * len(platforms)
    width = left + max(grid_w, 3.0) + 0.1
    ncol = max(1, min(len(handles), int(width // 1.25)))
    legend = 0.2 * -(-len(handles) // ncol) + 0.1
    with figure(width, legend + 0.15 + grid_h + 0.55) as fig:
        ax = axes_at(fig, left=left, bottom=legend + 0.15, width=grid_w, height=grid_h)
        _draw_cells(ax, {(c.platform, c.column): c for c in cells}, platforms, columns)
        ax.set_xlim(0, len(columns))
        ax.set_ylim(0, len(platforms))
        ax.set_xticks(
            [c + 0.5 for c in range(len(columns))],
            [plain("\n".join(labels.get(part, part) for part in column)) for column in columns],
            fontsize=7,
        )
        ax.xaxis.tick_top()
        ax.set_yticks(
            [len(platforms) - 0.5 - r for r in range(len(platforms))], [plain(p) for p in platforms]
        )
        ax.tick_params(length=0, labelsize=7)
        for side in ax.spines.values():
            side.set_visible(False)
        fig.legend(
            handles=handles,
            labels=[str(h.get_label()) for h in handles],
            loc="lower left",
            bbox_to_anchor=(0.0, 0.0),
            ncol=ncol,
            fontsize=7,
            frameon=False,
            borderaxespad=0.2,
        )
        return svg_text(fig, name)


def _draw_cells(
    ax: Axes,
    at: dict[tuple[str, tuple[str, str, str]], GridCell],
    platforms: list[str],
    columns: list[tuple[str, str, str]],
) -> None:
    from matplotlib.patches import Rectangle

    for row, platform in enumerate(platforms):
        y = len(platforms) - 1 - row
        for col, column in enumerate(columns):
            cell = at.get((platform, column))
            if cell is None:
                ax.add_patch(
                    Rectangle((col + 0.04, y + 0.06), 0.92, 0.88, fill=False, edgecolor="#dddddd", lw=0.6)
                )
                continue
            patch = Rectangle((col + 0.04, y + 0.06), 0.92, 0.88, facecolor=STATUS_COLOURS[cell.status], lw=0)
            patch.set_gid(cell_gid(platform, *column))
            # a link only to a page of the site (or http/https), as everywhere in the docs
            patch.set_url(safe_target(cell.href))
            ax.add_patch(patch)
            ax.text(col + 0.5, y + 0.5, STATUS_MARKS[cell.status], ha="center", va="center", color="white")

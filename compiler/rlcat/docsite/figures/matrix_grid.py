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

from rlcat.docsite.figures.svg import figure, plain, svg_text
from rlcat.docsite.md import safe_target

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
    title: str = ""

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
    from matplotlib.patches import Patch, Rectangle

    at = {(c.platform, c.column): c for c in cells}
    with figure(1.8 + 0.62 * len(columns), 1.9 + 0.36 * len(platforms)) as fig:
        ax = fig.add_axes((0.02, 0.22, 0.96, 0.50))
        for row, platform in enumerate(platforms):
            y = len(platforms) - 1 - row
            for col, column in enumerate(columns):
                cell = at.get((platform, column))
                if cell is None:
                    ax.add_patch(
                        Rectangle((col + 0.04, y + 0.06), 0.92, 0.88, fill=False, edgecolor="#dddddd", lw=0.6)
                    )
                    continue
                patch = Rectangle(
                    (col + 0.04, y + 0.06), 0.92, 0.88, facecolor=STATUS_COLOURS[cell.status], lw=0
                )
                patch.set_gid(cell_gid(*((platform, *column))))
                # a link only to a page of the site (or http/https), as everywhere in the docs
                patch.set_url(safe_target(cell.href))
                ax.add_patch(patch)
                ax.text(
                    col + 0.5,
                    y + 0.5,
                    STATUS_MARKS[cell.status],
                    ha="center",
                    va="center",
                    color="white",
                    fontsize=9,
                )
        ax.set_xlim(-0.05, len(columns) + 0.05)
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
        handles = [
            Patch(facecolor=STATUS_COLOURS[s], label=f"{STATUS_MARKS[s]} {STATUS_LABELS[s]}")
            for s in STATUSES
        ]
        handles.append(Patch(facecolor="white", edgecolor="#dddddd", label="nothing known"))
        fig.legend(
            handles=handles,
            labels=[str(h.get_label()) for h in handles],
            loc="lower center",
            ncol=len(handles),
            fontsize=7,
            frameon=False,
        )
        return svg_text(fig, name)

"""The support matrix: algorithm × backend × engine × mode on every platform, from compiled recipes.

A cell's status comes from the platform profile's support list and from compiling every recipe that
lands in it: *known issue* when the profile marks it known-broken, a recipe does not compile there,
or a guard reports a problem it could not fix; *supported* when the profile says so; *untested*
otherwise. Each cell links to the recipes (at that platform's section) and guards behind it; a cell
no recipe covers links to the profile's support list.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rlcat.docsite.data import Cell, Site
from rlcat.docsite.figures.matrix_grid import STATUSES, GridCell, matrix_grid_svg
from rlcat.docsite.links import (
    ALGORITHM_LABELS,
    BACKEND_LABELS,
    ENGINE_LABELS,
    MODE_LABELS,
    STATUS_ICONS,
    html_url,
    page,
    platform_anchor,
    rel,
)
from rlcat.docsite.md import code, esc, figure, link, name_md, table
from rlcat.docsite.recipes import cell_status
from rlcat.model.axes import ALGORITHMS, BACKENDS, ENGINES, MODES
from rlcat.model.platform import PlatformProfile

HERE = "matrix.md"
ANY = "any"
_RANK = {"known issue": 0, "untested": 1, "supported": 2}


@dataclass
class MatrixCell:
    status: str  # supported | known issue | untested | "" (nothing known)
    cells: list[Cell] = field(default_factory=list)
    platform_status: str = ""

    @property
    def recipes(self) -> list[str]:
        return sorted({c.recipe for c in self.cells})

    @property
    def guards(self) -> list[str]:
        return sorted({g for c in self.cells for g in c.guard_ids})


Row = tuple[str, str, str]  # algorithm (or "any"), backend, mode


def _rows(site: Site) -> list[Row]:
    """Every algorithm × backend × mode a recipe covers, plus the mode × backend cells that a platform
    lists but no recipe covers (algorithm 'any'), in a fixed order."""
    covered = {(c.mode, c.backend) for c in site.cells}
    rows: set[Row] = {(site.recipe(c.recipe).algorithm, c.backend, c.mode) for c in site.cells}
    for profile in site.platforms.values():
        for s in profile.support:
            if (s.mode, s.backend) not in covered:
                rows.add((ANY, s.backend, s.mode))
    order = {v: i for i, v in enumerate((*ALGORITHMS, ANY, *BACKENDS, *MODES))}
    return sorted(rows, key=lambda row: (order[row[2]], order[row[1]], order[row[0]]))


def matrix_cell(site: Site, platform: PlatformProfile, row: Row, engine: str) -> MatrixCell:
    algorithm, backend, mode = row
    listed: dict[tuple[str, str, str], str] = {
        (s.mode, s.engine, s.backend): s.status for s in platform.support
    }
    platform_status = listed.get((mode, engine, backend), "")
    cells = [
        c
        for c in site.cells
        if c.platform == platform.name
        and (c.mode, c.engine, c.backend) == (mode, engine, backend)
        and site.recipe(c.recipe).algorithm == algorithm
    ]
    if cells:
        status = min((cell_status(c) for c in cells), key=_RANK.__getitem__)
    elif platform_status:
        status = {"known-broken": "known issue", "supported": "supported"}.get(platform_status, "untested")
    else:
        status = ""
    return MatrixCell(status, cells, platform_status)


def _recipe_target(name: str, platform: str, here: str) -> str:
    return rel(here, page("recipe", name) + "#" + platform_anchor(platform))


def _support_target(platform: str, here: str) -> str:
    return rel(here, page("platform", platform) + "#support")


def cell_md(mc: MatrixCell, platform: str, here: str) -> str:
    """Status icon and word, then the recipes and guards behind it."""
    if not mc.status:
        return "—"
    head = f"{STATUS_ICONS[mc.status]} {mc.status}"
    links = [link(code(r), _recipe_target(r, platform, here)) for r in mc.recipes]
    links += [link(g, rel(here, page("guard", g))) for g in mc.guards]
    if not mc.cells or mc.platform_status == "known-broken":
        links.append(link(f"profile: {mc.platform_status or 'not listed'}", _support_target(platform, here)))
    return head + "<br>" + ", ".join(links)


def icon_md(mc: MatrixCell, platform: str, engine: str, here: str) -> str:
    """The overview's compact form: one icon linking to the first recipe (or the profile)."""
    if not mc.status:
        return link("—", f"#{platform_anchor(platform)}", f"{ENGINE_LABELS[engine]}: nothing known")
    target = _recipe_target(mc.recipes[0], platform, here) if mc.recipes else _support_target(platform, here)
    title = f"{ENGINE_LABELS[engine]}: {mc.status}" + (": " + ", ".join(mc.recipes) if mc.recipes else "")
    if mc.guards:
        title += "; guards " + ", ".join(mc.guards)
    return link(STATUS_ICONS[mc.status], target, title)


def support_table(site: Site, platform: PlatformProfile, here: str) -> str:
    """One platform's rows: algorithm × backend × mode down, engines across."""
    rows = []
    for row in _rows(site):
        cells = [matrix_cell(site, platform, row, e) for e in ENGINES]
        if not any(mc.status for mc in cells):
            continue
        algorithm, backend, mode = row
        rows.append(
            [
                ALGORITHM_LABELS.get(algorithm, algorithm),
                BACKEND_LABELS[backend],
                MODE_LABELS[mode],
                *(cell_md(mc, platform.name, here) for mc in cells),
            ]
        )
    return table(["algorithm", "backend", "mode", *(ENGINE_LABELS[e] for e in ENGINES)], rows)


def grid_status(mc: MatrixCell) -> str | None:
    """The grid's word for a cell (matrix_grid.STATUSES), or None when nothing is known: a known
    issue is *does-not-compile* when a recipe there does not compile, else *known-broken*."""
    if not mc.status:
        return None
    if any(c.compiled is None for c in mc.cells):  # not even with --allow-known-broken
        return "does-not-compile"
    return "known-broken" if mc.status == "known issue" else mc.status


def grid_cells(site: Site, here: str = HERE) -> tuple[list[GridCell], list[tuple[str, str, str]]]:
    """The support matrix folded over the algorithms, one cell per platform × (mode, engine,
    backend), each the worst of its rows and linking to the evidence behind that worst status;
    and the columns any cell has, in the tables' order."""
    rank = {status: i for i, status in enumerate(reversed(STATUSES))}  # does-not-compile first
    cells: list[GridCell] = []
    columns: list[tuple[str, str, str]] = []
    for backend_mode in dict.fromkeys((backend, mode) for _, backend, mode in _rows(site)):
        backend, mode = backend_mode
        rows = [row for row in _rows(site) if row[1:] == backend_mode]
        for engine in ENGINES:
            column = (mode, engine, backend)
            for platform in site.platforms.values():
                judged = [
                    (grid_status(mc), mc) for mc in (matrix_cell(site, platform, row, engine) for row in rows)
                ]
                known = [(status, mc) for status, mc in judged if status is not None]
                if not known:
                    continue
                status, mc = min(known, key=lambda pair: rank[pair[0]])
                failing = [c.recipe for c in mc.cells if cell_status(c) != "supported"] or mc.recipes
                target = (
                    page("recipe", failing[0]) + "#" + platform_anchor(platform.name)
                    if mc.recipes
                    else page("platform", platform.name) + "#support"
                )
                cells.append(GridCell(platform.name, mode, engine, backend, status, html_url(here, target)))
                if column not in columns:
                    columns.append(column)
    return cells, columns


def grid_md(site: Site) -> str:
    cells, columns = grid_cells(site)
    if not cells:
        return ""
    labels = {**MODE_LABELS, **ENGINE_LABELS, **BACKEND_LABELS}
    svg, key = site.drawn.figure(matrix_grid_svg, cells, list(site.platforms), columns, labels=labels)
    return figure(
        svg, "Each cell is the worst status of its algorithms; a cell links to the recipe behind it.", key
    )


def matrix_page(site: Site) -> str:
    platforms = list(site.platforms.values())
    legend = (
        f"{STATUS_ICONS['supported']} **supported** — the platform profile lists the cell as validated "
        "and every recipe in it compiles without an unfixed guard finding · "
        f"{STATUS_ICONS['known issue']} **known issue** — the profile marks it known-broken, a recipe does "
        "not compile there, or a guard reports a problem · "
        f"{STATUS_ICONS['untested']} **untested** — compiles, but nobody has validated it on that "
        "platform · — nothing known\n"
    )
    out = [
        # the overview is wide: this page gives it the whole width
        "---\nhide:\n  - navigation\n  - toc\n---\n",
        "# Support matrix\n",
        "Algorithm × backend × engine × mode on every platform, from the platform profiles' support lists "
        "and from compiling every recipe of the catalog in every cell it allows "
        f"({code('rlcat matrix RECIPE')} shows one recipe's cells from the same compiles: a cell is "
        f"supported or untested only where {code('rlcat compile')} compiles it). "
        "Rows with algorithm *any* are cells a platform lists but no recipe covers yet.\n",
        legend,
        grid_md(site),
        "## Overview {#overview}\n",
        "One icon per engine (vLLM, then SGLang) on each platform; each links to the recipe behind it (or "
        "to the platform's support list), hover for details. The tables below spell it out per platform.\n",
    ]
    engines = " · ".join(ENGINE_LABELS[e] for e in ENGINES)
    header = ["algorithm", "backend", "mode"]
    header += [f"{link(esc(p.name), '#' + platform_anchor(p.name))}<br>{engines}" for p in platforms]
    rows = []
    for row in _rows(site):
        algorithm, backend, mode = row
        rows.append(
            [
                ALGORITHM_LABELS.get(algorithm, algorithm),
                BACKEND_LABELS[backend],
                MODE_LABELS[mode],
                *(
                    " ".join(icon_md(matrix_cell(site, p, row, e), p.name, e, HERE) for e in ENGINES)
                    for p in platforms
                ),
            ]
        )
    out.append(table(header, rows))
    for p in platforms:
        out.append(f"## {name_md(p.name)} {{#{platform_anchor(p.name)}}}\n")
        out.append(
            f"{esc(p.summary)}. verl {esc(p.verl_version)} — "
            f"{link('platform profile', rel(HERE, page('platform', p.name)))}.\n"
        )
        out.append(support_table(site, p, HERE))
    return "\n".join(out)

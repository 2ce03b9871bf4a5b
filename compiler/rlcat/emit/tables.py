"""Tables and pages for people: the recipe list, a resolved recipe, a diff, a matrix, the guards."""

from __future__ import annotations

import io
import shutil
import sys
from typing import Any

from rlcat.catalog import shown_file
from rlcat.diagnostics import json_text, printable
from rlcat.guards import Guard
from rlcat.resolve.recipe import Resolved
from rlcat.survey.recipes import Cell, Change
from rlcat.syntax.hydra_value import render_or_repr
from rlcat.syntax.yaml_text import yaml_document


def render_table(columns: list[str], rows: list[list[str]]) -> str:
    """A plain-text table (rich, no colour), as wide as the terminal or a fixed width in pipes."""
    # rich costs about 20 ms to import, a tenth of a cold compile, which draws no table
    from rich.console import Console
    from rich.table import Table

    table = Table(box=None, pad_edge=False, header_style="bold")
    for col in columns:
        table.add_column(col, overflow="fold")
    for row in rows:
        table.add_row(*(printable(cell) for cell in row))
    # a terminal's own width; a fixed, wide one in pipes so that scripts see stable rows
    width = shutil.get_terminal_size((220, 24)).columns if sys.stdout.isatty() else 220
    # catalog text is data: no rich markup ([bold], [link=...]) and no emoji codes are read from it
    console = Console(
        width=width, file=io.StringIO(), color_system=None, markup=False, emoji=False, highlight=False
    )
    console.print(table)
    out = console.file.getvalue()  # type: ignore[attr-defined]
    return "\n".join(line.rstrip() for line in out.splitlines()) + "\n"


def render_list(rows: list[dict[str, Any]], fmt: str) -> str:
    if fmt == "json":
        return json_text(rows)
    return render_table(
        ["name", "algorithm", "backend", "engines", "mode", "gpus", "summary"],
        [
            [
                r["name"],
                r["algorithm"],
                r["backend"],
                ",".join(r["engines"]),
                r["mode"],
                r["gpus"],
                r["summary"],
            ]
            for r in rows
        ],
    )


def render_resolved(resolved: Resolved, without_platform_blocks: bool, *, unset: bool = False) -> str:
    """The resolved recipe as YAML: extends merged, every default filled in, catalog entries inlined;
    the fields nothing sets (null: verl's default) only with `unset` (`rlcat show --all`)."""
    dropped = {"platforms"} if without_platform_blocks else None
    data = resolved.recipe.model_dump(by_alias=True, exclude=dropped, exclude_none=not unset)
    data["model"] = resolved.model.model_dump(exclude_none=not unset)
    data["dataset"] = resolved.dataset.model_dump(exclude_none=not unset)
    files = " <- ".join(shown_file(f) for f in reversed(resolved.source.files))
    return yaml_document(data, header=[f"{resolved.recipe.name}: resolved from {files}"])


def render_diff(changes: list[Change], label_a: str, label_b: str, fmt: str) -> str:
    if fmt == "json":
        return json_text({"a": label_a, "b": label_b, "changes": [c.__dict__ for c in changes]}, default=str)
    lines = [f"--- {label_a}", f"+++ {label_b}"]
    for c in changes:
        v = render_or_repr if c.table != "env" else str
        if c.kind == "added":
            lines.append(f"+ {c.key}={v(c.after)}    # {c.origin_after}")
        elif c.kind == "removed":
            lines.append(f"- {c.key}={v(c.before)}    # {c.origin_before}")
        else:
            lines.append(f"~ {c.key}: {v(c.before)} -> {v(c.after)}    # {c.origin_after or c.table}")
    if not changes:
        lines.append("(no differences)")
    return "".join(printable(line) + "\n" for line in lines)


def render_matrix(cells: list[Cell], fmt: str) -> str:
    """The cells of `rlcat matrix`: `status` is what the cell is for the recipe (Cell.status), the
    platform's own word stays beside it (`support` in JSON, in brackets in the table where the two
    differ)."""
    if fmt == "json":
        return json_text([{**c.__dict__, "status": c.status} for c in cells])
    rows = [
        [
            c.platform,
            c.mode,
            c.engine,
            c.backend,
            "yes" if c.compiles else "NO: " + ",".join(dict.fromkeys(c.errors)),
            c.status if c.status == c.support else f"{c.status} (platform: {c.support})",
            ",".join(c.guards) or "-",
        ]
        for c in cells
    ]
    return render_table(["platform", "mode", "engine", "backend", "compiles", "status", "guards"], rows)


def render_guards(guards: list[type[Guard]], fmt: str) -> str:
    """The guard registry as a table or JSON."""
    if fmt == "json":
        return json_text(
            [
                {
                    "id": g.id,
                    "name": g.name,
                    "title": g.title,
                    "severity": str(g.severity),
                    "affects": g.affects.describe(),
                    "source": list(g.source),
                    "since": g.since,
                    "docs": g.docs(),
                }
                for g in guards
            ]
        )
    return render_table(
        ["id", "severity", "name", "title", "affects"],
        [[g.id, str(g.severity), g.name, g.title, g.affects.describe()] for g in guards],
    )


def render_guard_page(cls: type[Guard]) -> str:
    """One guard's docs page: its docstring with its metadata."""
    head = f"{cls.id} {cls.name} ({cls.severity})\n{cls.title}\n\n"
    meta = f"\n\nAffects: {cls.affects.describe()}\nSince: rlcat {cls.since}\nSources:\n" + "".join(
        f"  - {s}\n" for s in cls.source
    )
    return head + cls.docs() + meta

"""`rlcat guards`."""

from __future__ import annotations

from typing import Annotated

import typer

from rlcat.cli.app import app
from rlcat.cli.common import CatalogOpt, TableFormatOpt
from rlcat.cli.report import catalog_for, write_output
from rlcat.emit.tables import render_guard_page, render_guards
from rlcat.guards import REGISTRY, find_guard
from rlcat.resolve.entries import load_platform


@app.command(
    "guards",
    epilog="""Examples:

  rlcat guards

  rlcat guards --platform rocm --format json

  rlcat guards RLC501
""",
)
def guards_cmd(
    guard_id: Annotated[str | None, typer.Argument(help="Show this guard's docs.")] = None,
    platform: Annotated[
        str | None, typer.Option("--platform", "-p", help="Only guards that can apply here.")
    ] = None,
    fmt: TableFormatOpt = "table",
    catalog: CatalogOpt = None,
) -> None:
    """List the known-issue guards, or show one guard's docs."""
    if guard_id is not None:
        write_output(render_guard_page(find_guard(guard_id)))
        return
    guards = [REGISTRY[i] for i in sorted(REGISTRY)]
    if platform is not None:
        profile, _ = load_platform(platform, catalog_for(catalog))
        guards = [g for g in guards if g.affects.on_platform(profile)]
    write_output(render_guards(guards, fmt))

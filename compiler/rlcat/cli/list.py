"""`rlcat list`."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from rlcat.cli.app import app
from rlcat.cli.common import (
    AlgorithmName,
    BackendName,
    CatalogOpt,
    EngineName,
    ModeName,
    TableFormatOpt,
)
from rlcat.cli.report import catalog_for, write_output
from rlcat.emit.tables import render_list
from rlcat.survey.recipes import list_recipes


@app.command(
    "list",
    epilog="""Examples:

  rlcat list

  rlcat list --backend megatron --mode fully_async

  rlcat list --format json
""",
)
def list_cmd(
    algorithm: Annotated[Optional[AlgorithmName], typer.Option(help="Only this algorithm.")] = None,  # noqa: UP045
    backend: Annotated[Optional[BackendName], typer.Option(help="Only this backend.")] = None,  # noqa: UP045
    engine: Annotated[
        Optional[EngineName],  # noqa: UP045
        typer.Option(help="Only recipes that allow this engine."),
    ] = None,
    mode: Annotated[Optional[ModeName], typer.Option(help="Only this mode.")] = None,  # noqa: UP045
    fmt: TableFormatOpt = "table",
    catalog: CatalogOpt = None,
) -> None:
    """List the recipes in the catalog."""
    rows = list_recipes(catalog_for(catalog), algorithm=algorithm, backend=backend, engine=engine, mode=mode)
    write_output(render_list(rows, fmt))

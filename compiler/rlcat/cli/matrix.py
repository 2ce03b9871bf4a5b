"""`rlcat matrix`."""

from __future__ import annotations

from typing import Annotated

import typer

from rlcat.cli.app import app
from rlcat.cli.common import CatalogOpt, TableFormatOpt
from rlcat.cli.report import catalog_for, write_output
from rlcat.emit.tables import render_matrix
from rlcat.survey.recipes import matrix


@app.command(
    "matrix",
    epilog="""Examples:

  rlcat matrix geo3k_megatron_4_4

  rlcat matrix dapo_math_fsdp2_4_4 --platform rocm --format json
""",
)
def matrix_cmd(
    recipe: Annotated[str, typer.Argument(help="Recipe name or path.")],
    platform: Annotated[
        list[str] | None, typer.Option("--platform", "-p", help="Only these platforms (repeatable).")
    ] = None,
    fmt: TableFormatOpt = "table",
    catalog: CatalogOpt = None,
) -> None:
    """Compile every mode × engine × backend cell the recipe allows on every platform, as `rlcat
    compile` compiles it: whether it compiles, the guards that fire, and its status: the platform's
    support status where the recipe compiles (a cell that does not compile says so, the platform's
    word beside it), so a cell is supported only where `rlcat compile` compiles the recipe."""
    cells = matrix(recipe, catalog_for(catalog, [recipe]), list(platform or []) or None)
    write_output(render_matrix(cells, fmt))

"""`rlcat show`."""

from __future__ import annotations

from typing import Annotated

import typer

from rlcat.cli.app import app
from rlcat.cli.common import CatalogOpt, catalog_for, write_output
from rlcat.emit.tables import render_resolved
from rlcat.pipeline.survey import resolve_recipe


@app.command(
    "show",
    epilog="""Examples:

  rlcat show geo3k_megatron_4_4

  rlcat show gsm8k_qwen3_8b_fsdp --platform rocm
""",
)
def show_cmd(
    recipe: Annotated[str, typer.Argument(help="Recipe name or path.")],
    platform: Annotated[
        str | None, typer.Option(help="Also merge this platform's block of the recipe.")
    ] = None,
    catalog: CatalogOpt = None,
) -> None:
    """Show a recipe resolved: extends merged, defaults filled in, catalog entries looked up."""
    resolved = resolve_recipe(recipe, catalog_for(catalog), platform)
    write_output(render_resolved(resolved, without_platform_blocks=platform is not None))

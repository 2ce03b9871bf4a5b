"""`rlcat show`."""

from __future__ import annotations

from typing import Annotated

import typer

from rlcat.cli.app import app
from rlcat.cli.common import CatalogOpt
from rlcat.cli.report import catalog_for, print_diagnostics, write_output
from rlcat.emit.tables import render_resolved
from rlcat.survey.recipes import resolve_recipe


@app.command(
    "show",
    epilog="""Examples:

  rlcat show geo3k_megatron_4_4

  rlcat show gsm8k_qwen3_8b_fsdp --platform rocm

  rlcat show dapo_math_fsdp2_4_4 --all
""",
)
def show_cmd(
    recipe: Annotated[str, typer.Argument(help="Recipe name or path.")],
    platform: Annotated[
        str | None, typer.Option("--platform", "-p", help="Also merge this platform's block of the recipe.")
    ] = None,
    everything: Annotated[
        bool,
        typer.Option(
            "--all",
            help="Show every field, the unset ones as null too (by default: the fields with a value).",
        ),
    ] = False,
    catalog: CatalogOpt = None,
) -> None:
    """Show a recipe resolved: extends merged, defaults filled in, catalog entries looked up."""
    cat = catalog_for(catalog, [recipe])
    resolved = resolve_recipe(recipe, cat, platform)
    files = [*resolved.source.files, resolved.model_origin.file, resolved.dataset_origin.file]
    print_diagnostics(cat.replaced_builtins(files))
    write_output(render_resolved(resolved, without_platform_blocks=platform is not None, unset=everything))

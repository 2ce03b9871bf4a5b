"""`rlcat diff`."""

from __future__ import annotations

from typing import Annotated

import typer

from rlcat.cli.app import app
from rlcat.cli.common import CatalogOpt, DiffFormatOpt, EngineName
from rlcat.cli.compiling import PLATFORM_DEFAULT_HELP, platform_or_default
from rlcat.cli.report import catalog_for, write_output
from rlcat.compile.assemble import Request, compile_request
from rlcat.diagnostics import Diagnostic, RlcatError
from rlcat.emit.tables import render_diff
from rlcat.survey.recipes import diff


@app.command(
    "diff",
    epilog="""Examples:

  rlcat diff geo3k_megatron_4_4 --platform cuda --against rocm

  rlcat diff gsm8k_qwen3_8b_fsdp gsm8k_qwen3_8b_megatron --platform rocm

  rlcat diff dapo_math_fsdp2_4_4 --platform rocm --against rocm-7.0.2 --format json
""",
)
def diff_cmd(
    recipe: Annotated[str, typer.Argument(help="Recipe name or path (the left side).")],
    other: Annotated[
        str | None, typer.Argument(help="A second recipe (the right side); or use --against.")
    ] = None,
    platform: Annotated[
        str | None,
        typer.Option(
            "--platform",
            "-p",
            help=f"Platform of the left side ({PLATFORM_DEFAULT_HELP}).",
            show_default=False,
        ),
    ] = None,
    against: Annotated[
        str | None, typer.Option(help="Platform of the right side (default: --platform).")
    ] = None,
    engine: Annotated[EngineName | None, typer.Option(help="Rollout engine for both sides.")] = None,
    fmt: DiffFormatOpt = "text",
    catalog: CatalogOpt = None,
) -> None:
    """Show added, removed and changed settings between two recipes or two platforms, with origins."""
    if other is None and against is None:
        raise RlcatError(
            [
                Diagnostic(
                    "RLC105",
                    "give a second recipe or --against PLATFORM",
                    hint="rlcat diff geo3k_megatron_4_4 --platform cuda --against rocm",
                )
            ]
        )
    platform = platform_or_default(platform)
    right_recipe, right_platform = other or recipe, against or platform
    cat = catalog_for(catalog, [recipe, right_recipe])
    a = compile_request(Request(recipe, platform, engine), cat)
    b = compile_request(Request(right_recipe, right_platform, engine), cat)
    labels = (f"{recipe} on {platform}", f"{right_recipe} on {right_platform}")
    write_output(render_diff(diff(a, b), *labels, fmt))

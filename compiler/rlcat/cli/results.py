"""`rlcat results`."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from rlcat.cli.app import app
from rlcat.cli.common import CatalogOpt, TableFormatOpt
from rlcat.cli.report import catalog_for, print_diagnostics, write_output
from rlcat.diagnostics import ExitCode, has_errors
from rlcat.runs.render import render_results
from rlcat.runs.results import load_results


@app.command(
    "results",
    epilog="""Examples:

  rlcat results

  rlcat results --recipe dapo_math_fsdp2_16_16 --platform rocm-7.14

  rlcat results --format json
""",
)
def results_cmd(
    recipe: Annotated[Optional[str], typer.Option(help="Only results of this recipe.")] = None,  # noqa: UP045
    platform: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--platform", "-p", help="Only results on this platform."),
    ] = None,
    fmt: TableFormatOpt = "table",
    catalog: CatalogOpt = None,
) -> None:
    """List the results in the catalog: figures reported with their source, and runs measured with
    `rlcat runs add`. A result file that does not validate is reported and left out (exit 1)."""
    found = load_results(catalog_for(catalog), recipe=recipe, platform=platform)
    print_diagnostics(found.diagnostics)
    write_output(render_results(found.results, fmt))
    if has_errors(found.diagnostics):
        raise typer.Exit(int(ExitCode.FINDINGS))

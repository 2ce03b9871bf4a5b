"""`rlcat runs add | list | show | compare`: runs prepared with `rlcat compile --run-dir`, recorded
as measured results in a catalog."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Optional

import typer

from rlcat.catalog import display_path
from rlcat.cli.app import app
from rlcat.cli.common import (
    CatalogOpt,
    DiffFormatOpt,
    TableFormatOpt,
)
from rlcat.cli.report import catalog_for, print_diagnostics, write_output
from rlcat.diagnostics import ExitCode, RlcatError, Severity, diag, has_errors
from rlcat.project import find_project
from rlcat.runs.plan_file import PLAN_FILE
from rlcat.runs.record import read_run, write_result
from rlcat.runs.render import recorded_summary, render_comparison, render_result, render_runs
from rlcat.runs.results import compare, find_result, load_results

runs_app = typer.Typer(
    help="Runs: record a run's metrics as a measured result, list, show and compare them.",
    no_args_is_help=True,
    epilog="""Examples:

  rlcat compile dapo_math_fsdp2_4_4 -p rocm --run-dir runs/dapo-1 --format shell -o runs/dapo-1/run.sh

  rlcat runs add runs/dapo-1

  rlcat runs compare runs/dapo-1 runs/dapo-2
""",
)
app.add_typer(runs_app, name="runs")


def record_root(catalog: list[Path] | None) -> tuple[Path, str]:
    """Where `runs add` records: the first --catalog folder, else the project's first catalog folder
    (as the project's folder and the catalog's path below it: nothing is written through a link
    below the project's folder)."""
    if catalog:
        return catalog[0], "."
    project = find_project()
    if project is not None and project.catalog:
        return project.root, os.path.relpath(project.catalog[0], project.root)
    raise RlcatError(
        [
            diag(
                "RLC105",
                "no catalog to record the run in",
                argument="--catalog",
                hint="pass --catalog DIR, or run it in a project with an rlcat.toml (rlcat init)",
            )
        ]
    )


@runs_app.command(
    "add",
    epilog="""Examples:

  rlcat runs add runs/dapo-1

  rlcat runs add runs/dapo-1 --catalog team-catalog --gpu MI300X

  rlcat runs add runs/dapo-1 --force
""",
)
def add_cmd(
    run_dir: Annotated[Path, typer.Argument(help="The run folder (`rlcat compile --run-dir`).")],
    name: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(help="The result's name (default: RECIPE-PLATFORM-FOLDER)."),
    ] = None,
    gpu: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(help="The GPU model the run used, e.g. MI300X (the plan does not say)."),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace a result of the same name.")] = False,
    catalog: CatalogOpt = None,
) -> None:
    """Record a finished or still running run as a measured result in catalog/results/ of the first
    --catalog folder (default: the project's first catalog folder): the plan's fingerprint, the best,
    first and last validation scores, the median step time and throughput, the steps done, and
    the series. A half-written last line (a live run) is skipped with a note; bad lines are
    reported with their line numbers; an existing result is replaced only with --force."""
    root, catalog_folder = record_root(catalog)
    reading = read_run(run_dir, name=name, gpu=gpu)
    lookups = catalog_for(catalog)
    found = list(reading.diagnostics)
    if reading.result.recipe not in lookups.names("recipe"):
        found.append(
            diag(
                "RLC201",
                f"recipe {reading.result.recipe} is not in the catalog search path: `rlcat validate` "
                "will report the result until it is",
                severity=Severity.WARNING,
                argument=str(run_dir),
            )
        )
    print_diagnostics(found)
    source = display_path(reading.plan.folder / PLAN_FILE)
    path = write_result(reading.result, root, catalog_folder, force=force, source=source)
    write_output(recorded_summary(reading.result, path))


@runs_app.command(
    "list",
    epilog="""Examples:

  rlcat runs list

  rlcat runs list --recipe dapo_math_fsdp2_4_4 --format json
""",
)
def list_cmd(
    recipe: Annotated[Optional[str], typer.Option(help="Only runs of this recipe.")] = None,  # noqa: UP045
    platform: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--platform", "-p", help="Only runs on this platform."),
    ] = None,
    fmt: TableFormatOpt = "table",
    catalog: CatalogOpt = None,
) -> None:
    """List the recorded runs (the measured results of the catalog)."""
    found = load_results(catalog_for(catalog), recipe=recipe, platform=platform, kind="measured")
    print_diagnostics(found.diagnostics)
    write_output(render_runs(found.results, fmt))
    if has_errors(found.diagnostics):
        raise typer.Exit(int(ExitCode.FINDINGS))


@runs_app.command(
    "show",
    epilog="""Examples:

  rlcat runs show runs/dapo-1

  rlcat runs show dapo_math_fsdp2_4_4-rocm-dapo-1 --format json
""",
)
def show_cmd(
    run: Annotated[str, typer.Argument(help="A run folder (read, not recorded) or a result's name.")],
    gpu: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(help="The GPU model, for a run folder."),
    ] = None,
    fmt: TableFormatOpt = "table",
    catalog: CatalogOpt = None,
) -> None:
    """Show one run: a run folder as `runs add` would record it, or a recorded result."""
    if os.path.isdir(run):
        reading = read_run(Path(run), gpu=gpu)
        print_diagnostics(reading.diagnostics)
        write_output(render_result(reading.result, None, fmt))
        return
    result, path = find_result(catalog_for(catalog), run)
    write_output(render_result(result, path, fmt))


@runs_app.command(
    "compare",
    epilog="""Examples:

  rlcat runs compare runs/dapo-1 runs/dapo-2

  rlcat runs compare runs/dapo-1 dapo_math_fsdp2_4_4-rocm-dapo-0 --format json
""",
)
def compare_cmd(
    a: Annotated[str, typer.Argument(help="A run folder or a recorded run's name (the left side).")],
    b: Annotated[str, typer.Argument(help="Another (the right side).")],
    fmt: DiffFormatOpt = "text",
    catalog: CatalogOpt = None,
) -> None:
    """Compare two runs: the difference of their plans with the origin of each setting (as
    `rlcat diff`), and their metrics side by side."""
    comparison = compare(a, b, catalog_for(catalog))
    print_diagnostics([*comparison.a.diagnostics, *comparison.b.diagnostics])
    write_output(render_comparison(comparison, fmt))

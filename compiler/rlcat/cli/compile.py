"""`rlcat compile`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from rlcat.cli.app import app
from rlcat.cli.common import CatalogOpt, VerlNativeOpt, VerlPythonOpt
from rlcat.cli.compiling import (
    AllowKnownBrokenOpt,
    EngineOpt,
    ModeOpt,
    OverrideOpt,
    PlanFormat,
    PlatformOpt,
    RecipeArg,
    SetOpt,
    compile_plan,
    plan_request,
)
from rlcat.cli.report import native_checks, print_diagnostics, write_output
from rlcat.diagnostics import Diagnostic, ExitCode, RlcatError, Severity, Where, json_text
from rlcat.emit.explain import annotated_overrides, origins_data
from rlcat.emit.formats import FORMATS, plan_data
from rlcat.native.plans import plan_ask

# Formats that are programs: `-o launch.sh` is run as `./launch.sh`, so it is written executable.
EXECUTABLE_FORMATS = frozenset({"shell"})


@app.command(
    "compile",
    epilog="""Examples:

  rlcat compile geo3k_megatron_4_4 --platform rocm

  rlcat compile dapo_math_fsdp2_4_4 --platform cuda --engine sglang --format shell -o launch.sh

  rlcat compile my_recipes/run.yaml --platform rocm --set batch.mini_batch_size=64 --format json

  rlcat compile dapo_math_fsdp2_4_4 -p rocm --run-dir runs/dapo-1 --format shell -o runs/dapo-1/run.sh

  rlcat compile my_recipes/run.yaml -p cuda --verl-native
""",
)
def compile_cmd(
    recipe: RecipeArg,
    platform: PlatformOpt = None,
    engine: EngineOpt = None,
    mode: ModeOpt = None,
    set_: SetOpt = None,
    override: OverrideOpt = None,
    fmt: Annotated[PlanFormat, typer.Option("--format", "-f", help="Output format.")] = "overrides",
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            readable=False,
            help="Write to this file instead of stdout ('-' is stdout). The file is replaced whole, "
            "keeping its permissions; a shell script is made executable. Anything but a regular file "
            "or a new path (a device, a pipe, a folder, a symbolic link) is refused.",
        ),
    ] = None,
    explain: Annotated[
        bool, typer.Option("--explain", help="Annotate every override and env var with its origin.")
    ] = False,
    allow_known_broken: AllowKnownBrokenOpt = False,
    run_dir: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option(
            "--run-dir",
            help="The run's folder: verl's file logger writes its metrics to DIR/metrics.jsonl "
            "(`file` joins trainer.logger, VERL_FILE_LOGGER_PATH points there), and the plan is "
            "written to DIR/plan.json, for `rlcat runs add DIR`.",
        ),
    ] = None,
    catalog: CatalogOpt = None,
    verl_native: VerlNativeOpt = False,
    verl_python: VerlPythonOpt = None,
) -> None:
    """Compile a recipe into the entrypoint, config, overrides and env that launch it on verl."""
    if explain and fmt not in ("overrides", "json"):
        raise RlcatError(
            [
                Diagnostic(
                    "RLC105",
                    "--explain works with --format overrides or json; a shell "
                    "script or YAML file has no room for annotations",
                )
            ]
        )
    request = plan_request(recipe, platform, engine, mode, set_, override, allow_known_broken)
    request.run_dir = None if run_dir is None else str(run_dir)
    compiled = compile_plan(request, catalog)
    print_diagnostics([d for d in compiled.diagnostics if d.severity < Severity.ERROR])
    with native_checks(verl_native, verl_python) as native:
        said = [] if native is None else native.judge(plan_ask(compiled, _recipe_at(recipe)))
    if any(d.severity >= Severity.ERROR for d in said):
        raise RlcatError(said, ExitCode.FINDINGS)  # verl would not start: no plan to launch
    print_diagnostics(said)
    if run_dir is not None:
        # imported here: the plan file (and the origins it records) is for --run-dir alone, and
        # every module a plain compile imports counts in its start-up
        from rlcat.runs.plan_file import write_plan_file

        print_diagnostics(write_plan_file(run_dir, compiled, compiled.regenerate))
    if not explain:
        text = FORMATS[fmt](compiled)
    elif fmt == "overrides":
        text = annotated_overrides(compiled)
    else:
        text = json_text({**plan_data(compiled), "origins": origins_data(compiled)})
    write_output(text, output, executable=fmt in EXECUTABLE_FORMATS)


def _recipe_at(recipe: str) -> Where:
    """Where a finding about the recipe given points: its file, or the name on the command line."""
    return {"file": recipe} if Path(recipe).is_file() else {"argument": recipe}

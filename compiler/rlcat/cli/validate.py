"""`rlcat validate`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rlcat.catalog import builtin_root, display_path
from rlcat.cli.app import app
from rlcat.cli.common import (
    CatalogOpt,
    ReportFormat,
    ReportOutputOpt,
    StrictOpt,
    VerlNativeOpt,
    VerlPythonOpt,
)
from rlcat.cli.report import catalog_for, finish_report, native_checks
from rlcat.compile.assemble import Compiled
from rlcat.diagnostics import Diagnostic
from rlcat.model.project import ProjectSettings
from rlcat.native.checks import NativeChecks
from rlcat.native.plans import plan_ask
from rlcat.project import find_project
from rlcat.survey.validate_files import UNREADABLE, PlanJudge, validate_paths


@app.command(
    "validate",
    epilog="""Examples:

  rlcat validate

  rlcat validate my_recipes/run.yaml --format github

  rlcat validate my_recipes/run.yaml --platform rocm --strict

  rlcat validate my_recipes/run.yaml -p cuda --verl-python .venv/bin/python
""",
)
def validate_cmd(
    paths: Annotated[
        list[Path] | None, typer.Argument(help="Files or folders (recursive). Default: the catalog.")
    ] = None,
    platform: Annotated[
        list[str] | None,
        typer.Option(
            "--platform",
            "-p",
            help="Check recipes on these platforms only (repeatable). Default: the project file's "
            "`platforms` (cuda and rocm) and those each recipe names.",
        ),
    ] = None,
    fmt: Annotated[ReportFormat, typer.Option("--format", "-f", help="Report format.")] = "text",
    strict: StrictOpt = None,
    output: ReportOutputOpt = None,
    catalog: CatalogOpt = None,
    verl_native: VerlNativeOpt = False,
    verl_python: VerlPythonOpt = None,
) -> int:
    """Check recipe and catalog files: YAML, schema, references, compile on every target platform,
    guards and verl keys. Exit 0 clean (warnings allowed unless --strict), 1 findings, 2 usage."""
    project = find_project()
    settings = project.settings if project else ProjectSettings()
    targets = list(paths or [])
    if not targets and project is not None:
        targets = [root.folder for root in project.catalog_roots()]
    if not targets:
        root = builtin_root()
        targets = [root / "recipes", root / "catalog"]
    cat = catalog_for(catalog, targets)
    if not cat.problems():  # problems on disk are the report's to show, file by file
        for name in platform or []:
            cat.find("platform", name, key="--platform")  # an unknown platform is a usage error
    allow = project.allowances() if project else {}
    with native_checks(verl_native, verl_python) as native:
        judge = None if native is None else _judge_with(native)
        report = validate_paths(
            targets, cat, list(platform or []) or None, settings.platforms, allow, judge=judge
        )
    strict = settings.strict if strict is None else strict
    return finish_report(report.diagnostics, report.files, fmt, output, strict=strict, unreadable=UNREADABLE)


def _judge_with(verl: NativeChecks) -> PlanJudge:
    """verl's own checks of a plan compiled from the recipe file `path`."""

    def judge(compiled: Compiled, path: Path) -> list[Diagnostic]:
        return verl.judge(plan_ask(compiled, {"file": display_path(path)}))

    return judge

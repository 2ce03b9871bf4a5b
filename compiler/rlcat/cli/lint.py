"""`rlcat lint`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from rlcat.arguments import split_assignment
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
from rlcat.diagnostics import Diagnostic, RlcatError, diag
from rlcat.native.checks import NativeChecks
from rlcat.native.scripts import launch_ask
from rlcat.project import find_project, strict_setting
from rlcat.scripts import Launch
from rlcat.survey.lint_scripts import UNREADABLE, LaunchJudge, check_release, lint_paths, newest_release

if TYPE_CHECKING:
    from rlcat.model.platform import PlatformProfile


@app.command(
    "lint",
    epilog="""Examples:

  rlcat lint run_qwen3_8b_grpo.sh

  rlcat lint scripts/run_grpo.sh --platform rocm --format github

  rlcat lint run.sh --verl 0.9.0 --env MODEL_PATH=/models/qwen3-8b --strict

  rlcat lint run_qwen3_8b_grpo.sh --verl-native
""",
)
def lint_cmd(
    scripts: Annotated[
        list[Path], typer.Argument(help="Launch scripts, or folders of them (every *.sh, recursive).")
    ],
    platform: Annotated[
        str | None,
        typer.Option(
            "--platform", "-p", help="Check against this platform's verl release, with its platform guards."
        ),
    ] = None,
    verl: Annotated[
        str | None,
        typer.Option(
            "--verl",
            help="Check against this verl release (one rlcat has a key index for). Default: the newest "
            "indexed release, unless --platform names one.",
        ),
    ] = None,
    fmt: Annotated[ReportFormat, typer.Option("--format", "-f", help="Report format.")] = "text",
    env: Annotated[
        list[str] | None,
        typer.Option(
            "--env",
            "-e",
            help="KEY=VALUE the caller's environment would hold (repeatable); other variables are unset.",
        ),
    ] = None,
    strict: StrictOpt = None,
    only_launches: Annotated[
        bool,
        typer.Option(
            "--only-launches",
            help="A script that launches no verl trainer rlcat checks is noted, not an error (the "
            "pre-commit hook passes it: it sees every shell script).",
        ),
    ] = False,
    output: ReportOutputOpt = None,
    catalog: CatalogOpt = None,
    verl_native: VerlNativeOpt = False,
    verl_python: VerlPythonOpt = None,
) -> int:
    """Check verl launch scripts without running them: cut line continuations, unknown keys, `+`
    misuse, duplicates, types, keys the release dropped, and the guards. Exit 0 clean (warnings
    allowed unless --strict), 1 findings, 2 usage or unreadable script."""
    project = find_project()
    profile = _platform(platform, verl, catalog)
    version = profile.verl_index if profile else check_release(verl) if verl else newest_release()
    caller_env = dict(split_assignment(text, "--env", "NAME", "MODEL_PATH=/models/x") for text in env or [])
    with native_checks(verl_native, verl_python) as native:
        judge = None if native is None else _judge_with(native)
        report = lint_paths(scripts, version, profile, caller_env, only_launches, judge=judge)
    strict = strict_setting(project) if strict is None else strict
    return finish_report(report.diagnostics, report.files, fmt, output, strict=strict, unreadable=UNREADABLE)


def _platform(name: str | None, verl: str | None, catalog: list[Path] | None) -> PlatformProfile | None:
    """The --platform profile (its release is the one checked against), or None."""
    if name is None:
        return None
    if verl is not None:
        raise RlcatError(
            [
                diag(
                    "RLC105",
                    "--platform and --verl both name the release to check against",
                    argument=f"--verl {verl}",
                    hint=f"give one: --platform {name} checks against that platform's release",
                )
            ]
        )
    cat = catalog_for(catalog)
    cat.find("platform", name, key="--platform")  # an unknown platform is a usage error, as in validate
    # a platform profile is a pydantic model: loaded only when --platform asks for one
    from rlcat.resolve.entries import load_platform

    profile, _ = load_platform(name, cat)
    return profile


def _judge_with(verl: NativeChecks) -> LaunchJudge:
    """verl's own checks of one launch of the script `file`."""

    def judge(file: str, launch: Launch) -> list[Diagnostic]:
        ask = launch_ask(file, launch)
        return [] if ask is None else verl.judge(ask)

    return judge

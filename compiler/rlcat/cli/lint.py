"""`rlcat lint`, the one command that parses its own arguments (argparse) instead of Typer.

A pre-commit hook runs it on every commit that touches a shell script, so its start-up is what a
user waits for: Typer, and the pydantic Typer loads to coerce parameters, took more time than
reading and checking a script (bench/lint_scripts.py). The command line process (cli/process.py)
hands `rlcat lint ...` straight here; the Typer app lists the command from this parser (cli/app.py
OwnParserCommand) for `rlcat --help`, suggestions and the CLI reference. Usage errors and help look
as Typer's do: `Usage: rlcat lint ...`, exit 2 for a usage error.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from rlcat.arguments import split_assignment
from rlcat.cli.report import catalog_for, finish_report, print_escaped, write_output
from rlcat.diagnostics import ExitCode, RlcatError, diag
from rlcat.emit.reporters import REPORTERS
from rlcat.project import find_project, strict_setting
from rlcat.survey.lint_scripts import UNREADABLE, check_release, lint_paths, newest_release

if TYPE_CHECKING:
    from rlcat.model.platform import PlatformProfile

NAME = "rlcat lint"
SUMMARY = (
    "Check verl launch scripts without running them: cut line continuations, unknown keys, `+` misuse, "
    "duplicates, types, keys the release dropped, and the guards. Exit 0 clean (warnings allowed "
    "unless --strict), 1 findings, 2 usage or unreadable script."
)
EPILOG = """Examples:

  rlcat lint run_qwen3_8b_grpo.sh

  rlcat lint scripts/run_grpo.sh --platform rocm --format github

  rlcat lint run.sh --verl 0.9.0 --env MODEL_PATH=/models/qwen3-8b --strict
"""


class _Stop(Exception):
    """The parser is done before the command runs (--help shown, or a usage error): the exit code."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


class _Parser(argparse.ArgumentParser):
    """argparse, speaking as the other commands do: help on stdout through the checked writer,
    usage errors escaped on stderr as Typer shows them, and no SystemExit from inside a command."""

    def format_usage(self) -> str:
        return super().format_usage().replace("usage: ", "Usage: ", 1)

    def format_help(self) -> str:
        return super().format_help().replace("usage: ", "Usage: ", 1)

    def print_help(self, file: object = None) -> None:
        write_output(self.format_help())

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if message:
            print_escaped(message)
        raise _Stop(status)

    def error(self, message: str) -> NoReturn:
        # the message repeats the arguments as given: print_escaped shows them escaped
        print_escaped(f"{self.format_usage()}Try '{NAME} --help' for help.\n\nError: {message}")
        raise _Stop(int(ExitCode.INPUT))


def parser() -> tuple[argparse.ArgumentParser, list[argparse.Action]]:
    """The parser, and its arguments and options in the order --help lists them (the CLI reference
    is generated from them)."""
    p = _Parser(
        prog=NAME,
        usage=f"{NAME} [OPTIONS] SCRIPTS...",
        description=SUMMARY,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        add_help=False,
        allow_abbrev=False,  # as Typer: an option is named in full
    )
    arguments = p.add_argument_group("Arguments")
    options = p.add_argument_group("Options")
    actions = [
        arguments.add_argument(
            "scripts",
            nargs="+",
            type=Path,
            metavar="SCRIPTS...",
            help="Launch scripts, or folders of them (every *.sh, recursive).",
        ),
        options.add_argument(
            "--platform",
            "-p",
            metavar="TEXT",
            help="Check against this platform's verl release, with its platform guards.",
        ),
        options.add_argument(
            "--verl",
            metavar="TEXT",
            help="Check against this verl release (one rlcat has a key index for). Default: the newest "
            "indexed release, unless --platform names one.",
        ),
        options.add_argument(
            "--format", "-f", dest="fmt", default="text", choices=list(REPORTERS), help="Report format."
        ),
        options.add_argument(
            "--env",
            "-e",
            action="append",
            metavar="TEXT",
            help="KEY=VALUE the caller's environment would hold (repeatable); other variables are unset.",
        ),
        options.add_argument(
            "--strict",
            action=argparse.BooleanOptionalAction,
            help="Warnings fail the check too. Default: the project file's `strict`.",
        ),
        options.add_argument(
            "--only-launches",
            action="store_true",
            help="A script that launches no verl trainer rlcat checks is noted, not an error (the "
            "pre-commit hook passes it: it sees every shell script).",
        ),
        options.add_argument(
            "--output", "-o", type=Path, metavar="PATH", help="Write the report to this file."
        ),
        options.add_argument(
            "--catalog",
            action="append",
            type=Path,
            metavar="PATH",
            help="Extra catalog folder (repeatable); RLCAT_PATH also adds folders.",
        ),
        options.add_argument("--help", "-h", action="help", help="Show this message and exit."),
    ]
    return p, actions


def lint(argv: Sequence[str]) -> int:
    """Run `rlcat lint` with the arguments after the command's name; the exit code."""
    try:
        args = parser()[0].parse_args(list(argv))
    except _Stop as stop:
        return stop.code
    project = find_project()
    profile = _platform(args.platform, args.verl, args.catalog)
    version = profile.verl_index if profile else check_release(args.verl) if args.verl else newest_release()
    caller_env = dict(
        split_assignment(text, "--env", "NAME", "MODEL_PATH=/models/x") for text in args.env or []
    )
    report = lint_paths(args.scripts, version, profile, caller_env, args.only_launches)
    strict = strict_setting(project) if args.strict is None else args.strict
    return finish_report(
        report.diagnostics, report.files, args.fmt, args.output, strict=strict, unreadable=UNREADABLE
    )


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

"""The options and helpers of the commands that compile one plan (compile, launch, explain): the
recipe and the choices of a Request, with one help text each, and the compile with the command
line's catalog folders."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional, TypeAlias

import typer

from rlcat.cli.common import EngineName, ModeName, one_of
from rlcat.cli.report import catalog_for, print_diagnostics
from rlcat.compile.assemble import Compiled, Request, compile_request
from rlcat.emit.formats import FORMATS
from rlcat.project import default_platform, find_project

if TYPE_CHECKING:  # for the type checker a choice is its value, a str
    PlanFormat: TypeAlias = str
else:
    PlanFormat = one_of(FORMATS)

RecipeArg = Annotated[str, typer.Argument(help="Recipe name from the catalog, or a path to a recipe file.")]
PLATFORM_DEFAULT_HELP = "default: the first of the project file's `platforms`, else cuda"
PlatformOpt = Annotated[
    Optional[str],  # noqa: UP045 - typer reads the annotation at runtime on Python 3.10
    typer.Option(
        "--platform",
        "-p",
        help=f"Platform profile: cuda, rocm, ... ({PLATFORM_DEFAULT_HELP}).",
        show_default=False,
    ),
]
EngineOpt = Annotated[EngineName | None, typer.Option(help="Rollout engine, if the recipe allows it.")]
ModeOpt = Annotated[ModeName | None, typer.Option(help="Runtime mode, if the recipe allows it.")]
SetOpt = Annotated[
    list[str] | None,
    typer.Option("--set", help="Change a recipe field: section.field=value (repeatable)."),
]
OverrideOpt = Annotated[
    list[str] | None,
    typer.Option(
        help="Set a verl key: verl.key=value (repeatable), checked against the key index as Hydra "
        "checks it: key= needs a key verl has; +key= adds one verl lacks; ++key= adds or overrides. "
        "The prefix is kept in every format."
    ),
]
AllowKnownBrokenOpt = Annotated[
    bool,
    typer.Option(
        "--allow-known-broken",
        help="Compile a mode × engine × backend cell the platform marks known-broken (a warning).",
    ),
]


def platform_or_default(platform: str | None) -> str:
    """--platform as given, else the project's default platform (project.default_platform)."""
    return platform or default_platform(find_project())


def plan_request(
    recipe: str,
    platform: str | None,
    engine: str | None,
    mode: str | None,
    sets: list[str] | None,
    overrides: list[str] | None,
    allow_known_broken: bool,
) -> Request:
    """The Request of the options above (no --platform: the project's default platform)."""
    return Request(
        recipe,
        platform_or_default(platform),
        engine,
        mode,
        None,
        list(sets or []),
        list(overrides or []),
        allow_known_broken,
    )


def compile_plan(request: Request, catalog: list[Path] | None) -> Compiled:
    """Compile with the command line's catalog folders; on stderr, RLC206 for each user entry the
    plan used that replaces another of the same name."""
    cat = catalog_for(catalog, [request.recipe])
    project = find_project()
    if project is not None:
        request = replace(request, allow={**project.allowances(), **request.allow})
    compiled = compile_request(request, cat)
    compiled.regenerate = regenerate_command(request, catalog)
    print_diagnostics(cat.replaced_builtins(compiled.inputs))
    return compiled


def regenerate_command(request: Request, catalog: list[Path] | None) -> list[str]:
    """The `rlcat compile` arguments that make the same plan: every choice the command line made,
    --catalog folders included (RLCAT_PATH and the project file are found again where it runs)."""
    words = ["rlcat", "compile", request.recipe, "--platform", request.platform]
    for option, value in (("--engine", request.engine), ("--mode", request.mode)):
        words += [option, value] if value else []
    words += [word for text in request.sets for word in ("--set", text)]
    words += [word for text in request.overrides for word in ("--override", text)]
    words += ["--allow-known-broken"] if request.allow_known_broken else []
    words += ["--run-dir", request.run_dir] if request.run_dir else []
    return words + [word for folder in catalog or [] for word in ("--catalog", str(folder))]

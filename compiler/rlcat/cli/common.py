"""What the Typer commands share: the --catalog option, choices from registries, the options of the
commands that compile or check, and the compile helpers. Output, diagnostics and the catalog searched
are in cli/report.py, which loads no Typer."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, Optional, TypeAlias

import typer

from rlcat.cli.report import catalog_for, print_diagnostics
from rlcat.compile.assemble import Compiled, Request, compile_request
from rlcat.emit.formats import FORMATS
from rlcat.emit.reporters import REPORTERS
from rlcat.model.axes import ALGORITHMS, BACKENDS, ENGINES, MODES
from rlcat.project import find_project

CatalogOpt = Annotated[
    Optional[list[Path]],  # noqa: UP045 - typer reads the annotation at runtime on Python 3.10
    # readable=False: catalog_for checks the folders and says what is wrong in rlcat's own words
    typer.Option(
        "--catalog", readable=False, help="Extra catalog folder (repeatable); RLCAT_PATH also adds folders."
    ),
]


def one_of(names: Iterable[str]) -> Any:
    """The names of a registry as a Literal type: Typer offers exactly these in --help and refuses
    anything else with a usage error naming the option."""
    return Literal[tuple(names)]


# The closed choices of the command line, each from its registry.
if TYPE_CHECKING:  # for the type checker a choice is its value, a str
    AlgorithmName: TypeAlias = str
    BackendName: TypeAlias = str
    EngineName: TypeAlias = str
    ModeName: TypeAlias = str
    PlanFormat: TypeAlias = str
    ReportFormat: TypeAlias = str
    TableFormat: TypeAlias = str
    DiffFormat: TypeAlias = str
else:
    AlgorithmName, BackendName = one_of(ALGORITHMS), one_of(BACKENDS)
    EngineName, ModeName = one_of(ENGINES), one_of(MODES)
    PlanFormat, ReportFormat = one_of(FORMATS), one_of(REPORTERS)
    TableFormat, DiffFormat = one_of(("table", "json")), one_of(("text", "json"))

# --format of the listing commands (tables or JSON) and of the comparing ones (text or JSON)
TableFormatOpt = Annotated[TableFormat, typer.Option("--format", "-f", help="Output format.")]
DiffFormatOpt = Annotated[DiffFormat, typer.Option("--format", "-f", help="Output format.")]


# The options of every command that compiles one plan (compile, launch): the recipe and the choices
# of a Request, with one help text each.
RecipeArg = Annotated[str, typer.Argument(help="Recipe name from the catalog, or a path to a recipe file.")]
PlatformOpt = Annotated[str, typer.Option("--platform", "-p", help="Platform profile: cuda, rocm, ...")]
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


def plan_request(
    recipe: str,
    platform: str,
    engine: str | None,
    mode: str | None,
    sets: list[str] | None,
    overrides: list[str] | None,
    allow_known_broken: bool,
) -> Request:
    """The Request of the options above."""
    return Request(
        recipe, platform, engine, mode, None, list(sets or []), list(overrides or []), allow_known_broken
    )


# The options and the ending of the commands that check files and report findings (validate, lint)
StrictOpt = Annotated[
    Optional[bool],  # noqa: UP045 - typer reads the annotation at runtime on Python 3.10
    typer.Option(
        "--strict/--no-strict", help="Warnings fail the check too. Default: the project file's `strict`."
    ),
]
ReportOutputOpt = Annotated[
    Optional[Path],  # noqa: UP045
    typer.Option("--output", "-o", help="Write the report to this file."),
]


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

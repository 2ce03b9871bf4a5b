"""What the commands share: the --catalog option and catalog, choices from registries, diagnostics
on stderr, and output written whole or not at all."""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, Optional, TextIO, TypeAlias

import typer

from rlcat.catalog import Catalog
from rlcat.diagnostics import Diagnostic, ExitCode, RlcatError, Severity, diag, printable
from rlcat.emit.formats import FORMATS
from rlcat.emit.reporters import REPORTERS
from rlcat.files import NotARegularFile, atomic_write
from rlcat.model.axes import ALGORITHMS, BACKENDS, ENGINES, MODES
from rlcat.pipeline.assemble import Compiled, Request, compile_request
from rlcat.project import find_project, search_roots

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


def finish_report(
    diagnostics: list[Diagnostic],
    files: int,
    fmt: str,
    output: Path | None,
    *,
    strict: bool,
    unreadable: frozenset[str],
) -> None:
    """Write the report, then exit 2 when an input could not be read, 1 when a finding fails the
    check (an error, or with `strict` a warning too)."""
    write_output(REPORTERS[fmt](diagnostics, files), output)
    if any(d.code in unreadable and d.severity >= Severity.ERROR for d in diagnostics):
        raise typer.Exit(int(ExitCode.INPUT))
    failing = Severity.WARNING if strict else Severity.ERROR
    if any(d.severity >= failing for d in diagnostics):
        raise typer.Exit(int(ExitCode.FINDINGS))


def catalog_for(extra: list[Path] | None, paths: Iterable[str | Path] = ()) -> Catalog:
    """The catalog every command searches (project.search_roots): --catalog folders, the catalog a
    recipe path given on the command line sits in (`paths`: recipe names are passed too, and only
    those that are files or folders count), RLCAT_PATH, the project file's folders, the built-in one.

    Every folder named must exist: a mistyped entry would otherwise hide a catalog without a word.
    The root of the file system is refused: every YAML file on the machine would be a recipe."""
    given = [Path(p) for p in paths if os.path.exists(p)]
    roots = search_roots(extra, given, find_project())
    for root in roots:
        if root.builtin:
            continue
        folder = root.folder
        if not folder.is_dir():
            problem = "not a folder" if folder.exists() else "no such folder"
            raise RlcatError([diag("RLC001", f"{root.source}: {problem}", file=str(folder))])
        resolved = folder.resolve()
        if resolved.parent == resolved:
            raise RlcatError(
                [
                    diag(
                        "RLC105",
                        "the root of the file system is not a catalog folder: every YAML file on the "
                        "machine would be searched for recipes",
                        argument=root.source,
                        hint="name the folder that holds recipes/ and catalog/ (or the recipe files)",
                    )
                ]
            )
    catalog = Catalog([root.folder for root in roots])
    for folder in catalog.roots:
        if folder.is_dir() and not os.access(folder, os.R_OK | os.X_OK):
            raise RlcatError(
                [diag("RLC001", f"catalog folder {folder}: permission denied", file=str(folder))]
            )
    return catalog


class OutputClosed(Exception):
    """The reader of stdout or stderr went away, or the stream was closed (`>&-`): exit 141. Not an
    OSError, so that Typer passes it on instead of exiting with its own code."""


def _emit(stream: TextIO, name: str, text: str) -> None:
    """Write and flush, checked: a stream that fails (a full disk, /dev/full, an I/O error) is
    bad output (RLC106, exit 2), never a silently short one."""
    try:
        stream.write(text)
        stream.flush()
    except BrokenPipeError:
        raise OutputClosed from None
    except OSError as exc:
        if exc.errno == errno.EBADF:  # closed when rlcat started (cli.app.run holds it read-only)
            raise OutputClosed from None
        raise RlcatError(
            [
                diag(
                    "RLC106",
                    f"writing failed ({exc.strerror or exc}); the output is incomplete, do not use it",
                    argument=name,
                    hint="write to a file with -o FILE: it is replaced only once it is written whole",
                )
            ]
        ) from None


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


def print_diagnostics(diagnostics: list[Diagnostic]) -> None:
    _emit(sys.stderr, "stderr", "".join(d.render() + "\n" for d in diagnostics))


def print_escaped(text: str) -> None:
    """Text rlcat did not write itself (Typer's usage messages repeat the arguments as given) on
    stderr, each line shown as `printable` shows it."""
    # split at newlines only: splitlines() would also split at U+2028, showing it as a new line
    _emit(sys.stderr, "stderr", "".join(printable(line) + "\n" for line in text.rstrip("\n").split("\n")))


STDOUT = Path("-")  # `-o -`: print, as most tools read `-`


def write_output(text: str, output: Path | None = None, *, executable: bool = False) -> None:
    """Print, or write the file whole or not at all (files.atomic_write; `executable` for a launch
    script). A file that cannot be written, or a path that is not a regular file (a device such as
    /dev/null, a pipe, a folder, a symbolic link), is RLC106 and exit 2, with nothing written."""
    if output is None or output == STDOUT:
        _emit(sys.stdout, "stdout", text)
        return
    where = f"-o {output}"
    try:
        atomic_write(output, text, executable=executable)
    except NotARegularFile as exc:
        raise RlcatError(
            [
                diag(
                    "RLC106",
                    f"this is {exc.kind}, not a regular file; nothing was written",
                    argument=where,
                    hint=_not_a_file_hint(output, exc.kind),
                )
            ]
        ) from None
    except OSError as exc:
        raise RlcatError(
            [
                diag(
                    "RLC106",
                    f"cannot write there ({exc.strerror or exc}); nothing was written",
                    argument=where,
                )
            ]
        ) from None


def _not_a_file_hint(output: Path, kind: str) -> str:
    if kind == "a directory":
        return f"name a file in it: -o {output / 'plan.txt'}"
    if kind == "a symbolic link":
        # neither followed (a link in a checkout may point anywhere, /etc included) nor replaced
        # (whoever made the link wants it kept): the user names the file meant
        try:
            target = os.readlink(output)
        except OSError:
            target = "?"
        return f"it points to {target}; name the file meant, or redirect stdout instead: > {output}"
    # -o replaces the file by a rename, which would turn a device or a pipe into a regular file
    return f"leave out -o (or use -o -) and redirect stdout instead: > {output}"

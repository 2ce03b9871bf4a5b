"""`rlcat schemas export`: the JSON Schemas of recipes and catalog entries, for editors."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Annotated, Optional

import typer

from rlcat.cli.app import app
from rlcat.cli.report import print_escaped, write_output
from rlcat.dev import schemas
from rlcat.diagnostics import ExitCode, RlcatError, printable
from rlcat.files import read_bytes
from rlcat.inside import write_files
from rlcat.project import find_project
from rlcat.syntax.bash import shell_word

DEFAULT_FOLDER = Path("schemas")

schemas_app = typer.Typer(
    help="The JSON Schemas of recipes and catalog entries, for editors and other validators.",
    no_args_is_help=True,
    epilog="""Examples:

  rlcat schemas export
""",
)
app.add_typer(schemas_app, name="schemas")


def schema_files() -> dict[str, str]:
    """Every JSON Schema rlcat exports, file name → text: the generator of rlcat's own schemas/
    (dev/schemas.py), so an export equals the files rlcat ships."""
    return {name: schemas.render(name) for name in schemas.SCHEMAS}


def export_place(folder: Path | None) -> tuple[Path, str]:
    """Where the schemas go, as a folder and the path below it that is written following no link
    (inside.write_files): the folder given; else the project file's `schemas`, below the project's
    folder; else ./schemas."""
    if folder is not None:
        return folder, "."
    project = find_project()
    if project is None:
        return Path("."), DEFAULT_FOLDER.as_posix()
    return project.root, os.path.relpath(project.schemas, project.root)


@schemas_app.command(
    "export",
    epilog="""Examples:

  rlcat schemas export

  rlcat schemas export editor/schemas
""",
)
def export_cmd(
    folder: Annotated[
        Optional[Path],  # noqa: UP045 - typer reads the annotation at runtime on Python 3.10
        typer.Argument(help="Where to write them. Default: the project file's `schemas`, else ./schemas."),
    ] = None,
    check: Annotated[
        bool, typer.Option("--check", help="Exit 1 if a file is missing or stale; write nothing.")
    ] = False,
) -> None:
    """Write the JSON Schemas of recipes, models, datasets, platform profiles and results into a
    folder, so that a recipe's `# yaml-language-server: $schema=...` line works in editors. Files that are up
    to date are left alone; with --check (in CI), nothing is written and a missing or stale file
    is exit 1."""
    root, below = export_place(folder)
    target = root / below
    out_of_date = stale(target)
    if check:
        if out_of_date:
            write_output(
                "".join(f"{state}: {printable(_shown(target / name))}\n" for name, state in out_of_date)
            )
            again = "rlcat schemas export" + ("" if folder is None else f" {shell_word(str(folder))}")
            print_escaped(f"run `{again}` to write them")
            raise typer.Exit(int(ExitCode.FINDINGS))
        return
    write(root, below, [name for name, _ in out_of_date])
    written = [f"wrote: {printable(_shown(target / name))}\n" for name, _ in out_of_date]
    write_output("".join(written) or f"up to date: {printable(_shown(target))}\n")


def stale(folder: Path) -> list[tuple[str, str]]:
    """The schema files of `folder` that differ from rlcat's, each with `missing` or `stale`."""
    found = []
    for name, text in schema_files().items():
        path = folder / name
        try:
            info = os.lstat(path)
        except OSError:  # not there, or cannot be (a name too long): writing it says which
            found.append((name, "missing"))
            continue
        if not (stat.S_ISREG(info.st_mode) and _holds(path, text.encode("utf-8"), info.st_size)):
            found.append((name, "stale"))
    return found


def _holds(path: Path, data: bytes, size: int) -> bool:
    """Whether the file holds exactly `data` (read only when the size matches: any file may sit there)."""
    if size != len(data):
        return False
    try:
        return read_bytes(path, str(path), limit=size) == data
    except RlcatError:
        return False  # unreadable or not a regular file: writing it says why


def write(root: Path, below: str, names: list[str]) -> None:
    """Write these schema files into the folder `below` under `root`, each whole; a path with a link
    or a special file on the way (below `root`) is refused with nothing written (RLC106, exit 2)."""
    texts = schema_files()
    write_files(root, {Path(below, name).as_posix(): texts[name] for name in names}, overwrite=True)


def _shown(path: Path) -> str:
    """A path as the user would type it from here: relative below the working folder."""
    absolute = os.path.abspath(path)
    cwd = os.getcwd()
    inside = os.path.commonpath([absolute, cwd]) == cwd
    return Path(os.path.relpath(absolute, cwd)).as_posix() if inside else str(path)

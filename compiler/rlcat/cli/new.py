"""`rlcat new`: a recipe of one's own, extending another."""

from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path
from typing import Annotated, Optional

import typer

from rlcat.catalog import ENTRY_SUFFIXES, Catalog
from rlcat.cli.app import app
from rlcat.cli.common import CatalogOpt
from rlcat.cli.report import catalog_for, print_escaped, write_output
from rlcat.cli.schemas import DEFAULT_FOLDER
from rlcat.diagnostics import RlcatError, diag, printable
from rlcat.inside import write_files
from rlcat.model.axes import NAME_PATTERN
from rlcat.project import Project, find_project
from rlcat.resolve.extends import load_recipe_source
from rlcat.scaffold.child import child_recipe

MAX_NAME = 100  # as model/base.py's Name


@app.command(
    "new",
    epilog="""Examples:

  rlcat new team_run --from gsm8k_qwen3_8b_fsdp

  rlcat new team_run_megatron --from gsm8k_qwen3_8b_megatron
""",
)
def new_cmd(
    name: Annotated[str, typer.Argument(help="The new recipe's name (its file name without .yaml).")],
    parent: Annotated[str, typer.Option("--from", help="The recipe it extends, by name.")],
    output: Annotated[
        Optional[Path],  # noqa: UP045 - typer reads the annotation at runtime on Python 3.10
        typer.Option("--output", "-o", help="The file to write. Default: recipes/NAME.yaml in the project."),
    ] = None,
    catalog: CatalogOpt = None,
) -> None:
    """Write a recipe that extends another: `extends:` the recipe named by --from, and that recipe's
    settings (through its own extends chain) as comments to uncomment and change. The file goes to
    recipes/ of the project (the folder of rlcat.toml, else the working folder) and is never
    overwritten."""
    _check_name(name, "NAME")
    _check_name(parent, f"--from {parent}")
    if name == parent:
        raise RlcatError([diag("RLC203", "a recipe cannot extend itself", argument=f"--from {parent}")])
    project = find_project()
    root, rel = _destination(name, output, project)
    dest = root / rel
    if dest.stem != name or not dest.name.endswith(ENTRY_SUFFIXES):
        raise RlcatError(
            [
                diag(
                    "RLC103",
                    f"recipe '{name}' must be in a file named {name}.yaml: recipes are found by file name",
                    argument=f"-o {dest}",
                    hint=f"-o {dest.parent / f'{name}.yaml'}",
                )
            ]
        )
    cat = catalog_for(catalog)
    _refuse_taken_name(name, dest, cat)
    try:
        source = load_recipe_source(parent, cat)
    except RlcatError as exc:  # an unknown parent is the --from argument's fault
        raise RlcatError(
            [d if d.file else dataclasses.replace(d, argument=f"--from {parent}") for d in exc.diagnostics],
            exc.exit_code,
        ) from None
    schema = _schema_line(dest, project)
    write_files(root, {rel: child_recipe(name, parent, source.data, schema)})
    shown = printable(str(_relative(dest)))
    write_output(f"wrote: {shown} (extends {parent})\ncheck it: rlcat validate {shown}\n")


def _check_name(name: str, argument: str) -> None:
    if re.fullmatch(NAME_PATTERN, name) and len(name) <= MAX_NAME:
        return
    raise RlcatError(
        [
            diag(
                "RLC103",
                f"'{name}' is not a recipe name",
                argument=argument,
                hint=f"a name is lowercase letters, digits, '_', '.' and '-', at most {MAX_NAME} "
                "characters, starting with a letter or a digit"
                + (
                    "; --from takes the name of a recipe (rlcat list shows them), not a path"
                    if "/" in name
                    else ""
                ),
            )
        ]
    )


def _destination(name: str, output: Path | None, project: Project | None) -> tuple[Path, str]:
    """The folder the new file is written under and its path there (inside.write_files follows no
    link below that folder): -o's folder and name; else recipes/NAME.yaml in the project's first
    catalog folder, below the project's folder (the project folder by default); else in the
    working folder."""
    if output is not None:
        return output.parent, output.name
    if project is None or not project.catalog:
        return Path("."), f"recipes/{name}.yaml"
    catalog = os.path.relpath(project.catalog[0], project.root)
    return _relative(project.root), Path(catalog, "recipes", f"{name}.yaml").as_posix()


def _relative(path: Path) -> Path:
    """`path` relative to the working folder when it is below it (as the user would type it)."""
    cwd = os.getcwd()
    absolute = os.path.abspath(path)
    return Path(os.path.relpath(absolute, cwd)) if os.path.commonpath([absolute, cwd]) == cwd else path


def _refuse_taken_name(name: str, dest: Path, cat: Catalog) -> None:
    """A recipe of this name elsewhere in the catalog would hide, or be hidden by, the new one."""
    existing = cat.names("recipe").get(name)
    if existing is None or os.path.abspath(existing) == os.path.abspath(dest):
        return  # an existing file at dest itself is refused by the writer
    raise RlcatError(
        [
            diag(
                "RLC207",
                f"a recipe named '{name}' exists already: {existing}",
                argument="NAME",
                hint="choose another name (rlcat list shows the names in use)",
            )
        ]
    )


def _schema_line(dest: Path, project: Project | None) -> str | None:
    """recipe.schema.json of the project's exported schemas, relative to the new file, if they are
    there; else a note on how to export them."""
    folder = project.schemas if project is not None else DEFAULT_FOLDER
    schema = Path(folder) / "recipe.schema.json"
    if schema.is_file():
        rel = Path(os.path.relpath(os.path.abspath(schema), os.path.abspath(dest.parent))).as_posix()
        if printable(rel) == rel:  # one comment line, shown as it is
            return rel
    print_escaped(
        f"note: no JSON Schemas at {folder}, so the recipe has no schema line for editors: "
        "`rlcat schemas export` writes them (then add `# yaml-language-server: $schema=PATH` as its "
        "first line)"
    )
    return None

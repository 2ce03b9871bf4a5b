"""`rlcat init`: a team's recipe repository, ready for editors, pre-commit and CI."""

from __future__ import annotations

import os
import stat
from pathlib import Path, PurePosixPath
from typing import Annotated

import typer

import rlcat
from rlcat.catalog import Catalog, builtin_root
from rlcat.cli.app import app
from rlcat.cli.report import write_output
from rlcat.cli.schemas import schema_files
from rlcat.diagnostics import Diagnostic, RlcatError, diag, printable
from rlcat.files import NotARegularFile, atomic_write, file_kind
from rlcat.model.project import ProjectSettings
from rlcat.resolve.extends import load_recipe_source
from rlcat.scaffold import team_files
from rlcat.scaffold.child import child_recipe

# The example recipe: a child of a built-in recipe, as a team's recipes usually are.
EXAMPLE_RECIPE, EXAMPLE_PARENT = "my_first_recipe", "gsm8k_qwen3_8b_fsdp"


@app.command(
    "init",
    epilog="""Examples:

  rlcat init

  rlcat init team-recipes
""",
)
def init_cmd(
    folder: Annotated[Path, typer.Argument(help="The repository's folder (made if missing).")] = Path("."),
    force: Annotated[
        bool, typer.Option("--force", help="Overwrite files that exist (never links or folders).")
    ] = False,
) -> None:
    """Set up a team's recipe repository: the project file (rlcat.toml), recipes/ with an example
    recipe, catalog/ for models and datasets, the JSON Schemas for editors, a pre-commit hook and a
    GitHub Actions workflow (both pinned to this rlcat), and a README. Existing files are never
    overwritten without --force: nothing is written if one is in the way."""
    files = repository_files(rlcat.__version__)
    write_new_files(folder, files, force=force)
    shown = printable(str(folder))
    write_output(
        "".join(f"wrote: {printable(str(folder / name))}\n" for name in files)
        + f"\nNext, in {shown}: git init (if it is not a repository yet), pre-commit install, and\n"
        f"  rlcat new NAME --from RECIPE     a recipe of your own (rlcat list shows them)\n"
        f"  rlcat validate recipes catalog   what the pre-commit hook and CI check\n"
    )


def repository_files(version: str) -> dict[str, str]:
    """Every file `rlcat init` writes, path relative to the repository → text."""
    schemas = ProjectSettings.model_fields["schemas"].get_default()
    files = team_files(version)
    files |= {f"{schemas}/{name}": text for name, text in schema_files().items()}
    # the example's parent as rlcat ships it: whatever catalog the current folder sees is not the
    # new repository's
    parent = load_recipe_source(EXAMPLE_PARENT, Catalog([builtin_root()]))
    schema_line = f"../{schemas}/recipe.schema.json"
    files[f"recipes/{EXAMPLE_RECIPE}.yaml"] = child_recipe(
        EXAMPLE_RECIPE, EXAMPLE_PARENT, parent.data, schema_line, command="rlcat init"
    )
    return dict(sorted(files.items()))


def write_new_files(root: Path, files: dict[str, str], *, force: bool = False) -> None:
    """Write each file under `root` whole (files.atomic_write), or nothing at all when one of them
    is in the way: a file that exists (unless `force`), or a link, a folder or a special file where
    a file or a folder is to go — a link is never followed out of `root`. RLC106, exit 2."""
    if os.path.exists(root) and not os.path.isdir(root):
        raise RlcatError([diag("RLC106", "not a folder; nothing was written", file=str(root))])
    blocked = [d for rel in files if (d := _in_the_way(root, rel, force)) is not None]
    if blocked:
        raise RlcatError(blocked)
    for rel, text in files.items():
        path = root / rel
        try:
            atomic_write(path, text)
        except (NotARegularFile, OSError) as exc:  # changed since the check, or cannot be written
            reason = exc.kind if isinstance(exc, NotARegularFile) else exc.strerror or str(exc)
            raise RlcatError([diag("RLC106", f"cannot write it ({reason})", file=str(path))]) from None


def _in_the_way(root: Path, rel: str, force: bool) -> Diagnostic | None:
    """Why the file `rel` cannot be written under `root`, or None. Each folder on the way must be a
    real folder (or not exist yet), and the file must not exist (or be a regular file, with force)."""
    path = root
    parts = PurePosixPath(rel).parts
    for depth, part in enumerate(parts, 1):
        path = path / part
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            return None  # made on the way
        except OSError as exc:
            return diag(
                "RLC106", f"cannot look at it ({exc.strerror or exc}); nothing was written", file=str(path)
            )
        is_last = depth == len(parts)
        if not is_last and stat.S_ISDIR(info.st_mode):
            continue
        if is_last and stat.S_ISREG(info.st_mode):
            if force:
                return None
            return diag(
                "RLC106",
                "exists already; nothing was written",
                file=str(path),
                hint="move it aside (or pass --force to overwrite it)",
            )
        wanted = "a file" if is_last else "a folder"
        return diag(
            "RLC106",
            f"{wanted} goes here, and this is {file_kind(info.st_mode)}; nothing was written",
            file=str(path),
            hint="move it aside",
        )
    return None

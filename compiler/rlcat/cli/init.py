"""`rlcat init`: a team's recipe repository, ready for editors, pre-commit and CI."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

import rlcat
from rlcat.catalog import Catalog, builtin_root
from rlcat.cli.app import app
from rlcat.cli.report import write_output
from rlcat.cli.schemas import schema_files
from rlcat.diagnostics import printable
from rlcat.inside import write_files
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
    write_files(folder, files, overwrite=force)
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

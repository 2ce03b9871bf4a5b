"""`rlcat init`: a team's recipe repository, ready for editors, pre-commit and CI."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

import rlcat
from rlcat.catalog import Catalog, builtin_root
from rlcat.cli.app import app
from rlcat.cli.report import write_output
from rlcat.cli.schemas import schema_files
from rlcat.diagnostics import RlcatError, diag, printable
from rlcat.inside import write_files
from rlcat.model.project import SOURCE_FORMS, ProjectSettings, RlcatSource, parse_rlcat_source
from rlcat.project import PROJECT_FILE, find_project
from rlcat.resolve.extends import load_recipe_source
from rlcat.scaffold import team_files
from rlcat.scaffold.child import child_recipe

# The example recipe: a child of a built-in recipe, as a team's recipes usually are.
EXAMPLE_RECIPE, EXAMPLE_PARENT = "my_first_recipe", "gsm8k_qwen3_8b_fsdp"


@app.command(
    "init",
    epilog="""Examples:

  rlcat init team-recipes --rlcat-source git+https://git.example.com/ml/rlcat.git@v0.1.0

  rlcat init --rlcat-source index:https://pypi.example.com/simple
""",
)
def init_cmd(
    folder: Annotated[Path, typer.Argument(help="The repository's folder (made if missing).")] = Path("."),
    force: Annotated[
        bool, typer.Option("--force", help="Overwrite files that exist (never links or folders).")
    ] = False,
    rlcat_source: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(
            "--rlcat-source",
            metavar="SOURCE",
            help="Where the pre-commit hooks, CI and the README install rlcat from: "
            + "; ".join(SOURCE_FORMS)
            + ". Default: the rlcat_source of the folder's rlcat.toml (to write the files again).",
        ),
    ] = None,
) -> None:
    """Set up a team's recipe repository: the project file (rlcat.toml), recipes/ with an example
    recipe, catalog/ for models and datasets, the JSON Schemas for editors, a pre-commit hook and a
    GitHub Actions workflow (both pinned to this rlcat), and a README. Existing files are never
    overwritten without --force: nothing is written if one is in the way. rlcat is not on the
    package index yet: choose a git repository of rlcat, a wheel folder or a private index."""
    files = repository_files(rlcat.__version__, chosen_source(rlcat_source, folder))
    write_files(folder, files, overwrite=force)
    shown = printable(str(folder))
    write_output(
        "".join(f"wrote: {printable(str(folder / name))}\n" for name in files)
        + f"\nNext, in {shown}: git init (if it is not a repository yet), pre-commit install, and\n"
        f"  rlcat new NAME --from RECIPE     a recipe of your own (rlcat list shows them)\n"
        f"  rlcat validate recipes catalog   what the pre-commit hook and CI check\n"
    )


def chosen_source(text: str | None, folder: Path) -> RlcatSource:
    """`--rlcat-source`, else what the repository's own rlcat.toml recorded, else the answer of the
    person at the terminal; RLC105 when none says (a config that installs rlcat from where it is not
    would fail the team's first commit)."""
    if text is not None:
        try:
            return parse_rlcat_source(text)
        except ValueError as exc:
            raise RlcatError(
                [diag("RLC105", f"{printable(text)}: {exc}", argument="--rlcat-source")]
            ) from None
    project = find_project(folder) if (folder / PROJECT_FILE).is_file() else None
    if project is not None and project.settings.rlcat_source is not None:
        return parse_rlcat_source(project.settings.rlcat_source)  # checked when the file was read
    if sys.stdin.isatty():  # a person at a terminal is asked; a script is told (below)
        asked = typer.prompt(
            "Where do the team's pre-commit hooks and CI install rlcat from?\n  "
            + "\n  ".join(SOURCE_FORMS)
            + "\n(rlcat is not on the package index yet)"
        )
        return chosen_source(asked.strip(), folder)
    raise RlcatError(
        [
            diag(
                "RLC105",
                "say where the team's repository installs rlcat from: rlcat is not on the package "
                "index yet, and the pre-commit hooks and CI must install it",
                argument="--rlcat-source",
                hint="--rlcat-source "
                + " | ".join(form.split(" ")[0] for form in SOURCE_FORMS)
                + ", e.g. --rlcat-source git+https://git.example.com/ml/rlcat.git@v0.1.0 "
                "(docs/team-repository.md: the install routes)",
            )
        ]
    )


def repository_files(version: str, source: RlcatSource) -> dict[str, str]:
    """Every file `rlcat init` writes, path relative to the repository → text."""
    schemas = ProjectSettings.model_fields["schemas"].get_default()
    files = team_files(version, source)
    files |= {f"{schemas}/{name}": text for name, text in schema_files().items()}
    # the example's parent as rlcat ships it: whatever catalog the current folder sees is not the
    # new repository's
    parent = load_recipe_source(EXAMPLE_PARENT, Catalog([builtin_root()]))
    schema_line = f"../{schemas}/recipe.schema.json"
    files[f"recipes/{EXAMPLE_RECIPE}.yaml"] = child_recipe(
        EXAMPLE_RECIPE, EXAMPLE_PARENT, parent.data, schema_line, command="rlcat init"
    )
    return dict(sorted(files.items()))

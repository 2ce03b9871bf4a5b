"""`rlcat dev`: maintainer commands."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from rlcat.catalog import repo_root
from rlcat.cli.app import app
from rlcat.dev import schemas, trees, wheelhouse
from rlcat.diagnostics import Diagnostic, ExitCode, RlcatError

dev_app = typer.Typer(
    help="Maintainer commands: fetch verl's config trees and regenerate generated files.",
    no_args_is_help=True,
    epilog="""Examples:

  rlcat dev fetch-verl

  rlcat dev verl-index --check

  rlcat dev schemas --check
""",
)
app.add_typer(dev_app, name="dev")


@dev_app.command(
    "verl-index",
    epilog="""Examples:

  rlcat dev verl-index --check
""",
)
def dev_verl_index(
    check: Annotated[
        bool, typer.Option("--check", help="Fail if the stored indexes are stale; write nothing.")
    ] = False,
) -> None:
    """Regenerate schemas/verl/ from the real verl releases (needs `rlcat dev fetch-verl` first)."""
    try:
        from rlcat.dev import build_index  # Hydra: the optional `verl` extra

        code = build_index.main(["--check"] if check else [])
    except FileNotFoundError as exc:  # no checkout to write into, or verl trees not fetched
        raise RlcatError(
            [
                Diagnostic(
                    "RLC105", str(exc), hint="run it from a checkout of rlcat after `rlcat dev fetch-verl`"
                )
            ]
        ) from None
    if code:
        raise typer.Exit(code)


@dev_app.command(
    "schemas",
    epilog="""Examples:

  rlcat dev schemas --check
""",
)
def dev_schemas(
    check: Annotated[
        bool, typer.Option("--check", help="Fail if a generated file is stale; write nothing.")
    ] = False,
) -> None:
    """Regenerate the JSON Schemas under schemas/ from the pydantic models."""
    root = repo_root()
    if root is None:
        raise RlcatError([Diagnostic("RLC105", "rlcat dev schemas runs from a checkout of rlcat")])
    stale = schemas.write(root, check=check)
    for rel in stale:
        sys.stdout.write(f"{'stale' if check else 'wrote'}: {rel}\n")
    if check and stale:
        sys.stderr.write("run `rlcat dev schemas` to regenerate them\n")
        raise typer.Exit(int(ExitCode.FINDINGS))


@dev_app.command(
    "fetch-verl",
    epilog="""Examples:

  rlcat dev fetch-verl
""",
)
def dev_fetch_verl() -> None:
    """Install verl's releases (YAML config trees only, --no-deps) into .verl/ for tests and generators."""
    for path in trees.fetch(list(trees.VERL_VERSIONS), quiet=True):
        sys.stdout.write(f"{path}\n")
    # wheels for the pre-commit test, which installs the hook in a fresh virtualenv offline
    sys.stdout.write(f"{wheelhouse.fetch_wheelhouse(quiet=True)}\n")

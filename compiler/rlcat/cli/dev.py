"""`rlcat dev`: maintainer commands."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Literal

import typer

from rlcat.catalog import Catalog, builtin_root, repo_root
from rlcat.cli.app import app
from rlcat.dev import coverage, oracle_env, schemas, trees, wheelhouse
from rlcat.diagnostics import Diagnostic, ExitCode, RlcatError

dev_app = typer.Typer(
    help="Maintainer commands: fetch verl's config trees and regenerate generated files.",
    no_args_is_help=True,
    epilog="""Examples:

  rlcat dev fetch-verl

  rlcat dev verl-oracle --release 0.9.1

  rlcat dev verl-index --check

  rlcat dev schemas --check

  rlcat dev schema-coverage --top 40
""",
)
app.add_typer(dev_app, name="dev")
CoverageFormat = Literal["text", "json"]


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
    versions = list(trees.VERL_VERSIONS)
    try:
        from rlcat.dev import build_index  # Hydra: the optional `verl` extra

        out = build_index.default_out_dir()
        result = build_index.build(versions, out, check=check)
    except FileNotFoundError as exc:  # no checkout to write into, or verl trees not fetched
        raise RlcatError(
            [
                Diagnostic(
                    "RLC105", str(exc), hint="run it from a checkout of rlcat after `rlcat dev fetch-verl`"
                )
            ]
        ) from None
    if not check:
        for rel in result:
            sys.stdout.write(f"{(out / rel).stat().st_size:>9}  {out / rel}\n")
    elif result:
        sys.stdout.write("\n".join(result) + "\n")
        sys.stdout.write(
            f"\nverl key index in {out} is stale; regenerate with: {build_index.REGENERATE_COMMAND}\n"
        )
        raise typer.Exit(int(ExitCode.FINDINGS))
    else:
        sys.stdout.write(f"verl key index in {out} is up to date ({', '.join(versions)})\n")


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
    "schema-coverage",
    epilog="""Examples:

  rlcat dev schema-coverage --top 40
""",
)
def dev_schema_coverage(
    top: Annotated[int, typer.Option("--top", min=1, help="Unmodelled concepts to list.")] = 25,
    fmt: Annotated[CoverageFormat, typer.Option("--format", help="text or json.")] = "text",
    scripts: Annotated[
        Path | None,
        typer.Option(
            "--scripts",
            help="Folder of reference scripts' JSON records (default: tests/data/upstream_scripts).",
        ),
    ] = None,
) -> None:
    """Share of the upstream scripts' override keys that land in typed recipe fields, and the most
    frequent keys the schema does not model, grouped by concept."""
    from rlcat.docsite.data import load_site  # the docs' compiles of every built-in recipe

    root = repo_root()
    folder = scripts or (root / "tests" / "data" / "upstream_scripts" if root else None)
    if folder is None or not folder.is_dir():
        raise RlcatError(
            [Diagnostic("RLC105", f"no folder of reference scripts: {folder}", hint="pass --scripts DIR")]
        )
    site = load_site(builtin_root())
    plans = [cell.compiled for cell in site.cells if cell.compiled is not None]
    typed = coverage.typed_keys(plans, Catalog([builtin_root()]))
    measured = coverage.measure(folder, typed)
    sys.stdout.write(coverage.as_json(measured) if fmt == "json" else coverage.render(measured, top))


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
    # and the docs extra's, for the team-docs test, which installs rlcat[docs] offline
    docs = wheelhouse.docs_wheelhouse_dir()
    sys.stdout.write(f"{wheelhouse.fetch_wheelhouse(True, docs, wheelhouse.docs_requirements())}\n")


@dev_app.command(
    "verl-oracle",
    epilog="""Examples:

  rlcat dev verl-oracle --release 0.9.1
""",
)
def dev_verl_oracle(
    releases: Annotated[
        list[str] | None,
        typer.Option(
            "--release", help="A verl release to build (repeat it); default: every release rlcat targets."
        ),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Build again even when complete.")] = False,
    python: Annotated[
        str | None, typer.Option("--python", help="The interpreter that makes the venvs (default: this one).")
    ] = None,
) -> None:
    """Build, once per machine, the environments in which verl's own start-up checks judge plans:
    one venv per release with torch (the pinned CPU-capable build) and the real verl, outside the
    clone (under $RLCAT_ORACLE_HOME, default ~/.cache/rlcat/verl-oracle). Complete ones are reused."""
    wanted = releases or list(trees.VERL_VERSIONS)
    failed: list[Diagnostic] = []
    for version in wanted:
        try:
            built = oracle_env.build(version, python=python, force=force)
        except RuntimeError as exc:
            failed.append(
                Diagnostic("RLC105", f"verl {version}: {exc}", hint="the build log is kept beside it")
            )
            continue
        how = "reused" if built.reused else f"built in {built.seconds:.0f} s"
        versions = ", ".join(f"{k} {v}" for k, v in sorted(built.installed.items()))
        sys.stdout.write(f"verl {version}: {built.path} ({how}; {versions})\n")
    if failed:
        raise RlcatError(failed)

"""`rlcat docs build|serve`: the documentation site's commands. MkDocs is optional (the `docs`
extra): rlcat.docsite.build imports it only when a site is built."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Annotated, Optional

import typer

from rlcat.catalog import repo_root
from rlcat.cli.app import app, command_tree
from rlcat.diagnostics import Diagnostic, ExitCode, RlcatError
from rlcat.docsite.generate import write

docs_app = typer.Typer(
    help="Generate, check, build and serve the documentation site (MkDocs with the Material theme).",
    no_args_is_help=True,
    epilog="""Examples:

  rlcat docs build --check

  rlcat docs build --out /tmp/rlcat-docs
""",
)
app.add_typer(docs_app, name="docs")


def _root() -> Path:
    root = repo_root()
    if root is None:
        raise RlcatError([Diagnostic("RLC105", "rlcat docs runs from a checkout of rlcat")])
    return root


def _generate(root: Path) -> None:
    for path in write(root, command_tree()):
        sys.stdout.write(f"wrote: {path}\n")


def _build(root: Path, out: Path) -> None:
    from rlcat.docsite.build import build_site, clean  # MkDocs: the optional `docs` extra

    start = time.perf_counter()
    clean(out)
    build_site(root, out)
    pages = sum(1 for _ in out.rglob("*.html"))
    sys.stdout.write(f"built {pages} pages into {out} in {time.perf_counter() - start:.1f} s\n")


@docs_app.command(
    "build",
    epilog="""Examples:

  rlcat docs build --out /tmp/rlcat-docs

  rlcat docs build --check
""",
)
def docs_build(
    out: Annotated[
        Optional[Path],  # noqa: UP045 - typer reads the annotation at runtime on Python 3.10
        typer.Option("--out", "-o", help="Where to write the site (default: site/ in the checkout)."),
    ] = None,
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Fail if the generated Markdown under docs/ or mkdocs.yml is stale; write nothing.",
        ),
    ] = False,
) -> None:
    """Regenerate the Markdown under docs/ (and mkdocs.yml) from the catalog, recipes, platform
    profiles, guard registry and command line, then build the site with MkDocs."""
    root = _root()
    if check:
        stale = write(root, command_tree(), check=True)
        for path in stale:
            sys.stdout.write(f"stale: {path}\n")
        if stale:
            sys.stderr.write("run `rlcat docs build` to regenerate them\n")
            raise typer.Exit(int(ExitCode.FINDINGS))
        return
    from rlcat.docsite.build import need_mkdocs  # MkDocs: the optional `docs` extra

    need_mkdocs()
    _generate(root)
    _build(root, out or root / "site")


@docs_app.command(
    "serve",
    epilog="""Examples:

  rlcat docs serve --port 0 --timeout 1
""",
)
def docs_serve(
    port: Annotated[int, typer.Option("--port", help="Port on 127.0.0.1 (0: any free port).")] = 8000,
    out: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option("--out", "-o", help="Where to build the site first (default: site/ in the checkout)."),
    ] = None,
    timeout: Annotated[
        float,
        typer.Option(
            "--timeout", help="Stop after this many seconds (scripts, smoke tests); 0: until Ctrl-C."
        ),
    ] = 0,
) -> None:
    """Regenerate and build the site like `rlcat docs build`, then serve it on http://127.0.0.1:PORT/
    until Ctrl-C (or --timeout)."""
    from rlcat.docsite.build import need_mkdocs, serve  # MkDocs: the optional `docs` extra

    root = _root()
    need_mkdocs()
    _generate(root)
    target = out or root / "site"
    _build(root, target)
    serve(target, port, timeout=timeout)

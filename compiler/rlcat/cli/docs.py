"""`rlcat docs build|serve`: the documentation site's commands. MkDocs is optional (the `docs`
extra): rlcat.docsite.build imports it only when a site is built.

Two destinations, one generator. In a checkout, `rlcat docs build` regenerates the pages under docs/
(and `--check` compares them); with `--catalog`, `--no-builtin` or from an installed rlcat, the pages
of the catalog every command searches (--catalog folders, RLCAT_PATH, the project file's folders and,
unless --no-builtin, the built-in catalog) are generated into a temporary folder and built into --out.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Annotated, Optional

import typer

from rlcat.catalog import Catalog, Kind, repo_root
from rlcat.cli.app import app, command_tree
from rlcat.cli.common import CatalogOpt
from rlcat.cli.report import catalog_for
from rlcat.diagnostics import Diagnostic, ExitCode, RlcatError, Severity, diag
from rlcat.docsite.data import load_site
from rlcat.docsite.generate import write
from rlcat.project import find_project, search_roots
from rlcat.survey.validate_files import validate_file

ENTRY_KINDS: tuple[Kind, ...] = ("model", "dataset", "platform", "result")

docs_app = typer.Typer(
    help="Generate, check, build and serve the documentation site (MkDocs with the Material theme).",
    no_args_is_help=True,
    epilog="""Examples:

  rlcat docs build --check

  rlcat docs build --out public

  rlcat docs build --catalog . --out site
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
    from rlcat.docsite.build import build_into  # MkDocs: the optional `docs` extra

    start = time.perf_counter()
    build_into(root, out)
    pages = sum(1 for _ in out.rglob("*.html"))
    sys.stdout.write(f"built {pages} pages into {out} in {time.perf_counter() - start:.1f} s\n")


NoBuiltinOpt = Annotated[
    bool,
    typer.Option(
        "--no-builtin",
        help="Leave rlcat's built-in catalog out: a site of the catalog folders alone.",
    ),
]


def _catalog_mode(catalog: list[Path] | None, no_builtin: bool) -> bool:
    """Whether the site is a catalog's, built in a temporary folder, rather than the checkout's docs/."""
    return bool(catalog) or no_builtin or repo_root() is None


def _site_catalog(extra: list[Path] | None, no_builtin: bool) -> Catalog:
    """The catalog every command searches (every folder checked), without the built-in one on
    --no-builtin."""
    catalog = catalog_for(extra)
    if not no_builtin:
        return catalog
    folders = [root.folder for root in search_roots(extra, [], find_project()) if not root.builtin]
    if not folders:
        raise RlcatError(
            [
                diag(
                    "RLC105",
                    "--no-builtin leaves no catalog folder to build a site of",
                    argument="--no-builtin",
                    hint="name the folder with --catalog DIR (or set RLCAT_PATH, or run in a project)",
                )
            ]
        )
    return Catalog(folders)


def _refuse_broken_entries(catalog: Catalog) -> None:
    """A team's catalog may come from a pull request: a model, dataset, platform or result that does
    not validate (a result naming no recipe, a series whose steps go back) stops the build with the
    diagnostics `rlcat validate` gives, rather than leaving the entry out or a page linking nowhere.
    Recipes need no such pass: the site resolves every one, and one that does not resolve stops it."""
    found = [
        d
        for kind in ENTRY_KINDS
        for path in catalog.names(kind).values()
        for d in validate_file(path, catalog, None)
        if d.severity >= Severity.ERROR
    ]
    if found:
        raise RlcatError(found)


def _build_catalog(extra: list[Path] | None, no_builtin: bool, out: Path) -> None:
    """Generate the catalog's pages into a temporary folder (nothing read from a checkout), then build
    them into `out`."""
    from rlcat.docsite.build import check_out, need_mkdocs  # MkDocs: the optional `docs` extra

    need_mkdocs()
    check_out(out)
    catalog = _site_catalog(extra, no_builtin)
    _refuse_broken_entries(catalog)
    with tempfile.TemporaryDirectory(prefix="rlcat-docs-") as tmp:
        root = Path(tmp)
        write(root, command_tree(), site=load_site(root, catalog))
        _build(root, out)


@docs_app.command(
    "build",
    epilog="""Examples:

  rlcat docs build --out public

  rlcat docs build --check

  rlcat docs build --catalog . --out site
""",
)
def docs_build(
    out: Annotated[
        Optional[Path],  # noqa: UP045 - typer reads the annotation at runtime on Python 3.10
        typer.Option(
            "--out",
            "-o",
            help="Where to write the site (default: site/ in the checkout; a catalog's: site/ here).",
        ),
    ] = None,
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Fail if the generated Markdown under docs/ or mkdocs.yml is stale; write nothing.",
        ),
    ] = False,
    catalog: CatalogOpt = None,
    no_builtin: NoBuiltinOpt = False,
) -> None:
    """Regenerate the Markdown under docs/ (and mkdocs.yml) from the catalog, recipes, platform
    profiles, guard registry and command line, then build the site with MkDocs. With --catalog (or
    outside a checkout) the site of a team's catalog is built into --out (default: site/ here), its
    pages generated in a temporary folder."""
    if _catalog_mode(catalog, no_builtin):
        if check:
            raise RlcatError(
                [
                    diag(
                        "RLC105",
                        "--check compares the checkout's docs/; a catalog's site has no pages to compare",
                        argument="--check",
                    )
                ]
            )
        _build_catalog(catalog, no_builtin, out or Path("site"))
        return
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
    catalog: CatalogOpt = None,
    no_builtin: NoBuiltinOpt = False,
) -> None:
    """Regenerate and build the site like `rlcat docs build`, then serve it on http://127.0.0.1:PORT/
    until Ctrl-C (or --timeout). A catalog's site without --out is built in a temporary folder,
    removed when serving stops."""
    from rlcat.docsite.build import need_mkdocs, serve  # MkDocs: the optional `docs` extra

    if _catalog_mode(catalog, no_builtin):
        with tempfile.TemporaryDirectory(prefix="rlcat-site-") as tmp:
            target = out or Path(tmp) / "site"
            _build_catalog(catalog, no_builtin, target)
            serve(target, port, timeout=timeout)
        return
    root = _root()
    need_mkdocs()
    _generate(root)
    target = out or root / "site"
    _build(root, target)
    serve(target, port, timeout=timeout)

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
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Optional

import typer

from rlcat.catalog import Catalog, Kind, repo_root
from rlcat.cli.app import app, command_tree
from rlcat.cli.common import CatalogOpt
from rlcat.cli.report import catalog_for, print_diagnostics
from rlcat.diagnostics import Diagnostic, ExitCode, RlcatError, Severity, diag
from rlcat.docsite.data import Identity, Site, load_site, stamps
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
    """The catalog every command searches (every folder checked). --no-builtin leaves the built-in
    recipes and results off the site (load_site), never out of the lookups: a team's recipe extends
    a built-in one and runs on the built-in platforms, models and datasets."""
    catalog = catalog_for(extra)
    if no_builtin and not any(not root.builtin for root in search_roots(extra, [], find_project())):
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
    return catalog


def _identity(extra: list[Path] | None, no_builtin: bool) -> Identity:
    """The team site's name, description and install line: the project file's [site] table (the
    project of the working folder, else of the first --catalog folder); by default the name of the
    project's folder (or of the catalog folder), never rlcat's."""
    project = find_project() or (find_project(extra[0]) if extra else None)
    folder = project.root if project else Path(extra[0] if extra else Path.cwd()).resolve()
    settings = project.settings.site if project else None
    name = (settings.name if settings else None) or folder.name or "recipes"
    description = (settings.description if settings else None) or (
        f"The recipes of {name}, each compiled into the launch plan of every platform, with the "
        "origin of every value"
    )
    return Identity(name, description, settings.install if settings else None, no_builtin)


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
    with tempfile.TemporaryDirectory(prefix="rlcat-docs-") as tmp:
        _catalog_pages(extra, no_builtin, Path(tmp))
        _build(Path(tmp), out)


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
    poll: Annotated[
        float,
        typer.Option(
            "--poll",
            metavar="SECONDS",
            help="Look for edits of the catalog this often and rebuild what they change; 0: never.",
        ),
    ] = 1.0,
) -> None:
    """Regenerate and build the site like `rlcat docs build`, then serve it on http://127.0.0.1:PORT/
    until Ctrl-C (or --timeout). A catalog's site without --out is built in a temporary folder,
    removed when serving stops. While it serves, an edit of the catalog rebuilds what it changed: the
    recipes it touches are compiled again and only the pages whose text changed are built again (the
    whole site when the list of pages changed); a catalog that no longer validates is reported and the
    site served as it was."""
    from rlcat.docsite.build import need_mkdocs  # MkDocs: the optional `docs` extra

    need_mkdocs()
    if not _catalog_mode(catalog, no_builtin):
        root = _root()
        site = _checkout_rebuild(root, None)
        assert site is not None
        for path in site.written:
            sys.stdout.write(f"wrote: {path}\n")
        target = out or root / "site"
        _build(root, target)
        _serve_watching(target, port, timeout, poll, site, lambda previous: _checkout_rebuild(root, previous))
        return
    with tempfile.TemporaryDirectory(prefix="rlcat-site-") as tmp:
        root, target = Path(tmp) / "pages", out or Path(tmp) / "site"
        root.mkdir()
        kept = catalog_site(catalog, no_builtin, root, target)
        _serve_watching(target, port, timeout, poll, kept.site, kept.rebuild)


def catalog_site(extra: list[Path] | None, no_builtin: bool, root: Path, target: Path) -> Rebuilder:
    """The catalog's site, its pages generated into `root` and built into `target`, kept up to date
    by the Rebuilder returned."""
    from rlcat.docsite.build import check_out

    check_out(target)
    site = _catalog_pages(extra, no_builtin, root)
    _build(root, target)
    return Rebuilder(target, site, lambda previous: _catalog_rebuild(extra, no_builtin, root, previous))


def _catalog_pages(
    extra: list[Path] | None, no_builtin: bool, root: Path, previous: Site | None = None
) -> Site:
    """Generate the pages of the catalog's site into `root` (with `previous`, compiling again only
    what changed since); returns the site, the files it wrote in `site.written`."""
    catalog = _site_catalog(extra, no_builtin)
    _refuse_broken_entries(catalog)
    site = load_site(root, catalog, _identity(extra, no_builtin), previous=previous)
    site.written = write(root, command_tree(), site=site)
    return site


def _catalog_rebuild(
    extra: list[Path] | None, no_builtin: bool, root: Path, previous: Site | None
) -> Site | None:
    """The catalog's site again, when its files changed since `previous` (None when they did not)."""
    if previous is not None and stamps(_site_catalog(extra, no_builtin)) == previous.stamps:
        return None
    return _catalog_pages(extra, no_builtin, root, previous)


def _checkout_rebuild(root: Path, previous: Site | None) -> Site | None:
    if previous is not None and stamps(Catalog([root])) == previous.stamps:
        return None
    site = load_site(root, previous=previous)
    site.written = write(root, command_tree(), site=site)
    return site


@dataclass
class Rebuilder:
    """The site `rlcat docs serve` keeps up to date: `step()` looks for edits and rebuilds what they
    changed into `target` (bench/docs_results.py times it)."""

    target: Path
    site: Site
    rebuild: Callable[[Site | None], Site | None]
    unbuilt: set[str] = field(default_factory=set)  # pages written whose build failed

    def step(self) -> str | None:
        """What one look did ("rebuilt 1 changed pages in 2.1 s"), None when nothing changed; a
        catalog that does not validate, or a build that fails, raises RlcatError and leaves the site
        as it was built last (the pages written are built with the next edit)."""
        from rlcat.docsite.build import build_into, build_site

        start = time.perf_counter()
        fresh = self.rebuild(self.site)
        if fresh is None:
            return None
        self.unbuilt |= set(fresh.written)
        whole = "mkdocs.yml" in self.unbuilt
        if whole:
            build_into(fresh.root, self.target)
        elif self.unbuilt:
            build_site(fresh.root, self.target, dirty=True)
        self.site, changed, self.unbuilt = fresh, len(self.unbuilt), set()
        took = f"{time.perf_counter() - start:.1f} s"
        if whole:
            return f"rebuilt the whole site in {took}"
        return f"rebuilt {changed} changed pages in {took}" if changed else f"no page changed ({took})"


def _serve_watching(
    target: Path,
    port: int,
    timeout: float,
    poll: float,
    site: Site,
    rebuild: Callable[[Site | None], Site | None],
) -> None:
    """Serve the built site in `target`; every `poll` seconds, look for edits and rebuild what they
    changed (Rebuilder). Stops at Ctrl-C or after `timeout` s."""
    from rlcat.docsite.build import serve, server

    if poll <= 0:
        serve(target, port, timeout=timeout)
        return
    rebuilder = Rebuilder(target, site, rebuild)
    with server(target, port) as httpd:
        url = f"http://127.0.0.1:{httpd.server_address[1]}/"
        until = f"for {timeout:g} s" if timeout > 0 else "until Ctrl-C"
        sys.stdout.write(f"serving {target} at {url} ({until}); rebuilding on every edit\n")
        sys.stdout.flush()
        thread = threading.Thread(target=httpd.serve_forever, daemon=True)
        thread.start()
        end = time.monotonic() + timeout if timeout > 0 else float("inf")
        try:
            while (left := end - time.monotonic()) > 0:
                time.sleep(min(poll, left))
                if time.monotonic() >= end:
                    break
                try:
                    done = rebuilder.step()
                except RlcatError as exc:
                    print_diagnostics(exc.diagnostics)
                    sys.stderr.write("the site is served as it was built last\n")
                    sys.stderr.flush()
                    continue
                if done is not None:
                    sys.stdout.write(done + "\n")
                    sys.stdout.flush()
        finally:
            httpd.shutdown()
            thread.join()

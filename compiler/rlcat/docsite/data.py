"""What the docs are generated from: the shipped catalog compiled on every platform, once.

`load_site(root)` reads the recipes, catalog entries and platform profiles of one checkout (never
RLCAT_PATH or --catalog folders: the docs describe what ships); `load_site(root, catalog)` reads a
team's catalog instead (`rlcat docs build --catalog DIR`), `root` then being the temporary folder the
pages are generated in, with the team's `Identity` (the project file's name, description and install
line, and whether built-in recipes and results are left out: built-in platforms, models and datasets
always stay, as every command finds them). Either way every recipe is compiled on every platform
for every engine, mode and backend it allows. Pages only read this object.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from rlcat.catalog import KIND_DIRS, Catalog, builtin_root, display_path
from rlcat.docsite.figures.drawn import Drawn
from rlcat.model.catalog import DatasetEntry, ModelEntry
from rlcat.model.platform import PlatformProfile
from rlcat.model.recipe import Recipe
from rlcat.model.results import Result
from rlcat.resolve.entries import load_entry, load_platform
from rlcat.resolve.extends import load_recipe_source
from rlcat.resolve.recipe import Resolved, resolve
from rlcat.runs.results import load_results
from rlcat.survey.recipes import CompiledCell, axis_values, compile_cells

KINDS = tuple(KIND_DIRS)


Cell = CompiledCell  # the docs read the cells `rlcat matrix` reads (survey.recipes.compile_cells)


@dataclass(frozen=True)
class Identity:
    """A team's site: what it is called and says of itself (the project file's [site] table), the
    install line of its quick start, and whether built-in recipes and results are left out."""

    name: str
    description: str
    install: str | None = None
    no_builtin: bool = False


@dataclass
class Site:
    root: Path  # the folder holding docs/ and mkdocs.yml (and README.md in a checkout)
    recipes: dict[str, Resolved]
    platforms: dict[str, PlatformProfile]
    models: dict[str, ModelEntry]
    datasets: dict[str, DatasetEntry]
    cells: list[Cell] = field(default_factory=list)
    # the catalog's results, in name order (a file that does not validate is left out: `rlcat
    # validate` reports it)
    results: list[Result] = field(default_factory=list)
    catalog: Catalog = field(default_factory=Catalog)  # where the entries were found
    # a team's site (rlcat docs build --catalog): None for rlcat's own, from the checkout
    identity: Identity | None = None
    # every entry file as it was read (load_site(previous=...) compiles again what changed since)
    stamps: dict[Path, tuple[int, int]] = field(default_factory=dict)
    # the generated files the last write of this site changed (generate.write)
    written: list[str] = field(default_factory=list)
    # the figures of the pages already under docs/, taken rather than drawn again when unchanged
    drawn: Drawn = field(init=False)

    def __post_init__(self) -> None:
        self.drawn = Drawn(self.root / "docs")

    def recipe_file(self, name: str) -> Path:
        """The recipe's own file, as the catalog's walk found it."""
        return self.catalog.names("recipe")[name]

    def is_team_recipe(self, name: str) -> bool:
        """Whether a recipe of a team's site is the team's own (not one of rlcat's built-in ones)."""
        return self.identity is not None and not _builtin(self.recipe_file(name))

    def has_page(self, kind: str, name: str) -> bool:
        """Whether the site has the page of an entry (a built-in parent recipe of a team's recipe is
        not on a site that leaves built-in recipes out)."""
        tables: dict[str, Collection[str]] = {
            "recipe": self.recipes.keys(),
            "platform": self.platforms.keys(),
            "model": self.models.keys(),
            "dataset": self.datasets.keys(),
        }
        return name in tables.get(kind, ())

    def on_site(self, target: str) -> bool:
        """Whether a docs-relative page path (with or without #fragment) of an entry is on the site."""
        folder, _, rest = target.partition("#")[0].partition("/")
        kind = {"recipes": "recipe", "platforms": "platform", "models": "model", "datasets": "dataset"}
        return folder not in kind or self.has_page(kind[folder], rest.removesuffix(".md"))

    def has_guide(self, path: str) -> bool:
        """Whether the hand-written page `path` (docs-relative) is part of the site: it is in a
        checkout's docs/, never in a catalog's site, whose pages are all generated. A link to a
        guide is written only where this holds."""
        return (self.root / "docs" / path).is_file()

    def recipe(self, name: str) -> Recipe:
        return self.recipes[name].recipe

    def recipe_cells(self, name: str) -> list[Cell]:
        """The recipe's own mode and backend, every engine it allows, on every platform."""
        r = self.recipe(name)
        return [c for c in self.cells if c.recipe == name and (c.mode, c.backend) == (r.mode, r.backend)]

    def cell(self, recipe: str, platform: str, engine: str) -> Cell:
        r = self.recipe(recipe)
        for c in self.cells:
            if (c.recipe, c.platform, c.engine, c.mode, c.backend) == (
                recipe,
                platform,
                engine,
                r.mode,
                r.backend,
            ):
                return c
        raise KeyError((recipe, platform, engine))

    def engines(self, name: str) -> list[str]:
        """The recipe's engine first, then the other engines it allows."""
        return axis_values(self.recipe(name))[1]


def _builtin(path: Path) -> bool:
    """Whether an entry file is one of rlcat's built-in recipes or catalog entries."""
    real = path.resolve()
    return any(real.is_relative_to(builtin_root() / folder) for folder in ("recipes", "catalog"))


Stamps = dict[Path, tuple[int, int]]  # entry file → (mtime in ns, size)


def stamps(catalog: Catalog) -> Stamps:
    """What every entry file of the catalog looks like now: a file whose stamp changed was edited."""
    found: Stamps = {}
    for kind in KINDS:
        for path in catalog.names(kind).values():
            try:
                info = path.stat()
            except OSError:
                continue  # gone since the walk: the next look finds it missing
            found[path] = (info.st_mtime_ns, info.st_size)
    return found


def changed_files(before: Stamps, now: Stamps) -> set[Path]:
    """Files added, removed or edited between two looks at a catalog."""
    return {path for path in before.keys() | now.keys() if before.get(path) != now.get(path)}


def load_site(
    root: Path,
    catalog: Catalog | None = None,
    identity: Identity | None = None,
    previous: Site | None = None,
) -> Site:
    """Read the catalog and compile every recipe on every platform. With `previous`, the site of the
    same catalog read before (`rlcat docs serve` after an edit), only what changed is compiled again:
    the recipes whose own file or an ancestor's changed, or every recipe when a model, dataset or
    platform file did; results are read again (reading them compiles nothing)."""
    catalog = catalog or Catalog([root])
    left_out = identity is not None and identity.no_builtin
    now = stamps(catalog)
    reusable = _reusable(previous, now, catalog)
    recipes = {
        name: reusable[name] if name in reusable else resolve(load_recipe_source(name, catalog), catalog)
        for name, path in sorted(catalog.names("recipe").items())
        if not (left_out and _builtin(path))
    }
    platforms = {name: load_platform(name, catalog)[0] for name in sorted(catalog.names("platform"))}
    models = {
        name: load_entry("model", name, ModelEntry, catalog)[0] for name in sorted(catalog.names("model"))
    }
    datasets = {
        name: load_entry("dataset", name, DatasetEntry, catalog)[0]
        for name in sorted(catalog.names("dataset"))
    }
    site = Site(root, recipes, platforms, models, datasets, catalog=catalog, identity=identity)
    site.stamps = now
    site.results = [
        result for result, path in load_results(catalog).results if not (left_out and _builtin(path))
    ]
    for name, resolved in recipes.items():
        if name in reusable and previous is not None:
            site.cells += [c for c in previous.cells if c.recipe == name]
        else:
            site.cells += compile_cells(name, resolved, platforms, catalog)
    return site


def _reusable(previous: Site | None, now: Stamps, catalog: Catalog) -> dict[str, Resolved]:
    """The recipes of `previous` whose compiles still hold: none when a model, dataset or platform
    file changed (every recipe reads them); else those whose files (own and ancestors') are unchanged."""
    if previous is None:
        return {}
    changed = changed_files(previous.stamps, now)
    kinds = {catalog.kind_of(path) for path in changed if path in now} | {
        previous.catalog.kind_of(path) for path in changed if path in previous.stamps
    }
    if kinds - {"recipe", "result"}:
        return {}
    edited = {display_path(path) for path in changed}
    return {
        name: resolved
        for name, resolved in previous.recipes.items()
        if not edited.intersection(resolved.source.files)
    }

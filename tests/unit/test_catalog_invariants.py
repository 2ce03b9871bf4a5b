"""Catalog invariants, checked over the whole catalog (recursive globs, never a sample)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
import yaml

from rlcat.catalog import KIND_DIRS, Catalog
from rlcat.model.axes import NAME_PATTERN
from rlcat.resolve.extends import load_recipe_source
from rlcat.resolve.recipe import resolve

from conftest import REPO, SEED_RECIPES

KINDS = list(KIND_DIRS)


def _files(kind: str) -> list[Path]:
    return sorted((REPO / KIND_DIRS[kind]).rglob("*.yaml"))  # type: ignore[index]


@pytest.mark.parametrize("kind", KINDS)
def test_every_file_is_an_entry_named_after_it(kind: str) -> None:
    files = _files(kind)
    assert files, f"no {kind} files"
    names = Catalog([REPO]).names(kind)  # type: ignore[arg-type]
    assert sorted(names) == sorted(p.stem for p in files)
    for path in files:
        data = yaml.safe_load(path.read_text())
        assert data["name"] == path.stem, path
        assert re.match(NAME_PATTERN, path.stem), path


def test_recipe_files_point_editors_at_the_schema() -> None:
    for path in _files("recipe"):
        first = path.read_text().splitlines()[0]
        schema = os.path.relpath(REPO / "schemas" / "recipe.schema.json", path.parent)  # upstream/: ../../
        assert first == f"# yaml-language-server: $schema={schema}", path


@pytest.mark.parametrize("recipe", SEED_RECIPES)
def test_every_recipe_resolves_and_its_references_exist(recipe: str) -> None:
    catalog = Catalog.default()
    source = load_recipe_source(recipe, catalog)
    resolved = resolve(source, catalog)
    assert resolved.recipe.name == recipe
    if resolved.recipe.extends:
        assert resolved.recipe.extends in catalog.names("recipe")
    platforms = catalog.names("platform")
    families = {"cuda", "rocm", "npu"}
    for block in resolved.recipe.platforms:
        assert block in platforms or block in families, f"{recipe}: platforms.{block} names no platform"


def test_every_recipe_has_golden_files() -> None:
    golden = REPO / "tests" / "golden"
    for recipe in SEED_RECIPES:
        assert (golden / recipe).is_dir(), f"no golden files for {recipe}"


def test_every_profile_covers_every_cell_with_a_source() -> None:
    from rlcat.model.axes import BACKENDS, ENGINES, MODES
    from rlcat.resolve.entries import load_platform

    catalog = Catalog.default()
    for name in catalog.names("platform"):
        profile, _ = load_platform(name, catalog)
        cells = {(c.mode, c.engine, c.backend): c for c in profile.support}
        assert set(cells) == {(m, e, b) for m in MODES for e in ENGINES for b in BACKENDS}, name
        assert all(c.source for c in cells.values()), f"{name}: every support cell needs a source"
        assert all(v.reason for v in profile.env), f"{name}: every env var needs a reason"
        assert all(t.reason and t.source for t in profile.tweaks), (
            f"{name}: every tweak needs a reason and source"
        )

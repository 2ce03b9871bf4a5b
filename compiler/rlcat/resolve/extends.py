"""A recipe by name or path, with its ancestors through `extends` merged under it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from rlcat.catalog import Catalog, display_path, read_boundary, walk_entries
from rlcat.diagnostics import RlcatError, Severity, Where, diag
from rlcat.model.axes import NAME_PATTERN
from rlcat.model.plan import Layer, Origin
from rlcat.read.document import Document, WhereKey, load_yaml
from rlcat.read.nodes import Path_
from rlcat.resolve.entries import check_name
from rlcat.resolve.source import Source, merge_layer, origins_from

# Ancestors a recipe may have through `extends`: real ones have one to three; the bound keeps a
# hostile chain of thousands of files from being read and merged.
MAX_EXTENDS = 32


def is_path_ref(ref: str) -> bool:
    return ref.endswith((".yaml", ".yml")) or "/" in ref or "\\" in ref


def load_recipe_source(ref: str, catalog: Catalog) -> Source:
    """Load a recipe by name or path, following `extends` through the catalog. A path given as a
    link is followed only inside its catalog root (or the working folder), as lookups follow links."""
    if is_path_ref(ref):
        path = Path(ref)
        # the file as `rlcat validate` reads it: links followed only inside the same folder, and a
        # twin of the other suffix beside it (`x.yml` and `x.yaml`) refused as there (RLC207)
        walk = walk_entries(path, read_boundary(path, catalog))
        twins = (
            [d for d in catalog.conflicts_of(path) if d.severity >= Severity.ERROR]
            if not walk.problems
            else []
        )
        if walk.problems or twins:
            raise RlcatError(walk.problems + twins)
    else:
        path = catalog.find("recipe", ref)
    source = _merge_chain(_extends_chain(path, catalog))
    source.path = path
    return source


def _extends_chain(path: Path, catalog: Catalog) -> list[tuple[Path, Document]]:
    """The recipe file and its ancestors through `extends`, child first (a loop, not a recursion:
    the chain is bounded by MAX_EXTENDS, and each refusal points at the `extends` that causes it)."""
    chain: list[tuple[Path, Document]] = []
    names: list[str] = []
    while True:
        doc = load_yaml(path, display_path(path))
        chain.append((path, doc))
        name = doc.data.get("name")
        if isinstance(name, str):
            check_name(doc, path, "recipe", name)
        parent = doc.data.get("extends")
        if parent is None:
            return chain
        line, col = doc.positions.get(("extends",), (None, None))
        where: Where = {"file": doc.file, "line": line, "col": col}
        if not isinstance(parent, str):
            raise RlcatError(
                [diag("RLC102", "`extends` takes the name of another recipe", **where, key="extends")]
            )
        names.append(name if isinstance(name, str) else path.stem)
        if parent in names:
            loop = " → ".join([*names, parent])
            raise RlcatError(
                [
                    diag(
                        "RLC203",
                        f"extends cycle: {loop}",
                        **where,
                        key="extends",
                        hint="a recipe cannot extend itself or one that extends it",
                    )
                ]
            )
        if not re.fullmatch(NAME_PATTERN.strip("^$"), parent) or len(parent) > 100:
            # never a path: extends can only reach recipes in the catalog roots, by name
            raise RlcatError(
                [
                    diag(
                        "RLC103",
                        f"'{parent}' is not a recipe name",
                        **where,
                        key="extends",
                        hint="extends takes the name of a catalog recipe, not a file path",
                    )
                ]
            )
        if len(chain) > MAX_EXTENDS:
            raise RlcatError(
                [
                    diag(
                        "RLC007",
                        f"extends chain longer than {MAX_EXTENDS} recipes: '{parent}' would be "
                        f"ancestor {len(chain)} of {chain[0][1].file}",
                        **where,
                        key="extends",
                        hint="a recipe extends a base recipe, which may extend one more; flatten the chain",
                    )
                ]
            )
        path = catalog.find("recipe", parent, file=doc.file, line=line, key="extends")


def _replaced(source: Source, child_origins: dict[Path_, Origin]) -> dict[Path_, tuple[Any, Origin]]:
    """The values of `source` (the parents merged) that a child's values replace: each leaf the
    child sets where a parent set a value that is not a mapping, with the parent's origin."""
    found: dict[Path_, tuple[Any, Origin]] = {}
    for at in child_origins:
        before = source.origins.get(at)
        if not at or before is None or at[0] in ("name", "summary", "extends", "provenance"):
            continue
        value: Any = source.data
        for part in at:
            if not isinstance(value, dict | list):
                value = None
                break
            try:
                value = value[part]  # type: ignore[index]
            except (KeyError, IndexError, TypeError):
                value = None
                break
        if value is not None and not isinstance(value, dict):
            found[at] = (value, before)
    return found


def _merge_chain(chain: list[tuple[Path, Document]]) -> Source:
    """Merge an extends chain (child first) from its root down: each child over its parent."""
    hints: dict[WhereKey, str] = {}
    for _, doc in chain:
        hints.update(doc.yaml11_hints())
    root = chain[-1][1]
    source = Source(root.data, origins_from(root, Layer.RECIPE), [root.file], hints)
    for path, doc in reversed(chain[:-1]):
        origins = origins_from(doc, Layer.RECIPE)
        child = {k: v for k, v in doc.data.items() if k != "extends"}
        shadowed = _replaced(source, origins)
        merged = merge_layer(source, child, origins)
        merged.shadowed = {**source.shadowed}
        for at, before in shadowed.items():
            merged.shadowed[at] = [*merged.shadowed.get(at, []), before]
        merged.data["extends"] = doc.data["extends"]
        if "provenance" not in doc.data:
            merged.data.pop("provenance", None)  # the parent's upstream file is not the child's
        merged.origins[("extends",)] = origins[("extends",)]
        if () in origins:
            merged.origins[()] = origins[()]  # findings about the whole recipe point at the child
        merged.files.append(doc.file)
        if "name" not in doc.data:
            raise RlcatError(
                [
                    diag(
                        "RLC104",
                        f"recipe file {path.name} has no name (it would take its parent's)",
                        file=doc.file,
                        line=1,
                        key="name",
                        hint=f"add `name: {path.stem}`",
                    )
                ]
            )
        source = merged
    return source

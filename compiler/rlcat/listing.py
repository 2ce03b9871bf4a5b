"""`rlcat list` and `rlcat show`: what the catalog holds."""

from __future__ import annotations

import json
import sys
from typing import Any

from .catalog import Catalog
from .diagnostics import RlcatError


def list_recipes(
    catalog: Catalog,
    *,
    algorithm: str | None = None,
    backend: str | None = None,
    engine: str | None = None,
    mode: str | None = None,
) -> list[dict[str, Any]]:
    """One row per recipe that matches the filters; a recipe matches an engine it may be compiled with."""
    from .resolve import load_recipe_source, resolve

    rows = []
    for name in sorted(catalog.names("recipe")):
        recipe = resolve(load_recipe_source(name, catalog), catalog).recipe
        engines = sorted({recipe.engine, *recipe.variants.engine})
        if algorithm and recipe.algorithm != algorithm:
            continue
        if backend and recipe.backend != backend:
            continue
        if mode and recipe.mode != mode:
            continue
        if engine and engine not in engines:
            continue
        res = recipe.resources
        layout = f"{res.nodes}x{res.gpus_per_node}"
        if recipe.mode == "fully_async":
            layout += f" ({res.trainer_gpus}+{res.rollout_gpus})"
        rows.append(
            {
                "name": recipe.name,
                "algorithm": recipe.algorithm,
                "backend": recipe.backend,
                "engine": recipe.engine,
                "engines": engines,
                "mode": recipe.mode,
                "model": recipe.model,
                "dataset": recipe.dataset,
                "gpus": layout,
                "summary": recipe.summary,
            }
        )
    return rows


def render_list(rows: list[dict[str, Any]], fmt: str) -> str:
    if fmt == "json":
        return json.dumps(rows, indent=2) + "\n"
    if fmt != "table":
        from .diagnostics import diag

        raise RlcatError([diag("RLC105", f"--format must be table or json; got '{fmt}'")])
    return render_table(
        ["name", "algorithm", "backend", "engines", "mode", "gpus", "summary"],
        [
            [
                r["name"],
                r["algorithm"],
                r["backend"],
                ",".join(r["engines"]),
                r["mode"],
                r["gpus"],
                r["summary"],
            ]
            for r in rows
        ],
    )


def render_table(columns: list[str], rows: list[list[str]]) -> str:
    """A plain-text table (rich, no colour), as wide as the terminal or a fixed width in pipes."""
    import io
    import shutil

    from rich.console import Console
    from rich.table import Table

    table = Table(box=None, pad_edge=False, header_style="bold")
    for col in columns:
        table.add_column(col, overflow="fold")
    for row in rows:
        table.add_row(*row)
    # a terminal's own width; a fixed, wide one in pipes so that scripts see stable rows
    width = shutil.get_terminal_size((220, 24)).columns if sys.stdout.isatty() else 220
    console = Console(width=width, file=io.StringIO(), color_system=None)
    console.print(table)
    out = console.file.getvalue()  # type: ignore[attr-defined]
    return "\n".join(line.rstrip() for line in out.splitlines()) + "\n"


def show_recipe(ref: str, catalog: Catalog, platform: str | None) -> str:
    """The resolved recipe as YAML: extends merged, every default filled in, catalog entries inlined."""
    import yaml

    from .model.checks import dump
    from .platforms import profile_names
    from .resolve import load_platform, load_recipe_source, platform_block, resolve

    source = load_recipe_source(ref, catalog)
    if platform:
        profile, _ = load_platform(platform, catalog)
        source = platform_block(source, profile_names(profile))
    resolved = resolve(source, catalog)
    data = dump(resolved.recipe, by_alias=True, exclude=frozenset({"platforms"} if platform else ()))
    data["model"] = dump(resolved.model)
    data["dataset"] = dump(resolved.dataset)
    header = f"# {resolved.recipe.name}: resolved from {' <- '.join(reversed(source.files))}\n"
    return header + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=1000)

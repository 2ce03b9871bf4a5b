"""What `rlcat validate` checks in a result beyond its schema: that what it names exists.

The recipe and the platform must be in the catalog, the mode, engine and backend must be ones the
recipe may be compiled with, and a baseline must name another result. The schema has already
checked the rest (closed units, finite numbers, series whose steps increase).
"""

from __future__ import annotations

from collections.abc import Mapping

from rlcat.catalog import Catalog
from rlcat.diagnostics import Diagnostic, RlcatError, diag, suggestion_hint
from rlcat.model.results import Result
from rlcat.read.document import Document
from rlcat.resolve.extends import load_recipe_source
from rlcat.resolve.recipe import resolve


def result_problems(result: Result, doc: Document, catalog: Catalog) -> list[Diagnostic]:
    """The references of `result` that point nowhere, each at its line in `doc`."""
    found = []
    recipes = catalog.names("recipe")
    if result.recipe not in recipes:
        found.append(_unknown("RLC201", "recipe", result.recipe, recipes, doc, path=("recipe",)))
    platforms = catalog.names("platform")
    if result.platform not in platforms:
        found.append(_unknown("RLC204", "platform", result.platform, platforms, doc, path=("platform",)))
    if result.baseline is not None:
        results = catalog.names("result")
        if result.baseline.result not in results:
            where = ("baseline", "result")
            found.append(_unknown("RLC202", "result", result.baseline.result, results, doc, path=where))
        elif result.baseline.result == result.name:
            found.append(
                diag("RLC103", "a result is not its own baseline", **doc.locate(("baseline", "result")))
            )
    if result.recipe in recipes:
        found += _axes_allowed(result, doc, catalog)
    return found


def _unknown(
    code: str, kind: str, name: str, known: Mapping[str, object], doc: Document, *, path: tuple[str, ...]
) -> Diagnostic:
    return diag(
        code,
        f"unknown {kind} '{name}'",
        **doc.locate(path),
        key=".".join(path),
        hint=suggestion_hint(name, known) or f"name a {kind} of the catalog (rlcat list)",
    )


def _axes_allowed(result: Result, doc: Document, catalog: Catalog) -> list[Diagnostic]:
    """RLC205 for a mode, engine or backend the recipe may not be compiled with: the result would
    be about a run no compile of the recipe makes. A recipe that does not resolve is reported on
    its own file; its results are not judged against it."""
    try:
        recipe = resolve(load_recipe_source(result.recipe, catalog), catalog).recipe
    except RlcatError:
        return []
    allowed: dict[str, list[str]] = {
        "mode": [recipe.mode, *recipe.variants.mode],
        "engine": [recipe.engine, *recipe.variants.engine],
        "backend": [recipe.backend, *recipe.variants.backend],
    }
    found = []
    for axis, values in allowed.items():
        value = getattr(result, axis)
        if value is not None and value not in values:
            found.append(
                diag(
                    "RLC205",
                    f"recipe {result.recipe} does not allow {axis} {value} (it allows "
                    f"{', '.join(dict.fromkeys(values))})",
                    **doc.locate((axis,)),
                    key=axis,
                    hint=f"attach the result to a recipe that runs {axis} {value}, or add it to the "
                    f"recipe's variants.{axis}",
                )
            )
    return found

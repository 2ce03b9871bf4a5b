"""The merged recipe data validated as a Recipe, with its model and dataset entries: a Resolved."""

from __future__ import annotations

from dataclasses import dataclass, replace

from pydantic import BaseModel

from rlcat.catalog import Catalog, Kind
from rlcat.diagnostics import RlcatError, diag, suggestion_hint
from rlcat.model.catalog import DatasetEntry, ModelEntry
from rlcat.model.plan import Layer, Origin
from rlcat.model.recipe import Recipe
from rlcat.model.validate import validate
from rlcat.read.document import with_yaml11_hints
from rlcat.resolve.entries import load_entry
from rlcat.resolve.source import Source


def validate_recipe(source: Source) -> Recipe:
    """The merged data as a Recipe; a schema finding about an inherited value is reported on the
    recipe (Source.onto_recipe)."""
    try:
        return validate(Recipe, source.data, source.locate)
    except RlcatError as exc:
        found = with_yaml11_hints(exc.diagnostics, source.yaml11_hints)
        raise RlcatError(source.onto_recipe(found)) from None


@dataclass(frozen=True)
class Resolved:
    """A validated recipe with its catalog entries and the origin of each of its values."""

    recipe: Recipe
    source: Source
    model: ModelEntry
    model_origin: Origin
    dataset: DatasetEntry
    dataset_origin: Origin

    def origin(self, field_path: str) -> Origin:
        """Who set a recipe field: the file position that set it, or rlcat's default on the field."""
        path = tuple(field_path.split("."))
        found = self.source.origin(path)
        return found if found is not None else default_origin(field_path)


def default_origin(field_path: str) -> Origin:
    """The origin of a field the recipe does not set: rlcat's default on the field."""
    return Origin(Layer.RECIPE, f"rlcat default of {field_path}")


def resolve(source: Source, catalog: Catalog) -> Resolved:
    """Validate the merged recipe data and look up its model and dataset."""
    recipe = validate_recipe(source)
    known = catalog.names("platform")
    for block in recipe.platforms:
        if block not in known:  # a block for a platform that does not exist is a typo
            raise RlcatError(
                [
                    diag(
                        "RLC204",
                        f"platforms.{block}: unknown platform '{block}'",
                        **source.locate(("platforms", block)),
                        key=f"platforms.{block}",
                        hint=suggestion_hint(block, known),
                    )
                ]
            )
    refs = {}
    kinds: tuple[tuple[Kind, type[BaseModel]], ...] = (("model", ModelEntry), ("dataset", DatasetEntry))
    for kind, entry_model in kinds:
        name = getattr(recipe, kind)
        where = source.locate((kind,))
        refs[kind] = load_entry(
            kind, name, entry_model, catalog, file=where.get("file"), line=where.get("line"), key=kind
        )
    model, model_origin = refs["model"]
    dataset, dataset_origin = refs["dataset"]
    assert isinstance(model, ModelEntry) and isinstance(dataset, DatasetEntry)
    # what the entries bring was set by the recipe's `model:` and `dataset:` fields
    return Resolved(
        recipe,
        source,
        model,
        replace(model_origin, field="model"),
        dataset,
        replace(dataset_origin, field="dataset"),
    )

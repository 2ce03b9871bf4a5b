"""The recipe's field paths, read from the pydantic models: what `rlcat explain` accepts as a recipe
field and what the field reference page lists."""

from __future__ import annotations

import types
import typing
from functools import cache
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from rlcat.model.recipe import Recipe


@cache
def recipe_fields() -> tuple[tuple[str, ...], frozenset[str]]:
    """(every recipe field path in the schema's spelling, parents first; the open mappings among
    them, whose entries are fields too: `env.NAME`, `overrides.KEY`, `rollout.engine_kwargs.vllm.X`)."""
    paths: list[str] = []
    open_maps: set[str] = set()

    def walk(model: type[BaseModel], prefix: str) -> None:
        for name, info in model.model_fields.items():
            path = prefix + (info.alias or name)
            paths.append(path)
            inner = value_type(info.annotation)
            if isinstance(inner, type) and issubclass(inner, BaseModel):
                walk(inner, path + ".")
            elif typing.get_origin(inner) is dict:
                open_maps.add(path)

    walk(Recipe, "")
    return tuple(paths), frozenset(open_maps)


def is_recipe_field(name: str) -> bool:
    paths, open_maps = recipe_fields()
    return name in paths or any(name.startswith(m + ".") for m in open_maps)


def value_type(annotation: Any) -> Any:
    """The type a field holds: `X | None` and `Annotated[X, ...]` → X."""
    if typing.get_origin(annotation) is typing.Annotated:
        return value_type(typing.get_args(annotation)[0])
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return value_type(args[0]) if len(args) == 1 else annotation
    return annotation


def field_info(path: str) -> FieldInfo:
    """The pydantic field at a dotted path of the recipe (a path `recipe_fields` lists)."""
    model: Any = Recipe
    info: FieldInfo | None = None
    for part in path.split("."):
        info = {(f.alias or n): f for n, f in model.model_fields.items()}[part]
        model = value_type(info.annotation)
    assert info is not None
    return info

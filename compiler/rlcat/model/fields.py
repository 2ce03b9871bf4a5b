"""The recipe's field paths, read from the pydantic models: what `rlcat explain` accepts as a recipe
field and what the field reference page lists."""

from __future__ import annotations

import json
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


def sample_values(path: str) -> list[str]:
    """Values of a field's type, as `--set` reads them (YAML): what a tool that compiles a recipe with
    one field changed tries (the field reference page, `rlcat dev schema-coverage`). Empty for a
    section or a type with no obvious sample."""
    return _samples_of(value_type(field_info(path).annotation))


def _samples_of(kind: Any) -> list[str]:
    if isinstance(kind, type) and issubclass(kind, BaseModel):
        return []
    origin = typing.get_origin(kind)
    if origin is typing.Literal:
        return [json.dumps(v) for v in typing.get_args(kind)]
    if origin in (typing.Union, types.UnionType):  # `str | list[str]`: the first member's samples
        return _samples_of(value_type(typing.get_args(kind)[0]))
    if origin is list:
        inner = _samples_of(value_type(typing.get_args(kind)[0])) if typing.get_args(kind) else []
        return [f"[{inner[0]}]"] if inner else ["[1, 2]"]
    if origin is dict:  # an open mapping: one entry (under each key a closed key type allows)
        key_type, item_type = (value_type(a) for a in typing.get_args(kind))
        item = (_samples_of(item_type) or ["1"])[0]
        closed = typing.get_origin(key_type) is typing.Literal
        keys = [json.dumps(k) for k in typing.get_args(key_type)] if closed else ["rlcat_probe"]
        return ["{" + ", ".join(f"{k}: {item}" for k in keys) + "}"]
    return {bool: ["true", "false"], int: ["2", "1"], float: ["0.5", "2.0"], str: ['"example"']}.get(kind, [])

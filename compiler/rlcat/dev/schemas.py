"""The JSON Schemas under schemas/, generated from the pydantic models for editors and other
validators.

One generator with a check mode (`rlcat dev schemas [--check]`): the committed files must equal
what the models produce, or the check fails with the command to run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from rlcat.model.catalog import DatasetEntry, ModelEntry
from rlcat.model.platform import PlatformProfile
from rlcat.model.recipe import Recipe
from rlcat.model.results import Result

SCHEMAS: dict[str, type[BaseModel]] = {
    "recipe.schema.json": Recipe,
    "model.schema.json": ModelEntry,
    "dataset.schema.json": DatasetEntry,
    "platform.schema.json": PlatformProfile,
    "result.schema.json": Result,
}
ID_BASE = "https://rlcat.dev/schemas/"


def render(name: str) -> str:
    schema = SCHEMAS[name].model_json_schema(by_alias=True, mode="validation")
    schema = _closed_pattern_maps(schema)
    if name == "recipe.schema.json":
        schema = _with_partial_children(schema)
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": ID_BASE + name, **schema}
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _closed_pattern_maps(node: Any) -> Any:
    """pydantic checks every key of a `dict[Pattern, V]`; JSON Schema's patternProperties alone lets
    other keys through, so close those maps."""
    if isinstance(node, dict):
        out = {k: _closed_pattern_maps(v) for k, v in node.items()}
        if "patternProperties" in out and "additionalProperties" not in out:
            out["additionalProperties"] = False
        return out
    if isinstance(node, list):
        return [_closed_pattern_maps(v) for v in node]
    return node


def _with_partial_children(schema: dict[str, Any]) -> dict[str, Any]:
    """A recipe that `extends` another holds only its difference: every field is optional there,
    while types, ranges, enums and unknown-field rules still apply. Editors and CI validators get
    that from the schema itself (if extends then the partial shape, else the full one)."""
    defs = schema.pop("$defs", {})
    full = {**schema}
    partial_defs = {f"{k}Partial": _partial(v) for k, v in defs.items()}
    return {
        "title": full.get("title", "Recipe"),
        "description": full.get("description", ""),
        "$defs": {**defs, **partial_defs, "Recipe": full, "RecipePartial": _partial(full)},
        "if": {"required": ["extends"]},
        "then": {"$ref": "#/$defs/RecipePartial"},
        "else": {"$ref": "#/$defs/Recipe"},
    }


def _partial(node: Any) -> Any:
    if isinstance(node, dict):
        out = {k: _partial(v) for k, v in node.items() if k != "required"}
        ref = out.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            out["$ref"] = ref + "Partial"
        return out
    if isinstance(node, list):
        return [_partial(v) for v in node]
    return node


def write(root: Path, check: bool = False) -> list[str]:
    """Write every generated file under the checkout `root` (or, with check, list the stale ones
    and write nothing); paths are relative to root."""
    stale = []
    for name in SCHEMAS:
        rel = f"schemas/{name}"
        path = root / rel
        text = render(name)
        current = path.read_text(encoding="utf-8") if path.is_file() else None
        if current == text:
            continue
        stale.append(rel)
        if not check:
            path.write_text(text, encoding="utf-8")
    return stale

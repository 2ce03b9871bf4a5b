"""JSON Schemas exported from the pydantic models, for editors and other validators.

One generator with a check mode (`rlcat dev schemas [--check]`): the committed files under
schemas/ must equal what the models produce, or the check fails with the command to run.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel

from .model import DatasetEntry, ModelEntry, PlatformProfile, Recipe

SCHEMAS: dict[str, type[BaseModel]] = {
    "recipe.schema.json": Recipe,
    "model.schema.json": ModelEntry,
    "dataset.schema.json": DatasetEntry,
    "platform.schema.json": PlatformProfile,
}
ID_BASE = "https://rlcat.dev/schemas/"


def render(name: str) -> str:
    schema = SCHEMAS[name].model_json_schema(by_alias=True, mode="validation")
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": ID_BASE + name, **schema}
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write(out_dir: Path, check: bool = False) -> list[str]:
    """Write every schema (or, with check, list the stale ones and write nothing)."""
    stale = []
    for name in SCHEMAS:
        path = out_dir / name
        text = render(name)
        current = path.read_text(encoding="utf-8") if path.is_file() else None
        if current == text:
            continue
        stale.append(name)
        if not check:
            path.write_text(text, encoding="utf-8")
    return stale

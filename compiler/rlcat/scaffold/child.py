"""The child recipe `rlcat new` (and `rlcat init`'s example) writes: `extends:` a recipe, and that
recipe's settings — resolved through its own extends chain — as comments to uncomment and change,
as torchtune's `tune cp` copies a config, but holding only the difference."""

from __future__ import annotations

import json
import re
from typing import Any

from rlcat.diagnostics import RlcatError
from rlcat.model.recipe import Recipe
from rlcat.syntax.yaml_text import yaml_document

# Written by the child itself, never copied from the parent.
_OWN_FIELDS = ("name", "extends", "summary")


def child_recipe(
    name: str, parent: str, settings: dict[str, Any], schema: str | None, *, command: str = "rlcat new"
) -> str:
    """The text of recipe `name` extending `parent`, whose merged data is `settings`; `schema` is
    the path of recipe.schema.json relative to the new file, for the editor's schema line, and
    `command` the command that writes it."""
    head = [f"# yaml-language-server: $schema={schema}", "#"] if schema else []
    head += [
        f"# {name}: a recipe built on {parent} (written by `{command}`).",
        "# It holds only what differs from its parent; everything else is inherited.",
        f"# `rlcat show {name}` prints the recipe whole.",
        f"name: {_yaml_word(name)}",
        f"extends: {_yaml_word(parent)}",
        f"summary: {_yaml_word(f'Based on {parent}')}",
    ]
    return "\n".join([*head, "", *_inherited(parent, settings)]) + "\n"


def _inherited(parent: str, settings: dict[str, Any]) -> list[str]:
    shown = _in_field_order({k: v for k, v in settings.items() if k not in _OWN_FIELDS})
    intro = [
        f"# What {parent} sets, through its own extends chain. To change a setting here, uncomment",
        "# its line and the section lines above it, and edit the value, for example:",
        "#   batch:",
        "#     max_response_length: 4096",
        "#",
    ]
    try:
        body = yaml_document(shown)
    except RlcatError:  # text no YAML comment can show as it is (a hidden character)
        return [f"# ({parent}'s settings hold text a comment cannot show: `rlcat show {parent}`)"]
    return [*intro, *(f"# {line}".rstrip() for line in body.splitlines())]


def _in_field_order(data: dict[str, Any]) -> dict[str, Any]:
    """Top-level fields in the order the recipe model declares them (as a recipe reads), others
    after them in their own order."""
    declared = [info.alias or field for field, info in Recipe.model_fields.items()]
    rank = {field: i for i, field in enumerate(declared)}
    return dict(sorted(data.items(), key=lambda item: rank.get(item[0], len(rank))))


_YAML_WORDS = {"null", "true", "false", "yes", "no", "on", "off", "y", "n"}


def _yaml_word(text: str) -> str:
    """A name or a short phrase as a YAML value that YAML 1.1 and 1.2 both read as this text: plain
    when it starts with a letter and holds no YAML syntax, else double-quoted (JSON's string
    escapes are YAML's)."""
    if re.fullmatch(r"[a-z][a-z0-9_-]*( [a-z0-9_-]+)*", text, re.I) and text.lower() not in _YAML_WORDS:
        return text
    return json.dumps(text)

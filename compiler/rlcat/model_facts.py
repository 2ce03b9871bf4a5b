"""What a model's shape says to the guards, for a launch script: the catalog entry its model path
names, or the config.json of a local model folder.

A script names its model by `actor_rollout_ref.model.path`: a hub id (`Qwen/Qwen3-8B`) or a folder
(`$HOME/models/Qwen3-8B`). The folder's own config.json is read when it exists on this machine
(never the network, through the one bounded reader rlcat.files.read_text); otherwise the path is
matched with a built-in catalog entry, by its hub id or by the folder's name (the name the hub id
ends in, as `huggingface-cli download --local-dir` writes it). Plain data and the YAML reader only:
a cold `rlcat lint` loads no pydantic (bench/lint_scripts.py).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, fields
from functools import cache
from pathlib import Path
from typing import Any

from rlcat.catalog import builtin_root
from rlcat.diagnostics import RlcatError
from rlcat.files import read_text
from rlcat.read.document import load_yaml

# config.json spellings of each fact: Qwen and Llama name experts `num_experts`, gpt-oss
# `num_local_experts`, DeepSeek-V3 (Moonlight) `n_routed_experts`.
CONFIG_NAMES: dict[str, tuple[str, ...]] = {
    "num_attention_heads": ("num_attention_heads",),
    "num_key_value_heads": ("num_key_value_heads",),
    "hidden_size": ("hidden_size",),
    "num_hidden_layers": ("num_hidden_layers",),
    "max_position_embeddings": ("max_position_embeddings",),
    "vocab_size": ("vocab_size",),
    "num_experts": ("num_experts", "num_local_experts", "n_routed_experts"),
    "num_experts_per_tok": ("num_experts_per_tok", "experts_per_token"),
}
# A config.json larger than this is not a model's config.
CONFIG_LIMIT = 1 << 20


@dataclass(frozen=True)
class ModelFacts:
    """A model as the guards read it (guards.base ModelView), from a catalog entry or a config.json;
    None where the source does not say."""

    name: str
    source: str
    max_position_embeddings: int = 0
    extended_max_position_embeddings: int | None = None
    num_attention_heads: int | None = None
    num_key_value_heads: int | None = None
    hidden_size: int | None = None
    num_hidden_layers: int | None = None
    vocab_size: int | None = None
    num_experts: int | None = None
    num_experts_per_tok: int | None = None


FACT_FIELDS = tuple(f.name for f in fields(ModelFacts) if f.name not in ("name", "source"))


def config_facts(config: Any) -> dict[str, int]:
    """The facts a parsed config.json gives: a vision-language model's text_config wins over its
    top level (the language model is what the parallel sizes split)."""
    if not isinstance(config, dict):
        return {}
    layers = [config]
    text = config.get("text_config")
    if isinstance(text, dict):
        layers.append(text)
    found: dict[str, int] = {}
    for layer in layers:
        for fact, names in CONFIG_NAMES.items():
            for name in names:
                value = layer.get(name)
                if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                    found[fact] = value
                    break
    return found


def local_folder(path: str) -> Path | None:
    """The folder a model path names on this machine (`~` and `$HOME` expanded), when it holds a
    config.json; None for a hub id or a folder that is not here."""
    if not path or "://" in path:
        return None
    home = os.path.expanduser("~")
    expanded = path.replace("${HOME}", home).replace("$HOME", home)
    folder = Path(os.path.expanduser(expanded))
    if "$" in str(folder):
        return None  # a variable only running the script tells
    return folder if (folder / "config.json").is_file() else None


def folder_facts(folder: Path) -> ModelFacts | None:
    """The facts of a local model folder's config.json; None when it cannot be read as JSON."""
    shown = str(folder / "config.json")
    try:
        config = json.loads(read_text(folder / "config.json", shown, limit=CONFIG_LIMIT))
    except (RlcatError, ValueError):
        return None
    found = config_facts(config)
    return ModelFacts(name=folder.name, source=shown, **found) if found else None


@cache  # the built-in catalog does not change while rlcat runs; lint asks once per launch
def catalog_models() -> tuple[dict[str, Any], ...]:
    """The built-in catalog's model entries as plain mappings, in name order."""
    folder = builtin_root() / "catalog" / "models"
    return tuple(dict(load_yaml(p).data) for p in sorted(folder.glob("*.yaml")))


def catalog_facts(entry: dict[str, Any]) -> ModelFacts:
    values = {f: entry[f] for f in FACT_FIELDS if isinstance(entry.get(f), int)}
    return ModelFacts(name=str(entry["name"]), source=f"catalog model {entry['name']}", **values)


def catalog_match(path: str, entries: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The catalog entry a model path names: the same hub id, else a folder of the name the hub id
    ends in (`$HOME/models/Qwen3-8B` for Qwen/Qwen3-8B), compared without case."""
    wanted = path.rstrip("/")
    for entry in entries:
        if str(entry.get("hf_id", "")).rstrip("/") == wanted:
            return entry
    last = wanted.rsplit("/", 1)[-1].lower()
    for entry in entries:
        if str(entry.get("hf_id", "")).rstrip("/").rsplit("/", 1)[-1].lower() == last:
            return entry
    return None


def script_model(path: Any) -> ModelFacts | None:
    """What a script's model path tells the guards: a local folder's config.json (with the catalog
    entry of the same model for what config.json does not hold), else the catalog entry; None when
    neither says anything."""
    if not isinstance(path, str) or not path.strip():
        return None
    entry = catalog_match(path, catalog_models())
    folder = local_folder(path)
    local = folder_facts(folder) if folder is not None else None
    if local is None:
        return catalog_facts(entry) if entry is not None else None
    if entry is None:
        return local
    # the folder's own values win; the entry adds what config.json lacks (a longer known context)
    merged: dict[str, Any] = {f: getattr(local, f) or entry.get(f) for f in FACT_FIELDS}
    return ModelFacts(name=str(entry["name"]), source=local.source, **merged)


def with_local_config(model: Any, path: Any) -> Any:
    """The model a compiled plan trains: the catalog entry, unless the plan's model path is a
    folder on this machine whose config.json says otherwise (the weights that run are those).
    `model` is returned unchanged when there is no such folder."""
    folder = local_folder(path) if isinstance(path, str) else None
    local = folder_facts(folder) if folder is not None else None
    if local is None:
        return model
    merged: dict[str, Any] = {f: getattr(local, f) or getattr(model, f, None) for f in FACT_FIELDS}
    merged["max_position_embeddings"] = merged["max_position_embeddings"] or 0
    return ModelFacts(name=str(model.name), source=local.source, **merged)

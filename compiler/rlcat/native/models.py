"""The stand-in model folder of `--verl-native` and the verl oracle: verl reads ``config.json`` and a
tokenizer from the model path at start-up, and a path that is no folder here (a hub id, a folder of
the cluster) is pointed at a local folder the runner makes from these ``config.json`` values (the
model's family's model type and architecture, its positions, from the built-in catalog) with a tiny
word-level tokenizer. No weights are read; never the network."""

from __future__ import annotations

from typing import Any

from rlcat.model_facts import catalog_match, catalog_models

#: A catalog model family → the ``model_type`` and architecture of its published ``config.json``
#: (what transformers' AutoConfig needs to read the folder; verl asserts exactly one architecture).
FAMILY_CONFIG: dict[str, tuple[str, str]] = {
    "qwen2": ("qwen2", "Qwen2ForCausalLM"),
    "qwen2.5": ("qwen2", "Qwen2ForCausalLM"),
    "qwen2.5-vl": ("qwen2_5_vl", "Qwen2_5_VLForConditionalGeneration"),
    "qwen3": ("qwen3", "Qwen3ForCausalLM"),
    "qwen3-moe": ("qwen3_moe", "Qwen3MoeForCausalLM"),
    "qwen3-vl": ("qwen3_vl", "Qwen3VLForConditionalGeneration"),
    "qwen3-vl-moe": ("qwen3_vl_moe", "Qwen3VLMoeForConditionalGeneration"),
    "qwen3.5": ("qwen3_5", "Qwen3_5ForConditionalGeneration"),
    "qwen3.5-moe": ("qwen3_5_moe", "Qwen3_5MoeForConditionalGeneration"),
    "glm4v": ("glm4v", "Glm4vForConditionalGeneration"),
    "gpt-oss": ("gpt_oss", "GptOssForCausalLM"),
    "deepseek-v3": ("deepseek_v3", "DeepseekV3ForCausalLM"),
    "seed-oss": ("seed_oss", "SeedOssForCausalLM"),
}
#: For a model path the catalog does not know (a local folder in an override).
DEFAULT_MODEL: dict[str, Any] = {"model_type": "qwen3", "architectures": ["Qwen3ForCausalLM"]}


def model_config(family: str | None, positions: int | None) -> dict[str, Any]:
    """The ``config.json`` values of a stand-in model folder: the family's model type and
    architecture and the model's positions, where the catalog records them."""
    if family not in FAMILY_CONFIG:
        return dict(DEFAULT_MODEL)
    model_type, architecture = FAMILY_CONFIG[family]
    values: dict[str, Any] = {"model_type": model_type, "architectures": [architecture]}
    if positions:
        values["max_position_embeddings"] = positions
    return values


def stand_in(model_path: str) -> dict[str, Any]:
    """The stand-in ``config.json`` for a model path: the built-in catalog model it names (by hub
    id, or a folder named like one), else :data:`DEFAULT_MODEL`."""
    entry = catalog_match(model_path, catalog_models()) if model_path else None
    if entry is None:
        return dict(DEFAULT_MODEL)
    positions = entry.get("max_position_embeddings")
    return model_config(str(entry.get("family")), positions if isinstance(positions, int) else None)

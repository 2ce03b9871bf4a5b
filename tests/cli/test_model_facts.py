"""Model facts: what a model path says about the model's shape (rlcat.model_facts), read from the
built-in catalog or a local folder's config.json, and used by compile as well as lint."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from rlcat.model_facts import catalog_match, catalog_models, config_facts, script_model

from conftest import Result

Run = Callable[..., Result]


def test_config_json_of_a_vision_language_model_gives_its_text_model() -> None:
    config = {
        "num_attention_heads": 16,  # the vision tower's, at the top level of some configs
        "text_config": {"num_attention_heads": 32, "num_key_value_heads": 4, "num_local_experts": 32},
        "vocab_size": True,  # not a count
    }
    assert config_facts(config) == {"num_attention_heads": 32, "num_key_value_heads": 4, "num_experts": 32}
    assert config_facts({"n_routed_experts": 64, "num_experts_per_tok": 6}) == {
        "num_experts": 64,
        "num_experts_per_tok": 6,
    }
    assert config_facts(["not", "a", "config"]) == {}


def test_a_model_path_names_its_catalog_model_by_hub_id_or_folder_name() -> None:
    entries = catalog_models()
    assert (catalog_match("Qwen/Qwen3-8B", entries) or {}).get("name") == "qwen3_8b"
    assert (catalog_match("$HOME/verl/models/qwen2.5-math-7b/", entries) or {}).get(
        "name"
    ) == "qwen2_5_math_7b"
    assert catalog_match("$HOME/models/Qwen3-8B-Base", entries) is None  # another checkpoint
    assert script_model("not/a-model-rlcat-ships") is None


def test_every_built_in_model_with_heads_says_where_they_come_from() -> None:
    for entry in catalog_models():
        if "num_attention_heads" in entry:
            assert entry["facts_source"].startswith("https://huggingface.co/"), entry["name"]
            assert entry["num_attention_heads"] % entry["num_key_value_heads"] == 0, entry["name"]


def test_compile_reads_the_config_json_of_a_local_model_folder(rlcat: Run, tmp_path: Path) -> None:
    """Qwen3-8B's catalog entry has 32 heads (tensor parallel 8 splits them); a local folder whose
    config.json says 28 is what the run loads, and 8 does not split those."""
    folder = tmp_path / "model"
    folder.mkdir()
    config = {"num_attention_heads": 28, "num_key_value_heads": 4, "max_position_embeddings": 32768}
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    args = ("compile", "gsm8k_qwen3_8b_fsdp", "--platform", "cuda", "--set", "parallelism.rollout.tp=8")
    assert "RLC602" not in rlcat(*args, "-o", str(tmp_path / "a")).err
    local = rlcat(*args, "--set", f"actor.model_path={folder}", "-o", str(tmp_path / "b"))
    assert local.code == 1
    assert (
        "RLC602 error: rollout tensor parallel size 8 cannot split qwen3_8b: its 28 attention heads"
        in local.err
    )

"""The committed verl key index must be exactly what the generator produces from the release trees."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from rlcat.dev.build_index import REGENERATE_COMMAND, build
from rlcat.dev.trees import VERL_VERSIONS

from conftest import REPO, IndexLoader, Result, example_of

pytestmark = pytest.mark.compose


def test_index_is_fresh(verl_trees: dict[str, Path], index_dir: Path, rlcat: Callable[..., Result]) -> None:
    """The help example `rlcat dev verl-index --check`, run here (not among the help examples): the
    committed index is exactly what the generator makes from the fetched release trees."""
    result = rlcat(*example_of("test_index_is_fresh"))
    assert result.code == 0, f"schemas/verl is stale:\n{result.out}{result.err}"
    assert result.out == f"verl key index in {index_dir} is up to date ({', '.join(VERL_VERSIONS)})\n"
    assert REGENERATE_COMMAND == "rlcat dev verl-index"


def test_a_stale_index_is_found(verl_trees: dict[str, Path], tmp_path: Path) -> None:
    """The check can fail: an index folder with one file changed is stale."""
    version = VERL_VERSIONS[-1]
    shutil.copytree(REPO / "schemas" / "verl", tmp_path / "verl")
    index = tmp_path / "verl" / version / "ppo_trainer.json"
    index.write_text(index.read_text(encoding="utf-8").replace("trainer.", "trainer_.", 1), encoding="utf-8")
    problems = build([version], tmp_path / "verl", check=True)
    assert problems and all("ppo_trainer.json" in p for p in problems), problems


def test_manifest_lists_every_file(index_dir: Path, load_index: IndexLoader) -> None:
    for version in VERL_VERSIONS:
        manifest = load_index(version, "manifest.json")
        files = {entry["file"] for entry in manifest["entries"]}
        on_disk = {p.name for p in (index_dir / version).glob("*.json")} - {"manifest.json"}
        assert files == on_disk, version
        for entry in manifest["entries"]:
            doc = load_index(version, entry["file"])
            assert doc["verl_version"] == version
            assert len(doc["keys"]) == entry["keys"]


def test_megatron_engine_variant_follows_the_tree(
    verl_trees: dict[str, Path], load_index: IndexLoader
) -> None:
    for version, tree in verl_trees.items():
        has_option = (tree / "verl/trainer/config/model_engine/megatron.yaml").is_file()
        files = {e["file"] for e in load_index(version, "manifest.json")["entries"]}
        assert ("ppo_trainer.model_engine-megatron.json" in files) == has_option, version


def test_grad_offload_dropped_in_0_9_1(load_index: IndexLoader) -> None:
    # 0.9.1 removed megatron.grad_offload, which 0.9.0 (and verl main) still have.
    key = "actor_rollout_ref.actor.megatron.grad_offload"
    assert key in load_index("0.9.0", "ppo_megatron_trainer.json")["keys"]
    assert key in load_index("0.9.0", "ppo_trainer.model_engine-megatron.json")["keys"]
    assert key not in load_index("0.9.1", "ppo_megatron_trainer.json")["keys"]
    assert key not in load_index("0.9.1", "ppo_trainer.model_engine-megatron.json")["keys"]


def test_open_dicts_and_types(load_index: IndexLoader) -> None:
    doc = load_index("0.9.1", "ppo_megatron_trainer.json")
    open_dicts = set(doc["open"])
    assert "actor_rollout_ref.rollout.engine_kwargs.vllm" in open_dicts  # empty {}
    assert "actor_rollout_ref.actor.megatron.override_transformer_config" in open_dicts  # by name
    assert "reward.reward_kwargs" in open_dicts  # read with .get() by verl, absent from the YAML
    assert "reward.reward_kwargs" not in doc["keys"]
    assert "actor_rollout_ref.rollout.val_kwargs" not in open_dicts  # a SamplingConfig (_target_)
    keys = doc["keys"]
    assert keys["actor_rollout_ref.rollout.engine_kwargs.vllm"] == [{}, "dict"]
    assert keys["actor_rollout_ref.model.path"][1] == "str"
    assert keys["actor_rollout_ref.rollout.name"] == ["???", "missing"]
    # interpolations keep their raw text and take the type of what they resolve to
    raw, kind = keys["actor_rollout_ref.actor.checkpoint.load_contents"]
    assert raw == "${.save_contents}" and kind == "list"
    allowed = {"bool", "int", "float", "str", "list", "dict", "null", "missing", "any"}
    assert {member for _, kind in keys.values() for member in kind.split("|")} <= allowed


def test_a_union_verl_declares_beats_the_type_of_its_default(load_index: IndexLoader) -> None:
    # RolloutCorrectionConfig.rollout_is_threshold: str | float = 2.0 (verl 0.9.1; 0.7.1 says float),
    # reached through AlgoConfig.rollout_correction: Optional[RolloutCorrectionConfig]
    key = "algorithm.rollout_correction.rollout_is_threshold"
    assert load_index("0.9.1", "ppo_trainer.json")["keys"][key] == [2.0, "str|float"]
    assert load_index("0.7.1", "ppo_trainer.json")["keys"][key] == [2.0, "float"]
    # Optional[str | float] with a null default: null already takes anything
    rejection = "algorithm.rollout_correction.rollout_rs_threshold"
    assert load_index("0.9.1", "ppo_trainer.json")["keys"][rejection][1] == "null"

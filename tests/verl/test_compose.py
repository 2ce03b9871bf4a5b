"""Hydra composition against real verl release trees, and the key index agreeing with it.

Composing costs ~0.25 s, so the tests batch many overrides into one compose where they can.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from rlcat.dev import trees
from rlcat.dev.compose import compose, flatten, rejected_overrides

from conftest import IndexLoader

# A GRPO launch of the usual shape (FSDP actor, vLLM rollout), written for these tests: plain keys,
# a list value, an interpolation, a force-add into an open engine-kwargs dict and an append under
# the optional reward.reward_kwargs dict.
GOOD_GRPO = [
    "algorithm.adv_estimator=grpo",
    "algorithm.use_kl_in_reward=False",
    "data.train_files=/data/gsm8k/train.parquet",
    "data.val_files=/data/gsm8k/test.parquet",
    "data.train_batch_size=1024",
    "data.max_prompt_length=512",
    "data.max_response_length=1024",
    "data.filter_overlong_prompts=True",
    "data.truncation=error",
    "actor_rollout_ref.model.path=Qwen/Qwen3-8B",
    "actor_rollout_ref.model.use_remove_padding=True",
    "actor_rollout_ref.model.enable_gradient_checkpointing=True",
    "actor_rollout_ref.actor.optim.lr=1e-6",
    "actor_rollout_ref.actor.ppo_mini_batch_size=256",
    "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=32",
    "actor_rollout_ref.actor.use_kl_loss=True",
    "actor_rollout_ref.actor.kl_loss_coef=0.001",
    "actor_rollout_ref.actor.kl_loss_type=low_var_kl",
    "actor_rollout_ref.actor.entropy_coeff=0",
    "actor_rollout_ref.actor.fsdp_config.param_offload=False",
    "actor_rollout_ref.actor.fsdp_config.optimizer_offload=False",
    "actor_rollout_ref.rollout.name=vllm",
    "actor_rollout_ref.rollout.tensor_model_parallel_size=2",
    "actor_rollout_ref.rollout.gpu_memory_utilization=0.6",
    "actor_rollout_ref.rollout.n=5",
    "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=32",
    "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=32",
    "actor_rollout_ref.ref.fsdp_config.param_offload=True",
    "++actor_rollout_ref.rollout.engine_kwargs.vllm.disable_custom_all_reduce=True",
    "+reward.reward_kwargs.overlong_buffer_cfg.enable=True",
    "+reward.reward_kwargs.overlong_buffer_cfg.len=512",
    "trainer.critic_warmup=0",
    "trainer.logger=[console,wandb]",
    "trainer.project_name=rlcat_tests",
    "trainer.experiment_name=qwen3_8b_grpo",
    "trainer.n_gpus_per_node=8",
    "trainer.nnodes=1",
    "trainer.save_freq=20",
    "trainer.test_freq=5",
    "trainer.total_epochs=15",
    "trainer.default_local_dir=/ckpt/${trainer.experiment_name}",
]

GRAD_OFFLOAD = "actor_rollout_ref.actor.megatron.grad_offload=True"


@pytest.mark.compose
class TestAgainstReleases:
    def test_known_good_list_has_no_rejections(self, verl_trees: dict[str, Path]) -> None:
        assert rejected_overrides("0.9.1", "ppo_trainer", GOOD_GRPO) == []
        flat = flatten(compose("0.9.1", "ppo_trainer", GOOD_GRPO), resolve=True)
        assert flat["actor_rollout_ref.rollout.n"] == 5
        assert flat["trainer.logger"] == ["console", "wandb"]
        assert flat["actor_rollout_ref.rollout.engine_kwargs.vllm.disable_custom_all_reduce"] is True
        assert flat["reward.reward_kwargs.overlong_buffer_cfg.len"] == 512
        assert flat["trainer.default_local_dir"] == "/ckpt/qwen3_8b_grpo"

    def test_grad_offload_rejected_by_0_9_1_only(self, verl_trees: dict[str, Path]) -> None:
        rejected = rejected_overrides("0.9.1", "ppo_megatron_trainer", ["trainer.nnodes=2", GRAD_OFFLOAD])
        assert [o for o, _ in rejected] == [GRAD_OFFLOAD]
        assert "Could not override 'actor_rollout_ref.actor.megatron.grad_offload'" in rejected[0][1]
        assert rejected_overrides("0.9.0", "ppo_megatron_trainer", ["trainer.nnodes=2", GRAD_OFFLOAD]) == []
        # the 0.9 way to select Megatron (a group override on ppo_trainer) behaves the same
        engine = ["model_engine=megatron", GRAD_OFFLOAD]
        assert [o for o, _ in rejected_overrides("0.9.1", "ppo_trainer", engine)] == [GRAD_OFFLOAD]
        assert rejected_overrides("0.9.0", "ppo_trainer", engine) == []

    def test_append_to_existing_key_is_rejected(self, verl_trees: dict[str, Path]) -> None:
        rejected = rejected_overrides("0.9.1", "ppo_trainer", ["+algorithm.filter_groups.enable=True"])
        assert len(rejected) == 1
        assert "An item is already at 'algorithm.filter_groups.enable'" in rejected[0][1]

    def test_open_engine_kwargs_need_a_prefix(self, verl_trees: dict[str, Path]) -> None:
        key = "actor_rollout_ref.rollout.engine_kwargs.sglang.attention_backend"
        assert rejected_overrides("0.9.1", "ppo_trainer", [f"++{key}=triton"]) == []
        assert rejected_overrides("0.9.1", "ppo_trainer", [f"+{key}=triton"]) == []
        assert [o for o, _ in rejected_overrides("0.9.1", "ppo_trainer", [f"{key}=triton"])] == [
            f"{key}=triton"
        ]

    def test_every_rejection_is_found_and_attributed(self, verl_trees: dict[str, Path]) -> None:
        overrides = [
            "a.b=1",  # unknown key without +
            "trainer.nnodes=2",
            "actor_rollout_ref.model.path=<path_to_model>",  # grammar error
            "+a.b=1",  # accepted: creates a.b ...
            "+a.b=2",  # ... so this append is rejected; its key also matches "a.b=1" above
            "trainer.nnodes=3",
            "model_engine=no_such_engine",  # missing group option
            "~trainer.no_such_key",
        ]
        rejected = rejected_overrides("0.9.1", "ppo_trainer", overrides)
        assert [o for o, _ in rejected] == [
            "a.b=1",
            "actor_rollout_ref.model.path=<path_to_model>",
            "+a.b=2",
            "model_engine=no_such_engine",
            "~trainer.no_such_key",
        ]
        messages = dict(rejected)
        assert messages["a.b=1"].startswith("ConfigCompositionException: Could not override 'a.b'")
        assert messages["actor_rollout_ref.model.path=<path_to_model>"].startswith("OverrideParseException")
        assert "model_engine/no_such_engine" in messages["model_engine=no_such_engine"]

    def test_duplicate_key_is_bisected(self, verl_trees: dict[str, Path]) -> None:
        # Two overrides of the same unknown key: the message cannot tell them apart.
        rejected = rejected_overrides("0.9.1", "ppo_trainer", ["a.b=1", "trainer.nnodes=2", "a.b=2"])
        assert [o for o, _ in rejected] == ["a.b=1", "a.b=2"]

    @pytest.mark.parametrize("config_name", ["fully_async_ppo_trainer", "fully_async_ppo_megatron_trainer"])
    def test_fully_async_composes_from_any_cwd(
        self, verl_trees: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config_name: str
    ) -> None:
        monkeypatch.chdir(tmp_path)  # the YAML's relative file:// search path would point nowhere
        for version in trees.VERL_VERSIONS:
            flat = flatten(compose(version, config_name, ["async_training.staleness_threshold=0.5"]))
            assert flat["async_training.staleness_threshold"] == 0.5
            assert "actor_rollout_ref.rollout.n" in flat  # inherited from ppo_trainer
        # a user search path that names verl's package is replaced by the tree, never imported
        cfg = compose("0.9.1", config_name, ["hydra.searchpath=[pkg://verl.trainer.config]"])
        assert "trainer.nnodes" in flatten(cfg)

    def test_compose_survives_leftover_global_hydra(self, verl_trees: dict[str, Path]) -> None:
        from hydra import initialize_config_dir
        from hydra.core.global_hydra import GlobalHydra

        initialize_config_dir(config_dir=str(trees.config_dir("0.9.1")), version_base=None)
        try:
            assert GlobalHydra.instance().is_initialized()
            assert "trainer.nnodes" in flatten(compose("0.9.1", "ppo_trainer"))
        finally:
            GlobalHydra.instance().clear()

    @pytest.mark.parametrize("version", trees.VERL_VERSIONS)
    def test_index_agrees_with_compose(
        self, verl_trees: dict[str, Path], load_index: IndexLoader, version: str
    ) -> None:
        doc = load_index(version, "ppo_trainer.json")
        keys: dict[str, list[Any]] = doc["keys"]
        sample = _scalar_sample(keys, 50)
        overrides = [f"{key}={_hydra_value(keys[key][0])}" for key in sample]
        # every open dict takes new keys with ++ (the prefix valid whether or not the key exists)
        overrides += [f"++{path}.rlcat_probe=1" for path in doc["open"]]
        assert rejected_overrides(version, "ppo_trainer", overrides) == []
        flat = flatten(compose(version, "ppo_trainer", overrides))
        assert {key: flat[key] for key in sample} == {key: keys[key][0] for key in sample}
        # keys the index lacks are rejected without a prefix
        absent = [f"{key}_rlcat_absent=1" for key in sample[::20]]
        assert [o for o, _ in rejected_overrides(version, "ppo_trainer", absent)] == absent


def _scalar_sample(keys: dict[str, list[Any]], count: int) -> list[str]:
    """Pick ``count`` evenly spread keys (sorted order) whose defaults are plain scalars."""
    candidates = [
        key
        for key in sorted(keys)
        if keys[key][1] in ("bool", "int", "float", "str", "null")
        and not (isinstance(keys[key][0], str) and "${" in keys[key][0])
    ]
    assert len(candidates) >= count
    return [candidates[i * len(candidates) // count] for i in range(count)]


def _hydra_value(value: Any) -> str:
    """Render a scalar default as a Hydra override value that parses back to the same value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    assert isinstance(value, str)
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


class TestFlatten:
    def test_leaves_raw_and_resolved(self) -> None:
        from omegaconf import OmegaConf

        cfg = OmegaConf.create(
            {
                "a": {"x": 1, "y": "${.x}", "empty": {}, "items": [1, "${a.x}"]},
                "b": {"bad": "${nowhere}", "none": None},
                "m": "???",
                "sub": "${a}",
            }
        )
        raw = flatten(cfg, resolve=False)
        assert raw == {
            "a.x": 1,
            "a.y": "${.x}",
            "a.empty": {},
            "a.items": [1, "${a.x}"],
            "b.bad": "${nowhere}",
            "b.none": None,
            "m": "???",
            "sub": "${a}",  # an interpolated node is a leaf, whatever it resolves to
        }
        resolved = flatten(cfg, resolve=True)
        assert set(resolved) == set(raw)
        assert resolved["a.y"] == 1
        assert resolved["a.items"] == [1, 1]
        assert resolved["b.bad"] == "${nowhere}"  # unresolvable: raw text kept
        assert resolved["m"] == "???"
        assert resolved["sub"] == {"x": 1, "y": 1, "empty": {}, "items": [1, 1]}


class TestTrees:
    def test_root_from_environment(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv(trees.TREES_ENV, str(tmp_path))
        assert trees.tree_dir("0.9.1") == tmp_path / "0.9.1"
        with pytest.raises(FileNotFoundError, match="rlcat dev fetch-verl"):
            trees.require_tree("0.9.1")

    def test_fetch_runs_pip_once(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv(trees.TREES_ENV, str(tmp_path))
        calls: list[list[str]] = []

        def fake_run(cmd: list[str], check: bool) -> subprocess.CompletedProcess[str]:
            assert check
            calls.append(cmd)
            target = Path(cmd[cmd.index("--target") + 1])
            (target / "verl" / "trainer" / "config").mkdir(parents=True)
            return subprocess.CompletedProcess(cmd, 0)

        monkeypatch.setattr(subprocess, "run", fake_run)
        assert trees.fetch(["0.9.1"]) == [tmp_path / "0.9.1"]
        assert trees.fetch(["0.9.1"]) == [tmp_path / "0.9.1"]  # idempotent: no second pip run
        assert len(calls) == 1
        cmd = calls[0]
        assert cmd[1:7] == ["-m", "pip", "install", "--no-deps", "--disable-pip-version-check", "-q"]
        assert cmd[-1] == "verl==0.9.1"
        assert trees.require_tree("0.9.1") == tmp_path / "0.9.1"
        assert [p.name for p in tmp_path.iterdir()] == ["0.9.1"]  # no staging folder left behind

"""The fields grown from upstream runs, composed with Hydra against each platform's real verl release.

Two test recipes extend the built-in ones and set the new fields together (LoRA, reward manager,
custom reward function and reward model, multi-turn rollout with tools, rollout correction, GSPO,
checkpoint contents, FP8 rollout, MoE router replay), and the one-step-off mode is compiled for FSDP
and Megatron: verl's config tree must accept every override, each with the value rlcat meant.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from whole_compose import compose_whole

from rlcat.catalog import Catalog
from rlcat.compile.assemble import Compiled, Request, compile_request
from rlcat.emit.formats import override_text, override_texts

from conftest import ENGINES, PLATFORMS

pytestmark = pytest.mark.compose

FSDP_RECIPE = """\
name: lora_reward_tools_fsdp
extends: gsm8k_qwen3_8b_fsdp
summary: LoRA GSPO with a custom reward, a reward model and tool calls (test recipe)
actor:
  optim: {lr: 3.0e-6}
  lora: {rank: 64, alpha: 32, target_modules: all-linear, layered_summon: true}
  use_fused_kernels: true
  fsdp: {reshard_after_forward: true, dtype: bfloat16}
reward:
  manager: naive
  custom_function: {path: /data/reward.py, name: compute_score}
  model: {path: /models/reward}
  workers: 4
rollout:
  gpu_memory_utilization: 0.6
  load_format: safetensors
  quantization: fp8
  free_cache_engine: true
  multi_turn:
    tool_config_path: /data/tools.yaml
    max_user_turns: 2
    max_assistant_turns: 3
    agent_loop: tool_agent
algo:
  policy_loss: gspo
  loss_agg_mode: seq-mean-token-mean
  rollout_correction: {importance_sampling: sequence, is_threshold: 2.0}
trainer:
  checkpoint: {dir: /ckpt/lora, save_contents: [model, optimizer, extra, hf_model], keep_actor: 2}
"""

MEGATRON_RECIPE = """\
name: lora_moe_megatron
extends: gsm8k_qwen3_8b_megatron
summary: Megatron LoRA with MoE router replay and checkpoint settings (test recipe)
variants: {mode: [one_step_off]}
parallelism:
  actor: {tp: 2, pp: 2, ep: 1, vpp: 2}
  ref: {tp: 2, pp: 2}
actor:
  optim: {lr: 1.0e-6}
  lora: {rank: 16, alpha: 32, target_modules: [linear_qkv, linear_proj, linear_fc1, linear_fc2]}
  megatron: {router_replay: R3, use_dist_checkpointing: false, dtype: bfloat16}
reward:
  custom_function: {path: /data/reward.py}
rollout: {gpu_memory_utilization: 0.6, routing_replay: true}
trainer:
  checkpoint: {save_contents: [model, optimizer, extra]}
"""

ONE_STEP_OFF = """\
name: {name}_one_step_off
extends: {name}
summary: the one-step-off mode (test recipe)
mode: one_step_off
resources: {{nodes: 1, gpus_per_node: 8, trainer_gpus: 4, rollout_gpus: 4}}
"""


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    root = tmp_path_factory.mktemp("user")
    recipes = root / "recipes"
    recipes.mkdir()
    (recipes / "lora_reward_tools_fsdp.yaml").write_text(FSDP_RECIPE)
    (recipes / "lora_moe_megatron.yaml").write_text(MEGATRON_RECIPE)
    for parent in ("gsm8k_qwen3_8b_fsdp", "gsm8k_qwen3_8b_megatron", "lora_moe_megatron"):
        (recipes / f"{parent}_one_step_off.yaml").write_text(ONE_STEP_OFF.format(name=parent))
    return Catalog.default([Path(root)])


def _with_home(value: Any) -> Any:
    """What OmegaConf resolves ${oc.env:HOME} to (a catalog path starting with `~`)."""
    if isinstance(value, str):
        return value.replace("${oc.env:HOME}", os.environ["HOME"])
    return [_with_home(v) for v in value] if isinstance(value, list) else value


def composes_as_planned(compiled: Compiled) -> dict[str, Any]:
    version = compiled.profile.verl_index
    overrides = override_texts(compiled)
    composed = compose_whole(version, compiled.plan.config_name, overrides)
    for o in compiled.overrides:
        want = _with_home(o.setting.value)
        assert composed.get(o.key, "<missing>") == want, f"{override_text(o)} on verl {version}"
    return composed


FIELD_CASES = [
    (r, p, e) for r in ("lora_reward_tools_fsdp", "lora_moe_megatron") for p in PLATFORMS for e in ENGINES
]


@pytest.mark.parametrize(
    ("recipe", "platform", "engine"), FIELD_CASES, ids=[f"{r}-{p}-{e}" for r, p, e in FIELD_CASES]
)
def test_new_fields_compose(recipe: str, platform: str, engine: str, catalog: Catalog) -> None:
    compiled = compile_request(Request(recipe, platform, engine=engine, allow_known_broken=True), catalog)
    composed = composes_as_planned(compiled)
    if recipe == "lora_reward_tools_fsdp":
        assert composed["actor_rollout_ref.model.lora_rank"] == 64
        assert composed["reward.custom_reward_function.path"] == "/data/reward.py"
        assert composed["reward.reward_model.enable"] is True
        assert composed["actor_rollout_ref.rollout.multi_turn.enable"] is True
        assert composed["actor_rollout_ref.actor.policy_loss.loss_mode"] == "gspo"
        assert composed["algorithm.rollout_correction.rollout_is"] == "sequence"
    else:
        assert composed["actor_rollout_ref.model.lora.rank"] == 16
        assert composed["actor_rollout_ref.actor.megatron.router_replay.mode"] == "R3"


MODE_CASES = [
    (r, p)
    for r in (
        "gsm8k_qwen3_8b_fsdp_one_step_off",
        "gsm8k_qwen3_8b_megatron_one_step_off",
        "lora_moe_megatron_one_step_off",
    )
    for p in PLATFORMS
]


@pytest.mark.parametrize(("recipe", "platform"), MODE_CASES, ids=[f"{r}-{p}" for r, p in MODE_CASES])
def test_one_step_off_composes(recipe: str, platform: str, catalog: Catalog) -> None:
    compiled = compile_request(Request(recipe, platform, allow_known_broken=True), catalog)
    assert compiled.plan.config_name.startswith("one_step_off_ppo_")
    composed = composes_as_planned(compiled)
    # what the mode's config brings, beside what rlcat set
    assert composed["actor_rollout_ref.rollout.calculate_log_probs"] is True
    assert composed["rollout.n_gpus_per_node"] == 4 and composed["trainer.n_gpus_per_node"] == 4

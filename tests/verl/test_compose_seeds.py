"""Every seed recipe × engine × platform, composed with Hydra against the real verl release of the platform.

Two things are proved here: verl's config tree accepts every compiled override (zero rejections),
and the composed config holds the values the recipe asked for — batch sizes, parallelism, the GPU
split and the algorithm's keys, each computed from the typed recipe, at least 20 per recipe.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from whole_compose import compose_whole

from rlcat.compile.assemble import Compiled, Request, compile_request
from rlcat.emit.formats import override_text, override_texts
from rlcat.model.recipe import Recipe

from conftest import ENGINES, PLATFORMS, SEED_RECIPES, UPSTREAM_RECIPES

pytestmark = pytest.mark.compose

CASES = [(r, p, e) for r in SEED_RECIPES for p in PLATFORMS for e in ENGINES]


def expected_values(recipe: Recipe, compiled: Compiled) -> dict[str, Any]:
    """What the composed verl config must hold, derived from the recipe's fields (not from the lowering)."""
    arf = "actor_rollout_ref"
    b, res, par, algo = recipe.batch, recipe.resources, recipe.parallelism, recipe.algorithm_settings
    exp: dict[str, Any] = {
        f"{arf}.rollout.name": recipe.engine,
        f"{arf}.rollout.n": b.responses_per_prompt,
        f"{arf}.actor.ppo_mini_batch_size": b.mini_batch_size,
        "data.max_prompt_length": b.max_prompt_length,
        "data.max_response_length": b.max_response_length,
        f"{arf}.actor.use_dynamic_bsz": b.dynamic_batch_size,
        f"{arf}.ref.log_prob_use_dynamic_bsz": b.dynamic_batch_size,
        f"{arf}.rollout.log_prob_use_dynamic_bsz": b.dynamic_batch_size,
        f"{arf}.actor.optim.lr": recipe.actor.optim.lr,
        "algorithm.adv_estimator": {"grpo": "grpo", "dapo": "grpo", "ppo": "gae"}[recipe.algorithm],
        "trainer.project_name": recipe.trainer.project,
        "trainer.logger": recipe.trainer.logger,
    }
    if b.micro_batch_size_per_gpu is not None:
        exp[f"{arf}.actor.ppo_micro_batch_size_per_gpu"] = b.micro_batch_size_per_gpu
    if b.log_prob_micro_batch_size_per_gpu is not None:
        exp[f"{arf}.ref.log_prob_micro_batch_size_per_gpu"] = b.log_prob_micro_batch_size_per_gpu
        exp[f"{arf}.rollout.log_prob_micro_batch_size_per_gpu"] = b.log_prob_micro_batch_size_per_gpu
    if b.max_token_len_per_gpu is not None:
        exp[f"{arf}.actor.ppo_max_token_len_per_gpu"] = b.max_token_len_per_gpu
    if b.log_prob_max_token_len_per_gpu is not None:
        exp[f"{arf}.ref.log_prob_max_token_len_per_gpu"] = b.log_prob_max_token_len_per_gpu
        exp[f"{arf}.rollout.log_prob_max_token_len_per_gpu"] = b.log_prob_max_token_len_per_gpu
    if par.rollout.tp is not None:
        exp[f"{arf}.rollout.tensor_model_parallel_size"] = par.rollout.tp
    if recipe.mode == "colocate":
        exp["data.train_batch_size"] = b.train_batch_size
        exp["trainer.nnodes"] = res.nodes
        exp["trainer.n_gpus_per_node"] = res.gpus_per_node
        exp[f"{arf}.hybrid_engine"] = True
    else:
        assert res.trainer_gpus and res.rollout_gpus
        exp["data.train_batch_size"] = 0
        exp["data.gen_batch_size"] = 1
        exp[f"{arf}.hybrid_engine"] = False
        exp[f"{arf}.rollout.calculate_log_probs"] = True
        exp[f"{arf}.actor.use_rollout_log_probs"] = True
        exp["trainer.n_gpus_per_node"] = min(res.trainer_gpus, res.gpus_per_node)
        exp["rollout.n_gpus_per_node"] = min(res.rollout_gpus, res.gpus_per_node)
        exp["trainer.nnodes"] = max(1, res.trainer_gpus // res.gpus_per_node)
        exp["rollout.nnodes"] = max(1, res.rollout_gpus // res.gpus_per_node)
        a = recipe.async_training
        exp["async_training.staleness_threshold"] = a.staleness_threshold
        exp["async_training.trigger_parameter_sync_step"] = a.trigger_parameter_sync_step
        exp["async_training.require_batches"] = a.require_batches
        exp["async_training.partial_rollout"] = a.partial_rollout
    if recipe.backend == "megatron":
        names = {
            "tp": "tensor_model_parallel_size",
            "pp": "pipeline_model_parallel_size",
            "cp": "context_parallel_size",
            "ep": "expert_model_parallel_size",
            "etp": "expert_tensor_parallel_size",
        }
        for role in ("actor", "ref"):
            for short, name in names.items():
                value = getattr(getattr(par, role), short)
                if value is not None:
                    exp[f"{arf}.{role}.megatron.{name}"] = value
        if recipe.actor.offload.param is not None:
            exp[f"{arf}.actor.megatron.param_offload"] = recipe.actor.offload.param
    else:
        backend_strategy = "fsdp2" if recipe.backend == "fsdp2" else "fsdp"
        exp[f"{arf}.actor.strategy"] = par.actor.strategy or backend_strategy
        if recipe.actor.offload.param is not None:
            exp[f"{arf}.actor.fsdp_config.param_offload"] = recipe.actor.offload.param
        if par.actor.sp is not None:
            exp[f"{arf}.actor.ulysses_sequence_parallel_size"] = par.actor.sp
    if algo.kl_loss is not None:
        exp[f"{arf}.actor.use_kl_loss"] = algo.kl_loss.enabled
        exp[f"{arf}.actor.kl_loss_coef"] = algo.kl_loss.coef
        exp[f"{arf}.actor.kl_loss_type"] = algo.kl_loss.type
    if algo.clip_ratio.high is not None:
        exp[f"{arf}.actor.clip_ratio_high"] = algo.clip_ratio.high
    if recipe.algorithm == "dapo":
        exp[f"{arf}.actor.loss_agg_mode"] = algo.loss_agg_mode or "token-mean"
        if algo.overlong_buffer is not None:
            exp["reward.reward_manager.name"] = "dapo"
            exp["reward.reward_kwargs.overlong_buffer_cfg.len"] = algo.overlong_buffer.length
            exp["reward.reward_kwargs.max_resp_len"] = b.max_response_length
    if recipe.critic is not None:
        exp["critic.optim.lr"] = recipe.critic.optim.lr
        exp["critic.model.path"] = compiled_value(compiled, f"{arf}.model.path")
    return exp


def _with_home(value: Any) -> Any:
    """What OmegaConf resolves ${oc.env:HOME} to, for comparing resolved paths."""
    if isinstance(value, str):
        return value.replace("${oc.env:HOME}", os.environ["HOME"])
    if isinstance(value, list):
        return [_with_home(v) for v in value]
    return value


def compiled_value(compiled: Compiled, key: str) -> Any:
    return next(o.setting.value for o in compiled.overrides if o.key == key)


@pytest.mark.parametrize(("recipe", "platform", "engine"), CASES, ids=[f"{r}-{p}-{e}" for r, p, e in CASES])
def test_seed_composes_with_real_verl(recipe: str, platform: str, engine: str) -> None:
    # a known-broken cell (SGLang on the 7.0.2 image) still has a plan that must compose
    composes_as_recipe(compile_request(Request(recipe, platform, engine=engine, allow_known_broken=True)))


# One upstream example per entrypoint and backend family: recipes/upstream/ is tested lightly in
# tests/unit/test_upstream_recipes.py (composing all of it everywhere would multiply this file's time).
UPSTREAM_CASES = [
    ("grpo_qwen3_8b_gsm8k_math_fsdp_1x8", "cuda"),
    ("ppo_qwen3_8b_gsm8k_math_megatron_1x8", "rocm"),
    ("dapo_qwen2_5_math_7b_dapo_math_fsdp2_16_16_async", "cuda"),
    ("gspo_qwen3_5_35b_a3b_custom_megatron_sglang_8_8_async", "cuda"),
]


@pytest.mark.parametrize(("recipe", "platform"), UPSTREAM_CASES)
def test_upstream_example_composes_with_real_verl(recipe: str, platform: str) -> None:
    assert recipe in UPSTREAM_RECIPES
    composes_as_recipe(compile_request(Request(recipe, platform)))


def composes_as_recipe(compiled: Compiled) -> None:
    """Hydra accepts every override of the plan and the composed config holds what the recipe asked."""
    version = compiled.profile.verl_index
    overrides = override_texts(compiled)

    composed = compose_whole(version, compiled.plan.config_name, overrides)
    expected = expected_values(compiled.recipe, compiled)
    assert len(expected) >= 20
    wrong = {
        k: (v, composed.get(k, "<missing>")) for k, v in expected.items() if composed.get(k, "<missing>") != v
    }
    assert wrong == {}, "composed value differs from the recipe: {key: (expected, composed)}"

    # and every emitted override arrived with the value rlcat meant
    for o in compiled.overrides:
        got = composed.get(o.key, "<missing>")
        want = o.setting.value
        assert got == _with_home(want), f"{override_text(o)}: composed {got!r}"

"""The fields grown from what upstream runs set: each lowers to the key every release reads it under.

Every case compiles a built-in recipe with the field set (`--set`) on one platform of each indexed
verl release (cuda: 0.9.1, rocm: 0.9.0, rocm-7.0.2: 0.7.1) and reads the emitted overrides, as verl
receives them. Hydra's judgement of the same plans is in tests/verl/test_compose_fields.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rlcat.compile.assemble import Compiled, Request, compile_request
from rlcat.diagnostics import RlcatError

RELEASES = {"cuda": "0.9.1", "rocm": "0.9.0", "rocm-7.0.2": "0.7.1"}
ARF = "actor_rollout_ref"
FSDP, MEGATRON, PPO, DAPO = (
    "gsm8k_qwen3_8b_fsdp",
    "gsm8k_qwen3_8b_megatron",
    "ppo_qwen2_7b_gsm8k",
    "dapo_math_fsdp2_4_4",
)
SPLIT = "resources={nodes: 1, gpus_per_node: 8, trainer_gpus: 4, rollout_gpus: 4}"

# (case id, recipe, --set assignments, the overrides expected on every release)
CASES: list[tuple[str, str, list[str], dict[str, Any]]] = [
    (
        "lora_fsdp",
        FSDP,
        [
            "actor.lora={rank: 64, alpha: 32, target_modules: all-linear, adapter_path: /ckpt/adapter, "
            "layered_summon: true}"
        ],
        {
            f"{ARF}.model.lora_rank": 64,
            f"{ARF}.model.lora_alpha": 32,
            f"{ARF}.model.target_modules": "all-linear",
            f"{ARF}.model.lora_adapter_path": "/ckpt/adapter",
            f"{ARF}.rollout.layered_summon": True,
        },
    ),
    (
        "lora_megatron",
        MEGATRON,
        ["actor.lora={rank: 16, alpha: 32, target_modules: [linear_qkv, linear_proj]}"],
        {
            f"{ARF}.model.lora.rank": 16,
            f"{ARF}.model.lora.alpha": 32,
            f"{ARF}.model.lora.target_modules": ["linear_qkv", "linear_proj"],
        },
    ),
    (
        "reward",
        FSDP,
        ["reward={manager: prime, custom_function: {path: /data/reward.py, name: score}, workers: 4}"],
        {
            "reward.reward_manager.name": "prime",
            "reward.custom_reward_function.path": "/data/reward.py",
            "reward.custom_reward_function.name": "score",
            "reward.num_workers": 4,
        },
    ),
    (
        "reward_model",
        FSDP,
        ["reward={model: {path: /models/rm}}"],
        {"reward.reward_model.enable": True, "reward.reward_model.model_path": "/models/rm"},
    ),
    (
        "multi_turn",
        FSDP,
        [
            "rollout.multi_turn={tool_config_path: /tools.yaml, max_user_turns: 3, max_assistant_turns: 4, "
            "format: hermes, agent_loop: tool_agent, agent_workers: 4}"
        ],
        {
            f"{ARF}.rollout.multi_turn.enable": True,
            f"{ARF}.rollout.multi_turn.tool_config_path": "/tools.yaml",
            f"{ARF}.rollout.multi_turn.max_user_turns": 3,
            f"{ARF}.rollout.multi_turn.max_assistant_turns": 4,
            f"{ARF}.rollout.multi_turn.format": "hermes",
            f"{ARF}.rollout.agent.default_agent_loop": "tool_agent",
            f"{ARF}.rollout.agent.num_workers": 4,
        },
    ),
    (
        "rollout_correction",
        FSDP,
        [
            "algo.rollout_correction={importance_sampling: token, is_threshold: 2.0, "
            "rejection_sampling: token_k1}"
        ],
        {
            "algorithm.rollout_correction.rollout_is": "token",
            "algorithm.rollout_correction.rollout_is_threshold": 2.0,
            "algorithm.rollout_correction.rollout_rs": "token_k1",
            f"{ARF}.rollout.calculate_log_probs": True,
        },
    ),
    (
        "gspo",
        FSDP,
        ["algo.policy_loss=gspo", "algo.loss_agg_mode=seq-mean-token-mean"],
        {f"{ARF}.actor.policy_loss.loss_mode": "gspo", f"{ARF}.actor.loss_agg_mode": "seq-mean-token-mean"},
    ),
    ("gae", PPO, ["algo.gamma=0.99", "algo.lam=0.95"], {"algorithm.gamma": 0.99, "algorithm.lam": 0.95}),
    (
        "moe_megatron",
        MEGATRON,
        [
            "parallelism.actor={tp: 2, pp: 2, ep: 2, vpp: 2}",
            "parallelism.rollout={tp: 2, ep: 2}",
            "actor.megatron={router_replay: R3, use_dist_checkpointing: true}",
            "rollout.routing_replay=true",
        ],
        {
            f"{ARF}.actor.megatron.expert_model_parallel_size": 2,
            f"{ARF}.actor.megatron.virtual_pipeline_model_parallel_size": 2,
            f"{ARF}.rollout.expert_parallel_size": 2,
            f"{ARF}.actor.megatron.router_replay.mode": "R3",
            f"{ARF}.actor.megatron.use_dist_checkpointing": True,
            f"{ARF}.ref.megatron.use_dist_checkpointing": True,
            f"{ARF}.rollout.enable_rollout_routing_replay": True,
        },
    ),
    (
        "low_precision_fsdp",
        FSDP,
        [
            "actor.fsdp={dtype: float16, model_dtype: bf16}",
            "rollout.quantization=fp8",
            "rollout.dtype=float16",
        ],
        {
            f"{ARF}.actor.fsdp_config.dtype": "float16",
            f"{ARF}.ref.fsdp_config.dtype": "float16",
            f"{ARF}.actor.fsdp_config.model_dtype": "bf16",
            f"{ARF}.rollout.quantization": "fp8",
            f"{ARF}.rollout.dtype": "float16",
        },
    ),
    (
        "low_precision_megatron",
        MEGATRON,
        ["actor.megatron.dtype=float16"],
        {f"{ARF}.actor.megatron.dtype": "float16"},
    ),
    (
        "checkpoint",
        PPO,
        [
            "trainer.checkpoint={dir: /ckpt/run, save_contents: [model, hf_model], keep_actor: 2, "
            "keep_critic: 1, resume_from: /ckpt/run/global_step_10}",
            "trainer.save_freq=50",
        ],
        {
            "trainer.default_local_dir": "/ckpt/run",
            f"{ARF}.actor.checkpoint.save_contents": ["model", "hf_model"],
            "critic.checkpoint.save_contents": ["model", "hf_model"],
            "trainer.max_actor_ckpt_to_keep": 2,
            "trainer.max_critic_ckpt_to_keep": 1,
            "trainer.resume_from_path": "/ckpt/run/global_step_10",
            "trainer.save_freq": 50,
        },
    ),
    (
        "actor_and_rollout_switches",
        FSDP,
        [
            "actor.use_fused_kernels=true",
            "actor.use_torch_compile=false",
            "actor.entropy_from_logits_with_chunking=true",
            "actor.fsdp={reshard_after_forward: false, forward_prefetch: true, offload_policy: true}",
            "rollout.free_cache_engine=false",
            "rollout.enable_prefix_caching=true",
            "rollout.max_num_seqs=512",
            "rollout.load_format=safetensors",
            "rollout.weight_sync_bucket_mb=4096",
        ],
        {
            f"{ARF}.model.use_fused_kernels": True,
            f"{ARF}.actor.use_torch_compile": False,
            f"{ARF}.ref.use_torch_compile": False,
            f"{ARF}.actor.entropy_from_logits_with_chunking": True,
            f"{ARF}.ref.entropy_from_logits_with_chunking": True,
            f"{ARF}.actor.fsdp_config.reshard_after_forward": False,
            f"{ARF}.ref.fsdp_config.forward_prefetch": True,
            f"{ARF}.actor.fsdp_config.offload_policy": True,
            f"{ARF}.rollout.free_cache_engine": False,
            f"{ARF}.rollout.enable_prefix_caching": True,
            f"{ARF}.rollout.max_num_seqs": 512,
            f"{ARF}.rollout.load_format": "safetensors",
            f"{ARF}.rollout.checkpoint_engine.update_weights_bucket_megabytes": 4096,
        },
    ),
]
PARAMS = [(c, r, s, e, p) for c, r, s, e in CASES for p in RELEASES]


def compiled(recipe: str, platform: str, sets: list[str], **kw: Any) -> Compiled:
    return compile_request(Request(recipe, platform, sets=sets, allow_known_broken=True, **kw))


def emitted(c: Compiled) -> dict[str, Any]:
    return {o.key: o.setting.value for o in c.overrides}


@pytest.mark.parametrize(
    ("case", "recipe", "sets", "expected", "platform"),
    PARAMS,
    ids=[f"{c}-{RELEASES[p]}" for c, _, _, _, p in PARAMS],
)
def test_field_lowers_on_every_release(
    case: str, recipe: str, sets: list[str], expected: dict[str, Any], platform: str
) -> None:
    c = compiled(recipe, platform, sets)
    got = emitted(c)
    assert {k: got.get(k, "<missing>") for k in expected} == expected
    # each value records the recipe field that set it (explain, the field reference, rlcat import)
    for key in expected:
        history = c.plan.overrides[key]
        assert history.final.origin.field is not None, key


def test_reward_fields_keep_the_legacy_names_as_alternatives() -> None:
    c = compiled(
        FSDP, "rocm-7.0.2", ["reward={manager: prime, custom_function: {path: /r.py}, model: {path: /rm}}"]
    )
    alternatives = {s.key: s.alternatives for o in c.overrides for s in [o.setting]}
    assert alternatives["reward.reward_manager.name"] == ("reward_model.reward_manager",)
    assert alternatives["reward.custom_reward_function.path"] == ("custom_reward_function.path",)
    assert alternatives["reward.reward_model.model_path"] == ("reward_model.model.path",)


def one_step_off(tmp_path: Path, parent: str, split: bool = True) -> str:
    """A child of a built-in recipe in the one-step-off mode (a recipe file: --set cannot change the mode)."""
    (tmp_path / "recipes").mkdir(exist_ok=True)
    resources = "resources: {nodes: 1, gpus_per_node: 8, trainer_gpus: 4, rollout_gpus: 4}\n" if split else ""
    path = tmp_path / "recipes" / f"{parent}_osp.yaml"
    path.write_text(
        f"name: {parent}_osp\nextends: {parent}\nsummary: one step off\nmode: one_step_off\n{resources}"
    )
    return str(path)


@pytest.mark.parametrize("platform", list(RELEASES))
@pytest.mark.parametrize(
    ("recipe", "config"),
    [(FSDP, "one_step_off_ppo_trainer"), (MEGATRON, "one_step_off_ppo_megatron_trainer")],
)
def test_one_step_off_mode(recipe: str, config: str, platform: str, tmp_path: Path) -> None:
    c = compiled(one_step_off(tmp_path, recipe), platform, [])
    assert c.plan.entrypoint == "verl.experimental.one_step_off_policy.main_ppo"
    assert c.plan.config_name == config and c.plan.group_choices == {}
    got = emitted(c)
    assert got["data.train_batch_size"] == 1024
    assert got[f"{ARF}.hybrid_engine"] is False and got[f"{ARF}.rollout.mode"] == "async"
    assert (got["trainer.n_gpus_per_node"], got["rollout.n_gpus_per_node"]) == (4, 4)
    assert "async_training.staleness_threshold" not in got and "data.gen_batch_size" not in got


def test_one_step_off_needs_the_gpu_split(tmp_path: Path) -> None:
    with pytest.raises(RlcatError) as err:
        compiled(one_step_off(tmp_path, FSDP, split=False), "cuda", [])
    assert any(d.code == "RLC104" and "one_step_off" in d.message for d in err.value.diagnostics)


def test_dapo_overlong_buffer_needs_the_dapo_manager() -> None:
    with pytest.raises(RlcatError) as err:
        compiled(DAPO, "cuda", ["reward.manager=naive"])
    assert any(d.code == "RLC301" and d.key == "reward.manager" for d in err.value.diagnostics)
    assert emitted(compiled(DAPO, "cuda", ["reward.manager=dapo"]))["reward.reward_manager.name"] == "dapo"


@pytest.mark.parametrize(
    ("recipe", "assignment", "field"),
    [
        (MEGATRON, "actor.fsdp.dtype=float16", "actor.fsdp.dtype"),
        (FSDP, "actor.megatron.router_replay=R2", "actor.megatron.router_replay"),
    ],
)
def test_the_other_backends_setting_is_refused(recipe: str, assignment: str, field: str) -> None:
    with pytest.raises(RlcatError) as err:
        compiled(recipe, "cuda", [assignment])
    assert any(d.code == "RLC301" and d.key == field for d in err.value.diagnostics)


def test_unset_fields_set_nothing() -> None:
    """The new fields default to verl's own values: a recipe that sets none emits none of their keys."""
    got = emitted(compiled(FSDP, "cuda", []))
    for key in (
        f"{ARF}.model.lora_rank",
        "reward.reward_manager.name",
        f"{ARF}.rollout.multi_turn.enable",
        "algorithm.rollout_correction.rollout_is",
        f"{ARF}.actor.policy_loss.loss_mode",
        "trainer.default_local_dir",
        f"{ARF}.rollout.quantization",
    ):
        assert key not in got

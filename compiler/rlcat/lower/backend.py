"""Backend axis: strategy, parallelism and offload keys of FSDP, FSDP2 and Megatron."""

from __future__ import annotations

from rlcat.lower.common import flatten, launch_path, split_prefix
from rlcat.lower.context import Lowering, axis
from rlcat.model.plan import Origin
from rlcat.verl import index as verl_index
from rlcat.verl.names import ARF

MEGATRON_PARALLEL = {
    "tp": "tensor_model_parallel_size",
    "pp": "pipeline_model_parallel_size",
    "vpp": "virtual_pipeline_model_parallel_size",
    "cp": "context_parallel_size",
    "ep": "expert_model_parallel_size",
    "etp": "expert_tensor_parallel_size",
}
# Megatron-Core's optimizer CPU offload: the four switches upstream scripts set together
OPTIMIZER_CPU_OFFLOAD = {
    "optimizer_offload_fraction": 1,
    "overlap_cpu_optimizer_d2h_h2d": True,
    "use_precision_aware_optimizer": True,
    "optimizer_cpu_offload": True,
}


def lower_backend(lo: Lowering) -> None:
    if lo.recipe.backend == "megatron":
        _megatron(lo)
    else:
        _fsdp(lo)
    _lora(lo)


def _lora(lo: Lowering) -> None:
    """LoRA: verl's FSDP engine reads model.lora_rank, lora_alpha, target_modules and
    lora_adapter_path; its Megatron engine model.lora.* (verl/workers/config/model.py:122-134 in 0.9.1,
    "TODO: unify fsdp and megatron lora config"). Either way the trainer keeps the reference inside
    the actor, without the adapter (verl/trainer/ppo/ray_trainer.py:358)."""
    lora = lo.recipe.actor.lora
    if lora is None:
        return
    model = f"{ARF}.model"
    names = (
        {"rank": "lora.rank", "alpha": "lora.alpha", "target_modules": "lora.target_modules"}
        if lo.recipe.backend == "megatron"
        else {"rank": "lora_rank", "alpha": "lora_alpha", "target_modules": "target_modules"}
    )
    for field, key in names.items():
        value = getattr(lora, field)
        lo.set_if(f"{model}.{key}", list(value) if isinstance(value, list) else value, f"actor.lora.{field}")
    if lora.adapter_path is not None:
        key = "lora.adapter_path" if lo.recipe.backend == "megatron" else "lora_adapter_path"
        lo.set(f"{model}.{key}", launch_path(lora.adapter_path), "actor.lora.adapter_path")
    lo.set_if(f"{ARF}.rollout.layered_summon", lora.layered_summon, "actor.lora.layered_summon")


def _roles(lo: Lowering) -> list[str]:
    roles = ["actor", "ref"]
    if lo.recipe.algorithm == "ppo":
        roles.append("critic")
    return roles


def _fsdp(lo: Lowering) -> None:
    r = lo.recipe
    for role in _roles(lo):
        par = getattr(r.parallelism, role)
        for short in MEGATRON_PARALLEL:
            if getattr(par, short) is not None:
                lo.error(
                    "RLC301",
                    f"parallelism.{role}.{short} is a Megatron setting; backend {r.backend} "
                    "shards with FSDP (use sp for sequence parallelism)",
                    f"parallelism.{role}.{short}",
                )
    _fsdp_strategies(lo)
    actor = r.actor
    _refuse_set(lo, "actor.megatron", ("use_dist_checkpointing", "router_replay"), "a Megatron setting")
    lo.set_if(f"{ARF}.actor.fsdp_config.param_offload", actor.offload.param, "actor.offload.param")
    lo.set_if(
        f"{ARF}.actor.fsdp_config.optimizer_offload", actor.offload.optimizer, "actor.offload.optimizer"
    )
    for field in ("grad", "optimizer_cpu"):
        if lo.resolved.source.origin(("actor", "offload", field)) is not None and getattr(
            actor.offload, field
        ):
            lo.error("RLC301", f"actor.offload.{field} is a Megatron setting", f"actor.offload.{field}")
    lo.set_if(f"{ARF}.ref.fsdp_config.param_offload", actor.ref_param_offload, "actor.ref_param_offload")
    lo.set_if(f"{ARF}.actor.grad_clip", actor.optim.grad_clip, "actor.optim.grad_clip")
    par = r.parallelism
    lo.set_if(f"{ARF}.actor.ulysses_sequence_parallel_size", par.actor.sp, "parallelism.actor.sp")
    lo.set_if(f"{ARF}.ref.ulysses_sequence_parallel_size", par.ref.sp, "parallelism.ref.sp")
    lo.set_if(f"{ARF}.actor.fsdp_config.fsdp_size", par.actor.fsdp_size, "parallelism.actor.fsdp_size")
    for role in ("actor", "ref"):
        for name in ("dtype", "model_dtype", "reshard_after_forward", "forward_prefetch", "offload_policy"):
            lo.set_if(f"{ARF}.{role}.fsdp_config.{name}", getattr(actor.fsdp, name), f"actor.fsdp.{name}")
    if r.critic is not None:
        lo.set_if("critic.ulysses_sequence_parallel_size", par.critic.sp, "parallelism.critic.sp")
        for name in ("param", "optimizer"):
            lo.set_if(
                f"critic.fsdp.{name}_offload",
                getattr(r.critic.offload, name),
                f"critic.offload.{name}",
                alternatives=(f"critic.model.fsdp_config.{name}_offload",),
            )
        lo.set_if("critic.grad_clip", r.critic.optim.grad_clip, "critic.optim.grad_clip")


def _refuse_set(lo: Lowering, section: str, names: tuple[str, ...], what: str) -> None:
    """A field of the other backend that the recipe sets: an error, not a setting silently dropped."""
    for name in names:
        if lo.resolved.source.origin((*section.split("."), name)) is not None:
            lo.error(
                "RLC301",
                f"{section}.{name} is {what}; backend {lo.recipe.backend} does not read it",
                f"{section}.{name}",
            )


def _fsdp_strategies(lo: Lowering) -> None:
    """FSDP or FSDP2 per role: the backend's, unless `parallelism.<role>.strategy` says otherwise.

    verl's defaults are FSDP for the actor and critic, and the actor's for the reference
    (ref.yaml: `strategy: ${actor_rollout_ref.actor.strategy}`), so a reference that differs from
    the actor is written out. verl 0.9 syncs each role's engine to its `strategy`
    (verl/workers/config/actor.py:325, critic.py:219), so there the engine's `fsdp_config.strategy`
    is left at verl's default: writing it would change the composed config and not the run. Before
    0.9 the engine workers read `fsdp_config.strategy` itself (0.7.1
    verl/workers/engine/fsdp/transformer_impl.py:332), so both are written."""
    r = lo.recipe
    engine_too = _legacy_workers(lo)
    chosen = {role: _strategy(lo, role) for role in ("actor", "ref", "critic")}
    actor, ref = chosen["actor"], chosen["ref"]
    if r.algorithm != "ppo" and r.parallelism.critic.strategy is not None:
        lo.error(
            "RLC301",
            f"parallelism.critic.strategy: algorithm {r.algorithm} trains no critic",
            "parallelism.critic.strategy",
        )
    if actor[0] == "fsdp2":
        lo.set(f"{ARF}.actor.strategy", "fsdp2", origin=actor[1])
        if engine_too:
            lo.set(f"{ARF}.actor.fsdp_config.strategy", "fsdp2", origin=actor[1])
    if ref[0] != actor[0]:
        lo.set(f"{ARF}.ref.strategy", ref[0], origin=ref[1])
        engine_workers = any(
            split_prefix(key)[1] == "trainer.use_legacy_worker_impl" and value == "disable"
            for key, value in r.overrides.items()
        )
        if engine_too and not engine_workers:
            lo.error(
                "RLC301",
                f"the reference would use {ref[0]} and the actor {actor[0]}: verl "
                f"{lo.target.profile.verl_version} builds the reference in the actor's legacy FSDP "
                "worker, with the actor's strategy (verl 0.7.1 verl/workers/fsdp_workers.py:600)",
                "parallelism.ref.strategy" if r.parallelism.ref.strategy else "parallelism.actor.strategy",
                hint="give the reference the actor's strategy, or switch to verl's engine workers: "
                "overrides: {trainer.use_legacy_worker_impl: disable}",
            )
    if ref[0] == "fsdp2" and engine_too:
        lo.set(f"{ARF}.ref.fsdp_config.strategy", "fsdp2", origin=ref[1])
    critic = chosen["critic"]
    if critic[0] == "fsdp2":
        lo.set("critic.strategy", "fsdp2", origin=critic[1])


def _strategy(lo: Lowering, role: str) -> tuple[str, Origin]:
    """A role's FSDP implementation and what chose it."""
    own = getattr(lo.recipe.parallelism, role).strategy
    if own is not None:
        return own, lo.origin(f"parallelism.{role}.strategy")
    backend = lo.recipe.backend
    return backend, axis("backend", backend, f"select PyTorch {backend.upper()}")


def _legacy_workers(lo: Lowering) -> bool:
    """Does the target release run its legacy FSDP workers by default? (Only releases before 0.9
    have `trainer.use_legacy_worker_impl`; 0.9 removed those workers.)"""
    return verl_index.load_index(lo.target.profile.verl_index, "ppo_trainer").has(
        "trainer.use_legacy_worker_impl"
    )


def _megatron(lo: Lowering) -> None:
    r = lo.recipe
    for role in ("actor", "ref", "critic"):
        if getattr(r.parallelism, role).strategy is not None:
            lo.error(
                "RLC301",
                f"parallelism.{role}.strategy chooses between FSDP and FSDP2; backend megatron "
                "trains every role with Megatron",
                f"parallelism.{role}.strategy",
                hint="remove it, or compile the recipe with an FSDP backend (--backend fsdp or fsdp2)",
            )
    for role in _roles(lo):
        par = getattr(r.parallelism, role)
        prefix = "critic.megatron" if role == "critic" else f"{ARF}.{role}.megatron"
        for short, name in MEGATRON_PARALLEL.items():
            lo.set_if(f"{prefix}.{name}", getattr(par, short), f"parallelism.{role}.{short}")
        for short in ("sp", "fsdp_size"):
            if getattr(par, short) is not None:
                lo.error(
                    "RLC301",
                    f"parallelism.{role}.{short} is an FSDP setting; Megatron uses tp/pp/cp/ep",
                    f"parallelism.{role}.{short}",
                )
    actor = r.actor
    _refuse_set(lo, "actor.fsdp", tuple(type(actor.fsdp).model_fields), "an FSDP setting")
    meg = f"{ARF}.actor.megatron"
    lo.set_if(f"{meg}.param_offload", actor.offload.param, "actor.offload.param")
    lo.set_if(f"{meg}.optimizer_offload", actor.offload.optimizer, "actor.offload.optimizer")
    # verl 0.9.1 dropped megatron.grad_offload (0.7.1, 0.9.0 and main have it): optional
    lo.set_if(f"{meg}.grad_offload", actor.offload.grad, "actor.offload.grad", optional=True)
    if actor.offload.optimizer_cpu:
        for key, value in OPTIMIZER_CPU_OFFLOAD.items():
            lo.set(f"{ARF}.actor.optim.override_optimizer_config.{key}", value, "actor.offload.optimizer_cpu")
    lo.set_if(f"{ARF}.ref.megatron.param_offload", actor.ref_param_offload, "actor.ref_param_offload")
    lo.set_if(f"{ARF}.actor.optim.clip_grad", actor.optim.grad_clip, "actor.optim.grad_clip")
    m = actor.megatron
    for name in ("use_mbridge", "vanilla_mbridge", "use_remove_padding", "dtype"):
        lo.set_if(f"{meg}.{name}", getattr(m, name), f"actor.megatron.{name}")
    for role in ("actor", "ref"):
        lo.set_if(
            f"{ARF}.{role}.megatron.use_dist_checkpointing",
            m.use_dist_checkpointing,
            "actor.megatron.use_dist_checkpointing",
        )
    lo.set_if(f"{meg}.router_replay.mode", m.router_replay, "actor.megatron.router_replay")
    for key, value in flatten(f"{meg}.override_transformer_config", m.override_transformer_config):
        lo.set(
            key,
            value,
            "actor.megatron.override_transformer_config." + key.rsplit("override_transformer_config.", 1)[1],
        )
    if r.critic is not None:
        for name in ("param", "optimizer"):
            lo.set_if(
                f"critic.megatron.{name}_offload", getattr(r.critic.offload, name), f"critic.offload.{name}"
            )
        lo.set_if("critic.megatron.grad_offload", r.critic.offload.grad, "critic.offload.grad", optional=True)
        lo.set_if("critic.optim.clip_grad", r.critic.optim.grad_clip, "critic.optim.grad_clip")
    lo.env(
        "CUDA_DEVICE_MAX_CONNECTIONS",
        "1",
        origin=axis(
            "backend",
            "megatron",
            "Megatron overlaps communication with compute only when kernels queue in issue order",
        ),
    )

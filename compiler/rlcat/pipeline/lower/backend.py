"""Backend axis: strategy, parallelism and offload keys of FSDP, FSDP2 and Megatron."""

from __future__ import annotations

from rlcat.pipeline.lower.common import ARF, flatten
from rlcat.pipeline.lower.context import Lowering, axis
from rlcat.pipeline.plan import Layer, Origin

MEGATRON_PARALLEL = {
    "tp": "tensor_model_parallel_size",
    "pp": "pipeline_model_parallel_size",
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
    if r.backend == "fsdp2":
        why = axis("backend", "fsdp2", "select PyTorch FSDP2")
        lo.set(f"{ARF}.actor.strategy", "fsdp2", origin=why)
        lo.set(f"{ARF}.actor.fsdp_config.strategy", "fsdp2", origin=why)
        lo.set(f"{ARF}.ref.fsdp_config.strategy", "fsdp2", origin=why)
        lo.set("critic.strategy", "fsdp2", origin=why)
    actor = r.actor
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


def _megatron(lo: Lowering) -> None:
    r = lo.recipe
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
        origin=Origin(
            Layer.RECIPE,
            "backend megatron",
            reason="Megatron overlaps communication with compute only when kernels queue in issue order",
        ),
    )

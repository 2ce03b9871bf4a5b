"""Mode axis: entrypoint and entry config, GPU layout, and the invariants a mode brings."""

from __future__ import annotations

from rlcat.pipeline.lower.common import ARF
from rlcat.pipeline.lower.context import Lowering, invariant

MAIN_PPO = "verl.trainer.main_ppo"
FULLY_ASYNC_MAIN = "verl.experimental.fully_async_policy.fully_async_main"


def lower_mode(lo: Lowering) -> None:
    if lo.recipe.mode == "fully_async":
        _fully_async(lo)
    else:
        _colocate(lo)


def _colocate(lo: Lowering) -> None:
    r, out = lo.recipe, lo.out
    out.entrypoint = MAIN_PPO
    if r.backend == "megatron":
        # verl 0.9 selects the Megatron engine inside ppo_trainer with a config-group choice, as
        # upstream's scripts for it do; older releases only have ppo_megatron_trainer.
        if "megatron" in lo.target.groups.get("model_engine", []):
            out.config_name = "ppo_trainer"
            out.group_choices["model_engine"] = "megatron"
        else:
            out.config_name = "ppo_megatron_trainer"
    else:
        out.config_name = "ppo_trainer"
    for field in ("trainer_gpus", "rollout_gpus"):
        if getattr(r.resources, field) is not None and lo.resolved.source.origin(("resources", field)):
            lo.error(
                "RLC301",
                f"resources.{field} splits GPUs between trainer and rollout, which only "
                "fully_async does; colocate shares every GPU",
                f"resources.{field}",
                because="mode",
            )
    if r.batch.train_batch_size is None:
        lo.error(
            "RLC104", "colocate mode needs batch.train_batch_size (prompts per step)", "batch", because="mode"
        )
    lo.set("data.train_batch_size", r.batch.train_batch_size, "batch.train_batch_size")
    lo.set("trainer.nnodes", r.resources.nodes, "resources.nodes")
    lo.set("trainer.n_gpus_per_node", r.resources.gpus_per_node, "resources.gpus_per_node")


def pool_shape(gpus: int, gpus_per_node: int) -> tuple[int, int] | None:
    """(nodes, GPUs per node) of a pool: part of one node, or whole nodes; None if neither."""
    if gpus <= gpus_per_node:
        return 1, gpus
    if gpus % gpus_per_node == 0:
        return gpus // gpus_per_node, gpus_per_node
    return None


def _fully_async(lo: Lowering) -> None:
    r, out = lo.recipe, lo.out
    out.entrypoint = FULLY_ASYNC_MAIN
    out.config_name = (
        "fully_async_ppo_megatron_trainer" if r.backend == "megatron" else "fully_async_ppo_trainer"
    )
    why = "fully_async"
    lo.set(
        "data.train_batch_size",
        0,
        origin=invariant(
            why, "the rollouter streams samples; the trainer counts batches with async.require_batches"
        ),
    )
    lo.set("data.gen_batch_size", 1, origin=invariant(why, "the rollouter generates one prompt at a time"))
    lo.set("data.return_raw_chat", True, origin=invariant(why, "the agent loop re-applies the chat template"))
    lo.set(f"{ARF}.hybrid_engine", False, origin=invariant(why, "trainer and rollout run on separate GPUs"))
    lo.set(f"{ARF}.rollout.mode", "async", origin=invariant(why, "the rollouter serves an async engine"))
    lo.set(
        f"{ARF}.rollout.calculate_log_probs",
        True,
        origin=invariant(why, "log probs must come from the policy that generated the sample"),
    )
    lo.set(
        f"{ARF}.actor.use_rollout_log_probs",
        True,
        origin=invariant(why, "the actor trains on the rollout's log probs (off-policy correction)"),
    )

    res = r.resources
    if res.trainer_gpus is None or res.rollout_gpus is None:
        lo.error(
            "RLC104",
            "fully_async needs resources.trainer_gpus and resources.rollout_gpus "
            "(e.g. 4 and 4 on one 8-GPU node)",
            "resources",
            because="mode",
        )
        return
    shapes = {}
    for pool, gpus in (("trainer", res.trainer_gpus), ("rollout", res.rollout_gpus)):
        shape = pool_shape(gpus, res.gpus_per_node)
        if shape is None:
            lo.error(
                "RLC302",
                f"the {pool} pool of {gpus} GPUs is neither part of one node nor whole "
                f"{res.gpus_per_node}-GPU nodes",
                f"resources.{pool}_gpus",
            )
            return
        shapes[pool] = shape
    shared = res.trainer_gpus + res.rollout_gpus <= res.gpus_per_node
    needed = 1 if shared else shapes["trainer"][0] + shapes["rollout"][0]
    if needed > res.nodes:
        lo.error(
            "RLC302",
            f"trainer ({res.trainer_gpus}) + rollout ({res.rollout_gpus}) GPUs need {needed} "
            f"nodes of {res.gpus_per_node} GPUs; resources.nodes is {res.nodes}",
            "resources.nodes",
        )
    for pool, (nodes, per_node) in shapes.items():
        lo.set(f"{pool}.nnodes", nodes, f"resources.{pool}_gpus")
        lo.set(f"{pool}.n_gpus_per_node", per_node, f"resources.{pool}_gpus")

    a = r.async_training
    lo.set_if("rollout.total_rollout_steps", a.total_rollout_steps, "async.total_rollout_steps")
    for name in ("staleness_threshold", "trigger_parameter_sync_step", "require_batches", "partial_rollout"):
        lo.set(f"async_training.{name}", getattr(a, name), f"async.{name}")

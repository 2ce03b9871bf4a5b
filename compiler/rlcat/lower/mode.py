"""Mode axis: entrypoint and entry config, GPU layout, and the invariants a mode brings.

Three modes: colocate (verl.trainer.main_ppo: trainer and rollout share every GPU), fully_async
(verl.experimental.fully_async_policy: separate pools, samples streamed) and one_step_off
(verl.experimental.one_step_off_policy: separate pools, the rollout generates the next batch with
weights one step old while the trainer trains on the current one)."""

from __future__ import annotations

from rlcat.lower.context import Lowering, invariant
from rlcat.verl.names import ARF, FULLY_ASYNC_MAIN, MAIN_PPO, ONE_STEP_OFF_MAIN


def lower_mode(lo: Lowering) -> None:
    if lo.recipe.mode == "fully_async":
        _fully_async(lo)
    elif lo.recipe.mode == "one_step_off":
        _one_step_off(lo)
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
                "fully_async and one_step_off do; colocate shares every GPU",
                f"resources.{field}",
                because="mode",
            )
    _train_batch(lo)
    lo.set("trainer.nnodes", r.resources.nodes, "resources.nodes")
    lo.set("trainer.n_gpus_per_node", r.resources.gpus_per_node, "resources.gpus_per_node")


def _train_batch(lo: Lowering) -> None:
    """Prompts per step, which colocate and one_step_off train on (fully_async streams them)."""
    if lo.recipe.batch.train_batch_size is None:
        lo.error(
            "RLC104",
            f"{lo.recipe.mode} mode needs batch.train_batch_size (prompts per step)",
            "batch",
            because="mode",
        )
    lo.set("data.train_batch_size", lo.recipe.batch.train_batch_size, "batch.train_batch_size")


def _one_step_off(lo: Lowering) -> None:
    """One-step-off-policy: the trainer trains on the batch the rollout generated with the previous
    step's weights. Its trainer asserts the hybrid engine off and an async rollout
    (verl/experimental/one_step_off_policy/ray_trainer.py:88 and :180 in 0.9.1); its config turns on
    the rollout's log probs and rollout_correction.bypass_mode (one_step_off_ppo_trainer.yaml)."""
    r, out = lo.recipe, lo.out
    out.entrypoint = ONE_STEP_OFF_MAIN
    out.config_name = (
        "one_step_off_ppo_megatron_trainer" if r.backend == "megatron" else "one_step_off_ppo_trainer"
    )
    why = "one_step_off"
    _train_batch(lo)
    lo.set(f"{ARF}.hybrid_engine", False, origin=invariant(why, "trainer and rollout run on separate GPUs"))
    lo.set(f"{ARF}.rollout.mode", "async", origin=invariant(why, "the trainer drives an async rollout"))
    _split_pools(lo)


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

    _split_pools(lo)
    a = r.async_training
    lo.set_if("rollout.total_rollout_steps", a.total_rollout_steps, "async.total_rollout_steps")
    for name in ("staleness_threshold", "trigger_parameter_sync_step", "require_batches", "partial_rollout"):
        lo.set(f"async_training.{name}", getattr(a, name), f"async.{name}")


def _split_pools(lo: Lowering) -> None:
    """The trainer and rollout pools of a mode that splits the GPUs, as trainer.* and rollout.*
    nnodes and n_gpus_per_node (verl's resource pools)."""
    res = lo.recipe.resources
    if res.trainer_gpus is None or res.rollout_gpus is None:
        lo.error(
            "RLC104",
            f"{lo.recipe.mode} needs resources.trainer_gpus and resources.rollout_gpus "
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

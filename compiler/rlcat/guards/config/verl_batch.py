"""verl's batch-size arithmetic, release by release: the numbers RLC703 (batch_arithmetic) judges.

Everything is read from the final plan (`Context.value`: every layer, `overrides:` and `--override`
included), and every rule in `batch_arithmetic` names the verl assertion it mirrors through
`cite()`: the file and line in the wheel of the release the platform runs (`.verl/<release>/`).
verl runs two kinds of workers, and they do the arithmetic differently:

- the legacy FSDP and Megatron workers (`verl/workers/fsdp_workers.py`, `megatron_workers.py`),
  the default of 0.7.1 (`trainer.use_legacy_worker_impl: auto`);
- the engine workers (`verl/workers/engine_workers.py`), the only ones from 0.8 on, and 0.7.1's
  with `trainer.use_legacy_worker_impl=disable` (which rlcat's fully_async mode sets there).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from packaging.version import Version

from rlcat.guards.base import Context
from rlcat.verl.names import ARF, MAIN_PPO, ONE_STEP_OFF_MAIN

# Where each assertion lives, per release (read from the wheels; line of the raise or assert).
LINES: dict[str, dict[str, str]] = {
    "0.7.1": {
        "minimal_batch": "verl/utils/config.py:110",
        "log_prob_micro_missing": "verl/utils/config.py:141",
        "log_prob_micro_both": "verl/utils/config.py:144",
        "actor_micro_both": "verl/workers/config/actor.py:192",
        "actor_micro_missing": "verl/workers/config/actor.py:198",
        "train_below_mini": "verl/workers/config/actor.py:215",
        "mini_vs_global_micro": "verl/workers/config/actor.py:223",
        "global_micro_vs_gpus": "verl/workers/config/actor.py:228",
        "sp_to_engine": "verl/workers/config/actor.py:311",
        "engine_dynamic_flags": "verl/workers/engine_workers.py:515",
        "engine_log_prob_micro": "verl/workers/engine_workers.py:535",
        "engine_mini_vs_dp": "verl/workers/engine_workers.py:239",
        "engine_micro": "verl/workers/engine/utils.py:92",
        "engine_budget": "verl/workers/engine/utils.py:78",
        "mini_iterator": "verl/utils/tensordict_utils.py:556",
        "legacy_mini_positive": "verl/workers/fsdp_workers.py:251",
        "legacy_mini_micro": "verl/workers/fsdp_workers.py:263",
        "legacy_budget_fsdp": "verl/workers/actor/dp_actor.py:559",
        "legacy_budget_megatron": "verl/workers/actor/megatron_actor.py:796",
        "sequence_fits": "verl/utils/seqlen_balancing.py:384",
    },
    "0.9.0": {
        "minimal_batch": "verl/utils/config.py:110",
        "log_prob_micro_missing": "verl/utils/config.py:141",
        "log_prob_micro_both": "verl/utils/config.py:144",
        "actor_micro_both": "verl/workers/config/actor.py:205",
        "actor_micro_missing": "verl/workers/config/actor.py:211",
        "train_below_mini": "verl/workers/config/actor.py:229",
        "mini_vs_global_micro": "verl/workers/config/actor.py:237",
        "global_micro_vs_gpus": "verl/workers/config/actor.py:242",
        "sp_to_engine": "verl/workers/config/actor.py:333",
        "engine_dynamic_flags": "verl/workers/engine_workers.py:610",
        "engine_log_prob_micro": "verl/workers/engine_workers.py:630",
        "engine_mini_vs_dp": "verl/workers/engine_workers.py:266",
        "engine_micro": "verl/workers/engine/utils.py:125",
        "engine_budget": "verl/workers/engine/utils.py:111",
        "mini_iterator": "verl/utils/tensordict_utils.py:588",
        "sequence_fits": "verl/utils/seqlen_balancing.py:384",
    },
    "0.9.1": {
        "minimal_batch": "verl/utils/config.py:124",
        "log_prob_micro_missing": "verl/utils/config.py:155",
        "log_prob_micro_both": "verl/utils/config.py:158",
        "actor_micro_both": "verl/workers/config/actor.py:201",
        "actor_micro_missing": "verl/workers/config/actor.py:207",
        "train_below_mini": "verl/workers/config/actor.py:225",
        "mini_vs_global_micro": "verl/workers/config/actor.py:233",
        "global_micro_vs_gpus": "verl/workers/config/actor.py:238",
        "sp_to_engine": "verl/workers/config/actor.py:329",
        "engine_dynamic_flags": "verl/workers/engine_workers.py:616",
        "engine_log_prob_micro": "verl/workers/engine_workers.py:636",
        "engine_mini_vs_dp": "verl/workers/engine_workers.py:267",
        "engine_micro": "verl/workers/engine/utils.py:125",
        "engine_budget": "verl/workers/engine/utils.py:111",
        "mini_iterator": "verl/utils/tensordict_utils.py:588",
        "sequence_fits": "verl/utils/seqlen_balancing.py:384",
    },
}


def cite(release: str, check: str) -> str:
    """'verl 0.9.1 verl/utils/config.py:124': the assertion in the key-index release, else in the
    closest older release in the table (a release indexed later keeps its predecessor's code until
    someone reads its wheel and adds a row)."""
    known = sorted(LINES, key=Version)
    older = [v for v in known if Version(v) <= Version(release)]
    for version in reversed(older or known):
        where = LINES[version].get(check)
        if where:
            return f"verl {version} {where}"
    return "verl"


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class BatchPlan:
    """The numbers verl computes its batch checks from, read from the final plan."""

    release: str
    engine_workers: bool  # engine_workers.py rather than the legacy fsdp/megatron workers
    megatron: bool
    runs_validate_config: bool  # main_ppo calls verl.utils.config.validate_config; fully_async does not
    gpus: int  # trainer GPUs: trainer.n_gpus_per_node × trainer.nnodes
    train: int | None
    n: int
    mini: int | None
    micro: int | None  # actor.ppo_micro_batch_size_per_gpu
    global_micro: int | None  # actor.ppo_micro_batch_size (deprecated, divided by the data-parallel size)
    dynamic: bool  # actor.use_dynamic_bsz
    uses_ref: bool  # verl/trainer/ppo/utils.py need_reference_policy
    actor_sp: int  # what verl multiplies the actor's and the rollout log-prob pass's budget by
    ref_sp: int
    dp: int | None  # the actor's data-parallel size; None when the layout does not divide (RLC704)
    sequence: int  # prompt + response: the longest sequence a micro batch must hold

    def cite(self, check: str) -> str:
        return cite(self.release, check)


def read_plan(ctx: Context) -> BatchPlan:
    v = ctx.value
    release = ctx.index.verl_version
    # 0.7.1 has both kinds of workers; from 0.8 on the key is gone and only engine workers remain
    legacy_switch = v("trainer.use_legacy_worker_impl")
    engine_workers = legacy_switch is None or legacy_switch == "disable"
    megatron = v(f"{ARF}.actor.strategy") == "megatron"
    gpus = (_int(v("trainer.n_gpus_per_node")) or 0) * (_int(v("trainer.nnodes")) or 0)
    actor_sp = _sequence_parallel(ctx, "actor", megatron, engine_workers)
    return BatchPlan(
        release=release,
        engine_workers=engine_workers,
        megatron=megatron,
        # one_step_off_policy/main_ppo.py:51 calls validate_config too
        runs_validate_config=ctx.plan.entrypoint in (MAIN_PPO, ONE_STEP_OFF_MAIN),
        gpus=gpus,
        train=_int(v("data.train_batch_size")),
        n=_int(v(f"{ARF}.rollout.n")) or 1,
        mini=_int(v(f"{ARF}.actor.ppo_mini_batch_size")),
        micro=_int(v(f"{ARF}.actor.ppo_micro_batch_size_per_gpu")),
        global_micro=_int(v(f"{ARF}.actor.ppo_micro_batch_size")),
        dynamic=v(f"{ARF}.actor.use_dynamic_bsz") is True,
        uses_ref=v("algorithm.use_kl_in_reward") is True or v(f"{ARF}.actor.use_kl_loss") is True,
        actor_sp=actor_sp,
        ref_sp=_sequence_parallel(ctx, "ref", megatron, engine_workers),
        dp=_data_parallel(ctx, gpus, megatron, engine_workers, actor_sp),
        sequence=(_int(v("data.max_prompt_length")) or 0) + (_int(v("data.max_response_length")) or 0),
    )


def _sequence_parallel(ctx: Context, role: str, megatron: bool, engine_workers: bool) -> int:
    """The factor verl multiplies a role's per-GPU token budget by: Megatron's context parallel size
    (0.7.1 megatron_actor.py:228/796; engine megatron/transformer_impl.py sets sp_size to it), else
    the Ulysses sequence parallel size."""
    v = ctx.value
    if megatron:
        return _int(v(f"{ARF}.{role}.megatron.context_parallel_size")) or 1
    top = _int(v(f"{ARF}.{role}.ulysses_sequence_parallel_size")) or 1
    if not engine_workers:
        return top  # the legacy worker reads the role's top-level key (dp_actor.py:72)
    # the engine reads fsdp_config's; FSDPActorConfig copies the deprecated top-level key over it
    # when that is above 1 (cite "sp_to_engine")
    return top if top > 1 else _int(v(f"{ARF}.{role}.fsdp_config.ulysses_sequence_parallel_size")) or 1


def _data_parallel(ctx: Context, gpus: int, megatron: bool, engine_workers: bool, sp: int) -> int | None:
    """The actor's data-parallel size as verl's engine computes it: Megatron's world / (TP × PP × CP)
    (1 with dynamic context parallelism), FSDP's world / Ulysses SP (fsdp/transformer_impl.py
    get_data_parallel_size; the legacy worker divides its device mesh the same way)."""
    v = ctx.value
    if not gpus:
        return None
    if megatron:
        if engine_workers and v(f"{ARF}.actor.megatron.dynamic_context_parallel") is True:
            return 1
        pre = f"{ARF}.actor.megatron"
        split = 1
        for name in ("tensor_model_parallel_size", "pipeline_model_parallel_size", "context_parallel_size"):
            split *= _int(v(f"{pre}.{name}")) or 1
    else:
        split = sp
    return gpus // split if gpus % split == 0 else None

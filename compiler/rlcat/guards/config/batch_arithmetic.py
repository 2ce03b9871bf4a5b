from __future__ import annotations

from collections.abc import Iterator

from rlcat.diagnostics import Severity
from rlcat.guards.base import Context, Finding, Guard, Knob, hint, knob, register
from rlcat.guards.config.verl_batch import BatchPlan, read_plan
from rlcat.verl.names import ARF

ACTOR = f"{ARF}.actor"
# the recipe fields the hints name, and the verl keys they set (lower/common.py)
MICRO = knob("batch.micro_batch_size_per_gpu", f"{ACTOR}.ppo_micro_batch_size_per_gpu")
DYNAMIC = knob(
    "batch.dynamic_batch_size", f"{ACTOR}.use_dynamic_bsz", f"{ARF}.rollout.log_prob_use_dynamic_bsz"
)


def _log_prob_micro(role: str) -> Knob:
    return knob("batch.log_prob_micro_batch_size_per_gpu", f"{role}.log_prob_micro_batch_size_per_gpu")


@register
class BatchArithmetic(Guard):
    """Batch sizes must pass verl's start-up assertions, done with verl's own arithmetic for the release.

    **Why**: verl checks batch sizes only after Ray has started and the models are loading, and
    some checks run in the workers, after the weights are on the GPUs. The guard repeats them on
    the final plan (every layer, `overrides:` and `--override` included), with the numbers, and
    names the verl source line of each. Without dynamic batch size:

    - `validate_config` (colocate, `main_ppo`): train batch × responses divisible by the minimal
      batch (the GPU count; for Megatron the data-parallel size × micro batch); a log-prob micro
      batch for the rollout, and for the reference policy when KL is used ("Please set at least
      one of …", and not both the per-GPU and the deprecated global size);
    - the actor config: a micro batch (per GPU, or the deprecated global one, not both), the train
      batch at least the mini batch, and a global micro batch that divides the mini batch and,
      times the Ulysses size, covers the GPUs;
    - the workers' normalisation: the mini batch × responses is split over the data-parallel size
      (GPUs / Ulysses size for FSDP, GPUs / (TP × PP × CP) for Megatron) and the share must divide
      by the micro batch per GPU. The engine workers (verl 0.8 on, and 0.7.1 with
      `use_legacy_worker_impl=disable`) also need the share to be whole, the train batch to split
      into whole mini batches, the rollout's log-prob micro batch per GPU, and the same dynamic
      batch flag for the actor and the rollout's log-prob pass; 0.7.1's legacy FSDP worker rounds
      the share down and needs it above zero.

    With dynamic batch size, a token budget per GPU times the sequence parallel size (Ulysses for
    FSDP, context parallel for Megatron; verl multiplies before it packs micro batches) must hold
    one prompt + response: the actor's, the rollout's log-prob pass (the actor's parallelism) and
    the reference's (its own).

    **Bad**:

    ```yaml
    resources: {nodes: 1, gpus_per_node: 8}
    batch: {train_batch_size: 12, responses_per_prompt: 5, mini_batch_size: 16, dynamic_batch_size: false}
    ```

    **Good**:

    ```yaml
    resources: {nodes: 1, gpus_per_node: 8}
    batch:
      train_batch_size: 64
      responses_per_prompt: 5
      mini_batch_size: 16
      dynamic_batch_size: false
      micro_batch_size_per_gpu: 2
      log_prob_micro_batch_size_per_gpu: 4
    ```

    A token budget below one sequence passes once sequence parallelism multiplies it:

    ```yaml
    parallelism: {actor: {sp: 2}}
    batch: {max_prompt_length: 1024, max_response_length: 2048, max_token_len_per_gpu: 1536}
    ```
    """

    id = "RLC703"
    name = "batch_arithmetic"
    title = "batch sizes that verl's start-up checks reject"
    severity = Severity.ERROR
    verl_startup = "later"
    source = (
        "verl/utils/config.py validate_config (0.7.1 and 0.9.0: lines 110, 141, 144; 0.9.1: 124, 155, 158)",
        "verl/workers/config/actor.py ActorConfig (0.7.1: 192-228; 0.9.0: 205-242; 0.9.1: 201-238)",
        "verl/workers/engine_workers.py (0.7.1: 239, 515, 535; 0.9.0: 266, 610, 630; 0.9.1: 267, 616, 636)",
        "verl/workers/engine/utils.py prepare_micro_batches (0.7.1: 78, 92; 0.9.x: 111, 125)",
        "verl/utils/tensordict_utils.py make_iterator (0.7.1: 556; 0.9.x: 588)",
        "verl/workers/fsdp_workers.py 0.7.1: 249-263 (legacy mini batch normalisation)",
        "verl/workers/actor/dp_actor.py 0.7.1: 467, 559; megatron_actor.py 0.7.1: 228, 796 (budget × SP/CP)",
        "verl/utils/seqlen_balancing.py:384 (max_token_len >= max_seq_len)",
    )
    since = "0.1.0"

    def check(self, ctx: Context) -> Iterator[Finding]:
        b = read_plan(ctx)
        if b.dynamic:
            yield from _token_budgets(ctx, b)
        else:
            yield from _micro_batches_set(ctx, b)
            if b.runs_validate_config:
                yield from _validate_config_batches(b)
        if b.engine_workers:
            yield from _engine_flags(ctx, b)
            yield from _engine_normalisation(b)
        elif not b.megatron:
            yield from _legacy_fsdp_normalisation(b)


def _micro_batches_set(ctx: Context, b: BatchPlan) -> Iterator[Finding]:
    """The micro batch sizes verl needs without dynamic batch size, and the deprecated global ones
    it refuses next to the per-GPU ones."""
    if b.micro is None and b.global_micro is None:
        # ActorConfig.__post_init__ (any entrypoint: the worker builds the config)
        yield Finding(
            "[actor] Please set at least one of 'actor.ppo_micro_batch_size' or "
            f"'actor.ppo_micro_batch_size_per_gpu' if use_dynamic_bsz is not enabled "
            f"({b.cite('actor_micro_missing')})",
            key=f"{ACTOR}.ppo_micro_batch_size_per_gpu",
            hint=hint("set ", MICRO, ", or turn ", DYNAMIC, " on"),
        )
    elif b.micro is not None and b.global_micro is not None:
        yield Finding(
            f"both {ACTOR}.ppo_micro_batch_size and ppo_micro_batch_size_per_gpu are set; verl refuses "
            f"the deprecated global one next to the per-GPU one ({b.cite('actor_micro_both')})",
            key=f"{ACTOR}.ppo_micro_batch_size",
            hint="remove actor_rollout_ref.actor.ppo_micro_batch_size",
        )
    if not b.runs_validate_config:
        return
    # validate_config's check_mutually_exclusive: the ref only when a reference policy is used
    for role in ("ref", "rollout") if b.uses_ref else ("rollout",):
        pre = f"{ARF}.{role}"
        per_gpu = ctx.value(f"{pre}.log_prob_micro_batch_size_per_gpu")
        total = ctx.value(f"{pre}.log_prob_micro_batch_size")
        if per_gpu is None and total is None:
            yield Finding(
                f"[{pre}] Please set at least one of '{pre}.log_prob_micro_batch_size' or "
                f"'{pre}.log_prob_micro_batch_size_per_gpu' ({b.cite('log_prob_micro_missing')})",
                key=f"{pre}.log_prob_micro_batch_size_per_gpu",
                hint=hint("set ", _log_prob_micro(pre), ", or turn ", DYNAMIC, " on"),
            )
        elif per_gpu is not None and total is not None:
            yield Finding(
                f"both {pre}.log_prob_micro_batch_size and its _per_gpu form are set; verl refuses the "
                f"deprecated one ({b.cite('log_prob_micro_both')})",
                key=f"{pre}.log_prob_micro_batch_size",
                hint=f"remove {pre}.log_prob_micro_batch_size",
            )


def _validate_config_batches(b: BatchPlan) -> Iterator[Finding]:
    """validate_config's batch arithmetic and ActorConfig.validate, which it calls (main_ppo only;
    the fully-async trainer streams samples and counts mini batches with require_batches)."""
    if b.train is None or b.mini is None or not b.gpus:
        return
    if b.train < b.mini:
        yield Finding(
            f"train batch {b.train} is smaller than the mini batch {b.mini} ({b.cite('train_below_mini')})",
            key="data.train_batch_size",
            hint=f"use a train batch of at least {b.mini}",
        )
    if b.megatron:
        if b.micro is None or b.dp is None:
            return  # reported above, or RLC704 reports the layout
        minimal = b.dp * b.micro
        what = f"data-parallel size {b.dp} × micro batch {b.micro}"
    else:
        minimal, what = b.gpus, f"{b.gpus} GPUs"
    if (b.train * b.n) % minimal:
        yield Finding(
            f"train batch × responses = {b.train} × {b.n} = {b.train * b.n} is not divisible by the minimal "
            f"batch {minimal} ({what}; {b.cite('minimal_batch')})",
            key="data.train_batch_size",
            hint="pick a train batch so that train batch × responses divides evenly",
        )
    if b.global_micro is not None:
        # ActorConfig.validate reads the Ulysses size of an FSDP actor; Megatron's config has none
        sp = 1 if b.megatron else b.actor_sp
        if b.mini % b.global_micro:
            yield Finding(
                f"mini batch {b.mini} is not divisible by {ACTOR}.ppo_micro_batch_size={b.global_micro} "
                f"({b.cite('mini_vs_global_micro')})",
                key=f"{ACTOR}.ppo_micro_batch_size",
                hint=hint("use ", MICRO, " instead"),
            )
        if b.global_micro * sp < b.gpus:
            yield Finding(
                f"{ACTOR}.ppo_micro_batch_size={b.global_micro} × Ulysses size {sp} is below the "
                f"{b.gpus} GPUs ({b.cite('global_micro_vs_gpus')})",
                key=f"{ACTOR}.ppo_micro_batch_size",
                hint=hint("use ", MICRO, " instead"),
            )


def _engine_flags(ctx: Context, b: BatchPlan) -> Iterator[Finding]:
    """What engine_workers.py asserts when it builds the actor (every entrypoint)."""
    rollout_dynamic = ctx.value(f"{ARF}.rollout.log_prob_use_dynamic_bsz")
    if rollout_dynamic is not None and rollout_dynamic is not b.dynamic:
        yield Finding(
            f"{ACTOR}.use_dynamic_bsz={b.dynamic} but {ARF}.rollout.log_prob_use_dynamic_bsz="
            f"{rollout_dynamic}; verl's engine workers need them equal ({b.cite('engine_dynamic_flags')})",
            key=f"{ARF}.rollout.log_prob_use_dynamic_bsz",
            hint=hint(Knob("set both through batch.dynamic_batch_size", ("set both to the same value",))),
        )
    if b.dynamic:
        return
    key = f"{ARF}.rollout.log_prob_micro_batch_size_per_gpu"
    total = ctx.value(f"{ARF}.rollout.log_prob_micro_batch_size")
    # with neither set, validate_config has already said so on main_ppo
    if ctx.value(key) is None and (total is not None or not b.runs_validate_config):
        yield Finding(
            f"{key} is not set; verl's engine workers need the per-GPU log-prob micro batch without "
            f"dynamic batch size ({b.cite('engine_log_prob_micro')})",
            key=key,
            hint=hint("set ", _log_prob_micro(f"{ARF}.rollout")),
        )
    if b.micro is None and b.global_micro is not None:
        yield Finding(
            f"{ACTOR}.ppo_micro_batch_size_per_gpu is not set; verl's engine workers ignore the "
            f"deprecated ppo_micro_batch_size ({b.cite('engine_log_prob_micro')})",
            key=f"{ACTOR}.ppo_micro_batch_size",
            hint=hint("set ", MICRO, " instead"),
        )


def _engine_normalisation(b: BatchPlan) -> Iterator[Finding]:
    """The engine workers' split: the trainer sends mini batch × responses per update
    (trainer/ppo/v1/trainer_base.py, ray_trainer.py _update_actor), train_mini_batch divides it by
    the data-parallel size, and prepare_micro_batches cuts the share into micro batches per GPU."""
    if b.mini is None or b.dp is None:
        return
    per_update = b.mini * b.n
    if per_update % b.dp:
        yield Finding(
            f"mini batch × responses = {b.mini} × {b.n} = {per_update} is not divisible by the "
            f"data-parallel size {b.dp} ({b.cite('engine_mini_vs_dp')})",
            key=f"{ACTOR}.ppo_mini_batch_size",
            hint=f"pick a mini batch so that mini batch × responses is a multiple of {b.dp}",
        )
        return
    share = per_update // b.dp
    if not b.dynamic and b.micro is not None and share % b.micro:
        yield Finding(
            f"each data-parallel rank gets mini batch × responses / DP = {b.mini} × {b.n} / {b.dp} = "
            f"{share} samples per update, not divisible by the micro batch per GPU {b.micro} "
            f"({b.cite('engine_micro')})",
            key=f"{ACTOR}.ppo_micro_batch_size_per_gpu",
            hint=f"use a micro batch per GPU that divides {share}",
        )
    if b.runs_validate_config and b.train is not None and b.train >= b.mini and (b.train * b.n) % b.dp == 0:
        rank_batch = b.train * b.n // b.dp
        if rank_batch % share:
            yield Finding(
                f"train batch {b.train} does not split into whole mini batches of {b.mini}: each rank's "
                f"{rank_batch} samples are not a multiple of {share} ({b.cite('mini_iterator')})",
                key="data.train_batch_size",
                hint=f"use a train batch that is a multiple of the mini batch {b.mini}",
            )


def _legacy_fsdp_normalisation(b: BatchPlan) -> Iterator[Finding]:
    """0.7.1's legacy FSDP worker: mini batch × responses // (GPUs / Ulysses size), above zero and
    divisible by the micro batch per GPU (the global micro batch divided the same way)."""
    if b.mini is None or b.dp is None:
        return
    share = b.mini * b.n // b.dp
    if share <= 0:
        yield Finding(
            f"mini batch × responses // DP = {b.mini} × {b.n} // {b.dp} = 0 "
            f"({b.cite('legacy_mini_positive')})",
            key=f"{ACTOR}.ppo_mini_batch_size",
            hint=f"use a mini batch of at least {-(-b.dp // b.n)}",
        )
        return
    micro = b.micro if b.micro is not None else (b.global_micro // b.dp if b.global_micro else None)
    if micro and share % micro:
        yield Finding(
            f"normalised mini batch {b.mini} × {b.n} // {b.dp} = {share} is not divisible by the micro "
            f"batch per GPU {micro} ({b.cite('legacy_mini_micro')})",
            key=f"{ACTOR}.ppo_micro_batch_size_per_gpu",
            hint=f"use a micro batch per GPU that divides {share}",
        )


def _token_budgets(ctx: Context, b: BatchPlan) -> Iterator[Finding]:
    """With dynamic batch size each pass packs micro batches up to budget × sequence parallel size
    tokens, and one whole sequence must fit (seqlen_balancing.py asserts it)."""
    where = (
        "engine_budget"
        if b.engine_workers
        else ("legacy_budget_megatron" if b.megatron else "legacy_budget_fsdp")
    )
    factor_name = "context parallel" if b.megatron else "Ulysses"
    passes = [
        (f"{ACTOR}.ppo_max_token_len_per_gpu", b.actor_sp),
        (f"{ARF}.rollout.log_prob_max_token_len_per_gpu", b.actor_sp),
    ]
    if b.uses_ref and ctx.value(f"{ARF}.ref.log_prob_use_dynamic_bsz") is not False:
        passes.append((f"{ARF}.ref.log_prob_max_token_len_per_gpu", b.ref_sp))
    for key, sp in passes:
        budget = ctx.value(key)
        if not isinstance(budget, int) or budget * sp >= b.sequence:
            continue
        times = f" × {factor_name} size {sp} = {budget * sp}" if sp > 1 else ""
        yield Finding(
            f"{key}={budget}{times} is below prompt + response = {b.sequence}: one sequence would not fit a "
            f"micro batch ({b.cite(where)} multiplies, {b.cite('sequence_fits')} asserts)",
            key=key,
            hint=f"raise it to at least {-(-b.sequence // sp)}"
            + (" (the per-GPU budget is multiplied by the sequence parallel size)" if sp > 1 else ""),
        )

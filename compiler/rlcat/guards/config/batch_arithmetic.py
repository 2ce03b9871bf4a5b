from __future__ import annotations

from collections.abc import Iterator

from rlcat.diagnostics import Severity
from rlcat.guards.base import Context, Finding, Guard, register
from rlcat.pipeline.lower.common import ARF


@register
class BatchArithmetic(Guard):
    """Batch sizes must divide the way verl asserts at start-up, shown with the numbers.

    **Why**: verl's `validate_config` and the actor config check these only after Ray has started
    and the models are loading: train batch × responses per prompt divisible by the minimal batch
    (the data-parallel size × micro batch for Megatron, the GPU count otherwise), train batch at
    least the mini batch, mini batch divisible by the micro batch (both without dynamic batch size),
    and with dynamic batch size a token budget per GPU at least prompt + response (one sequence must
    fit).

    **Bad**:

    ```yaml
    resources: {nodes: 1, gpus_per_node: 8}
    batch: {train_batch_size: 12, responses_per_prompt: 5, mini_batch_size: 16, dynamic_batch_size: false}
    ```

    **Good**:

    ```yaml
    resources: {nodes: 1, gpus_per_node: 8}
    batch: {train_batch_size: 64, responses_per_prompt: 5, mini_batch_size: 16, micro_batch_size_per_gpu: 2}
    ```
    """

    id = "RLC703"
    name = "batch_arithmetic"
    title = "batch sizes that verl's start-up checks reject"
    severity = Severity.ERROR
    source = (
        "verl/utils/config.py (validate_config)",
        "verl/workers/config/actor.py (ActorConfig.validate)",
        "verl/utils/seqlen_balancing.py (max_token_len >= max_seq_len)",
    )
    since = "0.1.0"

    def check(self, ctx: Context) -> Iterator[Finding]:
        v = ctx.value
        dynamic = v(f"{ARF}.actor.use_dynamic_bsz") is True
        seq = (v("data.max_prompt_length") or 0) + (v("data.max_response_length") or 0)
        if dynamic:
            for key in (
                f"{ARF}.actor.ppo_max_token_len_per_gpu",
                f"{ARF}.ref.log_prob_max_token_len_per_gpu",
                f"{ARF}.rollout.log_prob_max_token_len_per_gpu",
            ):
                budget = v(key)
                if isinstance(budget, int) and budget < seq:
                    yield Finding(
                        f"{key}={budget} is below prompt + response = {seq}: one sequence would not "
                        "fit a micro batch",
                        key=key,
                        hint=f"raise it to at least {seq}",
                    )
            return
        mini, micro = v(f"{ARF}.actor.ppo_mini_batch_size"), v(f"{ARF}.actor.ppo_micro_batch_size_per_gpu")
        if micro is None:
            yield Finding(
                "without dynamic batch size verl needs a micro batch size per GPU",
                key=f"{ARF}.actor.ppo_micro_batch_size_per_gpu",
                hint="set batch.micro_batch_size_per_gpu",
            )
        if ctx.recipe.mode != "colocate":
            return  # the fully-async trainer counts mini batches itself (require_batches)
        train, n = v("data.train_batch_size"), v(f"{ARF}.rollout.n")
        gpus = (v("trainer.n_gpus_per_node") or 0) * (v("trainer.nnodes") or 0)
        if not all(isinstance(x, int) for x in (train, n, mini)) or not gpus:
            return
        if train < mini:
            yield Finding(
                f"train batch {train} is smaller than the mini batch {mini}",
                key="data.train_batch_size",
                hint=f"use a train batch of at least {mini}",
            )
        minimal = gpus
        if ctx.recipe.backend == "megatron" and isinstance(micro, int):
            mp = (
                (v(f"{ARF}.actor.megatron.tensor_model_parallel_size") or 1)
                * (v(f"{ARF}.actor.megatron.pipeline_model_parallel_size") or 1)
                * (v(f"{ARF}.actor.megatron.context_parallel_size") or 1)
            )
            if gpus % mp:
                return  # RLC704 reports the layout
            minimal = gpus // mp * micro
        if (train * n) % minimal:
            yield Finding(
                f"train batch × responses = {train} × {n} = {train * n} is not divisible by the minimal "
                f"batch {minimal}",
                key="data.train_batch_size",
                hint="pick a train batch so that train batch × responses divides evenly",
            )

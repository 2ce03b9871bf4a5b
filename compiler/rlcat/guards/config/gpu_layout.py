from __future__ import annotations

from collections.abc import Iterator

from rlcat.diagnostics import Severity
from rlcat.guards.base import Context, Finding, Guard, register
from rlcat.model.axes import SPLIT_MODES
from rlcat.verl.names import ARF


@register
class ParallelismFitsGpus(Guard):
    """Model parallelism must divide the GPUs of the pool that runs it.

    **Why**: Megatron builds its data-parallel groups from the GPUs left after tensor, pipeline and
    context parallelism, and MoE layers fold expert × expert-tensor parallelism over the GPUs of a
    pipeline stage;
    the rollout engine needs whole tensor-parallel groups. A layout that does not divide fails when
    the workers start, after the images are pulled and the model is downloaded.

    **Bad**:

    ```yaml
    mode: fully_async
    resources: {trainer_gpus: 4, rollout_gpus: 4}
    parallelism:
      actor: {tp: 8}
    ```

    **Good**:

    ```yaml
    mode: fully_async
    resources: {trainer_gpus: 4, rollout_gpus: 4}
    parallelism:
      actor: {tp: 2, pp: 2}
    ```
    """

    id = "RLC704"
    name = "parallelism_fits_gpus"
    title = "TP/PP/CP/EP that do not divide the GPUs"
    severity = Severity.ERROR
    verl_startup = "later"
    source = (
        "verl/utils/config.py (n_gpus divisible by model_parallel_size × context_parallel_size)",
        "verl/workers/rollout/replica.py (world_size divisible by GPUs per replica; a replica larger "
        "than a node takes whole nodes: 0.7.1 line 112, 0.9.x line 114)",
    )
    since = "0.1.0"

    def check(self, ctx: Context) -> Iterator[Finding]:
        v = ctx.value
        r = ctx.recipe
        # the GPUs verl will be given, after every layer: the recipe's resources, or an override of
        # trainer.n_gpus_per_node in `overrides:` or on the command line
        trainer = (v("trainer.nnodes") or 1) * (v("trainer.n_gpus_per_node") or 0)
        if r.mode in SPLIT_MODES:
            rollout = (v("rollout.nnodes") or 1) * (v("rollout.n_gpus_per_node") or 0)
        else:
            rollout = trainer
        if r.backend == "megatron":
            for role in ("actor", "ref"):
                pre = f"{ARF}.{role}.megatron"
                tp = v(f"{pre}.tensor_model_parallel_size") or 1
                pp = v(f"{pre}.pipeline_model_parallel_size") or 1
                cp = v(f"{pre}.context_parallel_size") or 1
                ep = v(f"{pre}.expert_model_parallel_size") or 1
                etp = v(f"{pre}.expert_tensor_parallel_size") or 1
                mp = tp * pp * cp
                if trainer and trainer % mp:
                    yield Finding(
                        f"{role}: TP {tp} × PP {pp} × CP {cp} = {mp} does not divide the {trainer} "
                        "trainer GPUs",
                        key=f"{pre}.tensor_model_parallel_size",
                    )
                elif trainer and ep > 1 and (trainer // pp) % (ep * etp):
                    # MoE layers fold their own grid over the GPUs of a pipeline stage: EP × ETP must
                    # divide them (Megatron-Core's expert-parallel folding)
                    yield Finding(
                        f"{role}: EP {ep} × ETP {etp} does not divide the {trainer // pp} GPUs of a "
                        "pipeline stage",
                        key=f"{pre}.expert_model_parallel_size",
                    )
        rtp = v(f"{ARF}.rollout.tensor_model_parallel_size") or 1
        if rollout and rollout % rtp:
            yield Finding(
                f"rollout TP {rtp} does not divide the {rollout} rollout GPUs",
                key=f"{ARF}.rollout.tensor_model_parallel_size",
            )
        # a rollout replica (TP × DP × PP GPUs) may span nodes, but only whole ones: verl places it
        # on min(GPUs per node, its size) GPUs of each node it takes (replica.py RolloutReplica)
        per_node = v("rollout.n_gpus_per_node" if r.mode in SPLIT_MODES else "trainer.n_gpus_per_node")
        replica = rtp * (v(f"{ARF}.rollout.data_parallel_size") or 1)
        replica *= v(f"{ARF}.rollout.pipeline_model_parallel_size") or 1
        if isinstance(per_node, int) and per_node > 0 and replica > per_node and replica % per_node:
            yield Finding(
                f"a rollout replica of {replica} GPUs (TP {rtp}) spans more than one node but not whole "
                f"ones ({per_node} GPUs per node): verl asserts its size divides by the GPUs per node",
                key=f"{ARF}.rollout.tensor_model_parallel_size",
            )

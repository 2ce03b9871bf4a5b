from __future__ import annotations

from collections.abc import Iterator

from rlcat.diagnostics import Severity
from rlcat.guards.base import Context, Finding, Guard, Hint, hint, knob, register
from rlcat.verl.names import ARF

ROLLOUT = f"{ARF}.rollout"
EP = f"{ROLLOUT}.expert_parallel_size"
TP = f"{ROLLOUT}.tensor_model_parallel_size"
DP = f"{ROLLOUT}.data_parallel_size"


@register
class RolloutExpertParallel(Guard):
    """The rollout's expert parallel size must be its tensor × data parallel size: verl refuses to start.

    **Why**: a rollout replica spreads its MoE experts over all of its GPUs, tensor × data parallel
    of them, so verl's rollout config asserts `expert_parallel_size must be equal to
    tensor_model_parallel_size * data_parallel_size` whenever expert parallelism is on, for every
    engine but TensorRT-LLM (`RolloutConfig.__post_init__`, `verl/workers/config/rollout.py`, 0.7.1
    to 0.9.1). `data_parallel_size` is the replica's own data parallelism (default 1), not the
    number of replicas, so `tp: 8, ep: 64` needs `dp: 8`. Found by the differential tier
    (`tests/oracle`) in two scripts verl ships.

    **Bad**:

    ```yaml
    parallelism:
      rollout: {tp: 8, ep: 64}
    ```

    **Good**:

    ```yaml
    parallelism:
      rollout: {tp: 8, dp: 8, ep: 64}
    ```
    """

    id = "RLC713"
    name = "rollout_expert_parallel"
    title = "rollout expert parallel size other than TP × DP"
    severity = Severity.ERROR
    verl_startup = "refuses"
    source = ("verl/workers/config/rollout.py (RolloutConfig.__post_init__, 0.7.1 to 0.9.1)",)
    since = "0.1.0"

    def check(self, ctx: Context) -> Iterator[Finding]:
        # the engine first: a finding lands on the last command-line value read, and the sizes are
        # what makes it one (guards._at_command_line)
        if ctx.value(f"{ROLLOUT}.name") == "trtllm":
            return
        sizes = [ctx.value(key) for key in (EP, TP, DP)]
        if not all(isinstance(s, int) for s in sizes):
            return
        ep, tp, dp = sizes
        if ep > 1 and ep != tp * dp:
            yield Finding(
                f"the rollout's expert parallel size {ep} is not its TP {tp} × DP {dp} = {tp * dp}: verl "
                "refuses to start (expert_parallel_size must be equal to tensor_model_parallel_size * "
                "data_parallel_size)",
                key=EP,
                hint=hint_text(ep, tp),
            )


def hint_text(ep: int, tp: int) -> Hint:
    if ep % tp == 0:
        return hint(
            "set ",
            knob("parallelism.rollout.dp", DP, value=ep // tp),
            ", or ",
            knob("parallelism.rollout.ep", EP, value=tp),
        )
    return hint(
        "set ", knob("parallelism.rollout.ep", EP), f" to a multiple of the TP {tp}, and DP to EP / TP"
    )

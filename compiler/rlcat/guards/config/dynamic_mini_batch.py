from __future__ import annotations

from collections.abc import Iterator

from rlcat.diagnostics import Severity
from rlcat.guards.base import Context, Finding, Guard, register
from rlcat.verl.names import ARF

TRAIN = "data.train_batch_size"
MINI = f"{ARF}.actor.ppo_mini_batch_size"
DYNAMIC = f"{ARF}.actor.use_dynamic_bsz"


@register
class MiniBatchAboveTrainBatch(Guard):
    """A mini batch larger than the train batch with dynamic batch size: one update per step.

    **Why**: verl refuses `train_batch_size < ppo_mini_batch_size` at start-up only without dynamic
    batch size (`ActorConfig.validate`, `verl/workers/config/actor.py:224-229` in 0.9.1). With it
    on, the check is skipped and the step's batch is split into mini batches of the larger size:
    there is one, so the actor makes a single optimizer update per step instead of the several the
    two sizes suggest, and the learning rate and clipping were tuned for something else. The
    fully-async mode's train batch of 0 is its own scheme and is not judged.

    **Bad**:

    ```yaml
    batch: {train_batch_size: 128, mini_batch_size: 256}
    ```

    **Good**:

    ```yaml
    batch: {train_batch_size: 512, mini_batch_size: 256}
    ```
    """

    id = "RLC715"
    name = "mini_batch_above_train_batch"
    title = "mini batch larger than the train batch (dynamic batch size)"
    severity = Severity.WARNING
    source = ("verl 0.9.1 verl/workers/config/actor.py:224-229 (ActorConfig.validate)",)
    since = "0.1.0"

    def check(self, ctx: Context) -> Iterator[Finding]:
        train, mini = ctx.value(TRAIN), ctx.value(MINI)
        if ctx.value(DYNAMIC) is not True or not all(isinstance(x, int) and x > 0 for x in (train, mini)):
            return
        if mini > train:
            yield Finding(
                f"the mini batch {mini} is larger than the train batch {train}: with dynamic batch size "
                "verl skips its check, and each step makes one update on the whole batch",
                key=MINI,
                hint=f"set {MINI} to at most {train} (a divisor of it), or raise {TRAIN}",
            )

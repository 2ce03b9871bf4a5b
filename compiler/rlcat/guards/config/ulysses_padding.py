from __future__ import annotations

from collections.abc import Iterator

from rlcat.diagnostics import Severity
from rlcat.guards.base import Affects, Context, Finding, Guard, register
from rlcat.verl.names import ARF

SP = f"{ARF}.actor.ulysses_sequence_parallel_size"
REMOVE_PADDING = f"{ARF}.model.use_remove_padding"


@register
class UlyssesWithoutRemovePadding(Guard):
    """Ulysses sequence parallelism for the actor without remove-padding: verl refuses to start.

    **Why**: verl's FSDP actor splits each sequence across the Ulysses group only on the packed,
    padding-free input, so its config check refuses the pair before any GPU work: `When using
    sequence parallelism for actor/ref policy, you must enable use_remove_padding`
    (`FSDPActorConfig.validate`, `verl/workers/config/actor.py:331-341` in 0.9.1, 335-344 in 0.9.0,
    312-320 in 0.7.1; `main_ppo` runs it through `validate_config`). The fully-async entrypoint
    does not call `validate_config`: there verl starts, and its FSDP engine raises the same when
    the workers build it, after the cluster is up and the model is loaded
    (`verl/workers/engine/fsdp/transformer_impl.py:148` in 0.9.1). The differential tier
    (`tests/oracle`) asks verl itself.

    **Bad**:

    ```yaml
    parallelism:
      actor: {sp: 2}
    actor:
      use_remove_padding: false
    ```

    **Good**:

    ```yaml
    parallelism:
      actor: {sp: 2}
    actor:
      use_remove_padding: true
    ```
    """

    id = "RLC711"
    name = "ulysses_without_remove_padding"
    title = "Ulysses sequence parallelism without remove-padding"
    severity = Severity.ERROR
    verl_startup = "later"
    affects = Affects(backends=("fsdp", "fsdp2"))
    source = (
        "verl 0.9.1 verl/workers/config/actor.py:331-341 (FSDPActorConfig.validate)",
        "verl 0.9.0 verl/workers/config/actor.py:335-344; 0.7.1 :312-320",
    )
    since = "0.1.0"

    def check(self, ctx: Context) -> Iterator[Finding]:
        size = ctx.value(SP)
        if not isinstance(size, int) or isinstance(size, bool) or size <= 1:
            return
        if ctx.value(REMOVE_PADDING) is not False:  # on, or verl's default (on since 0.9)
            return
        when = (
            "the FSDP engine refuses it when the workers start"  # fully-async skips validate_config
            if ctx.recipe.mode == "fully_async"
            else "verl refuses to start"
        )
        yield Finding(
            f"Ulysses sequence parallel size {size} for the actor needs remove-padding, which is off: "
            f"{when} (When using sequence parallelism for actor/ref policy, you must enable "
            "`use_remove_padding`)",
            key=REMOVE_PADDING,
            hint=f"turn remove-padding on ({REMOVE_PADDING}=True), or use a Ulysses size of 1",
        )

from __future__ import annotations

from collections.abc import Iterator

from rlcat.diagnostics import Severity
from rlcat.guards.base import Context, Finding, Guard, Knob, hint, register
from rlcat.model.plan import same_value
from rlcat.verl.names import ARF

FULLY_ASYNC = {
    f"{ARF}.hybrid_engine": (False, "trainer and rollout run on separate GPU pools"),
    f"{ARF}.rollout.calculate_log_probs": (True, "the rollouter must return the log probs it sampled with"),
    f"{ARF}.actor.use_rollout_log_probs": (
        True,
        "the trainer corrects for staleness with the rollout's log probs",
    ),
    "data.train_batch_size": (0, "the rollouter streams samples; require_batches counts them"),
    "data.gen_batch_size": (1, "the rollouter generates one prompt at a time"),
    f"{ARF}.rollout.mode": ("async", "the rollouter serves an async engine"),
}
# the rollouter's bounds on the async settings, with verl's own messages (FullyAsyncRollouter.__init__,
# verl/experimental/fully_async_policy/fully_async_rollouter.py, 0.9.0 and 0.9.1)
ASYNC_BOUNDS = {
    "async_training.staleness_threshold": (0, "staleness_threshold must larger than 0"),
    "async_training.trigger_parameter_sync_step": (
        1,
        "trigger_parameter_sync_step must larger or equal than 1",
    ),
}
# one_step_off_policy/ray_trainer.py asserts both (lines 88 and 180 in verl 0.9.1)
ONE_STEP_OFF = {
    f"{ARF}.hybrid_engine": (False, "trainer and rollout run on separate GPU pools"),
    f"{ARF}.rollout.mode": ("async", "the trainer drives an async rollout"),
}

# what sets the invariants, as each reader says it: a recipe's mode, a script's entrypoint
SPLIT_MODES = Knob("fully_async and one_step_off modes", ("fully-async and one-step-off entrypoints",))
MODE_SETS_IT = Knob("the mode sets it", ("the entrypoint's config sets it",))


@register
class FullyAsyncInvariants(Guard):
    """The settings the fully-async trainer relies on must hold, and colocate must keep the hybrid engine.

    **Why**: verl's fully-async policy splits the GPUs into a trainer pool and a rollout pool and
    streams samples between them. It needs the hybrid engine off, log probs computed by the rollout
    and used by the actor, a train batch of 0 with a generation batch of 1, and the async rollout
    mode. The mode brings these settings; an `--override` or `overrides:` entry that undoes one is
    accepted by Hydra and fails (or silently trains wrong) on the cluster. Its rollouter also
    refuses a staleness threshold below 0 and a parameter sync interval below 1 step
    (`FullyAsyncRollouter.__init__`, verl/experimental/fully_async_policy/fully_async_rollouter.py).
    Colocated training in turn needs the hybrid engine on.

    **Bad**:

    ```yaml
    mode: fully_async
    overrides: {actor_rollout_ref.hybrid_engine: true}
    ```

    **Good**:

    ```yaml
    mode: fully_async     # the mode sets hybrid_engine: false and the rest
    ```
    """

    id = "RLC701"
    name = "fully_async_invariants"
    title = "fully-async invariants (and colocate's hybrid engine)"
    severity = Severity.ERROR
    verl_startup = "later"
    source = (
        "verl/experimental/fully_async_policy/config/fully_async_ppo_trainer.yaml",
        "verl/experimental/fully_async_policy/fully_async_rollouter.py (_validate_config)",
    )
    since = "0.1.0"

    def check(self, ctx: Context) -> Iterator[Finding]:
        if ctx.recipe.mode == "colocate":
            if ctx.value(f"{ARF}.hybrid_engine") is False:
                yield Finding(
                    "colocate mode needs actor_rollout_ref.hybrid_engine=True",
                    key=f"{ARF}.hybrid_engine",
                    hint=hint(
                        "only the ",
                        Knob(
                            "fully_async and one_step_off modes",
                            ("fully-async and one-step-off entrypoints",),
                        ),
                        " turn it off",
                    ),
                )
            return
        if ctx.recipe.mode == "fully_async":
            for key, (least, says) in ASYNC_BOUNDS.items():
                got = ctx.value(key)
                if isinstance(got, (int, float)) and not isinstance(got, bool) and got < least:
                    yield Finding(
                        f"fully_async needs {key} >= {least}; got {got!r} (verl: {says!r})",
                        key=key,
                        hint=f"set {key} to {least} or more",
                    )
        invariants = ONE_STEP_OFF if ctx.recipe.mode == "one_step_off" else FULLY_ASYNC
        for key, (want, why) in invariants.items():
            got = ctx.value(key)
            if not same_value(got, want):
                yield Finding(
                    f"{ctx.recipe.mode} needs {key}={want!r} ({why}); got {got!r}",
                    key=key,
                    hint=hint(
                        "remove the override: ",
                        Knob("the mode sets it", ("the entrypoint's config sets it",)),
                    ),
                )

from __future__ import annotations

from collections.abc import Iterator

from rlcat.diagnostics import Severity
from rlcat.guards.base import Affects, Context, Finding, Guard, register
from rlcat.verl.names import ARF

# (the role's strategy, its FSDP engine's strategy): verl builds each role's FSDP config with the
# engine's strategy set to the role's (FSDPActorConfig.__post_init__ for the actor and the
# reference, whose dp_ref.yaml targets the same class; FSDPCriticConfig.__post_init__)
PAIRS = (
    (f"{ARF}.actor.strategy", f"{ARF}.actor.fsdp_config.strategy"),
    (f"{ARF}.ref.strategy", f"{ARF}.ref.fsdp_config.strategy"),
    ("critic.strategy", "critic.fsdp.strategy"),
)
# the strategies verl's FSDP engine takes (verl/workers/config/engine.py:306 in 0.9.1)
FSDP_STRATEGIES = ("fsdp", "fsdp2", "fsdp_turbo")


@register
class FsdpStrategyOverwritten(Guard):
    """An FSDP engine strategy that verl overwrites with the role's strategy.

    **Why**: from verl 0.9 on, each FSDP role copies its own `strategy` over its engine's when its
    config is built (`object.__setattr__(self.engine, "strategy", self.strategy)`:
    `verl/workers/config/actor.py:325` and `critic.py:219` in 0.9.1, lines 329 and 221 in 0.9.0).
    So `actor_rollout_ref.actor.fsdp_config.strategy=fsdp2` alone leaves the actor on FSDP1: the
    role's `strategy` is still `fsdp`, and it wins. The reference follows the actor's strategy
    unless it sets its own (`ref.yaml: strategy: ${actor_rollout_ref.actor.strategy}`). Several of
    verl's own fully-async example scripts set only the engine's strategy; `rlcat lint` finds them.
    rlcat's `backend: fsdp2` (or `parallelism.<role>.strategy`) writes both, so this guard fires
    on an `overrides:` entry or a launch script.

    **Bad**:

    ```yaml
    backend: fsdp
    overrides:
      actor_rollout_ref.actor.fsdp_config.strategy: fsdp2
    ```

    **Good**:

    ```yaml
    backend: fsdp2
    ```
    """

    id = "RLC708"
    name = "fsdp_strategy_overwritten"
    title = "an FSDP engine strategy that verl overwrites with the role's"
    severity = Severity.WARNING
    affects = Affects(backends=("fsdp", "fsdp2"), verl=">=0.9")
    source = (
        "verl 0.9.1 verl/workers/config/actor.py:318-325 (FSDPActorConfig.__post_init__)",
        "verl 0.9.1 verl/workers/config/critic.py:212-219 (FSDPCriticConfig.__post_init__)",
        "verl 0.9.0 verl/workers/config/actor.py:329, verl/workers/config/critic.py:221",
    )
    since = "0.1.0"

    def check(self, ctx: Context) -> Iterator[Finding]:
        for role_key, engine_key in PAIRS:
            if ctx.setter(engine_key) is None:
                continue  # verl's own default: nothing the recipe or script asked for
            engine, role = ctx.value(engine_key), ctx.value(role_key)
            if role not in FSDP_STRATEGIES or engine == role:
                continue
            yield Finding(
                f"{engine_key}={engine} is overwritten with {role_key} ({role}) when verl builds the "
                f"config: the role trains with {role}, not {engine}",
                key=engine_key,
                hint=f"set {role_key}={engine} (verl copies it to the engine), or drop {engine_key}",
            )

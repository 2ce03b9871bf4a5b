from __future__ import annotations

from collections.abc import Iterator

from rlcat.diagnostics import Severity
from rlcat.guards.base import Affects, Context, Finding, Guard, hint, knob, register
from rlcat.verl.names import ARF

ROUTER_REPLAY = f"{ARF}.actor.megatron.router_replay.mode"
BYPASS = "algorithm.rollout_correction.bypass_mode"


@register
class RouterReplayR2NeedsDecoupledCorrection(Guard):
    """MoE router replay R2 cannot run with rollout correction's bypass mode.

    **Why**: R2 records each token's expert routes while the actor recomputes the old policy's log
    probs, and replays them in the update. Bypass mode (`algorithm.rollout_correction.bypass_mode`)
    takes the rollout's log probs as the old policy and skips that forward pass, so there is nothing
    to replay: verl 0.9.1's `validate_config` raises before training starts
    (`verl/utils/config.py:74-85`, `_validate_router_replay_config`, called at :166 by
    `verl.trainer.main_ppo` and the one-step-off trainer). The one-step-off mode's config turns
    bypass mode on by default (`one_step_off_ppo_trainer.yaml`), so R2 fails there unless the
    recipe turns it off. The guard reads the final plan, with verl's defaults for what the plan
    leaves unset.

    **Bad**:

    ```yaml
    mode: one_step_off          # its config sets rollout_correction.bypass_mode: true
    actor:
      megatron: {router_replay: R2}
    ```

    **Good**:

    ```yaml
    mode: one_step_off
    actor:
      megatron: {router_replay: R3}   # replays the rollout's routes
    rollout: {routing_replay: true}
    ```
    """

    id = "RLC705"
    name = "router_replay_r2_with_bypass_mode"
    title = "router replay R2 with rollout-correction bypass mode"
    severity = Severity.ERROR
    verl_startup = "refuses"
    affects = Affects(backends=("megatron",), verl=">=0.9.1")
    source = (
        "verl 0.9.1 verl/utils/config.py:74-85 (_validate_router_replay_config) and :166",
        "verl 0.9.1 verl/experimental/one_step_off_policy/config/one_step_off_ppo_trainer.yaml "
        "(bypass_mode: True)",
    )
    since = "0.1.0"

    def check(self, ctx: Context) -> Iterator[Finding]:
        if ctx.value(ROUTER_REPLAY) == "R2" and ctx.value(BYPASS) is True:
            yield Finding(
                "router_replay.mode R2 records routes in the old-log-prob pass, which "
                "algorithm.rollout_correction.bypass_mode skips: verl's validate_config refuses it",
                key=ROUTER_REPLAY,
                hint=hint(
                    "use ",
                    knob("actor.megatron.router_replay", ROUTER_REPLAY, value="R3"),
                    " with ",
                    knob(
                        "rollout.routing_replay", f"{ARF}.rollout.enable_rollout_routing_replay", value="true"
                    ),
                    ", or set ",
                    knob("algo.rollout_correction.bypass_mode", BYPASS, value="false"),
                ),
            )

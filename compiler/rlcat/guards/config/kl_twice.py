from __future__ import annotations

from collections.abc import Iterator

from rlcat.diagnostics import Severity
from rlcat.guards.base import Context, Finding, Guard, register
from rlcat.verl.names import ARF

IN_REWARD = "algorithm.use_kl_in_reward"
AS_LOSS = f"{ARF}.actor.use_kl_loss"


@register
class KlAppliedTwice(Guard):
    """KL to the reference applied twice: as a penalty in the reward and as a loss of the actor.

    **Why**: `algorithm.use_kl_in_reward` subtracts the KL to the reference policy from each token's
    reward before the advantages (`apply_kl_penalty`, `verl/trainer/ppo/ray_trainer.py`), and
    `actor.use_kl_loss` adds it to the actor's loss. With both on, the policy is pulled towards the
    reference twice, with two coefficients (`algorithm.kl_ctrl.kl_coef` and
    `actor.kl_loss_coef`) that each look like the only one. verl starts: its `validate_config` only
    prints "NOTICE: You have both enabled in-reward kl and kl loss." (`verl/utils/config.py:184` in
    0.9.1) among hundreds of log lines. GRPO's recipes use the loss; PPO's classic setting the reward.

    **Bad**:

    ```yaml
    overrides:
      algorithm.use_kl_in_reward: true
      actor_rollout_ref.actor.use_kl_loss: true
    ```

    **Good**:

    ```yaml
    overrides:
      algorithm.use_kl_in_reward: false
      actor_rollout_ref.actor.use_kl_loss: true
    ```
    """

    id = "RLC714"
    name = "kl_applied_twice"
    title = "KL to the reference both in the reward and as a loss"
    severity = Severity.WARNING
    source = (
        "verl 0.9.1 verl/utils/config.py:184 (validate_config: a NOTICE, not a refusal)",
        "verl/trainer/ppo/ray_trainer.py (apply_kl_penalty when use_kl_in_reward)",
    )
    since = "0.1.0"

    def check(self, ctx: Context) -> Iterator[Finding]:
        if ctx.value(IN_REWARD) is True and ctx.value(AS_LOSS) is True:
            yield Finding(
                "KL to the reference is applied twice: in the reward (algorithm.use_kl_in_reward) and as "
                "the actor's loss (actor.use_kl_loss); verl only prints a notice",
                key=IN_REWARD,
                hint=f"keep one: {IN_REWARD}=False for the KL loss (GRPO's way), or {AS_LOSS}=False",
            )

from __future__ import annotations

from collections.abc import Iterator

from rlcat.diagnostics import Severity
from rlcat.guards.base import Context, Finding, Guard, register
from rlcat.verl.names import ARF

DO_SAMPLE = f"{ARF}.rollout.val_kwargs.do_sample"
TEMPERATURE = f"{ARF}.rollout.temperature"


@register
class SampledValidationAtZeroTemperature(Guard):
    """Sampled validation while the rollout's temperature is 0 or less: verl refuses to start.

    **Why**: with `val_kwargs.do_sample` on, verl's `validate_config` asserts that the rollout's
    temperature is above 0 (`validation gen temperature should be greater than 0 when enabling
    do_sample`: `verl/utils/config.py:200-203` in 0.9.1, 185-188 in 0.9.0 and 0.7.1). It reads the
    rollout's own `temperature`, not `val_kwargs.temperature`, so greedy training rollouts and
    sampled validation cannot go together. The fully-async entrypoint does not call
    `validate_config`: there verl starts, and the rollout engine (vLLM, SGLang) decodes greedily at
    temperature 0, so validation is not sampled as asked. Found by the differential tier
    (`tests/oracle`), which asks verl itself.

    **Bad**:

    ```yaml
    overrides:
      actor_rollout_ref.rollout.temperature: 0
      actor_rollout_ref.rollout.val_kwargs.do_sample: true
    ```

    **Good**:

    ```yaml
    overrides:
      actor_rollout_ref.rollout.temperature: 1.0
      actor_rollout_ref.rollout.val_kwargs.do_sample: true
    ```
    """

    id = "RLC712"
    name = "sampled_validation_at_zero_temperature"
    title = "sampled validation with a rollout temperature of 0"
    severity = Severity.ERROR
    verl_startup = "later"
    source = (
        "verl 0.9.1 verl/utils/config.py:200-203 (validate_config: check eval config)",
        "verl 0.9.0 and 0.7.1 verl/utils/config.py:185-188",
    )
    since = "0.1.0"

    def check(self, ctx: Context) -> Iterator[Finding]:
        temperature = ctx.value(TEMPERATURE)
        if ctx.value(DO_SAMPLE) is not True or not isinstance(temperature, (int, float)) or temperature > 0:
            return
        if ctx.recipe.mode == "fully_async":  # its entrypoint does not call validate_config
            when = "the rollout engine then decodes greedily, so validation is not sampled"
        else:
            when = (
                "verl refuses to start (validation gen temperature should be greater than 0 when "
                "enabling do_sample)"
            )
        yield Finding(
            f"validation samples (val_kwargs.do_sample) while the rollout's temperature is "
            f"{temperature}: {when}",
            key=TEMPERATURE,
            hint=f"set {TEMPERATURE} above 0, or {DO_SAMPLE}=False for greedy validation",
        )

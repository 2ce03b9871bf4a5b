from __future__ import annotations

from collections.abc import Iterator

from rlcat.diagnostics import Severity
from rlcat.guards.base import Context, Finding, Guard, hint, knob, register

KEY = "actor_rollout_ref.model.override_config.max_position_embeddings"


@register
class ContextLongerThanPositions(Guard):
    """Prompt plus response must fit the model's max_position_embeddings.

    **Why**: Qwen2.5-Math-7B's config.json says 4096 positions, but DAPO trains it with 2048-token
    prompts and 8192-token responses. Upstream's DAPO scripts raise the limit to 32768 with
    `+actor_rollout_ref.model.override_config.max_position_embeddings=32768`; AMD's quick start
    (known issue 1) edits config.json instead. When the model entry names a longer length the model
    supports (`extended_max_position_embeddings`), rlcat emits the override and says so; the
    alternative is to edit config.json before the run. Otherwise the recipe is refused.

    **Bad**:

    ```yaml
    model: qwen2_5_math_7b          # 4096 positions
    batch: {max_prompt_length: 2048, max_response_length: 8192}
    ```

    **Good**:

    ```yaml
    model: qwen2_5_math_7b
    batch: {max_prompt_length: 2048, max_response_length: 8192}
    actor:
      model_override_config: {max_position_embeddings: 32768}
    ```
    """

    id = "RLC601"
    name = "context_longer_than_positions"
    title = "prompt + response longer than the model's max_position_embeddings"
    severity = Severity.WARNING
    source = (
        "docs/amd_tutorial/amd_quick_start.rst (Known Issue 1)",
        "verl/experimental/fully_async_policy/shell/dapo_7b_math_fsdp2_4_4.sh",
    )
    since = "0.1.0"

    def check(self, ctx: Context) -> Iterator[Finding]:
        # the lengths verl gets: an `overrides:` entry or --override of data.* counts too
        prompt, response = ctx.value("data.max_prompt_length"), ctx.value("data.max_response_length")
        if not isinstance(prompt, int) or not isinstance(response, int):
            return
        needed = prompt + response
        override = ctx.value(KEY)
        limit = override if isinstance(override, int) else ctx.model.max_position_embeddings
        if not isinstance(limit, int) or needed <= limit:  # a `TODO:` left to fill in: not judged
            return
        extended = ctx.model.extended_max_position_embeddings
        if override is None and extended is not None and extended >= needed:
            yield Finding(
                f"{ctx.model.name} has {ctx.model.max_position_embeddings} positions but prompt + response "
                f"is {needed} tokens: {KEY}={extended} raises them to the context it is known to handle",
                key=KEY,
                fix={KEY: extended},
                hint=f"or set max_position_embeddings to {extended} in the model's config.json (AMD's quick "
                "start) and add this guard to the recipe's allow list",
            )
        else:
            yield Finding(
                f"prompt + response is {needed} tokens but {ctx.model.name} has {limit} positions",
                key=KEY,
                hint=hint(
                    "shorten ",
                    knob("batch.max_prompt_length", "data.max_prompt_length"),
                    " or ",
                    knob("batch.max_response_length", "data.max_response_length"),
                ),
            )

from __future__ import annotations

from collections.abc import Iterator

from rlcat.diagnostics import Severity
from rlcat.guards.base import Affects, Context, Finding, Guard, register

KEY = "actor_rollout_ref.rollout.n"


@register
class GroupSamplingNeedsResponses(Guard):
    """GRPO and DAPO need more than one response per prompt.

    **Why**: group-relative advantages normalise each response's reward by the mean and standard
    deviation of its group. With one response per prompt every advantage is zero (or undefined),
    so the policy never moves; DAPO's dynamic sampling also drops every group.

    **Bad**:

    ```yaml
    algorithm: grpo
    batch: {responses_per_prompt: 1}
    ```

    **Good**:

    ```yaml
    algorithm: grpo
    batch: {responses_per_prompt: 5}
    ```
    """

    id = "RLC702"
    name = "group_sampling_needs_responses"
    title = "GRPO/DAPO with one response per prompt"
    severity = Severity.ERROR
    affects = Affects(algorithms=("grpo", "dapo"))
    source = (
        "verl/trainer/ppo/core_algos.py (compute_grpo_outcome_advantage)",
        "verl docs: algo/grpo.md (group sampling)",
    )
    since = "0.1.0"

    def check(self, ctx: Context) -> Iterator[Finding]:
        n = ctx.value(KEY)
        if isinstance(n, int) and n <= 1:
            yield Finding(
                f"{ctx.recipe.algorithm} compares responses within a group; rollout.n is {n}",
                key=KEY,
                hint="set batch.responses_per_prompt to 4 or more",
            )

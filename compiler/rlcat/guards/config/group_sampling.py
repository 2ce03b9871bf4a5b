from __future__ import annotations

from collections.abc import Iterator

from rlcat.diagnostics import Severity
from rlcat.guards.base import Context, Finding, Guard, hint, knob, register

KEY = "actor_rollout_ref.rollout.n"
ESTIMATOR = "algorithm.adv_estimator"
# verl's estimators that normalise a reward by its group's statistics (core_algos.py:
# compute_grpo_outcome_advantage and its vectorised and pass@k forms); DAPO runs on "grpo"
GROUP_ESTIMATORS = ("grpo", "grpo_vectorized", "grpo_passk")


@register
class GroupSamplingNeedsResponses(Guard):
    """GRPO and DAPO need more than one response per prompt.

    **Why**: group-relative advantages normalise each response's reward by the mean and standard
    deviation of its group. With one response per prompt there is no group: verl's GRPO falls back
    to mean 0 and standard deviation 1 (`compute_grpo_outcome_advantage`, core_algos.py:315 in
    0.9.1), so the advantage is the raw reward with no baseline, which is not GRPO; DAPO's dynamic
    sampling, which keeps groups whose rewards differ, drops every group. The guard judges
    the plan: the advantage estimator verl gets (`algorithm.adv_estimator`: grpo and its vectorised
    and pass@k forms, which GRPO and DAPO recipes lower to) and `rollout.n`.

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
    verl_startup = "later"
    # no `affects` on algorithms: the plan's adv_estimator decides, not the recipe's `algorithm:` axis
    source = (
        "verl/trainer/ppo/core_algos.py:315 (compute_grpo_outcome_advantage: mean 0, std 1 for one response)",
        "verl docs: algo/grpo.md (group sampling)",
    )
    since = "0.1.0"

    def check(self, ctx: Context) -> Iterator[Finding]:
        estimator = ctx.value(ESTIMATOR)
        if estimator not in GROUP_ESTIMATORS:
            return
        n = ctx.value(KEY)
        if isinstance(n, int) and n <= 1:
            yield Finding(
                f"adv_estimator {estimator} compares responses within a group; rollout.n is {n}",
                key=KEY,
                hint=hint("set ", knob("batch.responses_per_prompt", KEY), " to 4 or more"),
            )

from __future__ import annotations

from collections.abc import Iterator

from rlcat.diagnostics import Severity
from rlcat.guards.base import Context, Finding, Guard, hint, register, said
from rlcat.guards.security.values import quoted
from rlcat.inside import names_code_inside
from rlcat.verl.names import ARF

# verl keys whose value names Python that verl imports or executes at launch, and what it runs.
CODE_KEYS = {
    "custom_reward_function.path": "verl imports this file and calls its reward function on every sample",
    # where verl 0.9 reads the reward code (verl/trainer/ppo/reward.py, load_extern_object)
    "reward.custom_reward_function.path": (
        "verl imports this file and calls its reward function on every sample"
    ),
    "reward.reward_manager.module.path": "verl imports this file to build the reward manager",
    "trainer.v1.sampler.custom_sampler.path": "verl imports this file to build the data sampler",
    "data.custom_cls.path": "verl imports this file to build the dataset class",
    f"{ARF}.model.external_lib": "verl imports this module before it loads the model",
    "critic.model.external_lib": "verl imports this module before it loads the critic",
    "reward_model.model.external_lib": "verl imports this module before it loads the reward model",
}


@register
class CodeFromAPathTheRecipeNames(Guard):
    """The plan names Python code that verl imports or runs at launch.

    **Why**: `reward.custom_reward_function.path` (`custom_reward_function.path` before verl 0.9),
    `reward.reward_manager.module.path`, `data.custom_cls.path` and the v1 trainer's custom sampler
    name a Python file that verl
    imports (and runs) in every worker; `actor_rollout_ref.model.external_lib` names a module it
    imports before loading the model. Set by a recipe, a catalog entry or its `overrides:`, they let
    a pull request choose code that runs with the job's credentials and data — as surely as a
    changed script. rlcat cannot read that code; it says that the plan runs it, so a reviewer looks.

    **Bad**:

    ```yaml
    overrides:
      reward.custom_reward_function.path: /shared/tmp/reward.py
    ```

    Code of the repository being checked is reviewed with the recipe, and is no finding: a file
    of the git work tree that holds the recipe or script checked, named by a path relative to the
    work tree's root that stays inside it (`rewards/math.py`, not `../x.py`, not through a link out),
    or a module that is such a file (`my_rewards.math`: `my_rewards/math.py`). An absolute path
    always is a finding: it names a file of the machine the job runs on, which no review shows.

    **Good**: the reward code in the repository under review (and reviewed with it), or verl's
    built-in scorers; a path the team trusts is allowed with the reason:
    `allow: {RLC903: "our reward module, reviewed in the recipes repository"}` (the finding stays
    visible, with the reason).
    """

    id = "RLC903"
    name = "code_from_a_path_the_recipe_names"
    title = "the plan names Python code that verl imports at launch"
    severity = Severity.WARNING
    source = (
        "verl/trainer/ppo/reward.py (reward.custom_reward_function.path, reward.reward_manager.module.path)",
        "verl/trainer/ppo/v1/trainer_base.py (trainer.v1.sampler.custom_sampler.path)",
        "verl/utils/dataset/rl_dataset.py (data.custom_cls.path)",
        "verl/workers/config/model.py (external_lib)",
    )
    since = "0.1.0"

    def check(self, ctx: Context) -> Iterator[Finding]:
        for key, effect in CODE_KEYS.items():
            setter = ctx.setter(key)
            if setter is None or setter.value in (None, ""):
                continue
            if names_code_inside(ctx.repository, str(setter.value), module=key.endswith("external_lib")):
                continue  # a file of the repository under review: reviewed with the recipe
            yield Finding(
                f"{key}={quoted(str(setter.value))}: {effect}",
                key=key,
                hint=hint(
                    "review the code it names",
                    said(f'; if it is trusted, say why: allow: {{{self.id}: "the reason"}}', ""),
                ),
            )

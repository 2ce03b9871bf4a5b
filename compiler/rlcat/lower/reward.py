"""Reward: the reward manager, a custom reward function and a reward model.

verl reads them under `reward.*` on every release rlcat indexes: 0.9.0 and 0.9.1 read nothing else
on verl.trainer.main_ppo (guard RLC802), and 0.7.1 reads `reward.*` too, its main_ppo only copying the
legacy `reward_model.*` and `custom_reward_function.*` over it when they are not null (0.7.1
verl/trainer/main_ppo.py:44 → verl/experimental/reward_loop/reward_loop.py:38-80; the trainer reads
config.reward.*: verl/trainer/ppo/reward.py:70, utils.py:83). The legacy names are kept as each
setting's alternatives, for a release whose index lacks the `reward.*` name.
"""

from __future__ import annotations

from rlcat.lower.common import launch_path
from rlcat.lower.context import Lowering

MANAGER = "reward.reward_manager.name"


def lower_reward(lo: Lowering) -> None:
    rw = lo.recipe.reward
    if rw.manager is not None:
        dapo_buffer = lo.recipe.algorithm_settings.overlong_buffer
        if dapo_buffer is not None and lo.recipe.algorithm == "dapo" and rw.manager != "dapo":
            lo.error(
                "RLC301",
                f"reward.manager {rw.manager}: DAPO's overlong buffer (algo.overlong_buffer) is applied by "
                "verl's dapo reward manager",
                "reward.manager",
                hint="remove reward.manager (the overlong buffer sets dapo), or remove algo.overlong_buffer",
            )
        lo.set(MANAGER, rw.manager, "reward.manager", alternatives=("reward_model.reward_manager",))
    lo.set_if("reward.num_workers", rw.workers, "reward.workers", alternatives=("reward_model.num_workers",))
    fn = rw.custom_function
    if fn is not None:
        lo.set(
            "reward.custom_reward_function.path",
            launch_path(fn.path),
            "reward.custom_function.path",
            alternatives=("custom_reward_function.path",),
        )
        lo.set_if(
            "reward.custom_reward_function.name",
            fn.name,
            "reward.custom_function.name",
            alternatives=("custom_reward_function.name",),
        )
    model = rw.model
    if model is not None:
        lo.set(
            "reward.reward_model.enable",
            model.enabled,
            "reward.model.enabled",
            alternatives=("reward_model.enable",),
        )
        lo.set(
            "reward.reward_model.model_path",
            launch_path(model.path),
            "reward.model.path",
            alternatives=("reward_model.model.path",),
        )

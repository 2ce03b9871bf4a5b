"""Names verl gives its trainers and config sections, which every stage uses: lowering writes them,
the guards and `rlcat lint` read them. A module of its own, importing nothing, so that reading a
name does not load the stage that writes it."""

from __future__ import annotations

# the config section of the actor, rollout and reference model (one worker group in verl)
ARF = "actor_rollout_ref"

# The trainer entrypoints, one per mode (model/axes.py MODES)
MAIN_PPO = "verl.trainer.main_ppo"
FULLY_ASYNC_MAIN = "verl.experimental.fully_async_policy.fully_async_main"
# the module and its hydra.main config exist in the 0.9.0 and 0.9.1 wheels
# (verl/experimental/one_step_off_policy/main_ppo.py: config_name="one_step_off_ppo_trainer");
# 0.7.1's wheel ships the config folder only (its source checkout has the module)
ONE_STEP_OFF_MAIN = "verl.experimental.one_step_off_policy.main_ppo"

#: Entry configs rlcat composes, and the folder (relative to the tree) that holds each.
ENTRY_DIRS: dict[str, str] = {
    "ppo_trainer": "verl/trainer/config",
    "ppo_megatron_trainer": "verl/trainer/config",
    "fully_async_ppo_trainer": "verl/experimental/fully_async_policy/config",
    "fully_async_ppo_megatron_trainer": "verl/experimental/fully_async_policy/config",
    "one_step_off_ppo_trainer": "verl/experimental/one_step_off_policy/config",
    "one_step_off_ppo_megatron_trainer": "verl/experimental/one_step_off_policy/config",
}

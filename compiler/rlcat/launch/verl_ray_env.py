"""The env keys verl's own `ray.init` puts in its runtime env, per verl release (versioned like the
key index: one entry per release under schemas/verl).

Under `ray job submit`, Ray merges the job's runtime env with the driver's `ray.init(runtime_env=...)`
and refuses any key both name, even with equal values (ray/_private/worker.py: "Failed to merge the
Job's runtime env ... because of a conflict"). verl's run_ppo drops from its defaults every key the
driver's environment already holds, so most keys are safe in a job's env_vars; the ones below are
added after that filter, and a job that sets them fails in `ray.init` before training starts.

Sources, per release (tests/unit/test_launch_verl_env.py reads them from the wheels under .verl/):
- 0.9.0 and 0.9.1, verl/trainer/constants_ppo.py get_ppo_ray_runtime_env: VERL_FULL_DETERMINISM,
  VLLM_BATCH_INVARIANT and VERL_RL_INSIGHT_ENABLE always ("Always forward these at call-time");
  PYTHONHASHSEED, CUBLAS_WORKSPACE_CONFIG, FLASH_ATTENTION_DETERMINISTIC, NCCL_DETERMINISTIC and
  NCCL_ALGO whenever the driver's environment sets them (the job's env_vars do).
- 0.9.1 constants_ppo.py: NVTX_INJECTION64_PATH when global_profiler.tool is torch.
- every release, verl/trainer/main_ppo.py run_ppo: TRANSFER_QUEUE_ENABLE when transfer_queue.enable;
  and every key of ray_kwargs.ray_init.runtime_env.env_vars (merged into the same runtime env).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

_DETERMINISM = (
    "VERL_FULL_DETERMINISM",
    "VLLM_BATCH_INVARIANT",
    "VERL_RL_INSIGHT_ENABLE",
    "PYTHONHASHSEED",
    "CUBLAS_WORKSPACE_CONFIG",
    "FLASH_ATTENTION_DETERMINISTIC",
    "NCCL_DETERMINISTIC",
    "NCCL_ALGO",
)


@dataclass(frozen=True)
class ConditionalKey:
    """A key verl adds only when a config key holds a value (`key` is read from the plan's overrides;
    verl's default of each, false or null, never adds it)."""

    env: str
    config_key: str
    value: Any
    source: str


@dataclass(frozen=True)
class VerlRayEnv:
    """What one verl release's run_ppo adds to its `ray.init` runtime env after its own filter."""

    always: tuple[str, ...]
    conditional: tuple[ConditionalKey, ...]
    source: str


_TRANSFER_QUEUE = ConditionalKey(
    "TRANSFER_QUEUE_ENABLE", "transfer_queue.enable", True, "verl/trainer/main_ppo.py (run_ppo)"
)
_NVTX = ConditionalKey(
    "NVTX_INJECTION64_PATH",
    "global_profiler.tool",
    "torch",
    "verl/trainer/constants_ppo.py (get_ppo_ray_runtime_env)",
)

# Keyed by the key index release (platform profile `verl_index`).
RELEASES: dict[str, VerlRayEnv] = {
    "0.7.1": VerlRayEnv((), (_TRANSFER_QUEUE,), "verl 0.7.1 verl/trainer/main_ppo.py:59-77"),
    "0.9.0": VerlRayEnv(_DETERMINISM, (_TRANSFER_QUEUE,), "verl 0.9.0 verl/trainer/constants_ppo.py:118-132"),
    "0.9.1": VerlRayEnv(
        _DETERMINISM, (_TRANSFER_QUEUE, _NVTX), "verl 0.9.1 verl/trainer/constants_ppo.py:127-154"
    ),
}

RUNTIME_ENV_VARS = "ray_kwargs.ray_init.runtime_env.env_vars"


def keys_verl_sets(release: str, config: Mapping[str, Any]) -> dict[str, str]:
    """Env key → why verl's `ray.init` sets it itself, for a plan whose overrides are `config`
    (verl key → value). A release without an entry is read as the newest one rlcat knows: the
    table grows with the key index, and a test keeps both in step."""
    table = RELEASES.get(release) or RELEASES[max(RELEASES, key=_version_tuple)]
    found = dict.fromkeys(table.always, f"verl {release} adds it to ray.init's runtime env ({table.source})")
    for cond in table.conditional:
        if config.get(cond.config_key) == cond.value:
            found[cond.env] = f"verl adds it when {cond.config_key}={cond.value} ({cond.source})"
    for key, value in config.items():
        if key.startswith(RUNTIME_ENV_VARS + "."):
            found[key[len(RUNTIME_ENV_VARS) + 1 :]] = f"the plan sets {key}"
        elif key == RUNTIME_ENV_VARS and isinstance(value, Mapping):
            found.update({str(k): f"the plan sets {RUNTIME_ENV_VARS}" for k in value})
    return found


def _version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))

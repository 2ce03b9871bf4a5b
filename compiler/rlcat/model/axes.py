"""The four axes of a recipe, and the shape of entry names. Shared by the pydantic schemas and the
compile path, so this module imports nothing heavy."""

from __future__ import annotations

from typing import Literal

# Literals rather than Enums: strict validation then accepts the YAML strings as they are.
Algorithm = Literal["grpo", "dapo", "ppo"]
Backend = Literal["fsdp", "fsdp2", "megatron"]
Engine = Literal["vllm", "sglang"]
Mode = Literal["colocate", "fully_async", "one_step_off"]
ALGORITHMS: tuple[Algorithm, ...] = ("grpo", "dapo", "ppo")
BACKENDS: tuple[Backend, ...] = ("fsdp", "fsdp2", "megatron")
ENGINES: tuple[Engine, ...] = ("vllm", "sglang")
MODES: tuple[Mode, ...] = ("colocate", "fully_async", "one_step_off")
# The modes that give trainer and rollout their own GPU pools (resources.trainer_gpus and
# rollout_gpus; verl sizes the pools from trainer.* and rollout.* nnodes and n_gpus_per_node)
SPLIT_MODES: tuple[Mode, ...] = ("fully_async", "one_step_off")

# Recipes and catalog entries are found by file name, so names are file-name safe.
NAME_PATTERN = r"^[a-z0-9][a-z0-9_.\-]*$"

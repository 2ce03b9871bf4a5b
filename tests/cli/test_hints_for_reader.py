"""Hints in the reader's language: the same guard finding tells a launch script's author the verl key
to set (`rlcat lint`) and a recipe's author the recipe field (`rlcat compile` / `validate`). One place
renders a hint for its reader (guards.base.Hint, through run_guards)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rlcat.guards import REGISTRY
from rlcat.guards.base import hint, knob, said

from conftest import Result

Run = Callable[..., Result]
ARF = "actor_rollout_ref"
SCRIPT = """#!/usr/bin/env bash
python3 -m verl.trainer.main_ppo \\
    algorithm.adv_estimator=grpo \\
    data.train_batch_size=16 \\
    data.max_prompt_length=512 \\
    data.max_response_length=1024 \\
    actor_rollout_ref.actor.ppo_mini_batch_size=16 \\
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2 \\
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=4 \\
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=4 \\
    trainer.n_gpus_per_node=8 \\
    {extra}
"""
RECIPE = """\
name: hinted
extends: gsm8k_qwen3_8b_fsdp
summary: a recipe with one problem
{extra}
"""
# guard: (the script's override, the recipe's lines, the script's hint, the recipe's hint)
CASES: dict[str, tuple[str, str, str, str]] = {
    "RLC702": (
        "actor_rollout_ref.rollout.n=1",
        "batch:\n  responses_per_prompt: 1",
        "set actor_rollout_ref.rollout.n to 4 or more",
        "set batch.responses_per_prompt to 4 or more",
    ),
    "RLC903": (
        "reward.custom_reward_function.path=/shared/tmp/reward.py",
        "overrides:\n  reward.custom_reward_function.path: /shared/tmp/reward.py",
        "review the code it names",
        'review the code it names; if it is trusted, say why: allow: {RLC903: "the reason"}',
    ),
}


def _hints(rlcat: Run, code: str, *args: str) -> list[str]:
    result = rlcat(*args, "--format", "json")
    data: dict[str, Any] = json.loads(result.out)
    return [d["hint"] for d in data["diagnostics"] if d["code"] == code]


@pytest.mark.parametrize("code", CASES, ids=list(CASES))
def test_a_script_gets_verl_keys_and_a_recipe_its_fields(rlcat: Run, tmp_path: Path, code: str) -> None:
    override, lines, for_script, for_recipe = CASES[code]
    script = tmp_path / "run.sh"
    script.write_text(SCRIPT.format(extra=override))
    assert _hints(rlcat, code, "lint", str(script)) == [for_script]
    recipe = tmp_path / "hinted.yaml"
    recipe.write_text(RECIPE.format(extra=lines))
    assert _hints(rlcat, code, "validate", str(recipe), "--platform", "cuda") == [for_recipe]


def test_a_script_missing_its_micro_batch_is_told_the_verl_key(rlcat: Run, tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text(
        SCRIPT.replace("    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2 \\\n", "").format(extra="")
    )
    hints = _hints(rlcat, "RLC703", "lint", str(script))
    assert (
        f"set {ARF}.actor.ppo_micro_batch_size_per_gpu, or turn {ARF}.actor.use_dynamic_bsz and "
        f"{ARF}.rollout.log_prob_use_dynamic_bsz on"
    ) in hints, hints
    assert not [h for h in hints if "batch.micro_batch_size_per_gpu" in h or "batch.dynamic" in h], hints


def test_a_platform_guard_tells_a_script_what_to_set(rlcat: Run, tmp_path: Path) -> None:
    """On ROCm a recipe's author may just remove the setting (the profile sets triton); a script has
    no profile, and verl would pick aiter."""
    key = f"{ARF}.rollout.engine_kwargs.sglang.attention_backend"
    script = tmp_path / "run.sh"
    script.write_text(SCRIPT.format(extra=f"{ARF}.rollout.name=sglang +{key}=fa3"))
    hints = _hints(rlcat, "RLC501", "lint", str(script), "--platform", "rocm")
    assert hints == [f"set {key}=triton (without it verl picks aiter on ROCm)"]


def test_one_hint_two_readers() -> None:
    responses = knob("batch.responses_per_prompt", f"{ARF}.rollout.n", value=4)
    text = hint("set ", responses, said(" (or more)", ""))
    assert text.for_reader("recipe") == "set batch.responses_per_prompt: 4 (or more)"
    assert text.for_reader("script") == f"set {ARF}.rollout.n=4"


def test_no_guard_hint_names_a_recipe_field_to_a_script() -> None:
    """Guards whose hints name settings build them with `hint(...)`: a plain-string hint naming a
    recipe section would reach a script's author as is. The recipe's own sections, by name."""
    import inspect

    recipe_sections = ("batch.", "algo.", "parallelism.", "resources.", "--engine", "allow: {")
    for guard in REGISTRY.values():
        source = inspect.getsource(inspect.getmodule(guard))  # type: ignore[arg-type]
        for line in source.splitlines():
            stripped = line.strip()
            if stripped.startswith('hint="') or stripped.startswith('hint=f"'):
                assert not any(s in stripped for s in recipe_sections), (guard.id, stripped)

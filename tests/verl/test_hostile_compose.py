"""Hostile values composed with real verl trees: what a recipe holds is what verl receives after
Hydra parses the overrides and OmegaConf resolves the config — interpolation text stays text,
quotes, backslashes and line breaks survive, nothing is read from the environment."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from rlcat.dev import compose as verl_compose

from conftest import Result

Run = Callable[..., Result]
PARENT = "gsm8k_qwen3_8b_fsdp"

EXPERIMENT_NAMES = [
    "${oc.env:RLCAT_TEST_SECRET}",
    "run-${oc.decode:'123'}",
    "${trainer.project_name}",
    "a \\${x} and \\\\${y}",
    "${",
    'it\'s "quoted"',
    "back\\slash\\",
    "two\nlines\n",
    "tab\tand #hash, comma=equals",
]


@pytest.mark.parametrize("name", EXPERIMENT_NAMES, ids=range(len(EXPERIMENT_NAMES)))
def test_verl_receives_the_recipe_text(
    rlcat: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.setenv("RLCAT_TEST_SECRET", "leaked")
    recipe = tmp_path / "recipes" / "hostile.yaml"
    recipe.parent.mkdir(parents=True)
    recipe.write_text(
        f"name: hostile\nextends: {PARENT}\nsummary: x\ntrainer:\n  experiment: {json.dumps(name)}\n",
        encoding="utf-8",
    )
    result = rlcat("compile", str(recipe), "--platform", "cuda", "--format", "json")
    assert result.code == 0, result.err
    plan = json.loads(result.out)
    version = "0.9.1"  # the cuda profile's key index
    cfg = verl_compose.compose(version, plan["config_name"], plan["overrides"])
    composed = verl_compose.flatten(cfg, resolve=True)
    assert composed["trainer.experiment_name"] == name
    assert "leaked" not in json.dumps(composed)

"""geo3k_megatron_4_4 and dapo_math_fsdp2_4_4, compiled for cuda with vLLM, give the same effective
verl config as the upstream scripts they model, on every key those scripts set.

The upstream override lists (tests/data/upstream/, recorded from the scripts as verl receives them;
for geo3k the list the script meant before a blank line cut its command short) are composed with
Hydra against verl 0.9.1, exactly like rlcat's. Paths and logger names differ by design, and keys
0.9.1 lacks (megatron.grad_offload) are rejected for upstream and left out by rlcat.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from whole_compose import remember_composes

from rlcat.compile.assemble import Request, compile_request
from rlcat.dev import compose as verl_compose
from rlcat.emit.formats import override_texts
from rlcat.guards.config.fsdp_strategy import PAIRS as FSDP_PAIRS

pytestmark = pytest.mark.compose

DATA = Path(__file__).parent.parent / "data" / "upstream"
# Values that name the user's files and dashboards, not the training run.
NAMING_KEYS = {
    "data.train_files",
    "data.val_files",
    "actor_rollout_ref.model.path",
    "trainer.default_local_dir",
    "trainer.logger",
    "trainer.project_name",
    "trainer.experiment_name",
}
ENGINE_FOLLOWS = {engine: role for role, engine in FSDP_PAIRS}
CASES = {
    "geo3k_megatron_4_4": "geo3k_qwen25vl_7b_megatron_4_4",
    "dapo_math_fsdp2_4_4": "dapo_7b_math_fsdp2_4_4",
}


def _key(override: str) -> str:
    return override.split("=", 1)[0].lstrip("+")


@pytest.mark.parametrize("recipe", sorted(CASES))
def test_same_effective_config_as_upstream(recipe: str, monkeypatch: pytest.MonkeyPatch) -> None:
    remember_composes(monkeypatch)
    upstream = json.loads((DATA / f"{CASES[recipe]}.json").read_text())
    compiled = compile_request(Request(recipe, "cuda", engine="vllm"))
    version = compiled.profile.verl_index
    assert (compiled.plan.entrypoint, compiled.plan.config_name) == (
        upstream["entrypoint"],
        upstream["config_name"],
    )

    rejected = verl_compose.rejected_overrides(version, upstream["config_name"], upstream["overrides"])
    rejected_keys = {_key(o) for o, _ in rejected}
    # The only upstream overrides verl 0.9.1 refuses are keys it does not have; rlcat left the
    # same keys out (and said so) instead of failing.
    assert rejected_keys == {s.key for s in compiled.dropped}
    accepted = [o for o in upstream["overrides"] if _key(o) not in rejected_keys]

    theirs = verl_compose.flatten(
        verl_compose.compose(version, upstream["config_name"], accepted), resolve=True
    )
    ours = verl_compose.flatten(
        verl_compose.compose(version, compiled.plan.config_name, override_texts(compiled)), resolve=True
    )
    compared: dict[str, Any] = {}
    for key in dict.fromkeys(_key(o) for o in accepted):
        if key in NAMING_KEYS:
            continue
        compared[key] = theirs[key]
        # verl 0.9 copies each FSDP role's strategy over its engine's (RLC708): the engine gets
        # the role's value, which is what rlcat writes (fsdp_config.strategy stays at verl's default)
        got = ours.get(ENGINE_FOLLOWS.get(key, key), "<missing>")
        assert got == theirs[key], f"{key}: rlcat {got!r}, upstream {theirs[key]!r}"
    assert len(compared) >= 60, len(compared)

    # the env upstream exports is in rlcat's plan too
    assert upstream["env"].items() <= compiled.env_vars.items()

"""`rlcat dev schema-coverage`: how much of what the 68 reference scripts set lands in typed fields."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from rlcat.dev.coverage import TypedKeys, as_json, concept_of, measure, override_key, render

from conftest import Result, example_of

# measured before the schema grew (docs/schema-coverage.md): 4103 of 4703 overrides, 195 of 374 keys
BEFORE_TYPED = 4103


@pytest.mark.slow  # about 200 compiles per field probe round: seconds, not milliseconds
def test_coverage_report(rlcat: Callable[..., Result]) -> None:
    """The help example `rlcat dev schema-coverage --top 40`, run here (not among the help examples)."""
    result = rlcat(*example_of("test_coverage_report"))
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert lines[0] == "68 reference scripts, 4703 overrides verl received"
    typed = re.fullmatch(
        r"typed: (\d+) of 4703 overrides \(([\d.]+)%\); (\d+) of (\d+) distinct keys", lines[1]
    )
    assert typed, lines[1]
    assert int(typed[1]) > BEFORE_TYPED and float(typed[2]) >= 93.0
    assert lines[3] == "most frequent unmodelled concepts (overrides, keys) — top 40:"
    concepts = [line.split()[1] for line in lines[4:] if not line.startswith("          ")]
    assert 0 < len(concepts) <= 40
    shown = set(concepts) | {line.split()[1] for line in lines[4:] if line.startswith("          ")}
    # the concepts this schema now types: not among the most frequent unmodelled ones any more
    for key in (
        "reward.custom_reward_function.path",  # reward
        "reward_model.reward_manager",  # reward, the legacy name (an alternative of reward.manager)
        "algorithm.rollout_correction.rollout_is",  # rollout correction
        "actor_rollout_ref.actor.policy_loss.loss_mode",  # GSPO and other policy losses
        "actor_rollout_ref.rollout.multi_turn.max_user_turns",  # multi-turn with tools
        "actor_rollout_ref.actor.megatron.virtual_pipeline_model_parallel_size",
        "trainer.default_local_dir",  # checkpoints
        "model_engine",  # the config-group choice backend: megatron makes
    ):
        assert key not in shown, key


def test_bad_scripts_folder(rlcat: Callable[..., Result], tmp_path: Path) -> None:
    result = rlcat("dev", "schema-coverage", "--scripts", str(tmp_path / "missing"))
    assert result.code == 2 and "RLC105" in result.err


def test_keys_prefixes_and_concepts(tmp_path: Path) -> None:
    assert override_key("++a.b=1") == "a.b" and override_key("~c.d") == "c.d"
    assert concept_of("algorithm.rollout_correction.rollout_is") == "algorithm.rollout_correction"
    assert concept_of("trainer.default_local_dir") == "trainer.default_local_dir"
    assert (
        concept_of("actor_rollout_ref.rollout.free_cache_engine")
        == "actor_rollout_ref.rollout.free_cache_engine"
    )
    assert concept_of("actor_rollout_ref.actor.fsdp_config.x") == "actor_rollout_ref.actor.fsdp_config"

    typed = TypedKeys({"a.b": "f"}, {"x.kwargs": "rollout.engine_kwargs"})
    (tmp_path / "s.json").write_text(json.dumps({"overrides": ["a.b=1", "+x.kwargs.y=2", "z=3", "z=4"]}))
    cov = measure(tmp_path, typed)
    assert (cov.scripts, cov.overrides, cov.typed) == (1, 4, 2)
    assert cov.concepts() == [("z", 2, [("z", 2)])]
    assert json.loads(as_json(cov)) == {
        "scripts": 1,
        "overrides": 4,
        "typed": 2,
        "share": 0.5,
        "distinct_keys": 3,
        "distinct_typed": 2,
        "unmodelled": [{"concept": "z", "overrides": 2, "keys": {"z": 2}}],
    }
    text = render(cov, top=3)
    assert "typed: 2 of 4 overrides (50.0%)" in text and "     2  z" in text

"""RLC802's table: every key it names is in the releases it covers, and each hint is verl's own
migration target. The guard's cases are data in tests/guards/RLC802.yaml."""

from __future__ import annotations

import pytest

from rlcat.guards.base import in_range
from rlcat.guards.drift.unread_keys import UNREAD, UnreadSection, _hint
from rlcat.verl.index import KeyIndex, available_versions, load_index


def _holds(index: KeyIndex, key: str) -> bool:
    """A key of the release, a section of its keys, or inside one of its open dicts."""
    return (
        index.has(key)
        or key in index.open_dicts
        or any(k.startswith(key + ".") for k in index.keys)
        or bool(index.open_dict_of(key))
    )


@pytest.mark.parametrize("row", UNREAD, ids=[row.prefix for row in UNREAD])
def test_table_names_keys_the_release_has(row: UnreadSection) -> None:
    releases = [v for v in available_versions() if in_range(v, row.verl)]
    assert releases
    for release in releases:
        index = load_index(release, "ppo_trainer")
        assert _holds(index, row.prefix), (release, row.prefix)
        for old, new in row.moved.items():
            assert old.split(".", 1)[0] == row.prefix
            assert _holds(index, new), (release, new)


def test_hint_names_the_new_home_or_says_there_is_none() -> None:
    reward_model = next(row for row in UNREAD if row.prefix == "reward_model")
    assert "reward.reward_model.model_path" in _hint("reward_model.model.path", reward_model)
    assert "reward.reward_kwargs.overlong_buffer_cfg.len" in _hint(
        "reward_model.reward_kwargs.overlong_buffer_cfg.len", reward_model
    )
    assert "reward.reward_manager.name" in _hint("reward_model.reward_manager", reward_model)
    assert "no counterpart" in _hint("reward_model.model.external_lib", reward_model)

"""RLC802's table: every key it names is in the releases it covers, and each hint is verl's own
migration target (read from verl's source into schemas/verl/renames.json). The guard's cases are
data in tests/guards/RLC802.yaml."""

from __future__ import annotations

import pytest

from rlcat.guards.base import in_range
from rlcat.guards.drift.unread_keys import UNREAD, Unread, UnreadSection, _hint, unread
from rlcat.verl.index import KeyIndex, available_versions, load_index
from rlcat.verl.names import FULLY_ASYNC_MAIN, MAIN_PPO
from rlcat.verl.renames import migration


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
        moves = {old: new for old, new in migration().items() if old.split(".", 1)[0] == row.prefix}
        assert moves, row.prefix  # verl's own migration moves every section of the table
        for new in moves.values():
            assert _holds(index, new), (release, new)


def test_hint_names_the_new_home_or_says_there_is_none() -> None:
    def home(key: str) -> str | None:
        found = unread(key, MAIN_PPO, "0.9.1")
        assert found is not None, key
        return found.home

    assert home("reward_model.model.path") == "reward.reward_model.model_path"
    assert home("+reward_model.reward_kwargs.overlong_buffer_cfg.len") == (
        "reward.reward_kwargs.overlong_buffer_cfg.len"
    )
    assert home("reward_model.reward_manager") == "reward.reward_manager.name"
    assert home("reward_model.model.external_lib") is None
    found = unread("reward_model.reward_manager", MAIN_PPO, "0.9.1")
    assert found is not None and "reward.reward_manager.name instead" in _hint(found)
    assert "no counterpart" in _hint(Unread("reward_model.model.external_lib", found.section, None))
    # the fully-async entrypoint runs verl's migration, and 0.7.1's main_ppo still did
    assert unread("reward_model.reward_manager", FULLY_ASYNC_MAIN, "0.9.1") is None
    assert unread("reward_model.reward_manager", MAIN_PPO, "0.7.1") is None

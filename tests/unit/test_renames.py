"""schemas/verl/renames.json: where verl moved a config key, derived from the releases (verl's own
migration read from its source, sections moved between the key indexes), fresh, and looked up by
the name a release gives a key (rlcat.verl.renames)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from rlcat.dev import renames as generator
from rlcat.dev.trees import VERL_VERSIONS, is_fetched, require_tree
from rlcat.verl.index import load_index, manifest
from rlcat.verl.renames import migration, renamed, renames

SCHEMAS = Path(__file__).resolve().parents[2] / "schemas" / "verl"


def _defaults(version: str) -> dict[str, dict[str, object]]:
    """{index file: {key: default}} of a release, from the committed key index."""
    return {
        e["file"]: {
            k: d[0]
            for k, d in load_index(version, e["config_name"], tuple(e["group_overrides"])).keys.items()
        }
        for e in manifest(version)["entries"]
    }


@pytest.mark.skipif(
    not all(map(is_fetched, VERL_VERSIONS)), reason="verl trees not fetched (rlcat dev fetch-verl)"
)
def test_the_committed_table_is_what_the_releases_give() -> None:
    """`rlcat dev verl-index --check` composes every release; this regenerates the table alone from
    the committed indexes and the release trees, and compares bytes."""
    doc = generator.renames_doc(list(VERL_VERSIONS), _defaults, require_tree, generator.reference_renames())
    assert generator.render(doc) == (SCHEMAS / generator.RENAMES_FILE).read_text(encoding="utf-8")


def test_migration_is_read_from_the_function_verl_ships(tmp_path: Path) -> None:
    """Plain assignments, a loop over names, a loop over a section's keys through an alias, a
    subscript with a name, and a whole section: each assignment is one move; other code is not."""
    source = tmp_path / generator.MIGRATION_FILE
    source.parent.mkdir(parents=True)
    source.write_text(
        textwrap.dedent(
            """
            def migrate_legacy_reward_impl(config):
                if config.old.workers is not None:
                    config.new.workers = config.old.workers
                for key in ["a", "b"]:
                    if config.old.get(key) is not None:
                        config.new.model[key] = config.old[key]
                with open_dict(config.new):
                    config.new["kwargs"] = config.old["kwargs"]
                legacy = config.old.rollout
                for key in legacy.keys():
                    config.new.model.rollout[key] = legacy[key]
                config.new.fusion = config.fusion
                unrelated = compute(config)
                del config.old
                return config

            def something_else(config):
                config.x = config.y
            """
        )
    )
    assert generator.verl_migration(tmp_path) == [
        ("old.workers", "new.workers"),
        ("old.a", "new.model.a"),
        ("old.b", "new.model.b"),
        ("old.kwargs", "new.kwargs"),
        ("old.rollout", "new.model.rollout"),
        ("fusion", "new.fusion"),
    ]
    assert generator.verl_migration(tmp_path / "no-such-release") == []


def test_a_section_moves_only_where_every_leaf_and_default_says_so() -> None:
    older = {
        "critic.model.fsdp_config.size": -1,
        "critic.model.fsdp_config.offload": False,
        "critic.model.fsdp_config._target_": "Old",
        "critic.model.path": None,
        "data.datagen.path": None,  # nulls alone: any section of nulls would match
        "data.datagen.name": None,
        "actor.replay.mode": "disabled",  # two sections of that name: the closer one wins
        "actor.replay.file": None,
        "x.gone.k": 1,  # two equally close candidates: ambiguous, left out
        "y.only.q": 2,  # its leaves are nowhere: dropped, not moved
    }
    newer = {
        "critic.fsdp.size": -1,
        "critic.fsdp.offload": False,
        "critic.fsdp.extra": 0,
        "critic.fsdp._target_": "New",
        "critic.model.path": None,
        "actor.fsdp_config.size": -1,  # same leaves, but an old section under another name
        "actor.fsdp_config.offload": False,
        "trainer.sampler.path": None,
        "trainer.sampler.name": None,
        "actor.engine.replay.mode": "disabled",
        "actor.engine.replay.file": None,
        "critic.engine.replay.mode": "disabled",
        "critic.engine.replay.file": None,
        "x.a.gone.k": 1,
        "x.b.gone.k": 1,
    }
    older |= {"actor.fsdp_config.size": -1, "actor.fsdp_config.offload": False}
    older |= {"actor.engine.replay.mode": "disabled", "actor.engine.replay.file": None}
    older |= {"critic.engine.replay.mode": "disabled", "critic.engine.replay.file": None}
    older |= {"x.a.gone.k": 1, "x.b.gone.k": 1}
    assert generator.moved_sections(older, newer) == [
        ("actor.replay", "actor.engine.replay"),
        ("critic.model.fsdp_config", "critic.fsdp"),
    ]


def test_the_reference_table_gives_only_what_the_indexes_confirm() -> None:
    """Rows of the reference's table: one the reference doubts, one whose names do not pair, one
    whose leaf changes type, one no release has, are left out; `a / b` pairs with a relative name,
    braces expand."""
    table = textwrap.dedent(
        """
        | old key | new key | when | evidence |
        |---|---|---|---|
        | `r.skip / dump` | `s.enable / s.dir (+ s.more.*)` | v2 | semantics |
        | `{a,b}.replay.*` | `{a,b}.engine.replay.*` | v2 | same leaves |
        | `t.legacy` | `t.v1 (+ t.v1.*)` | v2 | not 1:1 |
        | `t.kind` | `t.flag` | v2 | same meaning |
        | `d.gen.*` | `t.sampler.{name,path}? (unverified)` | v2 | similar |
        | `m.*` | `n.x, n.y` | v2 | migration |
        | `gone.key` | `never.there` | v2 | a guess |
        """
    )
    releases = {
        "v1": {
            "r.skip": False,
            "r.dump": "/tmp",
            "a.replay.mode": "off",
            "b.replay.mode": "off",
            "t.legacy": "auto",
        },
        "v2": {
            "s.enable": False,
            "s.dir": "~/dump",
            "a.engine.replay.mode": "off",
            "b.engine.replay.mode": "off",
            "t.v1": True,
            "t.flag": True,
        },
    }
    releases["v1"]["t.kind"] = "auto"
    found = generator.stated_renames(table, ["v1", "v2"], lambda v: {"ppo_trainer.json": releases[v]})
    assert found == [
        ("r.skip", "s.enable", "v2"),
        ("r.dump", "s.dir", "v2"),
        ("a.replay", "a.engine.replay", "v2"),
        ("b.replay", "b.engine.replay", "v2"),
    ]


def test_the_table_holds_what_the_releases_show() -> None:
    moves = migration()
    assert moves["reward_model.reward_manager"] == "reward.reward_manager.name"
    assert moves["reward_model.model.path"] == "reward.reward_model.model_path"
    assert moves["custom_reward_function"] == "reward.custom_reward_function"
    found = {(r.old, r.new, r.since) for r in renames()}
    assert ("critic.model.fsdp_config", "critic.fsdp", "0.9.0") in found
    assert (
        "actor_rollout_ref.actor.router_replay",
        "actor_rollout_ref.actor.megatron.router_replay",
        "0.9.1",
    ) in found
    assert ("actor_rollout_ref.rollout.skip_rollout", "skip.rollout.enable", "0.9.0") in found
    # a guess the reference data calls unverified, and nulls alone, are no evidence
    assert not any(
        r.old.startswith(("data.datagen", "data.sampler", "trainer.use_legacy")) for r in renames()
    )


@pytest.mark.parametrize(
    ("release", "config", "groups", "key", "new"),
    [
        # 0.7.1 → 0.9.0
        ("0.9.0", "ppo_trainer", (), "critic.model.fsdp_config.fsdp_size", "critic.fsdp.fsdp_size"),
        ("0.9.0", "ppo_trainer", (), "actor_rollout_ref.rollout.skip_dump_dir", "skip.rollout.dump_dir"),
        # 0.7.1's name on 0.9.1, and a `+` written before it
        ("0.9.1", "ppo_trainer", (), "+critic.model.fsdp_config.qat.enable", "critic.fsdp.qat.enable"),
        # 0.9.0 → 0.9.1: the section now lives on the engine the config runs
        (
            "0.9.1",
            "ppo_trainer",
            ("model_engine=megatron",),
            "actor_rollout_ref.ref.router_replay.mode",
            "actor_rollout_ref.ref.megatron.router_replay.mode",
        ),
        ("0.9.1", "ppo_trainer", (), "actor_rollout_ref.actor.router_replay.mode", None),  # FSDP: none
        ("0.9.1", "ppo_trainer", (), "trainer.nnodes", None),  # the release has it
        ("0.9.0", "ppo_trainer", (), "actor_rollout_ref.actor.router_replay.mode", None),  # not yet moved
        ("0.7.1", "ppo_trainer", (), "critic.model.fsdp_config.fsdp_size", None),
        (
            "0.9.1",
            "ppo_megatron_trainer",
            (),
            "actor_rollout_ref.actor.megatron.grad_offload",
            None,
        ),  # dropped
    ],
)
def test_renamed_gives_the_name_the_release_has(
    release: str, config: str, groups: tuple[str, ...], key: str, new: str | None
) -> None:
    index = load_index(release, config, groups)
    moved = renamed(key, index)
    assert (moved.new if moved else None) == new
    if moved is not None:
        assert index.has(moved.new)
        assert moved.rename.why().startswith(f"verl {moved.rename.since} moved {moved.rename.old} to ")

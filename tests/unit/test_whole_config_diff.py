"""The whole-config comparison of `rlcat import --whole` (rlcat.importer.whole), on flattened configs
as rlcat.dev.whole makes them: both ways, interpolations named back to the key they come from,
differences accepted by the user or on keys the entrypoint never reads, kinds set aside, and the
recipe line that causes each difference."""

from __future__ import annotations

from typing import Any

import pytest

from rlcat.importer.whole import ABSENT, Attribution, compare_whole, render_whole
from rlcat.model.plan import Layer, Origin

RECIPE = "recipes/run.yaml"
ORIGINS = {
    "actor_rollout_ref.actor.strategy": Origin(Layer.RECIPE, RECIPE, RECIPE, 4, field="backend"),
    "actor_rollout_ref.rollout.engine_kwargs": Origin(Layer.RECIPE, RECIPE, RECIPE, 9, field="overrides"),
}
SOURCE: dict[str, Any] = {
    "actor_rollout_ref.actor.strategy": "fsdp",
    "actor_rollout_ref.ref.strategy": "fsdp",
    "actor_rollout_ref.rollout.engine_kwargs.vllm.x": 1,
    "data.train_batch_size": 256,
    "trainer.logger": ["console"],
    "trainer.project_name": "p",
    "actor_rollout_ref.model.path": "/models/a",
    "reward_model.reward_manager": "dapo",
}


def ours(**changed: Any) -> dict[str, Any]:
    out = dict(SOURCE)
    for key, value in changed.items():
        dotted = key.replace("__", ".")
        if value is ABSENT:
            out.pop(dotted)
        else:
            out[dotted] = value
    return out


def attribution(raw: dict[str, Any] | None = None) -> Attribution:
    return Attribution(ORIGINS, raw or {})


def test_the_same_config_has_no_difference() -> None:
    proof = compare_whole(SOURCE, dict(SOURCE), attribution())
    assert proof.differences == [] and proof.ok
    assert proof.compared == len(SOURCE)


@pytest.mark.parametrize(
    ("changed", "key", "source", "recipe"),
    [
        pytest.param({"data__train_batch_size": 512}, "data.train_batch_size", 256, 512, id="value"),
        pytest.param({"data__seed": 7}, "data.seed", ABSENT, 7, id="only-the-recipe-has-it"),
        pytest.param(
            {"data__train_batch_size": ABSENT}, "data.train_batch_size", 256, ABSENT, id="only-the-source"
        ),
        pytest.param(
            {"trainer__logger": "console"}, "trainer.logger", ["console"], "console", id="list-vs-text"
        ),
        pytest.param(
            {"data__train_batch_size": True}, "data.train_batch_size", 256, True, id="bool-is-no-number"
        ),
    ],
)
def test_every_leaf_is_compared_both_ways(
    changed: dict[str, Any], key: str, source: Any, recipe: Any
) -> None:
    proof = compare_whole(SOURCE, ours(**changed), attribution())
    assert [(d.key, d.source, d.ours) for d in proof.differences] == [(key, source, recipe)]
    assert not proof.ok


def test_numbers_compare_as_verl_reads_them() -> None:
    assert compare_whole({"a.b": 1}, {"a.b": 1.0}, attribution()).ok


def test_the_recipe_line_that_sets_the_key_is_named() -> None:
    proof = compare_whole(SOURCE, ours(actor_rollout_ref__actor__strategy="fsdp2"), attribution())
    (difference,) = proof.differences
    assert difference.cause == f"{RECIPE}:4 [backend]"


def test_a_key_inside_a_dict_the_recipe_sets_whole_names_that_line() -> None:
    changed = ours(actor_rollout_ref__rollout__engine_kwargs__vllm__x=2)
    (difference,) = compare_whole(SOURCE, changed, attribution()).differences
    assert difference.cause == f"{RECIPE}:9 [overrides]"


@pytest.mark.parametrize(
    "raw", ["${actor_rollout_ref.actor.strategy}", "${..actor.strategy}"], ids=["absolute", "relative"]
)
def test_an_interpolated_value_names_the_line_of_the_key_it_comes_from(raw: str) -> None:
    changed = ours(actor_rollout_ref__actor__strategy="fsdp2", actor_rollout_ref__ref__strategy="fsdp2")
    proof = compare_whole(SOURCE, changed, attribution({"actor_rollout_ref.ref.strategy": raw}))
    causes = {d.key: d.cause for d in proof.differences}
    assert causes["actor_rollout_ref.ref.strategy"] == f"{RECIPE}:4 [backend]"


def test_a_key_no_recipe_line_sets_says_so() -> None:
    (difference,) = compare_whole(SOURCE, ours(data__train_batch_size=1), attribution()).differences
    assert difference.cause == "no recipe line sets it: verl's default"


def test_the_source_line_is_the_one_setting_the_key_or_its_section() -> None:
    lines = {"actor_rollout_ref.rollout.engine_kwargs": 12}
    changed = ours(actor_rollout_ref__rollout__engine_kwargs__vllm__x=2)
    (difference,) = compare_whole(SOURCE, changed, attribution(), source_lines=lines).differences
    assert difference.source_line == 12


def test_an_accepted_difference_does_not_fail_and_keeps_its_reason() -> None:
    changed = ours(trainer__logger=["console", "wandb"], data__train_batch_size=128)
    accepted = {"trainer.logger": "we log to wandb", "actor_rollout_ref": "no difference here"}
    proof = compare_whole(SOURCE, changed, attribution(), accepted=accepted)
    by_key = {d.key: d for d in proof.differences}
    assert by_key["trainer.logger"].accepted == "we log to wandb"
    assert [d.key for d in proof.failing] == ["data.train_batch_size"]
    assert proof.unused == ["actor_rollout_ref"]  # an accept that matched nothing is named


def test_a_section_accepts_every_key_below_it() -> None:
    changed = ours(actor_rollout_ref__actor__strategy="fsdp2", actor_rollout_ref__ref__strategy="fsdp2")
    proof = compare_whole(SOURCE, changed, attribution(), accepted={"actor_rollout_ref": "FSDP2 on purpose"})
    assert proof.ok and len(proof.differences) == 2


def test_a_key_whose_source_override_hydra_refuses_is_listed_and_does_not_fail() -> None:
    changed = ours(data__train_batch_size=512)
    proof = compare_whole(SOURCE, changed, attribution(), refused={"data": "Could not append"})
    (difference,) = proof.differences
    assert difference.refused == "Could not append" and proof.ok


def test_a_section_left_empty_by_a_refused_key_below_it_is_refused_too() -> None:
    source = {"x.engine_kwargs.sglang": {}}
    recipe = {"x.engine_kwargs.sglang.attention_backend": "triton"}
    refused = {"x.engine_kwargs.sglang.attention_backend": "Could not override"}
    proof = compare_whole(source, recipe, attribution(), refused=refused)
    assert len(proof.differences) == 2 and proof.ok


def test_a_key_the_entrypoint_never_reads_is_listed_and_does_not_fail() -> None:
    changed = ours(reward_model__reward_manager="naive")
    proof = compare_whole(
        SOURCE,
        changed,
        attribution(),
        never_read=lambda k: "legacy" if k.startswith("reward_model.") else None,
    )
    (difference,) = proof.differences
    assert difference.unread == "legacy" and proof.ok


@pytest.mark.parametrize(
    ("kind", "key", "value"),
    [
        ("paths", "actor_rollout_ref.model.path", "/elsewhere"),
        ("names", "trainer.project_name", "q"),
        ("loggers", "trainer.logger", ["wandb"]),
    ],
)
def test_aside_leaves_a_kind_out_only_when_asked(kind: str, key: str, value: Any) -> None:
    changed = {**SOURCE, key: value}
    assert [d.key for d in compare_whole(SOURCE, changed, attribution()).differences] == [key]
    proof = compare_whole(SOURCE, changed, attribution(), aside=[kind])
    assert proof.ok and proof.set_aside == 1 and proof.compared == len(SOURCE) - 1


def test_the_report_lists_each_difference_with_its_line_and_the_counts() -> None:
    changed = ours(actor_rollout_ref__actor__strategy="fsdp2", trainer__logger=["wandb"])
    proof = compare_whole(
        SOURCE,
        changed,
        attribution(),
        source_lines={"actor_rollout_ref.actor.strategy": 30},
        accepted={"trainer.logger": "ours"},
    )
    proof.refused = [("+a.b=1", "Could not append")]
    text = render_whole(proof, "0.9.1")
    assert (
        "differs  line 30: actor_rollout_ref.actor.strategy: source fsdp, recipe fsdp2 <- "
        f"{RECIPE}:4 [backend] (UNEXPLAINED)" in text
    )
    assert "accepted trainer.logger: source [console], recipe [wandb]" in text
    assert "refused  the source's +a.b=1: Could not append" in text
    assert text.rstrip().endswith(
        "8 leaves compared: 6 same, 1 accepted, 0 never read, 0 refused in the source, 1 unexplained"
    )

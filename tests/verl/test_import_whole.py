"""`rlcat import --whole` over the reference scripts that launch core verl: each imported and
compiled for cuda (the round-trip test's imports, shared on one worker), then the source and the
recipe composed with Hydra against verl 0.9.1 in this one process (`prove_whole_config`, the
command's own path) and compared on every leaf key, both ways.

The count of exact round trips is measured here and written in docs/import.md with the rest and
their reasons; a script leaving the list, or one joining it, fails this test.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cli.import_helpers import DATA, SCRIPTS, environment, launches_verl, outputs, record
from rlcat.catalog import Catalog
from rlcat.cli.import_cmd import prove_whole_config
from rlcat.dev.compose import ENTRY_DIRS
from rlcat.importer import import_run, prove, read_source, target_for, write_files

pytestmark = [pytest.mark.compose, pytest.mark.slow, pytest.mark.xdist_group("reference-imports")]

# core verl: not verl-recipe's trainers, and an entry config the release ships (0.9.1 has no
# fully_async_dapo_trainer, which one fully-async script names)
CORE = [
    n
    for n in SCRIPTS
    if launches_verl(n) and not n.startswith("verl-recipe__") and record(n)["config_name"] in ENTRY_DIRS
]
# upstream's own settings a guard refuses: compared, and counted apart (docs/import.md)
GUARD_REFUSED = {
    "examples__grpo_trainer__run_deepseek_v4_veomni",
    # RLC713: a rollout expert parallel size other than TP x DP, which verl refuses at start-up
    "examples__grpo_trainer__run_qwen3_235b_a22b_megatron",
    "examples__grpo_trainer__run_qwen3_30b_a3b_megatron",
    "verl__experimental__fully_async_policy__shell__dapo_7b_math_fsdp2_4_12",
    "verl__experimental__fully_async_policy__shell__geo3k_qwen25vl_7b_megatron_4_4",
    "verl__experimental__fully_async_policy__shell__grpo_qwen35_35b_megatron_async",
    "verl__experimental__fully_async_policy__shell__run_qwen35_35b_a3b_math_dynamic_megatron",
}
# the scripts that do not round-trip exactly, and why (docs/import.md lists them)
NOT_EXACT: dict[str, str] = {
    # megatron.param_offload=$True and two more: text where verl holds a bool (RLC402): left out
    "verl__experimental__fully_async_policy__shell__run_qwen35_35b_a3b_math_dynamic_megatron": "megatron",
    # trainer.logger='[console,wandb]' quoted through a shell variable: one name no tracking backend
    # has, where verl holds a list (RLC402; verl's Tracking asserts at start-up): left out
    "verl__experimental__fully_async_policy__shell__geo3k_qwen3vl_30b_a3b_fsdp2_32_32": "logger",
    "verl__experimental__fully_async_policy__shell__geo3k_qwen3vl_8b_fsdp2_16_16_npu": "logger",
}


@pytest.fixture(scope="module")
def proofs(reference_imports: Callable[[str], Any], monkeypatch_module: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch_module.setenv("HOME", "$HOME")  # ${oc.env:HOME} resolves to what the script's text says
    monkeypatch_module.setenv("PWD", "$PWD")
    out = {}
    for name in CORE:
        done = reference_imports(name)
        compiled = done.report.compiled
        assert compiled is not None, name
        out[name] = (done, prove_whole_config(done.imported, compiled, [], {}))
    return out


@pytest.fixture(scope="module")
def monkeypatch_module() -> Any:
    with pytest.MonkeyPatch.context() as patch:
        yield patch


def test_the_reference_scripts_round_trip_on_the_whole_config(proofs: dict[str, Any]) -> None:
    failing = {name: [d.key for d in proof.failing] for name, (_, proof) in proofs.items() if not proof.ok}
    assert set(failing) == set(NOT_EXACT), {n: keys[:5] for n, keys in failing.items()}
    exact = len(CORE) - len(NOT_EXACT)
    refused = sorted(n for n, (_, p) in proofs.items() if p.ok and any(d.refused for d in p.differences))
    unread = sorted(n for n, (_, p) in proofs.items() if p.ok and any(d.unread for d in p.differences))
    assert [n.rsplit("__", 1)[1] for n in refused] == [
        "run_gpt_oss_20b_fsdp",
        "run_qwen3_30b_a3b_megatron",
        "dapo_30b_a3b_math_fsdp_npu",
        "grpo_qwen35_35b_megatron_async",
    ]
    assert [n.rsplit("__", 1)[1] for n in unread] == [
        "run_hy_v3_megatron",
        "run_nemotron_nano_v3_30b_a3b_megatron",
        "run_qwen3_30b_a3b_megatron",
        "run_qwen3_30b_veomni",
    ]
    assert (len(CORE), exact) == (64, 61)


def test_guard_refusals_of_upstream_s_own_settings_are_counted_apart(proofs: dict[str, Any]) -> None:
    refused = {name for name, (done, _) in proofs.items() if done.report.findings}
    assert refused == GUARD_REFUSED


@pytest.mark.parametrize(
    ("name", "key", "present"),
    [
        # calculate_log_probs alone: no token-level importance sampling (verl's default: off)
        ("examples__grpo_trainer__run_qwen3_5_35b_megatron", "algorithm.rollout_correction.rollout_is", True),
        # fsdp_config.strategy=fsdp2 alone: verl overwrites it with actor.strategy, upstream trains FSDP1
        (
            "verl__experimental__fully_async_policy__shell__dapo_7b_math_fsdp2_8_8",
            "actor_rollout_ref.actor.strategy",
            True,
        ),
        # a Megatron script that does not set the precision-aware optimizer does not gain it
        (
            "examples__grpo_trainer__run_deepseek_v4_flash_megatron",
            "actor_rollout_ref.actor.optim.override_optimizer_config.use_precision_aware_optimizer",
            False,
        ),
        # FSDP turbo keeps its turbo_config whole
        (
            "examples__grpo_trainer__run_qwen3_5_27b_fsdp_turbo",
            "actor_rollout_ref.actor.fsdp_config.turbo_config.distributed.fsdp_plan.apply_modules.lm_head",
            True,
        ),
        # the VeOmni script stays a VeOmni actor (model_engine=veomni kept under overrides:)
        (
            "examples__grpo_trainer__run_deepseek_v4_veomni",
            "actor_rollout_ref.actor.veomni.expert_parallel_size",
            True,
        ),
    ],
)
def test_known_cases_keep_the_source_s_value(
    proofs: dict[str, Any], name: str, key: str, present: bool
) -> None:
    """`present`: the key is in verl's composed config (else neither side may add it)."""
    done, proof = proofs[name]
    assert (key in proof.leaves) == present and key not in {d.key for d in proof.differences}
    if name.endswith("fsdp2_8_8"):  # the finding says the script's own setting is ineffective
        assert "RLC708" in {d.code for d in done.report.diagnostics}


LINT_DATA = Path(__file__).resolve().parents[1] / "data" / "lint"


@pytest.mark.parametrize(
    "source",
    [
        DATA / "verl-recipe__dapo__test_dapo_7b_math.sh",  # verl's own migration of reward_model.*
        LINT_DATA / "renamed_keys.sh",  # 0.7.1's names
        LINT_DATA / "renamed_router_replay.sh",  # 0.9.0's names
    ],
    ids=lambda p: p.stem,
)
def test_migrated_source_composes_as_the_recipe(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With --migrate the source side is composed as verl receives it once the migration ran (each
    rewritten key under its new name, the value as written): it then gives verl the same whole
    config as the recipe, and the proof names each rewrite."""
    monkeypatch.setenv("HOME", "$HOME")
    monkeypatch.setenv("PWD", "$PWD")
    catalog = Catalog.default()
    target = target_for("cuda", catalog)
    env = environment(source.stem) if source.parent == DATA else {}
    run = read_source(source, env=env, outputs=outputs, groups=list(target.groups))
    imported = import_run(run, target, catalog, "migrated", migrate=True)
    written = write_files(imported, tmp_path, force=False)
    report = prove(written[0], Catalog([tmp_path, *catalog.roots]), "cuda", run, imported.solution)
    assert report.compiled is not None and not report.unexplained
    proof = prove_whole_config(imported, report.compiled, [], {})
    assert proof.ok, [(d.key, d.source, d.ours) for d in proof.failing]
    assert not proof.refused  # nothing of the migrated source is refused by Hydra
    migrated = imported.solution.migrated
    assert migrated and [old for old, _ in proof.migrated] == [run.settings[k].text for k in migrated]
    for (_, new), home in zip(proof.migrated, migrated.values(), strict=True):
        assert new.lstrip("+").startswith(home + "=")

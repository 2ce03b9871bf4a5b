"""The escape hatches against real Hydra and verl's real config trees: Hydra's `+`/`++` prefixes as
`overrides:` and --override write them, FSDP2 per role, trust_remote_code for data loading and
`$PWD` in catalog paths. Hydra is the oracle: what rlcat emits composes, and what rlcat refuses,
Hydra refuses too."""

from __future__ import annotations

from pathlib import Path

import pytest
from whole_compose import compose_whole

from rlcat.catalog import Catalog
from rlcat.compile.assemble import Compiled, Request, compile_request
from rlcat.dev.compose import compose, flatten, rejected_overrides
from rlcat.diagnostics import Diagnostic, RlcatError, Severity
from rlcat.emit.formats import FORMATS, override_texts

from conftest import REPO

pytestmark = pytest.mark.compose

RECIPE = "gsm8k_qwen3_8b_fsdp"
# one platform per verl release rlcat ships a key index for
PLATFORMS = {"cuda": "0.9.1", "rocm": "0.9.0", "rocm-7.0.2": "0.7.1"}
ADDED = "trainer.rlcat_added.note"  # a key no verl release has
EXISTING = "trainer.save_freq"


def compiled(
    platform: str, *overrides: str, recipe: str = RECIPE, catalog: Catalog | None = None
) -> Compiled:
    request = Request(recipe, platform, overrides=list(overrides), allow_known_broken=True)
    return compile_request(request, catalog)


def composed(c: Compiled, resolve: bool = False) -> dict[str, object]:
    return compose_whole(_release(c), c.plan.config_name, override_texts(c), resolve=resolve)


def _release(c: Compiled) -> str:
    return c.profile.verl_index


def refusal(platform: str, *overrides: str) -> list[Diagnostic]:
    """The errors of a compile that fails (notes such as RLC304, untested cell, left out)."""
    with pytest.raises(RlcatError) as caught:
        compiled(platform, *overrides)
    return [d for d in caught.value.diagnostics if d.severity >= Severity.ERROR]


@pytest.mark.parametrize("platform", PLATFORMS)
def test_add_and_force_add_compose_as_written(verl_trees: dict[str, Path], platform: str) -> None:
    c = compiled(platform, f"+{ADDED}=1", f"++{EXISTING}=2")
    texts = override_texts(c)
    assert f"+{ADDED}=1" in texts and f"++{EXISTING}=2" in texts
    for fmt in ("overrides", "shell", "json", "yaml"):
        out = FORMATS[fmt](c)
        assert f"+{ADDED}" in out and f"++{EXISTING}" in out, fmt
    flat = flatten(compose(_release(c), c.plan.config_name, texts))
    assert flat[ADDED] == 1 and flat[EXISTING] == 2


@pytest.mark.parametrize("platform", PLATFORMS)
def test_refused_forms_are_refused_by_hydra_too(verl_trees: dict[str, Path], platform: str) -> None:
    release = PLATFORMS[platform]
    # `+` where verl has a value
    (error,) = refusal(platform, f"+{EXISTING}=2")
    assert error.code == "RLC408" and "Could not append to config" in error.message
    hydra = rejected_overrides(release, "ppo_trainer", [f"+{EXISTING}=2"])
    assert "Could not append to config. An item is already at 'trainer.save_freq'" in hydra[0][1]
    # no prefix where verl has no key: did-you-mean, and the hint names the `+` form
    (error,) = refusal(platform, f"{ADDED}=1")
    assert error.code == "RLC401" and f"+{ADDED}" in (error.hint or "")
    hydra = rejected_overrides(release, "ppo_trainer", [f"{ADDED}=1"])
    assert hydra[0][1].startswith(f"ConfigCompositionException: Could not override '{ADDED}'")


def test_add_judged_as_hydra_judges_it(verl_trees: dict[str, Path]) -> None:
    """`+` is also accepted where verl holds null, and with a list value where verl holds a list
    (Hydra merges it): the same answers as Hydra's."""
    null_key = "actor_rollout_ref.actor.optim.warmup_style"
    for text in (f"+{null_key}=cosine", "+trainer.logger=[console]"):
        c = compiled("cuda", text)
        assert text in override_texts(c)
        assert rejected_overrides("0.9.1", "ppo_trainer", [text]) == []


def test_recipe_overrides_keep_their_prefix(verl_trees: dict[str, Path], tmp_path: Path) -> None:
    recipe = tmp_path / "recipes" / "with_prefixes.yaml"
    recipe.parent.mkdir()
    recipe.write_text(
        "name: with_prefixes\n"
        f"extends: {RECIPE}\n"
        "summary: Hydra's prefixes in overrides\n"
        "overrides:\n"
        f"  +{ADDED}: hello\n"
        f"  ++{EXISTING}: 3\n",
        encoding="utf-8",
    )
    c = compiled("cuda", recipe=str(recipe))
    flat = composed(c)
    assert flat[ADDED] == "hello" and flat[EXISTING] == 3
    bad = recipe.read_text(encoding="utf-8").replace(f"++{EXISTING}", f"+{EXISTING}")
    recipe.write_text(bad, encoding="utf-8")
    with pytest.raises(RlcatError) as caught:
        compiled("cuda", recipe=str(recipe))
    # the refusal; beside it, RLC710's warning: trainer.save_freq is a typed field's key too
    (finding,) = [d for d in caught.value.diagnostics if d.severity >= Severity.ERROR]
    assert (finding.code, finding.file, finding.line) == ("RLC408", str(recipe), 6)
    assert {d.code for d in caught.value.diagnostics} == {"RLC408", "RLC710"}


@pytest.mark.parametrize("platform", ["cuda", "rocm"])
def test_fsdp2_for_the_actor_only(verl_trees: dict[str, Path], platform: str, tmp_path: Path) -> None:
    recipe = tmp_path / "recipes" / "actor_fsdp2.yaml"
    recipe.parent.mkdir()
    recipe.write_text(
        "name: actor_fsdp2\n"
        "extends: ppo_qwen2_7b_gsm8k\n"
        "summary: FSDP2 for the actor, FSDP for the reference and critic\n"
        "parallelism:\n  actor: {strategy: fsdp2}\n",
        encoding="utf-8",
    )
    flat = composed(compiled(platform, recipe=str(recipe)), resolve=True)
    assert flat["actor_rollout_ref.actor.strategy"] == "fsdp2"
    assert flat["actor_rollout_ref.ref.strategy"] == "fsdp"
    assert flat["critic.strategy"] == "fsdp"


def test_fsdp2_role_on_a_megatron_recipe_is_refused() -> None:
    with pytest.raises(RlcatError) as caught:
        compile_request(Request("gsm8k_qwen3_8b_megatron", "cuda", sets=["parallelism.actor.strategy=fsdp2"]))
    assert [(d.code, d.key) for d in caught.value.diagnostics] == [("RLC301", "parallelism.actor.strategy")]


def test_trust_remote_code_reaches_data_loading(verl_trees: dict[str, Path]) -> None:
    for platform in PLATFORMS:
        flat = composed(compiled(platform, recipe="qwen3_5_35b_megatron"))
        assert flat["data.trust_remote_code"] is True, platform
        assert flat["actor_rollout_ref.model.trust_remote_code"] is True, platform


def test_pwd_in_a_catalog_path_resolves_at_launch(
    verl_trees: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = tmp_path / "catalog"
    (user / "datasets").mkdir(parents=True)
    shipped = (REPO / "catalog" / "datasets" / "gsm8k.yaml").read_text(encoding="utf-8")
    entry = shipped.replace("name: gsm8k", "name: here_data").replace(
        "train_files: [~/data/gsm8k/train.parquet]", "train_files: [$PWD/data/train.parquet]"
    )
    (user / "datasets" / "here_data.yaml").write_text(entry, encoding="utf-8")
    recipe = tmp_path / "recipes" / "here.yaml"
    recipe.parent.mkdir()
    recipe.write_text(
        f"name: here\nextends: {RECIPE}\nsummary: data under the launch folder\ndataset: here_data\n",
        encoding="utf-8",
    )
    c = compiled("cuda", recipe=str(recipe), catalog=Catalog.default([tmp_path]))
    monkeypatch.setenv("PWD", "/launch/dir")
    monkeypatch.setenv("HOME", "/home/someone")
    flat = composed(c, resolve=True)
    assert flat["data.train_files"] == "/launch/dir/data/train.parquet"
    assert flat["data.val_files"] == "/home/someone/data/gsm8k/test.parquet"

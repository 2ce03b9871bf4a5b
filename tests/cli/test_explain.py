"""`rlcat explain RECIPE NAME`: a verl key, an environment variable, a recipe field or a subtree of
verl's config, in text and JSON; anything else is bad input (exit 2) with the close names."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from rlcat.catalog import Catalog
from rlcat.compile.assemble import Request, compile_request
from rlcat.diagnostics import ExitCode
from rlcat.verl.index import load_index

from conftest import REPO, Result

Run = Callable[..., Result]
RECIPE = "gsm8k_qwen3_8b_fsdp"
FSDP_CONFIG = "actor_rollout_ref.actor.fsdp_config"


def _line_of(text: str, recipe: str = RECIPE) -> int:
    """The line of the recipe file that holds `text` (origins point at it)."""
    lines = (REPO / "recipes" / f"{recipe}.yaml").read_text().splitlines()
    return next(n for n, line in enumerate(lines, 1) if text in line)


def _json(r: Result) -> dict:
    assert r.code == 0, r.err
    return json.loads(r.out)


# --- unknown names -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "close"),
    [
        ("actor_rollout_ref.actor.ppo_mini_batch_sise", "actor_rollout_ref.actor.ppo_mini_batch_size"),
        ("batch.mini_batch_sise", "batch.mini_batch_size"),
        ("resources.gpus_per_nod", "resources.gpus_per_node"),
        ("actor_rollout_ref.actor.fsdp_confg", "actor_rollout_ref.actor.fsdp_config"),
    ],
    ids=["verl-key", "recipe-field", "recipe-field-2", "subtree"],
)
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_unknown_name_is_bad_input_with_close_names(rlcat: Run, name: str, close: str, fmt: str) -> None:
    r = rlcat("explain", RECIPE, name, "--format", fmt)
    assert r.code == ExitCode.INPUT, r.out
    assert r.out == "" and "Traceback" not in r.err
    assert r.err.startswith(f"{name} RLC401 error: not a key of verl 0.9.1 (ppo_trainer)"), r.err
    assert f"'{close}'" in r.err.split("hint: did you mean ", 1)[1], r.err


# --- a subtree of verl's config ------------------------------------------------------------------


def test_subtree_lists_what_the_plan_sets_with_origins_and_counts_the_defaults(rlcat: Run) -> None:
    r = rlcat("explain", RECIPE, FSDP_CONFIG)
    assert r.code == 0, r.err
    compiled = compile_request(Request(RECIPE, "cuda"), Catalog.default())
    index = load_index("0.9.1", "ppo_trainer")
    below = [k for k in compiled.plan.overrides if k.startswith(FSDP_CONFIG + ".")]
    unset = [k for k in index.keys if k.startswith(FSDP_CONFIG + ".") and k not in below]
    assert below and unset
    head = r.out.splitlines()[0]
    assert head == (
        f"{FSDP_CONFIG}: subtree of verl's config; the plan sets {len(below)} keys, "
        f"{len(unset)} keys at verl's defaults"
    )
    line = _line_of("offload: {param: false")
    assert f"{FSDP_CONFIG}.param_offload = False\n" in r.out
    assert f"  recipe        False  recipes/{RECIPE}.yaml:{line}\n" in r.out
    assert f"at verl's defaults (the plan does not set them): {len(unset)}" in r.out
    assert f"  {FSDP_CONFIG}.dtype = bfloat16\n" in r.out  # a default, as verl's YAML writes it


def test_subtree_json_has_every_key_below_it(rlcat: Run) -> None:
    data = _json(rlcat("explain", RECIPE, FSDP_CONFIG, "--format", "json"))
    assert data["kind"] == "subtree" and data["verl_version"] == "0.9.1"
    index = load_index("0.9.1", "ppo_trainer")
    set_keys = {k["key"] for k in data["keys"]}
    unset_keys = {u["key"] for u in data["unset"]}
    assert set_keys | unset_keys >= {k for k in index.keys if k.startswith(FSDP_CONFIG + ".")}
    assert not set_keys & unset_keys
    param = next(k for k in data["keys"] if k["key"] == f"{FSDP_CONFIG}.param_offload")
    assert param["value"] == "False" and param["verl_default"] == "False"
    assert [(h["layer"], h["field"], h["line"]) for h in param["history"]] == [
        ("recipe", "actor.offload.param", _line_of("offload: {param: false"))
    ]


def test_a_trailing_dot_reads_a_recipe_field_name_as_a_verl_subtree(rlcat: Run) -> None:
    as_field = rlcat("explain", RECIPE, "trainer")
    assert as_field.code == 0, as_field.err
    assert as_field.out.startswith("trainer: recipe field; sets 7 verl keys in this plan")
    assert "also a subtree of verl's config: `explain trainer.`" in as_field.out
    as_subtree = _json(rlcat("explain", RECIPE, "trainer.", "--format", "json"))
    assert as_subtree["kind"] == "subtree"
    # resources sets trainer.nnodes: in verl's trainer subtree, not under the recipe's trainer field
    assert "trainer.nnodes" in {k["key"] for k in as_subtree["keys"]}
    assert "trainer.nnodes" not in as_field.out


# --- a recipe field ------------------------------------------------------------------------------


def test_recipe_field_names_the_keys_it_sets_with_values_and_origins(rlcat: Run) -> None:
    r = rlcat("explain", RECIPE, "batch.mini_batch_size")
    assert r.code == 0, r.err
    line = _line_of("mini_batch_size:")
    assert r.out.splitlines() == [
        "batch.mini_batch_size: recipe field; sets 1 verl key in this plan",
        f"  {RECIPE} on cuda: verl 0.9.1, ppo_trainer",
        "",
        "actor_rollout_ref.actor.ppo_mini_batch_size = 256",
        "  verl-default  256  verl 0.9.1 ppo_trainer",
        f"  recipe        256  recipes/{RECIPE}.yaml:{line}",
    ]


def test_recipe_field_changed_on_the_command_line_shows_both_layers(rlcat: Run) -> None:
    data = _json(
        rlcat("explain", RECIPE, "batch.mini_batch_size", "--set", "batch.mini_batch_size=128", "-f", "json")
    )
    assert data["kind"] == "field"
    (key,) = data["keys"]
    assert key["key"] == "actor_rollout_ref.actor.ppo_mini_batch_size" and key["value"] == "128"
    assert [(h["layer"], h["value"], h["field"]) for h in key["history"]] == [
        ("recipe", "256", "batch.mini_batch_size"),
        ("command-line", "128", "batch.mini_batch_size"),
    ]
    assert key["history"][1]["label"] == "--set batch.mini_batch_size=128"


@pytest.mark.parametrize(
    ("field", "keys"),
    [
        ("resources.gpus_per_node", ["trainer.n_gpus_per_node"]),
        ("resources", ["trainer.nnodes", "trainer.n_gpus_per_node"]),
        ("model", ["actor_rollout_ref.model.path"]),
        (
            "batch.dynamic_batch_size",
            [
                "actor_rollout_ref.actor.use_dynamic_bsz",
                "actor_rollout_ref.ref.log_prob_use_dynamic_bsz",
                "actor_rollout_ref.rollout.log_prob_use_dynamic_bsz",
            ],
        ),
        ("engine", ["actor_rollout_ref.rollout.name", "VLLM_USE_V1"]),
        ("algorithm", ["algorithm.adv_estimator", "algorithm.use_kl_in_reward"]),
    ],
)
def test_recipe_fields_and_sections_set_these_keys(rlcat: Run, field: str, keys: list[str]) -> None:
    data = _json(rlcat("explain", RECIPE, field, "--format", "json"))
    assert data["kind"] == "field"
    assert [k["key"] for k in data["keys"]] == keys
    for key in data["keys"]:
        assert any(h["field"] == field or h["field"].startswith(field + ".") for h in key["history"])


def test_model_field_points_at_the_catalog_entry(rlcat: Run) -> None:
    r = rlcat("explain", RECIPE, "model")
    assert r.code == 0, r.err
    assert "actor_rollout_ref.model.path = Qwen/Qwen3-8B" in r.out
    assert "catalog model qwen3_8b (catalog/models/qwen3_8b.yaml:1)" in r.out


def test_recipe_field_that_sets_nothing_here_says_so(rlcat: Run) -> None:
    r = rlcat("explain", RECIPE, "batch.micro_batch_size_per_gpu")
    assert r.code == 0, r.err
    assert r.out.startswith("batch.micro_batch_size_per_gpu: recipe field; sets 0 verl keys in this plan")
    assert "it sets nothing here" in r.out
    assert _json(rlcat("explain", RECIPE, "critic", "-f", "json"))["keys"] == []


# --- keys and environment variables --------------------------------------------------------------


def test_key_json_has_the_default_and_every_layer(rlcat: Run) -> None:
    key = "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu"
    data = _json(
        rlcat(
            "explain",
            "geo3k_megatron_4_4",
            key,
            "--platform",
            "rocm",
            "--set",
            "batch.micro_batch_size_per_gpu=4",
            "--format",
            "json",
        )
    )
    assert data["kind"] == "key" and data["name"] == key
    (story,) = data["keys"]
    assert story["value"] == "4" and "verl_default" in story
    assert [h["layer"] for h in story["history"]] == ["recipe", "platform-block", "command-line"]


def test_env_var_set_by_recipe_and_platform_shows_both(rlcat: Run, tmp_path: Path) -> None:
    recipes = tmp_path / "recipes"
    recipes.mkdir()
    (recipes / "child.yaml").write_text(
        "name: child\nsummary: a child\nextends: gsm8k_qwen3_8b_fsdp\nenv:\n  NCCL_MIN_NCHANNELS: '32'\n"
    )
    args = ("explain", "child", "NCCL_MIN_NCHANNELS", "--platform", "rocm", "--catalog", str(tmp_path))
    text = rlcat(*args)
    assert text.code == 0, text.err
    lines = text.out.splitlines()
    layers = [line.split()[0] for line in lines[2:]]
    assert sorted(layers) == ["platform", "recipe"], text.out
    assert any("32" in line and "child.yaml:5" in line for line in lines[2:]), text.out
    assert any("112" in line and "platform rocm" in line for line in lines[2:]), text.out
    data = _json(rlcat(*args, "--format", "json"))
    (story,) = data["keys"]
    assert data["kind"] == "env" and story["env"] is True
    assert {(h["layer"], h["value"]) for h in story["history"]} == {("recipe", "32"), ("platform", "112")}
    assert next(h for h in story["history"] if h["layer"] == "recipe")["field"] == "env.NCCL_MIN_NCHANNELS"
    # the environment variable is also reachable through the recipe field that set it
    through_field = _json(
        rlcat("explain", "child", "env", "--platform", "rocm", "--catalog", str(tmp_path), "-f", "json")
    )
    assert [k["key"] for k in through_field["keys"]] == ["NCCL_MIN_NCHANNELS"]


def test_a_value_replaced_in_a_team_recipe_shows_the_built_in_parents_layer(
    rlcat: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a team's repository, a recipe that extends a built-in one and changes one of its values:
    explain shows every layer, the parent's value among them, and names the parent's file as
    built-in (the team has no recipes/gsm8k_qwen3_8b_fsdp.yaml); show's header does too."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "recipes").mkdir()
    (tmp_path / "recipes" / "child.yaml").write_text(
        f"name: child\nsummary: a child\nextends: {RECIPE}\nbatch:\n  train_batch_size: 512\n"
    )
    parent_line = _line_of("train_batch_size:")
    text = rlcat("explain", "child", "data.train_batch_size", "--catalog", ".")
    assert text.code == 0, text.err
    rows = [line.split() for line in text.out.splitlines()[2:]]
    assert [(r[0], r[1]) for r in rows] == [("verl-default", "1024"), ("recipe", "1024"), ("recipe", "512")]
    assert f"built-in recipes/{RECIPE}.yaml:{parent_line} — replaced below" in text.out
    assert "recipes/child.yaml:5" in text.out and "built-in recipes/child" not in text.out
    story = _json(rlcat("explain", "child", "data.train_batch_size", "--catalog", ".", "--format", "json"))
    history = story["keys"][0]["history"]
    assert [(h["value"], h.get("replaced", False)) for h in history] == [("1024", True), ("512", False)]
    shown = rlcat("show", "child", "--catalog", ".")
    header = f"# child: resolved from recipes/child.yaml <- built-in recipes/{RECIPE}.yaml"
    assert shown.out.startswith(header)

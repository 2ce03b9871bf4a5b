"""The upstream examples (recipes/upstream/): each validates, names the upstream file it was imported
from as the reference record of that file does, is named by the grammar of docs/recipe-names.md
(and its name says what the recipe runs), and compiles on every platform whose support matrix does
not mark its cell known-broken; the docs list them apart, with their provenance. Composing with
real verl is in tests/verl/test_compose_seeds.py."""

from __future__ import annotations

import json
import shutil
from functools import cache
from pathlib import Path

import pytest

from rlcat.catalog import Catalog
from rlcat.compile.assemble import Request, compile_request
from rlcat.docsite.config import mkdocs_yml
from rlcat.docsite.data import load_site
from rlcat.docsite.recipes import recipe_page, recipes_index
from rlcat.model.names import parse_recipe_name
from rlcat.model.recipe import Recipe
from rlcat.resolve.entries import load_platform
from rlcat.survey.recipes import resolve_recipe

from conftest import PLATFORMS, REPO, SEED_RECIPES, UPSTREAM_RECIPES

REFERENCE = REPO / "tests" / "data" / "upstream_scripts"


@cache
def recipe(name: str) -> Recipe:
    return resolve_recipe(name, Catalog.default()).recipe


@cache
def reference_commits() -> dict[tuple[str, str], str]:
    """(repository, path) → commit, from the records of the reference scripts."""
    records = [json.loads(p.read_text()) for p in REFERENCE.glob("*.json")]
    return {(r["repo"], r["path"]): r["commit"] for r in records if "repo" in r}


def test_the_catalog_holds_thirty_upstream_examples_across_the_axes() -> None:
    assert len(UPSTREAM_RECIPES) >= 30
    assert not set(UPSTREAM_RECIPES) & set(SEED_RECIPES)
    recipes = [recipe(n) for n in UPSTREAM_RECIPES]
    assert {r.algorithm for r in recipes} == {"grpo", "dapo", "ppo"}
    assert any(r.algorithm_settings.policy_loss == "gspo" for r in recipes)
    assert {r.engine for r in recipes} == {"vllm", "sglang"}
    assert {r.mode for r in recipes} == {"colocate", "fully_async"}  # no upstream script runs one_step_off
    backends = {"fsdp2" if r.parallelism.actor.strategy == "fsdp2" else r.backend for r in recipes}
    assert backends == {"fsdp", "fsdp2", "megatron"}


@pytest.mark.parametrize("name", UPSTREAM_RECIPES)
def test_upstream_recipe_names_the_file_it_comes_from(name: str) -> None:
    origin = recipe(name).provenance
    assert origin is not None, f"{name} has no provenance"
    assert reference_commits()[(origin.repository, origin.path)] == origin.commit
    assert origin.url == f"https://github.com/{origin.repository}/blob/{origin.commit}/{origin.path}"
    assert (REPO / "recipes" / "upstream" / f"{name}.yaml").read_text().count(origin.commit) == 2  # header


@pytest.mark.parametrize("name", SEED_RECIPES)
def test_hand_written_recipe_names_parse(name: str) -> None:
    assert parse_recipe_name(name) is not None, f"{name} does not follow docs/recipe-names.md"


@pytest.mark.parametrize("name", UPSTREAM_RECIPES)
def test_upstream_recipe_name_says_what_it_runs(name: str) -> None:
    parts = parse_recipe_name(name, canonical=True)
    assert parts is not None, f"{name} is not in the canonical order of docs/recipe-names.md"
    r = recipe(name)
    gspo = r.algorithm_settings.policy_loss == "gspo"
    assert parts.algorithm == ("gspo" if gspo else r.algorithm)
    fsdp2 = r.backend == "fsdp2" or r.parallelism.actor.strategy == "fsdp2"
    assert parts.backend == ("fsdp2" if fsdp2 else r.backend)
    assert parts.engine == (None if r.engine == "vllm" else r.engine)
    assert parts.mode == {"colocate": None, "fully_async": "async", "one_step_off": "one_step_off"}[r.mode]
    res = r.resources
    split = f"{res.trainer_gpus}_{res.rollout_gpus}"
    assert parts.layout == (f"{res.nodes}x{res.gpus_per_node}" if r.mode == "colocate" else split)
    assert parts.model is not None and parts.model.startswith(r.model.replace(".", "_").split("_")[0])


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("gsm8k_qwen3_8b_fsdp", {"task": "gsm8k", "model": "qwen3_8b", "backend": "fsdp"}),
        ("dapo_math_fsdp2_colocate_32", {"algorithm": "dapo", "layout": "32", "mode": "colocate"}),
        ("qwen3_5_35b_megatron_async", {"model": "qwen3_5_35b", "mode": "async", "task": None}),
        (
            "gspo_qwen3_vl_30b_a3b_geo3k_megatron_sglang_4_2_async_npu",
            {"model": "qwen3_vl_30b_a3b", "variant": "npu"},
        ),
    ],
)
def test_grammar_reads_the_parts(name: str, words: dict[str, str | None]) -> None:
    parts = parse_recipe_name(name)
    assert parts is not None
    assert {k: getattr(parts, k) for k in words} == words


@pytest.mark.parametrize(
    "name",
    [
        "qwen3_8b_fsdp_fsdp",  # a qualifier kind twice
        "grpo_llama_gsm8k_fsdp",  # a model without its size
        "grpo_qwen3_8b_imagenet_fsdp_1x8",  # a task the grammar does not know
        "fsdp_1x8",  # neither model nor task
    ],
)
def test_grammar_refuses(name: str) -> None:
    assert parse_recipe_name(name) is None


def test_canonical_order_is_strict() -> None:
    assert parse_recipe_name("grpo_qwen3_8b_gsm8k_fsdp_1x8", canonical=True) is not None
    assert parse_recipe_name("grpo_gsm8k_qwen3_8b_fsdp_1x8", canonical=True) is None
    assert parse_recipe_name("grpo_qwen3_8b_gsm8k_fsdp", canonical=True) is None  # no layout


@pytest.mark.parametrize("name", UPSTREAM_RECIPES)
def test_upstream_recipe_compiles_where_its_matrix_allows(name: str) -> None:
    catalog = Catalog.default()
    r = recipe(name)
    allowed = []
    for platform in PLATFORMS:
        profile, _ = load_platform(platform, catalog)
        broken = any(
            (c.mode, c.engine, c.backend, c.status) == (r.mode, r.engine, r.backend, "known-broken")
            for c in profile.support
        )
        if not broken:
            allowed.append(platform)
            compiled = compile_request(Request(name, platform), catalog)
            assert compiled.plan.entrypoint.startswith("verl.")
    assert "cuda" in allowed


def test_docs_show_the_upstream_examples_apart_with_their_provenance(tmp_path: Path) -> None:
    upstream, own = "grpo_qwen3_8b_gsm8k_math_fsdp_1x8", "gsm8k_qwen3_8b_fsdp"
    files = {
        f"recipes/{upstream}.yaml": f"recipes/upstream/{upstream}.yaml",
        f"recipes/{own}.yaml": f"recipes/{own}.yaml",
        "catalog/models/qwen3_8b.yaml": "catalog/models/qwen3_8b.yaml",
        "catalog/datasets/gsm8k_math.yaml": "catalog/datasets/gsm8k_math.yaml",
        "catalog/platforms/cuda.yaml": "catalog/platforms/cuda.yaml",
    }
    for to, source in files.items():
        (tmp_path / to).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REPO / source, tmp_path / to)
    site = load_site(tmp_path)
    origin = site.recipe(upstream).provenance
    assert origin is not None and site.recipe(own).provenance is None

    index = recipes_index(site)
    mine, theirs = index.split("## Upstream examples")
    assert own in mine and upstream not in mine
    assert upstream in theirs and own not in theirs and origin.url in theirs
    assert "one-step-off" in theirs

    page = recipe_page(site, upstream)
    assert origin.url in page and origin.path in page and origin.commit[:12] in page
    assert origin.url not in recipe_page(site, own)

    nav = mkdocs_yml(site, {}).split("\n")
    section = nav.index('      - "Upstream examples":')
    assert any(upstream in line for line in nav[section:]) and not any(own in line for line in nav[section:])


def test_an_upstream_example_page_shows_one_plan_whole_and_the_others_as_changes(tmp_path: Path) -> None:
    upstream, own = "grpo_qwen3_8b_gsm8k_math_fsdp_1x8", "gsm8k_qwen3_8b_fsdp"
    for to, source in {
        f"recipes/{upstream}.yaml": f"recipes/upstream/{upstream}.yaml",
        f"recipes/{own}.yaml": f"recipes/{own}.yaml",
        "catalog/models/qwen3_8b.yaml": "catalog/models/qwen3_8b.yaml",
        "catalog/datasets/gsm8k_math.yaml": "catalog/datasets/gsm8k_math.yaml",
        "catalog/platforms/cuda.yaml": "catalog/platforms/cuda.yaml",
        "catalog/platforms/rocm.yaml": "catalog/platforms/rocm.yaml",
    }.items():
        (tmp_path / to).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REPO / source, tmp_path / to)
    site = load_site(tmp_path)
    cells = len(site.recipe_cells(upstream))
    assert cells == 2 * len(site.engines(upstream)) and cells > 1

    page = recipe_page(site, upstream)
    # the cuda compile of its own engine whole, with its launch script; the others as changes
    assert page.count("**Overrides** (") == cells
    assert page.count("Launch script (") == 1
    assert page.count("as in the [cuda, ") == cells - 1
    rocm = page[page.index("## rocm {#rocm") :]
    assert "disable_custom_all_reduce" in rocm and "*platform* · [platform rocm" in rocm
    # a recipe written for rlcat is shown the same way: one plan whole, the others as changes
    own_page = recipe_page(site, own)
    own_cells = len(site.recipe_cells(own))
    assert own_cells > 1
    assert own_page.count("Launch script (") == 1
    assert own_page.count("as in the [cuda, ") == own_cells - 1

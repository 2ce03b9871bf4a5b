"""Every ROCm tweak and env var of the rocm profile is in the compiled plan on rocm, with the tweak as
its origin, and absent on cuda; the profiles' data drives the test, the compiler must honour it."""

from __future__ import annotations

import pytest

from rlcat.catalog import Catalog
from rlcat.compile.assemble import Compiled, Request, compile_request
from rlcat.lower.platform import tweak_applies
from rlcat.model.plan import Layer
from rlcat.resolve.entries import load_platform
from rlcat.resolve.extends import load_recipe_source
from rlcat.resolve.recipe import resolve

from conftest import SEED_RECIPES

CATALOG = Catalog.default()
ROCM, _ = load_platform("rocm", CATALOG)
RECIPES = {
    (name, engine): resolve(load_recipe_source(name, CATALOG), CATALOG).recipe.model_copy(
        update={"engine": engine}
    )
    for name in SEED_RECIPES
    for engine in ("vllm", "sglang")
}


def _cases_for(tweak_id: str) -> tuple[str, str]:
    tweak = next(t for t in ROCM.tweaks if t.id == tweak_id)
    for (name, engine), recipe in RECIPES.items():
        if tweak_applies(tweak, recipe):
            return name, engine
    raise AssertionError(f"no seed recipe meets the conditions of tweak {tweak_id}")


def _compile(recipe: str, platform: str, engine: str) -> Compiled:
    return compile_request(Request(recipe, platform, engine=engine), CATALOG)


@pytest.mark.parametrize("tweak_id", [t.id for t in ROCM.tweaks])
def test_tweak_on_rocm_not_on_cuda(tweak_id: str) -> None:
    tweak = next(t for t in ROCM.tweaks if t.id == tweak_id)
    recipe, engine = _cases_for(tweak_id)
    rocm, cuda = _compile(recipe, "rocm", engine), _compile(recipe, "cuda", engine)
    for key, value in tweak.set.items():
        final = rocm.plan.overrides[key].final
        assert final.value == value
        assert final.origin.layer == Layer.PLATFORM and tweak_id in final.origin.label
        assert any(o.key == key for o in rocm.overrides)
        on_cuda = cuda.plan.overrides.get(key)
        assert on_cuda is None or all(tweak_id not in s.origin.label for s in on_cuda.entries)
    for name, value in tweak.env.items():
        setting = next(s for s in rocm.env if s.key == name)
        assert setting.value == value and tweak_id in setting.origin.label
        assert all(tweak_id not in s.origin.label for s in cuda.env)


@pytest.mark.parametrize("name", [v.name for v in ROCM.env])
def test_profile_env_on_rocm_not_on_cuda(name: str) -> None:
    rocm, cuda = (
        _compile("geo3k_megatron_4_4", "rocm", "vllm"),
        _compile("geo3k_megatron_4_4", "cuda", "vllm"),
    )
    setting = next(s for s in rocm.env if s.key == name)
    assert setting.origin.layer == Layer.PLATFORM and setting.origin.reason
    assert name not in cuda.env_vars


def test_tweaks_only_where_their_conditions_hold() -> None:
    """A tweak for SGLang never reaches a vLLM plan, and the other way round."""
    for (recipe, engine), model in RECIPES.items():
        plan = _compile(recipe, "rocm", engine).plan
        for tweak in ROCM.tweaks:
            touched = any(tweak.id in s.origin.label for h in plan.overrides.values() for s in h.entries)
            touched |= any(tweak.id in s.origin.label for h in plan.env.values() for s in h.entries)
            assert touched == tweak_applies(tweak, model), (recipe, engine, tweak.id)


def test_geo3k_rocm_block_sets_micro_batch_and_vanilla_mbridge() -> None:
    plan = _compile("geo3k_megatron_4_4", "rocm", "vllm").plan
    arf = "actor_rollout_ref"
    expected = {
        f"{arf}.actor.ppo_micro_batch_size_per_gpu": 2,
        f"{arf}.actor.use_dynamic_bsz": False,
        f"{arf}.actor.megatron.vanilla_mbridge": True,
    }
    for key, value in expected.items():
        final = plan.overrides[key].final
        assert final.value == value and final.origin.layer == Layer.PLATFORM_BLOCK
        assert final.origin.file == "recipes/geo3k_megatron_4_4.yaml" and final.origin.line

"""Provenance, comparison and survey commands: compile --explain, explain, diff, matrix, guards."""

from __future__ import annotations

import json
from collections.abc import Callable

from rlcat.guards import REGISTRY

from conftest import PLATFORMS, SEED_RECIPES, Result

Run = Callable[..., Result]
MICRO = "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu"


def test_explain_lists_every_layer_in_order(rlcat: Run) -> None:
    r = rlcat(
        "explain",
        "geo3k_megatron_4_4",
        MICRO,
        "--platform",
        "rocm",
        "--set",
        "batch.micro_batch_size_per_gpu=4",
    )
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    assert lines[0] == f"{MICRO} = 4"
    layers = [line.split()[0] for line in lines[2:]]
    assert layers == ["verl-default", "recipe", "platform-block", "command-line"]
    assert "recipes/geo3k_megatron_4_4.yaml:34" in lines[3]
    assert "--set batch.micro_batch_size_per_gpu=4" in lines[5]


def test_explain_env_var_from_a_platform_tweak(rlcat: Run) -> None:
    r = rlcat(
        "explain",
        "dapo_math_fsdp2_4_4",
        "SGLANG_ATTENTION_BACKEND",
        "--platform",
        "rocm",
        "--engine",
        "sglang",
    )
    assert r.code == 0, r.err
    assert r.out.startswith("SGLANG_ATTENTION_BACKEND = triton")
    assert "tweak sglang-attention-triton" in r.out


def test_explain_a_key_only_verl_sets(rlcat: Run) -> None:
    r = rlcat("explain", "gsm8k_qwen3_8b_fsdp", "trainer.default_hdfs_dir")
    assert r.code == 0
    assert "verl's default; rlcat does not set it" in r.out


def test_compile_explain_annotates_every_line(rlcat: Run) -> None:
    plain = rlcat("compile", "geo3k_megatron_4_4", "--platform", "rocm").out.splitlines()
    explained = rlcat("compile", "geo3k_megatron_4_4", "--platform", "rocm", "--explain").out.splitlines()
    overrides = [line.split("  # ")[0].rstrip() for line in explained if "  # env " not in line]
    assert overrides == plain
    assert all("  # " in line for line in explained)
    disable = next(line for line in explained if "disable_custom_all_reduce" in line)
    assert "platform: platform rocm tweak vllm-disable-custom-all-reduce" in disable


def test_compile_explain_json_has_an_origin_per_override(rlcat: Run) -> None:
    data = json.loads(rlcat("compile", "dapo_math_fsdp2_4_4", "--format", "json", "--explain").out)
    keys = {o.split("=", 1)[0].lstrip("+") for o in data["overrides"]}
    assert keys == set(data["origins"]["overrides"])
    assert data["origins"]["overrides"]["data.train_batch_size"]["layer"] == "mode"


def test_explain_refuses_formats_without_room_for_it(rlcat: Run) -> None:
    r = rlcat("compile", "geo3k_megatron_4_4", "--format", "shell", "--explain")
    assert r.code == 2 and "RLC105" in r.err


def test_diff_platforms_shows_tweaks_and_block_with_origins(rlcat: Run) -> None:
    r = rlcat("diff", "geo3k_megatron_4_4", "--platform", "cuda", "--against", "rocm")
    assert r.code == 0, r.err
    out = r.out
    assert "+ actor_rollout_ref.rollout.engine_kwargs.vllm.disable_custom_all_reduce=True" in out
    assert f"~ {MICRO}: 1 -> 2" in out and "platforms.rocm block" in out
    assert "+ actor_rollout_ref.actor.megatron.grad_offload=True" in out  # 0.9.0 has it, 0.9.1 does not
    assert "+ RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO=0" in out


def test_diff_two_recipes_json(rlcat: Run) -> None:
    r = rlcat(
        "diff", "gsm8k_qwen3_8b_fsdp", "gsm8k_qwen3_8b_megatron", "--platform", "rocm", "--format", "json"
    )
    data = json.loads(r.out)
    changes = {c["key"]: c for c in data["changes"]}
    assert changes["group_choices"]["after"] == {"model_engine": "megatron"}
    assert changes["actor_rollout_ref.actor.megatron.tensor_model_parallel_size"]["kind"] == "added"


def test_diff_of_a_plan_with_itself_is_empty(rlcat: Run) -> None:
    r = rlcat("diff", "ppo_qwen2_7b_gsm8k", "ppo_qwen2_7b_gsm8k", "--platform", "rocm")
    assert "(no differences)" in r.out


def test_matrix_covers_every_platform_and_engine(rlcat: Run) -> None:
    for recipe in SEED_RECIPES:
        cells = json.loads(rlcat("matrix", recipe, "--format", "json").out)
        assert {c["platform"] for c in cells} == set(PLATFORMS)
        assert {c["engine"] for c in cells} == {"vllm", "sglang"}
        # a cell the platform marks known-broken is refused for that reason alone; every other compiles
        broken = [c for c in cells if c["support"] == "known-broken"]
        assert all(not c["compiles"] and c["errors"] == ["RLC303"] for c in broken), broken
        assert all(c["compiles"] for c in cells if c not in broken), [c for c in cells if not c["compiles"]]
        assert {c["support"] for c in cells} <= {"supported", "untested", "known-broken"}
    geo = json.loads(rlcat("matrix", "geo3k_megatron_4_4", "--format", "json").out)
    cuda = next(c for c in geo if c["platform"] == "cuda" and c["engine"] == "vllm")
    # grad_offload is left out on 0.9.1 by the key check (an RLC403 note), not by a guard
    assert "RLC801" not in cuda["guards"]


def test_matrix_table(rlcat: Run) -> None:
    r = rlcat("matrix", "dapo_math_fsdp2_4_4", "--platform", "rocm")
    assert r.out.splitlines()[0].split() == [
        "platform",
        "mode",
        "engine",
        "backend",
        "compiles",
        "status",
        "guards",
    ]
    assert len(r.out.splitlines()) == 3


def test_a_cell_that_does_not_compile_is_not_supported(rlcat: Run) -> None:
    """rocm-7.0.2 supports fully-async × vLLM × Megatron; this imported recipe does not compile there
    (keys verl 0.7.1 lacks): the cell says so, with the platform's word beside it."""
    recipe = "grpo_qwen3_5_35b_a3b_dapo_math_megatron_sglang_16_16_async_dynamic"
    cells = json.loads(rlcat("matrix", recipe, "--platform", "rocm-7.0.2", "--format", "json").out)
    vllm = next(c for c in cells if c["engine"] == "vllm")
    assert (vllm["compiles"], vllm["support"], vllm["status"]) == (False, "supported", "does not compile")
    sglang = next(c for c in cells if c["engine"] == "sglang")
    assert (sglang["support"], sglang["status"]) == ("known-broken", "known-broken")
    table = rlcat("matrix", recipe, "--platform", "rocm-7.0.2").out
    row = next(line for line in table.splitlines() if " vllm " in line)
    assert "does not compile (platform: supported)" in row and "NO: RLC801 " in row
    assert all(c["status"] in ("supported", "untested") for c in cells if c["compiles"])


def test_guards_json_lists_the_registry(rlcat: Run) -> None:
    data = json.loads(rlcat("guards", "--format", "json").out)
    assert [g["id"] for g in data] == sorted(REGISTRY)
    for g in data:
        assert {"id", "title", "severity", "source", "docs"} <= set(g)
        assert g["source"] and "**Bad**" in g["docs"]


def test_guards_for_a_platform(rlcat: Run) -> None:
    cuda = {g["id"] for g in json.loads(rlcat("guards", "--platform", "cuda", "--format", "json").out)}
    rocm = {g["id"] for g in json.loads(rlcat("guards", "--platform", "rocm", "--format", "json").out)}
    assert "RLC501" in rocm and "RLC501" not in cuda
    assert "RLC703" in rocm and "RLC703" in cuda


def test_guard_docs_page(rlcat: Run) -> None:
    r = rlcat("guards", "RLC501")
    assert r.code == 0
    assert r.out.startswith("RLC501 sglang_attention_triton_on_rocm (error)")
    assert "**Good**" in r.out and "Sources:" in r.out
    wrong = rlcat("guards", "RLC5O1")
    assert wrong.code == 2 and "did you mean" in wrong.err

"""The table of env keys verl's own ray.init sets (rlcat.launch.verl_ray_env) against the source of
every verl release rlcat indexes: the keys its get_ppo_ray_runtime_env adds after its filter of
the driver's environment, and the TRANSFER_QUEUE_ENABLE of run_ppo."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from rlcat.dev.trees import VERL_VERSIONS
from rlcat.launch.verl_ray_env import RELEASES, keys_verl_sets

pytestmark = pytest.mark.slow  # reads the fetched verl trees (.verl/)


def _forwarded_after_filter(source: str) -> set[str]:
    """String keys of the `for key in (...)` loops that follow the filter loop of
    get_ppo_ray_runtime_env (the keys verl adds whatever the driver's environment holds)."""
    tree = ast.parse(source)
    [function] = [
        n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "get_ppo_ray_runtime_env"
    ]
    loops = [n for n in function.body if isinstance(n, ast.For)]
    keys: set[str] = set()
    for loop in loops[1:]:  # loops[0] is the filter over the defaults
        if isinstance(loop.iter, ast.Tuple):
            keys |= {
                e.value for e in loop.iter.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
            }
    return keys


def test_every_indexed_release_has_an_entry() -> None:
    assert set(VERL_VERSIONS) <= set(RELEASES)


@pytest.mark.parametrize("version", VERL_VERSIONS)
def test_table_matches_verl_source(verl_trees: dict[str, Path], version: str) -> None:
    tree = verl_trees[version]
    constants = (tree / "verl/trainer/constants_ppo.py").read_text(encoding="utf-8")
    assert set(RELEASES[version].always) == _forwarded_after_filter(constants)
    main_ppo = (tree / "verl/trainer/main_ppo.py").read_text(encoding="utf-8")
    assert '"TRANSFER_QUEUE_ENABLE"' in main_ppo and "config.transfer_queue.enable" in main_ppo
    for cond in RELEASES[version].conditional:
        assert cond.env in constants + main_ppo


def test_conditional_keys_follow_the_plan() -> None:
    assert "TRANSFER_QUEUE_ENABLE" not in keys_verl_sets("0.9.1", {})
    assert "TRANSFER_QUEUE_ENABLE" in keys_verl_sets("0.9.1", {"transfer_queue.enable": True})
    assert "NVTX_INJECTION64_PATH" in keys_verl_sets("0.9.1", {"global_profiler.tool": "torch"})
    assert "NVTX_INJECTION64_PATH" not in keys_verl_sets("0.9.0", {"global_profiler.tool": "torch"})
    assert keys_verl_sets("0.7.1", {}) == {}

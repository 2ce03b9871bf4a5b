"""Golden files: the compiled output of every (recipe, platform, format), compared byte for byte.

Rewrite them after an intended change with:  RLCAT_UPDATE_GOLDEN=1 pytest tests/cli/test_golden.py
The same overrides are composed against real verl in test_compose_seeds.py, so a golden file
records output that is proved valid, not merely unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from rlcat.catalog import Catalog

from conftest import SEED_RECIPES, UPDATE_GOLDEN, Result

GOLDEN = Path(__file__).parent.parent / "golden"
FORMATS = {"overrides": "txt", "shell": "sh", "json": "json", "yaml": "yaml"}
PLATFORM_NAMES = sorted(Catalog.default().names("platform"))
CASES = [(r, p, f) for r in SEED_RECIPES for p in PLATFORM_NAMES for f in FORMATS]


def golden_path(recipe: str, platform: str, fmt: str) -> Path:
    return GOLDEN / recipe / f"{platform}.{FORMATS[fmt]}"


@pytest.mark.parametrize(("recipe", "platform", "fmt"), CASES, ids=[f"{r}-{p}-{f}" for r, p, f in CASES])
def test_golden(rlcat: Callable[..., Result], recipe: str, platform: str, fmt: str) -> None:
    result = rlcat("compile", recipe, "--platform", platform, "--format", fmt)
    assert result.code == 0, result.err
    path = golden_path(recipe, platform, fmt)
    if UPDATE_GOLDEN:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(result.out, encoding="utf-8")
    assert path.is_file(), f"no golden file {path}; run RLCAT_UPDATE_GOLDEN=1 pytest {__file__}"
    assert result.out == path.read_text(encoding="utf-8")


def test_no_stale_golden_files() -> None:
    """Every golden file belongs to a current (recipe, platform, format)."""
    expected = {golden_path(*case) for case in CASES}
    found = set(GOLDEN.rglob("*.*"))
    assert found - expected == set(), "golden files for recipes or platforms that no longer exist"


def test_output_is_deterministic(rlcat: Callable[..., Result]) -> None:
    first = rlcat("compile", "geo3k_megatron_4_4", "--platform", "rocm", "--format", "json").out
    second = rlcat("compile", "geo3k_megatron_4_4", "--platform", "rocm", "--format", "json").out
    assert first == second

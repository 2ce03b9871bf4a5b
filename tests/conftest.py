"""Shared fixtures: the CLI in-process, the seed catalog, golden-file updating, verl trees."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from rlcat.catalog import Catalog
from rlcat.cli import main

REPO = Path(__file__).resolve().parent.parent
SEED_RECIPES = sorted(p.stem for p in (REPO / "recipes").rglob("*.yaml"))
ENGINES = ("vllm", "sglang")
PLATFORMS = tuple(sorted(p.stem for p in (REPO / "catalog" / "platforms").rglob("*.yaml")))
# Golden files are rewritten, not compared, when this is set:
#   RLCAT_UPDATE_GOLDEN=1 pytest tests/test_golden.py
UPDATE_GOLDEN = bool(os.environ.get("RLCAT_UPDATE_GOLDEN"))


@dataclass
class Result:
    code: int
    out: str
    err: str


@pytest.fixture
def rlcat(capsys: pytest.CaptureFixture[str]) -> Callable[..., Result]:
    """Run `rlcat ARGS...` in-process as the console script does; returns exit code, stdout and stderr."""

    def run(*args: str) -> Result:
        capsys.readouterr()
        code = main(list(args))
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return run


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    return Catalog.default()

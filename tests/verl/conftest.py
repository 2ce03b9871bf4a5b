"""Fixtures for tests that compose against real verl release trees (never fetched from here)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rlcat.dev.trees import VERL_VERSIONS, require_tree

IndexLoader = Callable[[str, str], dict[str, Any]]


@pytest.fixture(scope="session")
def verl_trees() -> dict[str, Path]:
    """Return the fetched tree of every known release; fail (not skip) with the fetch command.

    Failing rather than skipping keeps a missing tree from silently turning the index freshness
    check green; deselect with ``-m "not compose"`` where no trees are available.
    """
    try:
        return {version: require_tree(version) for version in VERL_VERSIONS}
    except FileNotFoundError as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture(scope="session")
def index_dir() -> Path:
    """Return the committed key index folder (``schemas/verl``)."""
    return Path(__file__).resolve().parents[2] / "schemas" / "verl"


@pytest.fixture(scope="session")
def load_index(index_dir: Path) -> IndexLoader:
    """Return a reader for one committed index file: ``load_index(version, file_name)``."""

    def load(version: str, file_name: str) -> dict[str, Any]:
        data = json.loads((index_dir / version / file_name).read_text(encoding="utf-8"))
        assert isinstance(data, dict)
        return data

    return load

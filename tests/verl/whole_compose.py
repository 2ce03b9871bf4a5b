"""Composing verl configs in tests with no compose run twice: a plan Hydra must accept whole is
composed once where it does, and a test can remember what it composed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pytest

from rlcat.dev import compose as verl_compose

if TYPE_CHECKING:
    from omegaconf import DictConfig


def compose_whole(
    version: str, config_name: str, overrides: Sequence[str], resolve: bool = True
) -> dict[str, Any]:
    """The flattened config verl `version` composes from `overrides`, every one of which it must accept.

    One compose: it succeeds exactly when `rejected_overrides` would find nothing (that function
    composes the whole list first, after parsing each override alone, which a compose does too).
    Only when Hydra refuses is the list taken apart, to name every override it rejects."""
    try:
        cfg = verl_compose.compose(version, config_name, overrides)
    except Exception:
        rejected = verl_compose.rejected_overrides(version, config_name, overrides)
        assert rejected == [], f"verl {version} rejects: {rejected}"
        raise
    return verl_compose.flatten(cfg, resolve=resolve)


def remember_composes(monkeypatch: pytest.MonkeyPatch) -> None:
    """For one test: each distinct compose runs once. `rejected_overrides` ends by composing the
    overrides Hydra accepts, which a test that then compares the accepted ones composes again."""
    real = verl_compose.compose
    seen: dict[tuple[str, str, tuple[str, ...]], DictConfig] = {}

    def compose(version: str, config_name: str, overrides: Sequence[str] = ()) -> DictConfig:
        key = (version, config_name, tuple(overrides))
        if key not in seen:
            seen[key] = real(version, config_name, overrides)  # a refusal raises, and is not kept
        return seen[key]

    monkeypatch.setattr(verl_compose, "compose", compose)

"""Composing a plan that Hydra must accept whole, with one compose where it does."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rlcat.dev import compose as verl_compose


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

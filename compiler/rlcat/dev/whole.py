"""Both sides of `rlcat import --whole` composed with Hydra against a fetched verl release: the
source as verl would receive it (its entry config, its group choices and overrides) and the
compiled recipe (`override_texts`), each flattened to every leaf key with interpolations resolved.

One process composes any number of pairs (`compose_side` is called per side; Hydra is imported
once, and `compose` clears its global state between calls). The comparison itself is
`rlcat.importer.whole`, which needs no Hydra.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from rlcat.dev import compose as verl_compose
from rlcat.dev.trees import FETCH_COMMAND, is_fetched
from rlcat.diagnostics import RlcatError, diag
from rlcat.verl.names import ENTRY_DIRS

if TYPE_CHECKING:
    from omegaconf import DictConfig


@dataclass
class Composed:
    """One side's composed config: every leaf resolved, the same leaves as written (`raw`: an
    interpolation as its `${...}` text, to name what a derived value comes from; flattened when
    first asked for), the overrides Hydra refused."""

    config_name: str
    config: DictConfig
    resolved: dict[str, Any]
    refused: list[tuple[str, str]] = field(default_factory=list)  # (override, Hydra's message)

    @cached_property
    def raw(self) -> dict[str, Any]:
        return verl_compose.flatten(self.config, resolve=False)


def entry_config(config_name: str | None, fallback: str) -> str:
    """The entry config a side composes: its own where rlcat knows the folder, else `fallback`
    (a verl-recipe trainer's config is not in the release: the recipe's config stands in)."""
    return config_name if config_name in ENTRY_DIRS else fallback


def require_whole(version: str) -> None:
    """Raise RlcatError (exit 2) when the whole-config proof cannot run here: Hydra missing (the
    `verl` extra) or the release's config tree not fetched."""
    problems = []
    try:
        import hydra  # noqa: F401
    except ImportError:
        problems.append(("Hydra is not installed", "pip install 'rlcat[verl]'"))
    if not is_fetched(version):
        problems.append((f"verl {version}'s config tree is not fetched", FETCH_COMMAND))
    if problems:
        raise RlcatError(
            [
                diag("RLC1309", f"--whole composes with Hydra: {what}", argument="--whole", hint=hint)
                for what, hint in problems
            ]
        )


def compose_side(version: str, config_name: str, overrides: Sequence[str]) -> Composed:
    """Compose `overrides` on `config_name` of `version`. Overrides Hydra refuses (a key the release
    lacks) are named in `refused` and the rest composed, as a launch of the source on this release
    could not take them either; a refusal with no single culprit raises Hydra's error."""
    try:
        cfg = verl_compose.compose(version, config_name, overrides)
        refused: list[tuple[str, str]] = []
    except Exception:
        refused = verl_compose.rejected_overrides(version, config_name, overrides)
        dropped = {o for o, _ in refused}
        cfg = verl_compose.compose(version, config_name, [o for o in overrides if o not in dropped])
    return Composed(config_name, cfg, verl_compose.flatten(cfg, resolve=True), refused)

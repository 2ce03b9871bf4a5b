"""Apply a platform profile: its environment and the tweaks whose conditions the recipe meets."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from rlcat.model.platform import PlatformProfile, Tweak
from rlcat.model.recipe import Recipe
from rlcat.pipeline.plan import Layer, Origin, Setting


def profile_names(profile: PlatformProfile) -> list[str]:
    """Names a recipe's `platforms:` block may use for this profile, most general first."""
    return [profile.family] if profile.family == profile.name else [profile.family, profile.name]


def allows(conditions: Iterable[tuple[Sequence[str], str]]) -> bool:
    """Each (allowed values, actual value): an empty list allows anything, else the value must be in it."""
    return all(not allowed or value in allowed for allowed, value in conditions)


def tweak_applies(tweak: Tweak, recipe: Recipe) -> bool:
    w = tweak.when
    checks = (
        (w.engine, recipe.engine),
        (w.backend, recipe.backend),
        (w.mode, recipe.mode),
        (w.model, recipe.model),
        (w.recipe, recipe.name),
    )
    if not allows(checks):
        return False
    return w.multi_node is None or w.multi_node == (recipe.resources.nodes > 1)


def platform_env(profile: PlatformProfile, origin: Origin) -> Iterator[Setting]:
    for var in profile.env:
        yield Setting(
            var.name,
            var.value,
            Origin(Layer.PLATFORM, f"platform {profile.name}", origin.file, reason=var.reason),
        )


def platform_tweaks(
    profile: PlatformProfile, recipe: Recipe, origin: Origin
) -> Iterator[tuple[Setting, bool]]:
    """(setting, is_env) for every tweak that applies to the recipe."""
    for tweak in profile.tweaks:
        if not tweak_applies(tweak, recipe):
            continue
        where = Origin(
            Layer.PLATFORM, f"platform {profile.name} tweak {tweak.id}", origin.file, reason=tweak.reason
        )
        for key, value in tweak.set.items():
            yield Setting(key, value, where), False
        for name, value in tweak.env.items():
            yield Setting(name, value, where), True

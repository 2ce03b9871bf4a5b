"""Apply a platform profile: its environment and the tweaks whose conditions the recipe meets."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

from rlcat.diagnostics import Diagnostic, diag
from rlcat.model.plan import REMOVED, Layer, Origin, Plan, Setting

if TYPE_CHECKING:  # the guards import `allows`: a cold `rlcat lint` loads no recipe model
    from rlcat.model.platform import PlatformProfile, Tweak
    from rlcat.model.recipe import Recipe


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


_SETTER = {Layer.RECIPE: "the recipe", Layer.PLATFORM_BLOCK: "the recipe's platforms: block"}


def required_env(profile: PlatformProfile, recipe: Recipe) -> Iterator[tuple[str, str, str]]:
    """(name, value, why) of every variable the profile requires for this recipe: its env entries
    marked `required_because`, and the env of applying tweaks marked `env_required_because`."""
    for var in profile.env:
        if var.required_because:
            yield var.name, var.value, var.required_because
    for tweak in profile.tweaks:
        if tweak.env_required_because and tweak_applies(tweak, recipe):
            for name, value in tweak.env.items():
                yield name, value, tweak.env_required_because


def required_env_conflicts(plan: Plan, profile: PlatformProfile, recipe: Recipe) -> list[Diagnostic]:
    """An error for each required variable the plan gives another value (the recipe's `env:`, its
    platform block or --set beat the profile's other variables), naming both values."""
    found = []
    for name, value, why in required_env(profile, recipe):
        history = plan.env.get(name)
        final = history.final if history else None
        if final is None or final.value == value:
            continue
        given = "removes it" if final.value is REMOVED else f"sets '{final.value}'"
        who = final.origin.argument() or _SETTER.get(final.origin.layer, f"the {final.origin.layer} layer")
        found.append(
            diag(
                "RLC301",
                f"env {name}: {who} {given}, and platform {profile.name} requires '{value}': {why}",
                key=f"env.{name}",
                hint=f"remove {name} from the recipe's env, or set it to '{value}'",
                **final.origin.position(),
            )
        )
    return found

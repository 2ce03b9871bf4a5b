"""The lowering context: what every axis module uses to emit settings with their origins."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cache, lru_cache
from typing import Any

from rlcat.diagnostics import Diagnostic, diag
from rlcat.model.plan import Layer, Origin, Setting
from rlcat.model.platform import PlatformProfile
from rlcat.resolve.recipe import Resolved, default_origin


@dataclass(frozen=True)
class Target:
    """What the lowering needs to know about the platform: its profile and verl's config groups."""

    profile: PlatformProfile
    # config-group options of the target verl release, e.g. {"model_engine": ["dp", "megatron", ...]}
    groups: dict[str, list[str]]


@dataclass
class Lowered:
    """Lowering output: entry decisions plus ordered settings and env."""

    entrypoint: str = ""
    config_name: str = ""
    group_choices: dict[str, str] = field(default_factory=dict)
    # every value each key took during the pass, in the order they were set
    settings: dict[str, list[Setting]] = field(default_factory=dict)
    env: dict[str, list[Setting]] = field(default_factory=dict)
    # the variables the recipe's own `env:` sets: they beat the platform profile's (assemble)
    recipe_env: set[str] = field(default_factory=set)
    diagnostics: list[Diagnostic] = field(default_factory=list)


@cache
def _path(field_path: str) -> tuple[str, ...]:
    return tuple(field_path.split("."))


@cache
def _default_origin(field_path: str) -> Origin:
    """rlcat's default of a field the recipe does not set (what `Resolved.origin` says), made once
    per field: a lowering emits dozens of them, and the importer's search lowers thousands of drafts."""
    return replace(default_origin(field_path), field=field_path)


@lru_cache(maxsize=4096)
def _naming(origin: Origin, field_path: str) -> Origin:
    return replace(origin, field=field_path)


class Lowering:
    """Collects the settings of one lowering pass over a resolved recipe."""

    def __init__(self, resolved: Resolved, target: Target):
        self.resolved = resolved
        self.recipe = resolved.recipe
        self.target = target
        self.out = Lowered()

    def origin(self, field_path: str | None, fallback: Origin | None = None) -> Origin:
        """Who set a recipe field (its file position, `--set` argument or rlcat's default), naming
        the field; without a field, `fallback` (an axis, a mode invariant, a catalog entry)."""
        if field_path is None:
            assert fallback is not None
            return fallback
        found = self.resolved.source.origin(_path(field_path)) or fallback
        if found is None:
            return _default_origin(field_path)
        return found if found.field == field_path else _naming(found, field_path)

    def set(
        self,
        key: str,
        value: Any,
        field: str | None = None,
        *,
        origin: Origin | None = None,
        optional: bool = False,
        alternatives: tuple[str, ...] = (),
        prefix: str = "",
    ) -> None:
        """Emit `key=value`; `field` names the recipe field it comes from (for provenance).

        `alternatives` are the key's names in other verl releases: the check stage keeps the one the
        target release has. `optional` keys are left out, with a note, where the release lacks them.
        `prefix` is Hydra's `+` or `++` as the recipe wrote it in `overrides:`.
        """
        if value is None:
            return
        where = self.origin(field, origin)
        self.out.settings.setdefault(key, []).append(
            Setting(key, value, where, optional=optional, alternatives=alternatives, prefix=prefix)
        )

    def set_if(self, key: str, value: Any, field: str, **kw: Any) -> None:
        """Emit only when the recipe gave a value (None keeps verl's default)."""
        if value is not None:
            self.set(key, value, field, **kw)

    def current(self, key: str) -> Setting:
        """The value a key holds so far in this pass."""
        return self.out.settings[key][-1]

    def env(self, name: str, value: str, *, origin: Origin) -> None:
        self.out.env.setdefault(name, []).append(Setting(name, value, origin))

    def error(
        self, code: str, message: str, field_path: str, hint: str | None = None, because: str | None = None
    ) -> None:
        """A finding about `field_path`; `because` names the field that makes it one (the mode, for
        the GPU split): reported there when the recipe sets it and inherits `field_path`."""
        source = self.resolved.source
        found = diag(code, message, **source.locate(tuple(field_path.split("."))), key=field_path, hint=hint)
        self.out.diagnostics.append(source.at_own_field(found, because) if because else found)


def invariant(mode: str, why: str) -> Origin:
    return Origin(Layer.MODE, f"{mode} mode invariant", reason=why, field="mode")


def axis(name: str, value: str, why: str) -> Origin:
    return Origin(Layer.RECIPE, f"{name} {value}", reason=why, field=name)

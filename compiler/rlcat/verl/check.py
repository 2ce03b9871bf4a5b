"""Check a plan against the key index of the target verl release: prefixes, types, writable values."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from rlcat.diagnostics import Diagnostic, Severity, Where, diag, suggestion_hint
from rlcat.emit.hydra_value import (
    UnrenderableValue,
    check_renderable,
    interpolations_in,
    key_problem,
    leaves,
)
from rlcat.pipeline.plan import Plan, Setting
from rlcat.verl.index import KeyIndex

_NUMBER = (int, float)


@dataclass(frozen=True)
class Override:
    """One checked override: the key as the target release names it and the setting behind it."""

    prefix: str  # "" for an existing key, "++" for a key inside an open dict
    key: str
    setting: Setting


@dataclass
class Checked:
    overrides: list[Override] = field(default_factory=list)
    dropped: list[Setting] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)


def type_matches(expected: str, value: Any, key: str = "") -> bool:
    """Does `value` fit the type of verl's default? Untyped defaults (null, ???, ${...}) take anything."""
    if expected in ("null", "missing", "any"):
        return True
    if value is None:
        return True  # null resets a key to "unset"; verl's dataclasses accept Optional values
    if expected == "bool":
        return isinstance(value, bool)
    if expected in ("int", "float"):
        # int and float defaults are used interchangeably in verl's YAML (top_p: 1, lr: 1e-6)
        return isinstance(value, _NUMBER) and not isinstance(value, bool)
    if expected == "str":
        if key.endswith("_files") and isinstance(value, list):
            # verl's *_files keys take one path or a list of paths (its datasets concatenate them);
            # the YAML default can only show the single-path form
            return all(isinstance(v, str) for v in value)
        return isinstance(value, str)
    if expected == "list":
        return isinstance(value, list)
    if expected == "dict":
        return isinstance(value, dict)
    return True


def check(plan: Plan, index: KeyIndex, skip: set[str] | frozenset[str] = frozenset()) -> Checked:
    """Choose each key's prefix from the index, check its type and that Hydra's grammar can write
    its value; collect findings. The text itself is written by emit."""
    out = Checked()
    suggestions = _Suggestions(index)
    for group, option in plan.group_choices.items():
        options = index.groups.get(group, [])
        if option not in options:
            out.diagnostics.append(
                diag(
                    "RLC401",
                    f"verl {index.verl_version} has no option '{option}' in config group '{group}'",
                    key=group,
                    hint=suggestion_hint(option, options),
                )
            )
    for setting in plan.active_overrides():
        bad_key = key_problem(setting.key)
        if bad_key is not None:
            out.diagnostics.append(
                diag(
                    "RLC406",
                    f"'{setting.key}' cannot be written as a Hydra override key: {bad_key}",
                    key=setting.key,
                    hint="a key inside an open dict must be a plain name; rename it",
                    **_where(setting),
                )
            )
            continue
        if _non_finite(setting.value):
            out.diagnostics.append(
                diag(
                    "RLC103",
                    f"'{setting.key}' holds NaN or an infinity: no verl setting means to take one",
                    key=setting.key,
                    hint="write a finite number",
                    **_where(setting),
                )
            )
            continue
        # only text can hold an interpolation: most values are numbers and flags
        escaped, requested = (
            interpolations_in(setting.value)
            if isinstance(setting.value, (str, list, tuple, dict))
            else (False, False)
        )
        if escaped:
            out.diagnostics.append(
                diag(
                    "RLC407",
                    f"'{setting.key}' holds `${{...}}`: rlcat writes it escaped, so verl receives "
                    "the text, not an interpolation",
                    severity=Severity.WARNING,
                    key=setting.key,
                    hint="to ask verl for a live interpolation, write it under `overrides:` as "
                    "KEY: !interp \"${...}\", or on the command line: --override KEY='${...}'",
                    **_where(setting),
                )
            )
        if requested:
            out.diagnostics.append(
                diag(
                    "RLC407",
                    f"'{setting.key}' holds an interpolation asked for with !interp: verl resolves it "
                    "at launch (environment variables and other keys included)",
                    severity=Severity.WARNING,
                    key=setting.key,
                    hint="review what it reads; validate --strict refuses it",
                    **_where(setting),
                )
            )
        key = index.name_of(setting.key, setting.alternatives)
        if key is None:
            where = _where(setting)
            if setting.optional:
                out.dropped.append(setting)
                out.diagnostics.append(
                    diag(
                        "RLC403",
                        f"verl {index.verl_version} has no key '{setting.key}'; left out",
                        key=setting.key,
                        **where,
                    )
                )
                continue
            open_parent = index.open_dict_of(setting.key)
            if open_parent is None and setting.key in skip:
                continue  # a guard already reported this key, with more to say about it
            if open_parent is None:
                out.diagnostics.append(
                    diag(
                        "RLC401",
                        f"verl {index.verl_version} ({index.config_name}) has no key '{setting.key}'",
                        key=setting.key,
                        hint=suggestions.hint(setting.key),
                        **where,
                    )
                )
                continue
            prefix, key = "++", setting.key
        else:
            prefix = ""
            expected = index.type_of(key)
            if not type_matches(expected, setting.value, key):
                where = _where(setting)
                out.diagnostics.append(
                    diag(
                        "RLC402",
                        f"'{key}' is {expected} in verl {index.verl_version} "
                        f"(default {index.default(key)!r}); got {setting.value!r}",
                        key=key,
                        **where,
                    )
                )
                continue
        try:
            check_renderable(setting.value)
        except UnrenderableValue as exc:
            out.diagnostics.append(diag("RLC405", f"{key}: {exc}", key=key, **_where(setting)))
            continue
        out.overrides.append(Override(prefix, key, setting))
    return out


class _Suggestions:
    """Did-you-mean hints for unknown keys, bounded: a plan with thousands of unknown keys costs a
    scan of the index for the first few only (each scan compares against every key)."""

    LIMIT = 20

    def __init__(self, index: KeyIndex) -> None:
        self.index = index
        self.given = 0

    def hint(self, key: str) -> str | None:
        self.given += 1
        if self.given > self.LIMIT:
            return None
        return suggestion_hint(key, self.index.keys)


def _non_finite(value: Any) -> bool:
    """NaN or an infinity anywhere in `value` (the schema refuses them in typed fields; this covers
    `overrides:`, open dicts such as model_override_config, and --override)."""
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, (list, tuple, dict)):
        return any(isinstance(v, float) and not math.isfinite(v) for v in leaves(value))
    return False


def _where(setting: Setting) -> Where:
    return setting.origin.position()

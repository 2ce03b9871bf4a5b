"""Check a plan against the key index of the target verl release: prefixes, types, writable values."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from rlcat.diagnostics import Diagnostic, Severity, Where, diag, suggestion_hint
from rlcat.model.plan import Plan, Setting
from rlcat.syntax.hydra_value import (
    UnrenderableValue,
    check_renderable,
    interpolations_in,
    key_problem,
    leaves,
)
from rlcat.verl.index import KeyIndex

_NUMBER = (int, float)
_BACKEND_NAME = re.compile(r"[A-Za-z0-9_]+")  # one tracking backend, as verl's Tracking lists them


@dataclass(frozen=True)
class Override:
    """One checked override: the key as the target release names it and the setting behind it."""

    # "" for an existing key; "++" for a key inside an open dict; "+" or "++" as the user wrote it
    prefix: str
    key: str
    setting: Setting


@dataclass
class Checked:
    overrides: list[Override] = field(default_factory=list)
    dropped: list[Setting] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)


def type_matches(expected: str, value: Any, key: str = "") -> bool:
    """Does `value` fit the type of verl's default? Untyped defaults (null, ???, ${...}) take anything;
    a union (`str|float`, what verl's dataclass declares) takes what one of its members takes."""
    if "|" in expected:
        return any(type_matches(member, value, key) for member in expected.split("|"))
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
        if key == "trainer.logger" and isinstance(value, str):
            # verl's Tracking takes one backend's name as well as a list of them
            # (verl/utils/tracking.py:63 in 0.9.1, :59 in 0.7.1: a str becomes [str]); a text that
            # reads like a list ('[console,wandb]' quoted through a shell variable) is one name that
            # no backend has, which Tracking asserts against when the trainer starts (:71)
            return _BACKEND_NAME.fullmatch(value) is not None
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
        if key is None and setting.optional and not setting.prefix:
            out.dropped.append(setting)
            out.diagnostics.append(
                diag(
                    "RLC403",
                    f"verl {index.verl_version} has no key '{setting.key}'; left out",
                    key=setting.key,
                    **_where(setting),
                )
            )
            continue
        if (
            key is None
            and not setting.prefix
            and setting.key in skip
            and index.open_dict_of(setting.key) is None
        ):
            continue  # a guard already reported this key, with more to say about it
        chosen = _prefix(setting, key, index, suggestions)
        if isinstance(chosen, Diagnostic):
            out.diagnostics.append(chosen)
            continue
        prefix, key = chosen
        problem = _type_problem(index, key, setting.value)
        if problem is not None:
            out.diagnostics.append(diag("RLC402", problem, key=key, **_where(setting)))
            continue
        refused = _refused(index, key, setting.value, **_where(setting))
        if refused is not None:
            out.diagnostics.append(refused)
            continue
        try:
            check_renderable(setting.value)
        except UnrenderableValue as exc:
            out.diagnostics.append(diag("RLC405", f"{key}: {exc}", key=key, **_where(setting)))
            continue
        out.overrides.append(Override(prefix, key, setting))
    out.diagnostics += _inside_plain_values(out.overrides)
    return out


def _inside_plain_values(overrides: list[Override]) -> list[Diagnostic]:
    """Keys set inside another key of the plan that holds a plain value (`+a.b=1` with
    `+a.b.c=2`): Hydra would apply them in turn, and one would undo the other."""
    values = {o.key: o.setting.value for o in overrides}
    found = []
    for o in overrides:
        parts = o.key.split(".")
        for i in range(1, len(parts)):
            above = ".".join(parts[:i])
            if above in values and not isinstance(values[above], dict):
                found.append(
                    diag(
                        "RLC402",
                        f"'{o.key}' is set inside '{above}', which this plan sets to {values[above]!r}",
                        key=o.key,
                        hint="set one of them",
                        **_where(o.setting),
                    )
                )
                break
    return found


def _prefix(
    setting: Setting, key: str | None, index: KeyIndex, suggestions: _Suggestions
) -> tuple[str, str] | Diagnostic:
    """(prefix, key) as the override is written, judged as Hydra judges it against verl's composed
    config (hydra/_internal/config_loader_impl.py, _apply_overrides_to_config): `key=` needs the key
    to exist; `+key=` needs it absent, or holding null or `???`, unless the value is a list or a
    mapping (merged into it); `++key=` is accepted anywhere. A key without a prefix inside an open
    dict is rlcat's to write: `++`, the one prefix Hydra takes there whether the key exists or not."""
    version = f"verl {index.verl_version} ({index.config_name})"
    held = _held_at(index, setting.key) if setting.prefix in ("+", "++") else "unchecked"
    built_as = dataclass_holding(index, setting.key) if held is None else None
    if built_as is not None:
        section, target = built_as
        name = setting.key[len(section) + 1 :]
        return diag(
            "RLC409",
            f"'{setting.prefix}{setting.key}' adds a key to {section}, which {version} builds as a "
            f"dataclass ({target}): Hydra takes it, then the dataclass refuses it (unexpected keyword "
            f"argument '{name}')",
            key=setting.key,
            hint=f"{section} has no field '{name}' in this release: check the key's name, or the "
            "release that has it",
            **_where(setting),
        )
    if setting.prefix == "++":
        return "++", key or setting.key
    if setting.prefix == "+":
        if held in (None, "null", "missing") or isinstance(setting.value, (list, dict)):
            return "+", setting.key
        default = f"default {index.default(setting.key)!r}" if index.has(setting.key) else "a section"
        return diag(
            "RLC408",
            f"'+{setting.key}' adds a key, and {version} already has '{setting.key}' ({default}): "
            f"Hydra refuses it (\"Could not append to config. An item is already at '{setting.key}'\")",
            key=setting.key,
            hint=f"override it without the prefix ({setting.key}=…), or with ++ to add or override",
            **_where(setting),
        )
    if key is not None:
        return "", key
    if index.open_dict_of(setting.key) is not None:
        return "++", setting.key
    hint = suggestions.hint(setting.key)
    if _escape_hatch(setting):
        add = f"to add a key {version} does not have, write it with Hydra's + prefix: +{setting.key}"
        hint = f"{hint} Or, {add}" if hint else add[0].upper() + add[1:]
    return diag(
        "RLC401", f"{version} has no key '{setting.key}'", key=setting.key, hint=hint, **_where(setting)
    )


def dataclass_holding(index: KeyIndex, key: str) -> tuple[str, str] | None:
    """(section, class) when the section right above `key` is one verl turns into a dataclass (its
    `_target_`, omega_conf_to_dataclass): a field the class lacks is a TypeError at start-up."""
    section = key.rpartition(".")[0]
    target = f"{section}._target_"
    if not section or not index.has(target):
        return None
    return section, str(index.default(target))


def _escape_hatch(setting: Setting) -> bool:
    """Was the key written by the user (`overrides:` or --override), not lowered by rlcat?"""
    argument = setting.origin.argument() or ""
    return setting.origin.field == "overrides" or argument.startswith("--override ")


def _held_at(index: KeyIndex, key: str) -> str | None:
    """The type of what verl's composed config holds at `key`: a leaf's type, "dict" for a section,
    None where it holds nothing."""
    if index.has(key):
        return index.type_of(key)
    return "dict" if key in index.open_dicts or key in index.sections else None


def _refused(index: KeyIndex, key: str, value: Any, **where: Any) -> Diagnostic | None:
    """RLC410 for a value the section's dataclass refuses by name in its `__post_init__` (the key
    index's `refused`, read from the release's own code), quoting verl's message."""
    for refused_value, message, at in index.refused.get(key, ()):
        if isinstance(value, str) and value == refused_value:
            return diag(
                "RLC410",
                f"verl {index.verl_version} refuses {key}={value} at start-up ({at}): {message!r}",
                key=key,
                hint=f"{key} takes another value in this release: see the message",
                **where,
            )
    return None


def _type_problem(index: KeyIndex, key: str, value: Any) -> str | None:
    """Why `value` does not fit what verl holds at `key` (or above it), or None."""
    if index.has(key):
        expected = index.type_of(key)
        if type_matches(expected, value, key):
            return None
        return (
            f"'{key}' is {expected} in verl {index.verl_version} (default {index.default(key)!r}); "
            f"got {value!r}"
        )
    # a key added below a plain value would replace that value with a mapping (Hydra lets + and ++ do it)
    parts = key.split(".")
    for i in range(len(parts) - 1, 0, -1):
        above = ".".join(parts[:i])
        if index.has(above):
            held = index.type_of(above)
            if held in ("dict", "null", "missing", "any"):
                return None
            return (
                f"'{key}' would turn '{above}', {held} in verl {index.verl_version} "
                f"(default {index.default(above)!r}), into a mapping"
            )
    return None


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

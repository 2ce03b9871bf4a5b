"""Check a plan against the key index of the target verl release and write its override strings."""

from __future__ import annotations

from typing import Any, Final

from ..diagnostics import Diagnostic, diag, suggestion_hint
from ..emit.hydra_value import UnrenderableValue, render
from ..plan import Plan, Setting
from ..record import Record
from .index import KeyIndex

_NUMBER = (int, float)


# Not dataclasses: importing dataclasses (it imports inspect) is a measurable part of a cold compile.
class Override(Record):
    """One checked override: its text and the setting behind it."""

    __slots__ = __match_args__ = ("text", "prefix", "key", "setting")

    def __init__(self, text: str, prefix: str, key: str, setting: Setting) -> None:
        self.text: Final = text
        self.prefix: Final = prefix  # "" for an existing key, "++" for a key inside an open dict
        self.key: Final = key
        self.setting: Final = setting


class Checked:
    __slots__ = ("diagnostics", "dropped", "overrides")

    def __init__(
        self,
        overrides: list[Override] | None = None,
        dropped: list[Setting] | None = None,
        diagnostics: list[Diagnostic] | None = None,
    ) -> None:
        self.overrides: list[Override] = [] if overrides is None else overrides
        self.dropped: list[Setting] = [] if dropped is None else dropped
        self.diagnostics: list[Diagnostic] = [] if diagnostics is None else diagnostics


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
    """Choose each key's prefix from the index, check its type, and render it; collect findings."""
    out = Checked()
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
                        hint=suggestion_hint(setting.key, index.keys),
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
            text = f"{prefix}{key}={render(setting.value)}"
        except UnrenderableValue as exc:
            out.diagnostics.append(diag("RLC405", f"{key}: {exc}", key=key, **_where(setting)))
            continue
        out.overrides.append(Override(text, prefix, key, setting))
    return out


def _where(setting: Setting) -> dict[str, Any]:
    o = setting.origin
    return {"file": o.file, "line": o.line, "col": o.col}

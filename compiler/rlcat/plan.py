"""Settings with provenance, and the plan they make up."""

from __future__ import annotations

from enum import IntEnum
from typing import Any, Final

from .record import Record


class Layer(IntEnum):
    """Who set a value. Later layers win; the order is the one `rlcat explain` prints."""

    VERL_DEFAULT = 0
    RECIPE = 1  # recipe file, rlcat field defaults, catalog entries, axis lowering
    MODE = 2  # invariants a mode brings (fully_async)
    PLATFORM = 3  # platform profile env and tweaks
    PLATFORM_BLOCK = 4  # the recipe's own `platforms:` block
    GUARD = 5  # known-issue guard fixes
    COMMAND_LINE = 6

    def __str__(self) -> str:
        return self.name.lower().replace("_", "-")


# Not dataclasses: importing dataclasses (it imports inspect) is a measurable part of a cold compile.
class Origin(Record):
    """Where a value came from: its layer, a label people read, and a file position when there is one."""

    __slots__ = __match_args__ = ("layer", "label", "file", "line", "col", "reason")

    def __init__(  # noqa: PLR0917 - fields may be passed by position
        self,
        layer: Layer,
        label: str,
        file: str | None = None,
        line: int | None = None,
        col: int | None = None,
        reason: str | None = None,
    ) -> None:
        self.layer: Final = layer
        self.label: Final = label
        self.file: Final = file
        self.line: Final = line
        self.col: Final = col
        self.reason: Final = reason

    def where(self) -> str:
        """The label, with `(file:line)` when the label does not name the file already."""
        if self.file and self.file not in self.label:
            return f"{self.label} ({self.file}" + (f":{self.line}" if self.line else "") + ")"
        return self.label

    def to_dict(self) -> dict[str, Any]:
        return {
            "layer": str(self.layer),
            "label": self.label,
            "file": self.file,
            "line": self.line,
            "reason": self.reason,
        }


def same_value(a: Any, b: Any) -> bool:
    """Equal and of the same type: `1`, `1.0` and `True` are different override values."""
    return a == b and type(a) is type(b)


REMOVED: Any = type("Removed", (), {"__repr__": lambda self: "<removed>"})()


class Setting(Record):
    """One value for a verl key or environment variable, and who set it."""

    __slots__ = __match_args__ = ("key", "value", "origin", "optional", "alternatives")

    def __init__(
        self,
        key: str,
        value: Any,
        origin: Origin,
        optional: bool = False,
        alternatives: tuple[str, ...] = (),
    ) -> None:
        self.key: Final = key
        self.value: Final = value
        self.origin: Final = origin
        # a key that older or newer verl releases lack (e.g. megatron.grad_offload, dropped in 0.9.1):
        # left out with a note instead of failing when the target release does not have it
        self.optional: Final = optional
        # the same key under its names in other verl releases; the check keeps the one the target has
        self.alternatives: Final = alternatives


class History:
    """Every value a key took, in layer order; the last one is in force."""

    __slots__ = ("entries",)

    def __init__(self, entries: list[Setting] | None = None) -> None:
        self.entries = [] if entries is None else entries

    @property
    def final(self) -> Setting:
        return self.entries[-1]

    @property
    def removed(self) -> bool:
        return self.final.value is REMOVED


class Plan:
    """The launch plan as it moves through the pipeline: entrypoint, config, overrides and env."""

    __slots__ = (
        "config_name",
        "entrypoint",
        "env",
        "group_choices",
        "overrides",
        "platform",
        "recipe",
        "verl_index",
        "verl_version",
    )

    def __init__(  # noqa: PLR0917 - fields may be passed by position
        self,
        recipe: str,
        platform: str,
        entrypoint: str,
        config_name: str,
        verl_version: str,
        verl_index: str,
        group_choices: dict[str, str] | None = None,
        overrides: dict[str, History] | None = None,
        env: dict[str, History] | None = None,
    ) -> None:
        self.recipe = recipe
        self.platform = platform
        self.entrypoint = entrypoint
        self.config_name = config_name
        self.verl_version = verl_version
        self.verl_index = verl_index
        self.group_choices = {} if group_choices is None else group_choices
        self.overrides: dict[str, History] = {} if overrides is None else overrides
        self.env: dict[str, History] = {} if env is None else env

    def put(self, setting: Setting, *, env: bool = False) -> None:
        """Record a value. Entries stay in layer order, so a later layer wins whenever it is applied
        (a guard's fix never beats the command line)."""
        table = self.env if env else self.overrides
        history = table.get(setting.key)
        if history is None:
            table[setting.key] = History([setting])
            return
        entries = history.entries
        if entries:
            last = entries[-1]
            same = same_value(last.value, setting.value)
            # the same value again from the same or an earlier layer adds nothing to the story
            if same and setting.origin.layer <= last.origin.layer:
                return
        at = len(entries)
        # a removal is not a value: whatever is set after it applies, from any layer
        while (
            at
            and entries[at - 1].origin.layer > setting.origin.layer
            and entries[at - 1].value is not REMOVED
        ):
            at -= 1
        entries.insert(at, setting)

    def active_overrides(self) -> list[Setting]:
        return [s for h in self.overrides.values() if (s := h.entries[-1]).value is not REMOVED]

    def active_env(self) -> list[Setting]:
        return [s for h in self.env.values() if (s := h.entries[-1]).value is not REMOVED]

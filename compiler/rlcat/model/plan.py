"""Settings with provenance, and the plan they make up."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

from rlcat.diagnostics import Where


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


@dataclass(frozen=True)
class Origin:
    """Where a value came from: its layer, a label people read, and a file position when there is one."""

    layer: Layer
    label: str
    file: str | None = None
    line: int | None = None
    col: int | None = None
    reason: str | None = None
    # the recipe field that set the value (`batch.mini_batch_size`, `model`), when one did:
    # what `rlcat explain RECIPE FIELD` and the field reference page are made from
    field: str | None = None

    def argument(self) -> str | None:
        """The command-line argument that set the value (`--override k=v`, `--set f=v`), if one did."""
        return self.label if self.layer is Layer.COMMAND_LINE else None

    def position(self) -> Where:
        """Where a finding about this value points: its file position, or its argument."""
        return {"file": self.file, "line": self.line, "col": self.col, "argument": self.argument()}

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
    """Equal and of the same type: `1`, `1.0` and `True` are different override values. Strings
    differ in type only by how their `${` reach verl (live or escaped), so text without one is the
    same value whatever its str type (an --override's `async` is a live Interpolation)."""
    if isinstance(a, str) and isinstance(b, str) and "${" not in a:
        return a == b
    return a == b and type(a) is type(b)


REMOVED: Any = type("Removed", (), {"__repr__": lambda self: "<removed>"})()


@dataclass(frozen=True)
class Setting:
    """One value for a verl key or environment variable, and who set it."""

    key: str
    value: Any
    origin: Origin
    # a key that older or newer verl releases lack (e.g. megatron.grad_offload, dropped in 0.9.1):
    # left out with a note instead of failing when the target release does not have it
    optional: bool = False
    # the same key under its names in other verl releases; the check keeps the one the target has
    alternatives: tuple[str, ...] = ()
    # Hydra's prefix as the user wrote it (`overrides:` or --override): "+" adds a key verl's config
    # lacks, "++" adds or overrides; "" lets the check choose (`++` inside an open dict)
    prefix: str = ""


@dataclass
class History:
    """Every value a key took, in layer order; the last one is in force."""

    entries: list[Setting] = field(default_factory=list)

    @property
    def final(self) -> Setting:
        return self.entries[-1]

    @property
    def removed(self) -> bool:
        return self.final.value is REMOVED


@dataclass
class Plan:
    """The launch plan as it moves through the pipeline: entrypoint, config, overrides and env."""

    recipe: str
    platform: str
    entrypoint: str
    config_name: str
    verl_version: str
    verl_index: str
    group_choices: dict[str, str] = field(default_factory=dict)
    overrides: dict[str, History] = field(default_factory=dict)
    env: dict[str, History] = field(default_factory=dict)

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

    def put_beneath(self, setting: Setting, *, env: bool = False) -> None:
        """Record a value that the key's entries so far still beat, whatever their layer: a platform
        profile's variable under the recipe's own `env:`, which wins (explain shows both)."""
        table = self.env if env else self.overrides
        history = table.get(setting.key)
        if history is None:
            table[setting.key] = History([setting])
        else:
            history.entries.insert(0, setting)

    def active_overrides(self) -> list[Setting]:
        return [s for h in self.overrides.values() if (s := h.entries[-1]).value is not REMOVED]

    def active_env(self) -> list[Setting]:
        return [s for h in self.env.values() if (s := h.entries[-1]).value is not REMOVED]

"""What reading a launch script finds: the verl launches, each override with its place in the script.

Every record is what verl (or the launched process) would receive, never what rlcat would write:
`Override.text` is one argv word after the entrypoint, exactly as bash would pass it. A part of a
value that only running something would tell (a `$(date)`, a variable the caller did not give) is
kept as the script wrote it (`$(date +%Y%m%d)`, `$HOME`) and the record says it is not known.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

from rlcat.diagnostics import Diagnostic
from rlcat.syntax.hydra_value import parse as parse_hydra_value

# Hydra's own prefixes of an override key: add, add-or-override, delete.
_PREFIXES = ("++", "+", "~")


@dataclass(frozen=True)
class Override:
    """One argv word verl's Hydra reads as an override (`key=value`, `+key=value`, `~key`)."""

    text: str  # exactly as verl receives it
    line: int  # where the script wrote it (the array element, for "${ARR[@]}"), 1-based
    col: int  # 1-based, in characters
    known: bool = True  # False: part of the text is only known by running something (shown as written)
    unknown: tuple[str, ...] = ()  # those parts, as written (`$(date +%Y)`, `$HOME`)

    # cached: the checks ask an override for its prefix and key many times over
    @cached_property
    def prefix(self) -> str:
        """`+`, `++`, `~` or ``."""
        return next((p for p in _PREFIXES if self.text.startswith(p)), "")

    @cached_property
    def key(self) -> str:
        """The dotted key, without prefix and value."""
        return self.text[len(self.prefix) :].partition("=")[0]

    @property
    def value_text(self) -> str | None:
        """The text after the first `=` (None for `~key` and words without `=`)."""
        _, sep, value = self.text.partition("=")
        return value if sep else None

    def value(self) -> Any:
        """The value Hydra's override grammar reads from the text (raises HydraValueError)."""
        return parse_hydra_value(self.value_text or "")


@dataclass(frozen=True)
class Assumption:
    """A condition the reader could not decide without running something, and the branch taken."""

    line: int
    condition: str  # the condition as written (one line, shortened)
    holds: bool  # the branch read: the condition held (then / this case) or not

    def __str__(self) -> str:
        return f"line {self.line}: {self.condition} {'holds' if self.holds else 'does not hold'}"


@dataclass(frozen=True)
class Cut:
    """A line continuation that ends the launch command early: `\\` before a blank line, a comment
    line, or with whitespace after it. bash runs the lines after it as a separate command."""

    line: int  # the line of the `\`
    col: int  # the column of the `\` (1-based, in characters)
    reason: Literal["blank line", "comment", "trailing whitespace"]
    resumes: int | None  # the line where the separate command starts (None: nothing follows)
    lost: tuple[Override, ...] = ()  # the words of that command: overrides that never reach verl


@dataclass(frozen=True)
class Launch:
    """One verl launch command as the launched process would receive it."""

    line: int  # where the command starts
    col: int
    launcher: tuple[str, ...]  # argv before the entrypoint: ('uv', 'run', ..., 'python3')
    entrypoint: str  # `verl.trainer.main_ppo`, or the script path for `python path/to/main.py`
    entry_kind: Literal["module", "script"]
    hydra_flags: tuple[tuple[str, str | None], ...]  # (`--config-name`, `x.yaml`), (`--multirun`, None)
    overrides: tuple[Override, ...]
    env: Mapping[str, str]  # what the script exports, and `VAR=x cmd` / `env VAR=x` for this command
    env_unset: tuple[str, ...] = ()  # exported names the script or `env -u` removed
    env_unknown: tuple[str, ...] = ()  # names in `env` whose value is only known by running something
    assumptions: tuple[Assumption, ...] = ()  # undecidable conditions on the way to this launch
    cut: Cut | None = None
    unknown: tuple[str, ...] = ()  # what is only known by running it, as written (`$(date +%Y)`)

    def flag(self, *names: str) -> str | None:
        """The value of the last Hydra flag among `names` (`--config-name`, `-cn`)."""
        found = None
        for name, value in self.hydra_flags:
            if name in names:
                found = value
        return found

    @property
    def config_path(self) -> str | None:
        """`--config-path` / `-cp` as written; None: the entrypoint's `@hydra.main` decides."""
        return self.flag("--config-path", "-cp")

    @property
    def config_name(self) -> str | None:
        """`--config-name` / `-cn` without a `.yaml` suffix; None: the entrypoint decides."""
        name = self.flag("--config-name", "-cn")
        return name.removesuffix(".yaml") if name is not None else None

    @property
    def override_texts(self) -> list[str]:
        return [o.text for o in self.overrides]


@dataclass(frozen=True)
class Knob:
    """A `${VAR:-default}` (or `-`, `:=`, `=`, `:?`) the script reads, with its default as written."""

    name: str
    default: str | None  # the default's source text; None for `${VAR:?message}`
    line: int


@dataclass(frozen=True)
class ScriptReading:
    """Everything the static reader found in one script."""

    file: str
    launches: tuple[Launch, ...] = ()
    knobs: tuple[Knob, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = field(default=())
    # `$NAME` read while neither the script nor the caller (`env`) set it, read as unset: (name, the
    # line of its first read). Only the environment the script runs in would tell its value.
    unset_reads: tuple[tuple[str, int], ...] = ()

    @property
    def launches_nothing(self) -> bool:
        return not self.launches

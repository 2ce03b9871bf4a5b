"""The values a script computes and the shell state one path through it holds.

A value is text that may hold parts only running something would tell (`Text.unknown`): those parts
are shown as the script wrote them (`$(date +%Y)`, `$HOME`), so a printed override still reads
right, and every decision that needs them is left undecided instead of guessed.

A `World` is the state of one path through the script: variables, what is exported, shell options,
positional arguments, functions, and the undecidable conditions assumed on the way. An undecidable
`if` forks the world in two; worlds that end a statement in the same state merge again, keeping
only the assumptions both made.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace

from rlcat.scripts.parse import Node

# Variables every caller's environment has, whose value only the caller knows: read as themselves.
AMBIENT = ("HOME", "PWD", "OLDPWD", "USER", "LOGNAME", "PATH", "SHELL", "HOSTNAME", "TMPDIR", "LANG")


@dataclass(frozen=True)
class Text:
    """Text, with `unknown` naming what in it is only known by running (shown as written)."""

    value: str
    unknown: tuple[str, ...] = ()

    @property
    def known(self) -> bool:
        return not self.unknown

    def __add__(self, other: Text) -> Text:
        return Text(self.value + other.value, _union(self.unknown, other.unknown))


EMPTY = Text("")
# Parts only known by running that one value names; past it the rest are one reason that is no part
# of the value, so that where its words fall is not guessed (words._known_split), and merging two
# values' parts stays bounded (a value built from thousands of `$(…)` took quadratic time).
MAX_UNKNOWN = 64
MANY_UNKNOWN = "(more parts only known by running)"


def unknown_text(shown: str, why: str | None = None) -> Text:
    return Text(shown, (why or shown,))


def joined(parts: list[Text], separator: str = "") -> Text:
    value = separator.join(p.value for p in parts)
    unknown = dict.fromkeys(why for part in parts for why in part.unknown)  # in order, each once
    return Text(value, _bounded(tuple(unknown)))


def _union(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    if not b:
        return a
    if not a:
        return b
    return _bounded(a + tuple(x for x in b if x not in a))


def _bounded(unknown: tuple[str, ...]) -> tuple[str, ...]:
    if len(unknown) <= MAX_UNKNOWN:
        return unknown
    return (*unknown[: MAX_UNKNOWN - 1], MANY_UNKNOWN)


@dataclass(frozen=True)
class Field:
    """One word after expansion, with the place it was written (1-based line, column)."""

    text: Text
    line: int
    col: int


@dataclass(frozen=True)
class Scalar:
    text: Text
    line: int = 0  # where it was assigned (0: the caller's environment)
    col: int = 0
    span: tuple[int, int] | None = None  # the assignment's bytes in the script, when a plain one


@dataclass(frozen=True)
class Array:
    """An indexed or associative array: each element keeps where it was written."""

    elements: tuple[tuple[int | str, Field], ...] = ()
    associative: bool = False

    def values(self) -> list[Field]:
        if self.associative:
            return [f for _, f in self.elements]
        return [f for _, f in sorted(self.elements, key=lambda e: int(e[0]))]

    def get(self, key: int | str) -> Field | None:
        return next((f for k, f in self.elements if k == key), None)

    def with_element(self, key: int | str, value: Field) -> Array:
        kept = tuple(e for e in self.elements if e[0] != key)
        return replace(self, elements=(*kept, (key, value)))

    def next_index(self) -> int:
        indexes = [int(k) for k, _ in self.elements if isinstance(k, int)]
        return max(indexes) + 1 if indexes else 0


Var = Scalar | Array


@dataclass(frozen=True)
class Assumed:
    """An undecided condition and the branch this world took (see records.Assumption)."""

    line: int
    condition: str
    holds: bool


_ids = itertools.count(1)


@dataclass
class World:
    """The shell state of one path through the script."""

    vars: dict[str, Var] = field(default_factory=dict)
    exported: set[str] = field(default_factory=set)
    touched: set[str] = field(default_factory=set)  # names the script assigned, exported or unset
    options: set[str] = field(default_factory=set)  # set -e/-u/-x/-a letters, and 'pipefail'
    positional: tuple[Field, ...] = ()  # $1 …, each with where it was written (0: the caller's)
    functions: dict[str, Node] = field(default_factory=dict)  # name -> the function's body
    assumptions: tuple[Assumed, ...] = ()
    status: int | None = 0  # $? when known
    flow: str | None = None  # 'exit', 'return', 'break', 'continue' while unwinding
    locals: list[dict[str, Var | None]] = field(default_factory=list)  # one frame per function call
    uid: int = field(default_factory=lambda: next(_ids))

    def fork(self, assumption: Assumed | None = None) -> World:
        return World(
            vars=dict(self.vars),
            exported=set(self.exported),
            touched=set(self.touched),
            options=set(self.options),
            positional=self.positional,
            functions=dict(self.functions),
            assumptions=(*self.assumptions, assumption) if assumption else self.assumptions,
            status=self.status,
            flow=self.flow,
            locals=[dict(frame) for frame in self.locals],
        )

    def same_state(self, other: World) -> bool:
        """Whether two worlds can merge: the same in everything but assumptions and identity. The
        status counts: a condition's paths stay apart until a command sets it again. (Compared
        field by field, cheapest first: merging runs after every statement while paths are open.)"""
        return (
            self.status == other.status
            and self.flow == other.flow
            and self.options == other.options
            and self.positional == other.positional
            and self.exported == other.exported
            and self.touched == other.touched
            and _bodies(self.functions) == _bodies(other.functions)
            and self.locals == other.locals
            and self.vars == other.vars
        )

    # -- variables ---------------------------------------------------------------------------------

    def scalar(self, name: str) -> Text | None:
        """A variable's text ($name: element 0 of an array), None when unset."""
        var = self.vars.get(name)
        if var is None:
            return None
        if isinstance(var, Scalar):
            return var.text
        element = var.get("0" if var.associative else 0)
        return element.text if element else None

    def assign(
        self, name: str, text: Text, line: int = 0, col: int = 0, span: tuple[int, int] | None = None
    ) -> None:
        var = self.vars.get(name)
        if isinstance(var, Array):
            self.vars[name] = var.with_element("0" if var.associative else 0, Field(text, line, col))
        else:
            self.vars[name] = Scalar(text, line, col, span)
        self._touch(name)

    def assign_array(self, name: str, array: Array) -> None:
        self.vars[name] = array
        self._touch(name)

    def unset(self, name: str) -> None:
        self.vars.pop(name, None)
        self.exported.discard(name)
        self.touched.add(name)

    def export(self, name: str) -> None:
        self.exported.add(name)
        self.touched.add(name)

    def make_local(self, name: str) -> None:
        if self.locals and name not in self.locals[-1]:
            self.locals[-1][name] = self.vars.get(name)

    def _touch(self, name: str) -> None:
        self.touched.add(name)
        if "a" in self.options:  # set -a: every assignment is exported
            self.exported.add(name)


def merge(worlds: list[World]) -> list[World]:
    """Worlds in the same state become one, keeping the assumptions all of them made."""
    if len(worlds) < 2:
        return worlds
    kept: list[World] = []
    for world in worlds:
        first = next((k for k in kept if k.same_state(world)), None)
        if first is None:
            kept.append(world)
            continue
        common = set(world.assumptions)
        first.assumptions = tuple(a for a in first.assumptions if a in common)
    return kept


def _bodies(functions: dict[str, Node]) -> dict[str, int]:
    return {name: body.start_byte for name, body in functions.items()}

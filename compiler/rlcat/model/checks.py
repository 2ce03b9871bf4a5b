"""Building blocks of the generated plain classes (`model/plain.py`): pydantic's strict mode for the
types rlcat's schemas use, in plain Python.

Importing pydantic and building the recipe schema costs more than the rest of a compile together,
so the compile path validates with these instead. A check returns the validated value or raises
`Invalid` without saying why: a rejected document is validated again by the pydantic schema, which
writes the diagnostics. The two must agree on what they accept and what they produce; a
differential test holds them to that over the catalog and mutated documents.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any, ClassVar, NamedTuple, TypeVar

from ..record import Record

Check = Callable[[Any], Any]
P = TypeVar("P", bound="Plain")


class Invalid(Exception):
    """The value does not match the schema; validating it with the pydantic schema says why."""


class Plain(Record):
    """A frozen record with one slot per field; equality is field by field, as in pydantic. Fields
    are set once, by the check that builds the record; assigning one later raises."""

    __slots__ = ()
    SCHEMA: ClassVar[str]  # "module:Class" of the pydantic schema this class mirrors
    ALIASES: ClassVar[dict[str, str]] = {}  # field name → the spelling YAML uses, where they differ

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen")

    @classmethod
    def fields(cls) -> tuple[str, ...]:
        """Field names in schema order (the order pydantic dumps them in)."""
        return cls.__match_args__

    def _values(self) -> dict[str, Any]:
        return {f: getattr(self, f) for f in self.fields()}

    def replace(self: P, **changes: Any) -> P:
        """A copy with some fields changed (not validated: for tests and internal variations)."""
        unknown = set(changes) - set(self.fields())
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field {sorted(unknown)}")
        return _make(type(self), {**self._values(), **changes})

    def __reduce__(self) -> tuple[Any, ...]:
        # copy/deepcopy/pickle: rebuild through _make, since __setattr__ refuses
        return (_make, (type(self), self._values()))


def _make(cls: type[P], values: dict[str, Any]) -> P:
    obj = object.__new__(cls)
    for name, value in values.items():
        object.__setattr__(obj, name, value)
    return obj


def dump(
    value: Any, *, by_alias: bool = False, exclude_none: bool = False, exclude: frozenset[str] = frozenset()
) -> Any:
    """Plain records → dicts (what pydantic's model_dump gives for the same model); `exclude` names
    top-level fields, `exclude_none` drops fields that are None."""
    if isinstance(value, Plain):
        aliases = value.ALIASES if by_alias else {}
        out: dict[str, Any] = {}
        for name in value.fields():
            item = getattr(value, name)
            if name in exclude or (exclude_none and item is None):
                continue
            out[aliases.get(name, name)] = dump(item, by_alias=by_alias, exclude_none=exclude_none)
        return out
    if isinstance(value, list):
        return [dump(v, by_alias=by_alias, exclude_none=exclude_none) for v in value]
    if isinstance(value, dict):
        return {k: dump(v, by_alias=by_alias, exclude_none=exclude_none) for k, v in value.items()}
    return value


class Field(NamedTuple):
    name: str
    check: Check
    alias: str | None = None
    required: bool = True
    default: Any = None
    factory: Callable[[], Any] | None = None  # for mutable defaults: a fresh value per record


def model(cls: type[P], fields: tuple[Field, ...], rule: Callable[[Any], str | None] | None = None) -> Check:
    """A mapping with exactly these fields (extra="forbid"); a field may be given by name or alias,
    and when both are given the name is the extra one, as in pydantic."""
    accepted = frozenset(n for f in fields for n in (f.name, f.alias) if n is not None)

    def check(value: Any) -> P:
        if not isinstance(value, dict) or not accepted.issuperset(value):
            raise Invalid
        values: dict[str, Any] = {}
        for name, check_field, alias, required, default, factory in fields:
            if alias is not None and alias in value:
                if name in value:  # both spellings: pydantic reports the name as an extra field
                    raise Invalid
                result = check_field(value[alias])
            elif name in value:
                result = check_field(value[name])
            elif required:
                raise Invalid
            else:
                result = default if factory is None else factory()
            values[name] = result
        obj = _make(cls, values)
        if rule is not None and rule(obj) is not None:
            raise Invalid
        return obj

    return check


def _identity(value: Any) -> Any:
    return value


def any_value() -> Check:
    return _identity


def boolean() -> Check:
    def check(value: Any) -> bool:
        if value is True or value is False:
            return value
        raise Invalid

    return check


def _bounds(
    gt: float | None, ge: float | None, lt: float | None, le: float | None
) -> Callable[[float], bool]:
    """True when a number is inside the bounds (NaN never is, as in pydantic)."""
    return lambda v: (
        (gt is None or v > gt)
        and (ge is None or v >= ge)
        and (lt is None or v < lt)
        and (le is None or v <= le)
    )


def integer(
    *, gt: int | None = None, ge: int | None = None, lt: int | None = None, le: int | None = None
) -> Check:
    inside = _bounds(gt, ge, lt, le)

    def check(value: Any) -> int:
        if isinstance(value, int) and not isinstance(value, bool) and inside(value):
            return int(value)
        raise Invalid

    return check


def number(
    *,
    gt: float | None = None,
    ge: float | None = None,
    lt: float | None = None,
    le: float | None = None,
    allow_inf_nan: bool = True,
) -> Check:
    """Strict floats accept ints too (as floats); bools are not numbers."""
    inside = _bounds(gt, ge, lt, le)

    def check(value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise Invalid
        try:
            result = float(value)
        except OverflowError:
            raise Invalid from None
        if (not allow_inf_nan and not math.isfinite(result)) or not inside(result):
            raise Invalid
        return result

    return check


def python_pattern(pattern: str) -> str:
    """pydantic matches patterns with Rust's regex, where a final `$` is the end of the text only;
    Python's `$` also matches before a final newline, so it becomes `\\Z`. (The code generator
    admits only patterns on which the two engines otherwise agree: see codegen.portable_pattern.)"""
    escapes = len(pattern[:-1]) - len(pattern[:-1].rstrip("\\"))
    if pattern.endswith("$") and escapes % 2 == 0:
        return pattern[:-1] + r"\Z"
    return pattern


def string(
    *, pattern: str | None = None, min_length: int | None = None, max_length: int | None = None
) -> Check:
    search = re.compile(python_pattern(pattern)).search if pattern is not None else None

    def check(value: Any) -> str:
        if not isinstance(value, str):
            raise Invalid
        if min_length is not None and len(value) < min_length:
            raise Invalid
        if max_length is not None and len(value) > max_length:
            raise Invalid
        if search is not None and search(value) is None:
            raise Invalid
        return str(value)

    return check


def literal(expected: tuple[str, ...]) -> Check:
    def check(value: Any) -> str:
        if isinstance(value, str) and value in expected:
            return str(value)
        raise Invalid

    return check


def nullable(inner: Check) -> Check:
    def check(value: Any) -> Any:
        return None if value is None else inner(value)

    return check


def list_of(item: Check, *, min_length: int | None = None, max_length: int | None = None) -> Check:
    def check(value: Any) -> list[Any]:
        if not isinstance(value, list):
            raise Invalid
        if (min_length is not None and len(value) < min_length) or (
            max_length is not None and len(value) > max_length
        ):
            raise Invalid
        return [item(v) for v in value]

    return check


def dict_of(key: Check, value_check: Check) -> Check:
    def check(value: Any) -> dict[Any, Any]:
        if not isinstance(value, dict):
            raise Invalid
        return {key(k): value_check(v) for k, v in value.items()}

    return check

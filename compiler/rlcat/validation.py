"""Validate documents into plain records. The generated plain checks decide (they import nothing
heavy); the pydantic schema they were generated from is imported only for a rejected document, to
say what is wrong with it (schema_errors.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from .diagnostics import RlcatError
from .model.checks import Invalid, Plain
from .model.plain import CHECKS

P = TypeVar("P", bound=Plain)
# path of a value → (file, line, col)
Locator = Callable[[tuple[str | int, ...]], tuple[str | None, int | None, int | None]]


def validate(cls: type[P], data: Mapping[str, Any], locate: Locator) -> P:
    """Validate `data` as `cls`; every error becomes a Diagnostic at the key's position."""
    try:
        record: P = CHECKS[cls](data)
        return record
    except Invalid:
        pass
    from .schema_errors import explain

    problems = explain(cls.SCHEMA, data, locate)
    if problems:
        raise RlcatError(problems)
    # unreachable while model/plain.py is generated from the schemas (tests hold the two together)
    raise RuntimeError(f"{cls.SCHEMA}: the generated check rejects what the pydantic schema accepts (a bug)")

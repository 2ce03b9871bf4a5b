"""Value records for the compile path, which does not import dataclasses: that import (it pulls in
inspect, ast, dis, tokenize) and the code each @dataclass generates are a measurable part of a cold
compile."""

from __future__ import annotations

from typing import Any, ClassVar


class Record:
    """Equality, hash and repr field by field, as a frozen dataclass has them. A subclass lists its
    fields in order as `__slots__ = __match_args__ = (...)` and assigns each once, in `__init__`
    (annotated `Final`, so that the type checker keeps them read-only)."""

    __slots__ = ()
    __match_args__: ClassVar[tuple[str, ...]] = ()

    def _compared(self) -> tuple[Any, ...]:
        return tuple([getattr(self, f) for f in self.__match_args__])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Record) or other.__class__ is not self.__class__:
            return NotImplemented
        return self._compared() == other._compared()

    def __hash__(self) -> int:
        return hash(self._compared())

    def __repr__(self) -> str:
        inner = ", ".join(f"{f}={getattr(self, f)!r}" for f in self.__match_args__)
        return f"{type(self).__name__}({inner})"

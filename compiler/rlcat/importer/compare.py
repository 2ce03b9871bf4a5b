"""When a value rlcat writes is the value the source gave verl: one rule for the import's search
and for its round-trip report.

Numbers compare as numbers (`0` and `0.0` reach verl's float fields alike; `True` is no number).
Text compares as verl reads it after OmegaConf's resolution: a source string is live (Hydra reads
`${...}` in an override as an interpolation), rlcat's own text is inert unless it is an
`Interpolation`. A leading `${oc.env:HOME}` or `${oc.env:PWD}` (how rlcat writes `~`, `$HOME` and
`$PWD` paths) is the `$HOME` or `$PWD` the shell expanded in the source.
"""

from __future__ import annotations

from typing import Any

from rlcat.syntax.hydra_value import Interpolation

_ENV_PLACEHOLDERS = {"${oc.env:HOME}": "$HOME", "${oc.env:PWD}": "$PWD"}


def as_launched(value: Any) -> Any:
    """A value of rlcat's plan as the source would have written it: the `${oc.env:HOME}` rlcat
    writes for a home-relative path back as `$HOME`; inert text marked as such."""
    if isinstance(value, Interpolation):
        text = str(value)
        for placeholder, shell in _ENV_PLACEHOLDERS.items():
            if text.startswith(placeholder):
                text = shell + text[len(placeholder) :].replace("\\${", "${")
        return text
    if isinstance(value, str):
        return _Inert(value) if "${" in value else value
    if isinstance(value, (list, tuple)):
        return [as_launched(v) for v in value]
    if isinstance(value, dict):
        return {k: as_launched(v) for k, v in value.items()}
    return value


class _Inert(str):
    """Text holding `${` that verl receives as text: never the same as a live interpolation."""


def same(source: Any, ours: Any) -> bool:
    """Does rlcat's `ours` reach verl as the source's `source` does?"""
    return _same(source, as_launched(ours))


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, str) and isinstance(b, str):
        return not isinstance(b, _Inert) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a is None and b is None

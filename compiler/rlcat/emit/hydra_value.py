"""Render Python values in Hydra's override grammar.

Every rendered value must parse back through Hydra's own override parser to the same value (a
property test checks this with generated strings). Strings are left bare only when the grammar
reads them back unchanged as strings; everything else is quoted.
"""

from __future__ import annotations

import math
import re
from typing import Any

# Characters Hydra's lexer accepts in an unquoted value (ID chars plus UNQUOTED_CHAR and ':'),
# minus '$' and '\\' which start interpolations and escapes.
_BARE = re.compile(r"^[A-Za-z_/][A-Za-z0-9_/.\-+@:]*$")
# Bare words the grammar would read as something other than a string.
_SPECIAL = re.compile(r"^(?:null|true|false|[+-]?(?:inf|nan))$", re.IGNORECASE)


class UnrenderableValue(ValueError):
    """The value has no form in Hydra's override grammar (e.g. a mapping with non-identifier keys)."""


def render(value: Any) -> str:
    """`value` as Hydra override text."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(render(v) for v in value) + "]"
    if isinstance(value, dict):
        parts = []
        for k, v in value.items():
            if not isinstance(k, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_\-]*", k):
                raise UnrenderableValue(f"mapping key {k!r} is not an identifier")
            if _SPECIAL.match(k):
                raise UnrenderableValue(
                    f"mapping key {k!r} would be read by Hydra as {k.lower()}, not a string"
                )
            parts.append(f"{k}:{render(v)}")
        return "{" + ",".join(parts) + "}"
    raise UnrenderableValue(f"cannot render a {type(value).__name__}")


def _string(text: str) -> str:
    if _BARE.match(text) and not _SPECIAL.match(text):
        return text
    return quote(text)


def quote(text: str) -> str:
    """Quote a string for Hydra: escape the quote character and backslashes that precede a quote."""
    # double quotes by preference: the shell format wraps whole overrides in single quotes
    q = '"' if '"' not in text or "'" in text else "'"
    out = []
    run = 0  # backslashes seen in a row
    for ch in text:
        if ch == "\\":
            run += 1
            continue
        if run:
            # backslashes are literal unless they precede a quote; then each must be doubled
            out.append("\\" * (run * 2 if ch == q else run))
            run = 0
        out.append("\\" + ch if ch == q else ch)
    if run:
        out.append("\\" * (run * 2))  # they precede the closing quote
    return q + "".join(out) + q


def render_or_repr(value: Any) -> str:
    """Hydra text where the value has one, else Python's repr (for reports, not for overrides)."""
    try:
        return render(value)
    except ValueError:
        return repr(value)

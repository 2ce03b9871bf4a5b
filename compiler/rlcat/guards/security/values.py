"""How the security guards quote a value from the input in a finding."""

from __future__ import annotations

import reprlib

_QUOTE = reprlib.Repr()
_QUOTE.maxstring = 120


def quoted(value: str) -> str:
    """`value` as a Python string literal (control and format characters escaped), shortened in the
    middle past 120 characters: the finding points at the file or argument that holds all of it."""
    return _QUOTE.repr(value)

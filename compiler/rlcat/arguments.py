"""`key=value` arguments of the command line (--set, --override, --env), read the one way."""

from __future__ import annotations

from rlcat.diagnostics import RlcatError, diag


def split_assignment(text: str, flag: str, shape: str, example: str) -> tuple[str, str]:
    """`key=value` from the command line, as key and the value's text."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:  # a byte that is not UTF-8 reaches Python as a lone surrogate
        raise RlcatError(
            [
                diag(
                    "RLC105",
                    f"{flag} value is not UTF-8 text (a stray byte at character {exc.start})",
                    argument=f"{flag} {text}",
                    hint="write the value in UTF-8",
                )
            ]
        ) from None
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise RlcatError(
            [
                diag(
                    "RLC105",
                    f"{flag} expects {shape}=value, got '{text}'",
                    hint=f"for example: {flag} {example}",
                    argument=f"{flag} {text}",
                )
            ]
        )
    return key, raw

"""Text as bash reads it: one word (shell_word) and one comment line (comment_line)."""

from __future__ import annotations

import shlex

from rlcat.diagnostics import printable


def comment_line(text: str) -> str:
    """A `#` comment line for bash and YAML: one line, every hidden character escaped as
    diagnostics.printable writes it, so no text in it can end the comment."""
    return "# " + printable(text)


def _bash_bytes(char: str) -> str:
    # bytes, not \\uHHHH: bash turns \\u escapes into the locale's charset, and into nothing useful
    # in the C locale
    return "".join(f"\\x{byte:02x}" for byte in char.encode("utf-8"))


def shell_word(text: str) -> str:
    """`text` as one bash word. Plain text takes shlex's single quotes; text with a hidden character
    (diagnostics.printable) takes bash's `$'...'`, with those characters as `\\xHH` bytes: the script
    keeps one line per word, and printing it shows what it passes. NUL and lone surrogates have no
    form (refused before)."""
    if printable(text) == text:
        return shlex.quote(text)
    body = text.replace("\\", "\\\\").replace("'", "\\'")
    return "$'" + printable(body, escape=_bash_bytes) + "'"

"""Text as a shell reads it: one bash word (shell_word), one comment line (comment_line), and one
POSIX `sh` command line (sh_line) for readers without bash."""

from __future__ import annotations

import shlex
from collections.abc import Iterable

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


def sh_line(words: Iterable[str]) -> str:
    """`words` as one POSIX `sh` command line, for readers that run it with `/bin/sh -c` (Ray's job
    supervisor: `subprocess.Popen(entrypoint, shell=True)`), where bash's `$'...'` does not exist:
    single quotes only, a line break kept inside them. Never printed to a terminal as it is."""
    return shlex.join(words)

"""Text as a shell reads it: one bash word (shell_word), one comment line (comment_line), one POSIX
`sh` word (sh_word) and command line (sh_line) for readers without bash, and a command line that
passes through several shells (through_shells), quoted once per shell."""

from __future__ import annotations

import itertools
import shlex
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

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


def sh_word(text: str) -> str:
    """`text` as one POSIX `sh` word (dash, bash, busybox sh): single quotes only, since `$'...'` is
    bash's; a line break is kept inside them. Never printed to a terminal as it is."""
    return shlex.quote(text)


def sh_line(words: Iterable[str]) -> str:
    """`words` as one POSIX `sh` command line, for readers that run it with `/bin/sh -c` (Ray's job
    supervisor: `subprocess.Popen(entrypoint, shell=True)`)."""
    return POSIX_SH.line(words)


@dataclass(frozen=True)
class Shell:
    """A shell a command line passes through on its way to a process: the program that runs it as
    `PROGRAM -c TEXT`, and how it reads one word."""

    program: str
    word: Callable[[str], str]

    def line(self, words: Iterable[str]) -> str:
        """`words` as one command line this shell splits back into exactly `words`."""
        return " ".join(self.word(w) for w in words)


BASH = Shell("bash", shell_word)
POSIX_SH = Shell("sh", sh_word)


def through_shells(argv: Sequence[str], shells: Sequence[Shell]) -> str:
    """The text to hand the first of `shells` so that the last one runs exactly `argv`, when each
    shell runs the next as `PROGRAM -c TEXT`: `argv` quoted for the innermost shell, then that whole
    line quoted as one word for each shell outside it, innermost first. One quoting per shell, never
    fewer (a word a shell expands) nor more (quotes that arrive as text)."""
    if not shells:
        raise ValueError("a command line passes through at least one shell")
    text = shells[-1].line(argv)
    for outer, inner in reversed(list(itertools.pairwise(shells))):
        text = outer.line([inner.program, "-c", text])
    return text

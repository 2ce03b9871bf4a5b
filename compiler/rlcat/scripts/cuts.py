"""Line continuations that end a command early.

A `\\` at the end of a line joins the next line to the command. When that next line is blank or a
comment, the joined text ends the command; with a blank after the `\\` (`\\ ` + newline), the `\\`
escapes the blank instead, and the newline ends the command. Either way the lines after it are run
by bash as a separate command: upstream's `geo3k_qwen25vl_7b_megatron_4_4.sh` launches verl with 34
of its 69 overrides this way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from rlcat.scripts.parse import ParsedScript

Reason = Literal["blank line", "comment", "trailing whitespace"]
_ODD_BACKSLASHES = re.compile(r"(?<!\\)(?:\\\\)*\\\Z")


@dataclass(frozen=True)
class Found:
    reason: Reason
    line: int  # of the `\`
    col: int  # of the `\`, 1-based
    resume: int | None  # byte offset where the separate command starts
    extra: str | None  # the word bash passes for `\ ` after a blank: the escaped blank


def find_cut(parsed: ParsedScript, end: int) -> Found | None:
    """The cut at the end of a command that ends at byte `end`, if any."""
    line, _ = parsed.position(end)
    text = parsed.line_text(line)
    before_end = parsed.slice(parsed.line_starts[line - 1], end)
    after = text[len(before_end) :]
    stripped = text.rstrip(" \t\r")
    if stripped != text.rstrip("\r") and _ODD_BACKSLASHES.search(stripped):
        # `\` + blank at the end of the line: a word of that blank when the `\` starts a word
        blank = text[len(stripped)]
        extra = blank if re.match(r"[ \t]+\\[ \t]", after) else None
        return Found("trailing whitespace", line, len(stripped), _next_command(parsed, line + 1), extra)
    if not _ODD_BACKSLASHES.search(text.rstrip("\r")) or line >= parsed.line_count:
        return None
    following = parsed.line_text(line + 1).strip()
    if following and not following.startswith("#"):
        return None
    reason: Reason = "comment" if following else "blank line"
    return Found(reason, line, len(text.rstrip("\r")), _next_command(parsed, line + 2), None)


def _next_command(parsed: ParsedScript, line: int) -> int | None:
    """The byte offset of the first word on the first line from `line` on that is not blank or a
    comment."""
    while line <= parsed.line_count:
        text = parsed.line_text(line)
        stripped = text.strip()
        if stripped and not stripped.startswith("#"):
            indent = len(text) - len(text.lstrip())
            return parsed.line_starts[line - 1] + len(text[:indent].encode())
        line += 1
    return None

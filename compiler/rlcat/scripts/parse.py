"""Read a launch script's bytes and parse them with tree-sitter-bash; nothing here runs anything.

tree-sitter-bash (0.25) parses every upstream verl launch script (bashlex 0.18 parses one in 68: it
has no arrays, `case` patterns or arithmetic), imports in about 15 ms and parses all 68 in 30 ms.
It is error-tolerant: a script with a syntax error still gives a tree, with ERROR nodes where bash
would stop, which we report with their line. Its known slips are corrected where words are read
(`words.raw_commands`): a `\\` line continuation glued between two parts of one word, and a line of
assignments swallowing the command on the next line.

Bounds, so that a hostile file costs little: at most MAX_BYTES read, text only (UTF-8, no NUL),
at most MAX_DEPTH levels of nesting in the tree.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

import tree_sitter
import tree_sitter_bash

from rlcat import files
from rlcat.diagnostics import Diagnostic, RlcatError, diag

Node = tree_sitter.Node

# Launch scripts are a few kilobytes; the largest upstream one is under 20 KB.
MAX_BYTES = 1024 * 1024
# Nesting of the syntax tree: the upstream scripts stay under 30 levels. The evaluator walks the
# tree recursively, so this also keeps it far from Python's recursion limit.
MAX_DEPTH = 120
_CONTINUATION = re.compile(rb"[\x80-\xbf]")
MAX_SYNTAX_ERRORS = 5  # reported per script: enough to find them, bounded for a hostile one


@dataclass(frozen=True)
class ParsedScript:
    """A script's text, its syntax tree, and where each byte is for people (line, column)."""

    file: str
    data: bytes  # UTF-8, as parsed: tree-sitter's offsets are into these bytes
    root: Node
    line_starts: tuple[int, ...]  # byte offset of each line's start
    # byte offset of each UTF-8 continuation byte: a column counts characters without decoding the
    # line up to it (a hostile line of 100,000 words was read in time quadratic in its length)
    continuations: tuple[int, ...] = ()

    def text(self, node: Node) -> str:
        return self.data[node.start_byte : node.end_byte].decode()

    def slice(self, start: int, end: int) -> str:
        return self.data[start:end].decode(errors="replace")

    def position(self, offset: int) -> tuple[int, int]:
        """(line, column) of a byte offset, both 1-based, the column in characters."""
        row = bisect.bisect_right(self.line_starts, offset) - 1
        start = self.line_starts[row]
        before = bisect.bisect_left(self.continuations, start)
        return row + 1, offset - start - (bisect.bisect_left(self.continuations, offset) - before) + 1

    def line_text(self, line: int) -> str:
        """The text of a 1-based line, without its newline."""
        start = self.line_starts[line - 1]
        end = self.line_starts[line] - 1 if line < len(self.line_starts) else len(self.data)
        return self.data[start:end].decode(errors="replace")

    @property
    def line_count(self) -> int:
        return len(self.line_starts)


@cache
def _parser() -> tree_sitter.Parser:
    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


def read_bytes(path: Path, file: str) -> tuple[bytes | None, list[Diagnostic]]:
    """A regular file's bytes, at most MAX_BYTES of them (rlcat.files.read_bytes); or why it cannot
    be read."""
    try:
        return files.read_bytes(path, file, limit=MAX_BYTES, hint=_TOO_LARGE_HINT), []
    except RlcatError as exc:
        # a size refusal points at the script's first line, where an editor opens it
        return None, [replace(d, line=1) if d.code == "RLC007" else d for d in exc.diagnostics]


_TOO_LARGE_HINT = (
    f"launch scripts are read up to {MAX_BYTES // 1024} KiB: is this a launch script? "
    "split generated data out of it"
)


def decode(data: bytes, file: str) -> tuple[str | None, list[Diagnostic]]:
    """The script as text: UTF-8 without NUL bytes (bash stops reading a line at a NUL)."""
    nul = data.find(b"\0")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        return None, [
            diag(
                "RLC006",
                "a NUL byte: this is a binary file, not a shell script",
                file=file,
                line=line,
                hint="give the launch script (a text file) to read",
            )
        ]
    try:
        return data.decode("utf-8"), []
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        return None, [
            diag(
                "RLC006",
                f"not UTF-8 text (a stray byte 0x{data[exc.start]:02x})",
                file=file,
                line=line,
                hint="save the script as UTF-8",
            )
        ]


def parse(text: str, file: str) -> tuple[ParsedScript | None, list[Diagnostic]]:
    """The syntax tree of `text`, with a diagnostic for each syntax error (up to a few); None when
    the tree is too deep to walk."""
    data = _without_backslash_at_end(text).encode()
    tree = _parser().parse(data)
    starts = [0]
    position = data.find(b"\n")
    while position >= 0:
        starts.append(position + 1)
        position = data.find(b"\n", position + 1)
    continuations = tuple(m.start() for m in _CONTINUATION.finditer(data))
    parsed = ParsedScript(file, data, tree.root_node, tuple(starts), continuations)
    depth, errors = _survey(tree.root_node)
    if depth > MAX_DEPTH:
        return None, [
            diag(
                "RLC007",
                f"nesting {depth} levels deep (substitutions or blocks inside each other): "
                f"scripts are read up to {MAX_DEPTH} levels",
                file=file,
                line=1,
            )
        ]
    found = []
    for node in errors[:MAX_SYNTAX_ERRORS]:
        line, col = parsed.position(node.start_byte)
        what = f"missing {node.type!r}" if node.is_missing else f"cannot parse {_excerpt(parsed, node)!r}"
        found.append(
            diag(
                "RLC050",
                f"{what}: bash would stop at this line",
                file=file,
                line=line,
                col=col,
                hint="check quotes, brackets and `fi`/`done`/`esac`; `bash -n SCRIPT` shows bash's view",
            )
        )
    return parsed, found


def _without_backslash_at_end(text: str) -> str:
    """`text` without the `\\` that ends it, if one does (followed by its newline or not): bash
    drops it and runs the command it continued, where tree-sitter-bash sees a syntax error. An
    escaped backslash (`\\\\`) stays. What comes before keeps its lines and columns."""
    body = text.removesuffix("\n")
    backslashes = len(body) - len(body.rstrip("\\"))
    if backslashes % 2 == 0:
        return text
    return body[:-1] + text[len(body) :]


def _excerpt(parsed: ParsedScript, node: Node) -> str:
    text = parsed.slice(node.start_byte, min(node.end_byte, node.start_byte + 200))
    first = text.splitlines()[0] if text else ""
    return first[:40] + ("…" if len(first) > 40 else "")


def _survey(root: Node) -> tuple[int, list[Node]]:
    """The tree's depth and its outermost error nodes, without recursion."""
    if not root.has_error:  # most scripts: only the depth to find, walked without making nodes
        return _depth(root), []
    errors: list[Node] = []
    deepest = 0
    stack: list[tuple[Node, int]] = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if node.type == "ERROR" or node.is_missing:
            errors.append(node)
            continue
        if depth <= MAX_DEPTH:  # one level past the bound says enough
            stack.extend((child, depth + 1) for child in node.children)
    errors.sort(key=lambda n: n.start_byte)
    return deepest, errors


def _depth(root: Node) -> int:
    """The depth of a tree (counted up to one level past MAX_DEPTH), walked with a cursor: a tenth
    of the time of walking its nodes' children lists."""
    cursor = root.walk()
    depth = deepest = 1
    while True:
        if depth <= MAX_DEPTH and cursor.goto_first_child():
            depth += 1
            deepest = max(deepest, depth)
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return deepest
            depth -= 1

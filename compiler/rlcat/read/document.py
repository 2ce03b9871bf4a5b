"""A YAML file → a Document: its data, where each key and value sits, and the YAML 1.1 notes."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from rlcat.diagnostics import Diagnostic, RlcatError, Where, diag
from rlcat.files import open_regular, read_stream
from rlcat.read.hidden_breaks import Lines, hidden_break_diagnostics, hidden_line_breaks
from rlcat.read.nodes import MAX_NODES, Builder, Path_
from rlcat.read.yaml_schema import Loader

# Where a finding points, as a key: (file, line, col, argument, dotted key). The key is None for a
# file position, which names one value; a command-line argument names all the parts of its value.
WhereKey = tuple[str | None, int | None, int | None, str | None, str | None]


@dataclass(frozen=True)
class Document:
    """A loaded YAML file: its data and where each key and value sits (1-based line and column)."""

    file: str
    data: dict[str, Any]
    positions: dict[Path_, tuple[int, int]] = field(default_factory=dict)
    # values YAML 1.1 reads differently from YAML 1.2: the path and what the difference is
    yaml11_notes: dict[Path_, str] = field(default_factory=dict)

    def locate(self, path: Path_) -> Where:
        """This file and the position of `path` (or its nearest ancestor), for diagnostics."""
        line, col = self.position(path) or (None, None)
        return {"file": self.file, "line": line, "col": col}

    def position(self, path: Path_) -> tuple[int, int] | None:
        """The position of `path`, or of its nearest ancestor that has one."""
        while True:
            if path in self.positions:
                return self.positions[path]
            if not path:
                return None
            path = path[:-1]

    def yaml11_hints(self) -> dict[WhereKey, str]:
        """The YAML 1.1 notes of this file by the position a schema finding about the value points at."""
        return {
            (self.file, *self.positions[p], None, None): note
            for p, note in self.yaml11_notes.items()
            if p in self.positions
        }


# Findings about the type or the value of one value: wrong type, value not allowed, and a verl key
# given a value of another type than its default (an override `val_before_train: yes`).
_ABOUT_A_VALUE = ("RLC102", "RLC103", "RLC402")


def with_yaml11_hints(diagnostics: Iterable[Diagnostic], hints: dict[WhereKey, str]) -> list[Diagnostic]:
    """Findings about a value that YAML 1.1 reads differently say so in their hint: `yes` in a
    true-or-false field is the string 'yes' to YAML 1.2, and true only to YAML 1.1."""
    out = []
    for d in diagnostics:
        hint = None
        if d.code in _ABOUT_A_VALUE:
            where = (d.file, d.line, d.col, d.argument)
            hint = hints.get((*where, None)) or hints.get((*where, d.key))
        out.append(replace(d, hint=hint) if hint else d)
    return out


def _refuse_too_many_values(text: str, file: str) -> None:
    """Refuse, before composing, a file that must hold more values than MAX_NODES: PyYAML composes
    the whole document first (about 10 µs a value), so counting after would come too late for a
    16 MiB file of one-line keys. Each value needs a line of its own or a comma; comment and blank
    lines hold none."""
    at_least = text.count(",")
    if at_least <= MAX_NODES:
        for line in text.split("\n"):
            stripped = line.lstrip()
            if stripped and not stripped.startswith("#"):
                at_least += 1
    if at_least > 2 * MAX_NODES:  # a key and its value on one line are two values
        raise RlcatError(
            [
                diag(
                    "RLC007",
                    f"about {at_least} values in one file; the limit is {MAX_NODES}",
                    file=file,
                    hint="a recipe or catalog entry holds a few hundred values",
                )
            ]
        )


def compose_yaml(text: str, file: str) -> tuple[yaml.Node | None, Lines]:
    """YAML text as nodes, read as people see it: hidden line breaks refused and the number of
    values bounded before composing, a syntax error placed at its line (raises RlcatError). Build
    values from the nodes with nodes.Builder, which bounds what aliases expand to."""
    hidden = hidden_line_breaks(text, unscanned_too=False)
    if hidden:
        raise RlcatError(hidden_break_diagnostics(text, hidden, file))
    _refuse_too_many_values(text, file)
    lines = Lines(text)
    try:
        root = yaml.compose(text, Loader=Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        message = " ".join(str(p) for p in (exc.context, exc.problem) if p) or "invalid YAML"
        line, col = lines.at(mark) if mark else (None, None)
        bad_line = text.split("\n")[line - 1] if line and line <= text.count("\n") + 1 else ""
        hint = "YAML does not allow tab characters for indentation" if "\t" in bad_line else None
        raise RlcatError([diag("RLC002", message, file=file, line=line, col=col, hint=hint)]) from None
    except yaml.reader.ReaderError as exc:  # a character YAML refuses: at its line and column
        # libyaml counts the position in bytes of the UTF-8 text (a byte-order mark included),
        # PyYAML's own reader in characters
        head = (
            text.encode("utf-8", "surrogatepass")[: exc.position].decode("utf-8", "ignore")
            if issubclass(Loader, getattr(yaml, "CSafeLoader", ()))
            else text[: exc.position]
        )
        before = re.split(r"\r\n|\r|\n", head.removeprefix("\ufeff"))
        line, col = len(before), len(before[-1]) + 1
        raise RlcatError([diag("RLC002", str(exc).splitlines()[0], file=file, line=line, col=col)]) from None
    except yaml.YAMLError as exc:
        raise RlcatError([diag("RLC002", str(exc).splitlines()[0], file=file)]) from None
    return root, lines


def parse_yaml(text: str, file: str) -> Document:
    """Parse YAML text into a Document whose top level is a mapping."""
    root, lines = compose_yaml(text, file)
    if root is None:
        raise RlcatError([diag("RLC008", "the file holds no YAML document", file=file, line=1)])
    if not isinstance(root, yaml.MappingNode):
        kind = "a list" if isinstance(root, yaml.SequenceNode) else "a single value"
        line, col = lines.at(root.start_mark)
        raise RlcatError(
            [
                diag(
                    "RLC004",
                    f"expected a mapping of fields at the top level, found {kind}",
                    file=file,
                    line=line,
                    col=col,
                )
            ]
        )
    builder = Builder(file, text, lines)
    data = builder.build(root, (), 0)
    if builder.errors:
        raise RlcatError(builder.errors)
    return Document(file, data, builder.positions, builder.notes)


# Parsed files by (path, display name, mtime, size): one process compiling many plans (matrix, docs,
# benchmarks) reads each catalog file once. Documents are never modified after parsing; every merge
# builds new mappings.
_parsed: dict[tuple[str, str, int, int], Document] = {}


def load_yaml(path: Path, display: str | None = None) -> Document:
    """Read and parse one YAML file (cached while the file is unchanged)."""
    name = display or str(path)
    try:  # a regular file parsed before and unchanged since: no need to open it again
        known = os.stat(path)
    except OSError:
        known = None
    if known is not None and stat.S_ISREG(known.st_mode):
        doc = _parsed.get((str(path), name, known.st_mtime_ns, known.st_size))
        if doc is not None:
            return doc
    stream, info = open_regular(path, name)  # refuses anything but a regular file, never blocks
    with stream:
        key = (str(path), name, info.st_mtime_ns, info.st_size)
        doc = _parsed.get(key)
        if doc is None:
            doc = _parsed[key] = parse_yaml(read_stream(stream, name), name)
    return doc

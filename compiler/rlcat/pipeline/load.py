"""YAML → plain data with the position of every key, and typed objects from it.

This is the only stage that reads files. It uses PyYAML's C composer so that every node keeps its
line and column; values are built from the nodes by hand so that duplicate keys are errors (YAML
loaders silently keep the last one), only the safe core tags are accepted (never executed), and
alias expansion is bounded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from rlcat.diagnostics import Diagnostic, RlcatError, Where, diag, dotted

try:  # the C parser is ~10x faster; the pure-Python one is the fallback
    _Base: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _Base = yaml.SafeLoader


class _Loader(_Base):  # type: ignore[misc]
    """Safe loader that also reads `1e-6` as a float, as YAML 1.2 and every ML config author expects."""


# copy the resolver table so that adding one does not change PyYAML's own loaders
_Loader.yaml_implicit_resolvers = {k: list(v) for k, v in _Base.yaml_implicit_resolvers.items()}  # type: ignore[attr-defined]
# dates stay strings: a recipe has no date fields, and a timestamp tag would read as a foreign type
for _first, _resolvers in _Loader.yaml_implicit_resolvers.items():
    _resolvers[:] = [r for r in _resolvers if r[0] != "tag:yaml.org,2002:timestamp"]
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)[eE][-+]?[0-9]+$"),
    list("-+0123456789."),
)

Path_ = tuple[str | int, ...]

MAX_DEPTH = 64
MAX_NODES = 200_000  # after alias expansion: real recipes have a few hundred
MAX_BYTES = 16 * 1024 * 1024

_SCALAR_TAGS = {
    "tag:yaml.org,2002:str",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:null",
}
_constructor = yaml.constructor.SafeConstructor()
# The safe constructors of the core scalar tags, called directly: construct_object's bookkeeping
# is most of the cost of a small file.
_SCALARS = {
    "tag:yaml.org,2002:str": _constructor.construct_yaml_str,
    "tag:yaml.org,2002:int": _constructor.construct_yaml_int,
    "tag:yaml.org,2002:float": _constructor.construct_yaml_float,
    "tag:yaml.org,2002:bool": _constructor.construct_yaml_bool,
    "tag:yaml.org,2002:null": _constructor.construct_yaml_null,
}


@dataclass(frozen=True)
class Document:
    """A loaded YAML file: its data and where each key and value sits (1-based line and column)."""

    file: str
    data: dict[str, Any]
    positions: dict[Path_, tuple[int, int]] = field(default_factory=dict)

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


def read_text(path: Path, display: str | None = None) -> str:
    """Read a file as UTF-8, turning every failure into a diagnostic."""
    name = display or str(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise RlcatError([diag("RLC001", f"no such file: {name}", file=name)]) from None
    except IsADirectoryError:
        raise RlcatError([diag("RLC001", f"is a directory, not a file: {name}", file=name)]) from None
    except OSError as exc:
        raise RlcatError([diag("RLC001", f"cannot read {name}: {exc.strerror}", file=name)]) from None
    if len(raw) > MAX_BYTES:
        raise RlcatError([diag("RLC007", f"file is {len(raw)} bytes; the limit is {MAX_BYTES}", file=name)])
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise RlcatError(
            [diag("RLC006", f"invalid UTF-8 byte 0x{raw[exc.start]:02x}", file=name, line=line, col=col)]
        ) from None
    if "\x00" in text:
        offset = text.index("\x00")
        line = text.count("\n", 0, offset) + 1
        raise RlcatError([diag("RLC006", "NUL byte in a text file", file=name, line=line)])
    return text


def parse_yaml(text: str, file: str) -> Document:
    """Parse YAML text into a Document whose top level is a mapping."""
    try:
        root = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        message = " ".join(str(p) for p in (exc.context, exc.problem) if p) or "invalid YAML"
        bad_line = text.splitlines()[mark.line] if mark and mark.line < len(text.splitlines()) else ""
        hint = "YAML does not allow tab characters for indentation" if "\t" in bad_line else None
        raise RlcatError(
            [
                diag(
                    "RLC002",
                    message,
                    file=file,
                    line=mark.line + 1 if mark else None,
                    col=mark.column + 1 if mark else None,
                    hint=hint,
                )
            ]
        ) from None
    except yaml.YAMLError as exc:
        raise RlcatError([diag("RLC002", str(exc).splitlines()[0], file=file)]) from None
    if root is None:
        raise RlcatError([diag("RLC008", "the file holds no YAML document", file=file, line=1)])
    builder = _Builder(file)
    if not isinstance(root, yaml.MappingNode):
        kind = "a list" if isinstance(root, yaml.SequenceNode) else "a single value"
        raise RlcatError(
            [
                diag(
                    "RLC004",
                    f"expected a mapping of fields at the top level, found {kind}",
                    file=file,
                    line=root.start_mark.line + 1,
                    col=root.start_mark.column + 1,
                )
            ]
        )
    data = builder.build(root, (), 0)
    if builder.errors:
        raise RlcatError(builder.errors)
    return Document(file, data, builder.positions)


def parse_value(raw: str, source: str) -> Any:
    """A command-line value (--set, --override) read as recipe files read values: 1e-6 is a number,
    and the same tags and limits apply. `source` names the value in diagnostics. Raises
    yaml.YAMLError for text that is not YAML (the caller keeps it as text)."""
    root = yaml.compose(raw, Loader=_Loader)
    if root is None:
        return None
    builder = _Builder(source)
    value = builder.build(root, (), 0)
    if builder.errors:
        raise RlcatError(builder.errors)
    return value


# Parsed files by (path, display name, mtime, size): one process compiling many plans (matrix, docs,
# benchmarks) reads each catalog file once. Documents are never modified after parsing; every merge
# builds new mappings.
_parsed: dict[tuple[str, str, int, int], Document] = {}


def load_yaml(path: Path, display: str | None = None) -> Document:
    """Read and parse one YAML file (cached while the file is unchanged)."""
    name = display or str(path)
    try:
        st = path.stat()
    except OSError:
        return parse_yaml(read_text(path, display), name)  # read_text reports why
    key = (str(path), name, st.st_mtime_ns, st.st_size)
    doc = _parsed.get(key)
    if doc is None:
        doc = _parsed[key] = parse_yaml(read_text(path, display), name)
    return doc


class _Builder:
    def __init__(self, file: str):
        self.file = file
        self.positions: dict[Path_, tuple[int, int]] = {}
        self.errors: list[Diagnostic] = []
        self.count = 0

    def _error(self, code: str, message: str, node: yaml.Node, path: Path_, **kw: Any) -> None:
        self.errors.append(
            diag(
                code,
                message,
                file=self.file,
                line=node.start_mark.line + 1,
                col=node.start_mark.column + 1,
                key=dotted(path) or None,
                **kw,
            )
        )

    def build(self, node: yaml.Node, path: Path_, depth: int) -> Any:
        self.count += 1
        if self.count > MAX_NODES:
            if self.count == MAX_NODES + 1:
                self._error(
                    "RLC007",
                    f"more than {MAX_NODES} values after expanding aliases (an alias bomb?)",
                    node,
                    path,
                )
            return None
        if depth > MAX_DEPTH:
            if not any(d.code == "RLC007" for d in self.errors):
                self._error("RLC007", f"nesting deeper than {MAX_DEPTH} levels", node, path)
            return None
        self.positions.setdefault(path, (node.start_mark.line + 1, node.start_mark.column + 1))
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node, path, depth)
        if isinstance(node, yaml.SequenceNode):
            if node.tag != "tag:yaml.org,2002:seq":
                self._error("RLC005", f"unsupported tag {node.tag!r}", node, path)
                return None
            return [self.build(item, (*path, i), depth + 1) for i, item in enumerate(node.value)]
        if node.tag not in _SCALAR_TAGS:
            self._error(
                "RLC005",
                f"unsupported tag {node.tag!r}; rlcat reads plain YAML data only and never runs tags",
                node,
                path,
            )
            return None
        assert isinstance(node, yaml.ScalarNode)
        try:
            value = _SCALARS[node.tag](node)
        except (ValueError, KeyError):  # an explicit tag on text it cannot read: `!!int 1.5`
            self._error("RLC002", f"'{node.value}' is not a valid {node.tag.rsplit(':', 1)[-1]}", node, path)
            return None
        if isinstance(value, str) and "\x00" in value:
            self._error(
                "RLC103",
                "NUL character in a value (written as an escape)",
                node,
                path,
                hint="a NUL cannot appear in a command line, an environment variable or a shell script",
            )
            return None
        return value

    def _mapping(self, node: yaml.MappingNode, path: Path_, depth: int) -> dict[str, Any]:
        if node.tag != "tag:yaml.org,2002:map":
            self._error("RLC005", f"unsupported tag {node.tag!r}", node, path)
            return {}
        out: dict[str, Any] = {}
        seen: dict[str, int] = {}
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                self._error("RLC005", "YAML merge keys (<<) are not supported; use `extends`", key_node, path)
                continue
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag not in _SCALAR_TAGS:
                self._error("RLC102", "mapping keys must be plain names", key_node, path)
                continue
            key = str(key_node.value)
            child = (*path, key)
            if key in seen:
                self._error(
                    "RLC003",
                    f"duplicate key '{key}' (first defined on line {seen[key]})",
                    key_node,
                    child,
                    hint="YAML loaders silently keep the last value; remove one of them",
                )
                continue
            seen[key] = key_node.start_mark.line + 1
            self.positions[child] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            out[key] = self.build(value_node, child, depth + 1)
        return out

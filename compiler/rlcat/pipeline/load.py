"""YAML → plain data with the position of every key, and typed objects from it.

This is the only stage that reads files. It uses PyYAML's C composer so that every node keeps its
line and column; values are built from the nodes by hand so that duplicate keys are errors (YAML
loaders silently keep the last one), only the safe core tags are accepted (never executed), and
alias expansion is bounded by the number of values and the size of the text it makes.

YAML is read as people see it:

- plain scalars resolve as in the YAML 1.2 core schema (`yes`, `on`, `64:00` are text, `0o17` is a
  number); where YAML 1.1 reads one differently, the difference is kept as a note that becomes the
  hint of a schema error about that value;
- U+0085, U+2028 and U+2029, which YAML takes for line breaks while editors, grep and GitHub show
  one line, are refused outside quoted strings, at the line and column people see;
- only regular files are read, and no more of them than MAX_BYTES.
"""

from __future__ import annotations

import bisect
import errno
import json
import os
import re
import shlex
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, BinaryIO, cast

import yaml

from rlcat.diagnostics import Diagnostic, RlcatError, Where, diag, dotted
from rlcat.files import MAX_BYTES
from rlcat.syntax.hydra_value import RequestedInterpolation

try:  # the C parser is ~10x faster; the pure-Python one is the fallback
    _Base: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _Base = yaml.SafeLoader

Path_ = tuple[str | int, ...]

MAX_DEPTH = 64
# after alias expansion: real recipes have a few hundred values, and a document is parsed at about
# 10 µs a value, so this bounds a file's parse to well under a second (bench/limits.py)
MAX_NODES = 50_000
# Characters of keys and scalar values after alias expansion. Without aliases a file never holds
# more characters of text than it has bytes, so only aliases reach this: each one counts the whole
# text it repeats, which a plan, a shell script or a JSON dump of the recipe would hold.
MAX_EXPANDED_CHARS = MAX_BYTES
MAX_REPORTED = 20  # hidden line breaks reported per file: enough to find them, bounded for a hostile one
MAX_SCANS = 3  # scans of a file holding hidden line breaks, to find those after the first (see below)

_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_BOOL = "tag:yaml.org,2002:bool"
_NULL = "tag:yaml.org,2002:null"
_SCALAR_TAGS = {_STR, _INT, _FLOAT, _BOOL, _NULL}
INTERP_TAG = "!interp"


# --- YAML 1.2 core schema ------------------------------------------------------------------------

# https://yaml.org/spec/1.2.2/#1032-tag-resolution
_CORE_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
_CORE_BOOLS = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_CORE_INT = re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$")
_CORE_FLOAT = re.compile(
    r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)


class _Loader(_Base):  # type: ignore[misc]
    """Safe loader whose plain scalars resolve as in the YAML 1.2 core schema."""


_Loader.yaml_implicit_resolvers = {}  # PyYAML's YAML 1.1 table is not inherited
for _tag, _pattern, _first in (
    (_NULL, _CORE_NULL, ["~", "n", "N", ""]),
    (_BOOL, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")),
    (_INT, _CORE_INT, list("-+0123456789")),  # before float: `1` is an int
    (_FLOAT, _CORE_FLOAT, list("-+0123456789.")),
    # not in the core schema: kept so that a `<<` key is refused by name rather than read as text
    ("tag:yaml.org,2002:merge", re.compile(r"^(?:<<)$"), ["<"]),
):
    _Loader.add_implicit_resolver(_tag, _pattern, _first)


def _core_int(node: yaml.ScalarNode) -> int:
    text = node.value
    if not _CORE_INT.match(text):  # an explicit `!!int` on YAML 1.1 syntax: `!!int 1_000`
        raise ValueError(text)
    if text.startswith(("0o", "0x")):
        return int(text[2:], 8 if text[1] == "o" else 16)
    return int(text)


def _core_float(node: yaml.ScalarNode) -> float:
    text = node.value
    if not _CORE_FLOAT.match(text):
        raise ValueError(text)
    if text.lower().endswith((".inf", ".nan")):  # Python spells them without the dot
        return float(text.replace(".", "", 1))
    return float(text)


def _core_bool(node: yaml.ScalarNode) -> bool:
    return _CORE_BOOLS[node.value]  # a KeyError for `!!bool yes` is reported as not a valid bool


_constructor = yaml.constructor.SafeConstructor()
# Constructors called directly: construct_object's bookkeeping is most of the cost of a small file.
_SCALARS = {
    _STR: _constructor.construct_yaml_str,
    _INT: _core_int,
    _FLOAT: _core_float,
    _BOOL: _core_bool,
    _NULL: _constructor.construct_yaml_null,
}


# --- how YAML 1.1 would have read a plain scalar (for notes only, never for values) --------------


class _Yaml11(yaml.resolver.Resolver):
    """PyYAML's YAML 1.1 resolvers as rlcat used them before YAML 1.2 (dates as text, `1e-6` a
    number), plus YAML 1.1's `y` and `n` booleans, which PyYAML leaves out but other tools read."""


_Yaml11.yaml_implicit_resolvers = {
    first: [r for r in resolvers if r[0] != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.resolver.Resolver.yaml_implicit_resolvers.items()
}
_Yaml11.add_implicit_resolver(
    _FLOAT,
    re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)[eE][-+]?[0-9]+$"),
    list("-+0123456789."),
)
_Yaml11.add_implicit_resolver(_BOOL, re.compile(r"^(?:y|Y|n|N)$"), list("yYnN"))
_yaml11 = _Yaml11()
_YAML11_FIRST = frozenset(k for k in _Yaml11.yaml_implicit_resolvers if k)
_YAML11_BOOLS = {"y": True, "n": False, **yaml.constructor.SafeConstructor.bool_values}
_YAML11_SCALARS = {
    _INT: _constructor.construct_yaml_int,  # octal `010`, sexagesimal `1:30`, `1_000`, `0b1`
    _FLOAT: _constructor.construct_yaml_float,
    _NULL: _constructor.construct_yaml_null,
}
_NOTHING = object()


def _yaml11_reading(text: str) -> Any:
    """What YAML 1.1 reads a plain scalar as, or _NOTHING when it reads text (or a tag rlcat refuses)."""
    if not text or text[0] not in _YAML11_FIRST:
        return _NOTHING
    tag = _yaml11.resolve(yaml.ScalarNode, text, (True, False))  # type: ignore[no-untyped-call]
    if tag == _BOOL:
        return _YAML11_BOOLS[text.lower()]
    if tag not in _YAML11_SCALARS:
        return _NOTHING
    try:
        return _YAML11_SCALARS[tag](yaml.ScalarNode(tag, text))
    except ValueError:  # pragma: no cover - the resolver's pattern admits only readable text
        return _NOTHING


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and repr(a) == repr(b)  # repr: nan equals nan


def _describe(value: Any) -> str:
    if isinstance(value, str):
        return f"the string '{value}'"
    if value is None or isinstance(value, bool):
        return _literal(value)
    if isinstance(value, (int, float)):
        return f"the number {_literal(value)}"
    return f"the {'list' if isinstance(value, list) else 'mapping'} {json.dumps(value, default=str)}"


def _literal(value: Any) -> str:
    """The YAML 1.2 spelling of a value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return "-.inf" if value < 0 else ".inf"
    return repr(value)


def _yaml11_note(text: str, old: Any, new: Any) -> str:
    note = f"YAML 1.1 would have read {text} as {_describe(old)}; YAML 1.2, which rlcat reads, reads"
    note += f" {_describe(new)}"
    if isinstance(old, str):
        return f"{note}: quote it ('{text}') if you mean the text"
    return f"{note}: write {_literal(old)} if you mean {_literal(old)}"


# --- hidden line breaks and where people see things -----------------------------------------------

# Characters YAML reads as line breaks although editors, grep and GitHub show them inside one line.
_HIDDEN_BREAKS = {
    "\x85": "U+0085 NEXT LINE",
    "\u2028": "U+2028 LINE SEPARATOR",
    "\u2029": "U+2029 PARAGRAPH SEPARATOR",
}
_HIDDEN_BREAK = re.compile("[\x85\u2028\u2029]")
_LINE_BREAK = re.compile("\r\n|\r|\n")


def _has_hidden_breaks(text: str) -> bool:
    # `in` is much faster than a regular expression here: a pure-ASCII text (almost every file)
    # cannot hold U+2028 and answers at once, and U+0085 is found with a byte search
    return "\x85" in text or "\u2028" in text or "\u2029" in text


class _Lines:
    """Line and column as people count them: lines end at `\\n` (and, as PyYAML and editors have it,
    at `\\r\\n` and a lone `\\r`), columns count characters, a leading byte-order mark is not
    counted. PyYAML also ends lines at U+0085, U+2028 and U+2029, so its own line and column are
    used only when the text holds none of them (almost always)."""

    def __init__(self, text: str):
        # libyaml's marks count characters from after a leading byte-order mark
        self.shift = 1 if text.startswith("\ufeff") else 0
        self.starts: list[int] | None = None
        if _has_hidden_breaks(text):
            self.starts = [self.shift, *(m.end() for m in _LINE_BREAK.finditer(text))]

    def at(self, mark: yaml.Mark) -> tuple[int, int]:
        if self.starts is None:
            return mark.line + 1, mark.column + 1
        return self.at_offset(mark.index + self.shift)

    def at_offset(self, offset: int) -> tuple[int, int]:
        """1-based line and column of a character offset in the text (hidden breaks present)."""
        assert self.starts is not None
        line = bisect.bisect_right(self.starts, offset)
        return line, offset - self.starts[line - 1] + 1


@dataclass
class _Scan:
    """What PyYAML's scanner makes of a text: the spans of its scalars, by style ('' for plain), and
    the offset where scanning stopped at an error (None when the whole text was scanned)."""

    scalars: list[tuple[int, int, str]] = field(default_factory=list)
    tokens: set[type] = field(default_factory=set)
    stopped_at: int | None = None


def _scan(text: str) -> _Scan:
    shift = 1 if text.startswith("\ufeff") else 0
    found = _Scan()
    try:
        for token in yaml.scan(text, Loader=_Loader):
            found.tokens.add(type(token))
            if isinstance(token, yaml.ScalarToken):
                span = (token.start_mark.index + shift, token.end_mark.index + shift, token.style or "")
                found.scalars.append(span)
    except yaml.MarkedYAMLError as exc:
        found.stopped_at = exc.problem_mark.index + shift if exc.problem_mark else 0
    except yaml.YAMLError:  # pragma: no cover - scanner errors carry a mark
        found.stopped_at = 0
    return found


def _inside(offset: int, spans: list[tuple[int, int, str]], starts: list[int]) -> bool:
    i = bisect.bisect_right(starts, offset) - 1
    return i >= 0 and spans[i][0] <= offset < spans[i][1]


def _hidden_line_breaks(text: str, *, unscanned_too: bool) -> list[int]:
    """Offsets of U+0085, U+2028 and U+2029 in `text` that are not inside a quoted scalar.

    A quoted scalar is the one place where such a character is data: it cannot end a comment, a key
    or a plain value there, so what follows it stays inside the quotes. Only the scanner knows where
    a quoted scalar starts and ends (a quote may also sit in a plain scalar or a comment, where it
    opens nothing), and PyYAML's own scanner is the one compose runs, so these spans are exactly the
    ones the parser reads. Block scalars, comments, keys and plain values are refused alike: in each
    the character starts a line YAML reads and people do not see.

    A hidden break often makes the rest unreadable (the "comment" goes on as YAML), which stops the
    scanner. The text is then scanned again, up to MAX_SCANS times in all, with the breaks found so
    far made spaces, as people see them, so that the others are reported too; where the scanner
    still stops, what follows is refused with `unscanned_too`, and otherwise left to the syntax
    error that compose reports next.
    """
    if not _has_hidden_breaks(text):
        return []
    found: set[int] = set()
    for _ in range(MAX_SCANS):
        scan = _scan(text)
        quoted = [s for s in scan.scalars if s[2] in ("'", '"')]
        starts = [s[0] for s in quoted]
        end = len(text) if scan.stopped_at is None else scan.stopped_at
        new = {
            m.start()
            for m in _HIDDEN_BREAK.finditer(text, 0, end)
            if m.start() not in found and not _inside(m.start(), quoted, starts)
        }
        found |= new
        if scan.stopped_at is None or not new or len(found) > MAX_REPORTED:
            break
        for offset in new:
            text = f"{text[:offset]} {text[offset + 1 :]}"
    if unscanned_too and scan.stopped_at is not None:
        found |= {m.start() for m in _HIDDEN_BREAK.finditer(text, scan.stopped_at)}
    return sorted(found)


def _hidden_break_diagnostics(text: str, offsets: list[int], file: str) -> list[Diagnostic]:
    lines = _Lines(text)
    out = []
    for offset in offsets[:MAX_REPORTED]:
        line, col = lines.at_offset(offset)
        out.append(
            diag(
                "RLC009",
                f"{_HIDDEN_BREAKS[text[offset]]} outside a quoted string: YAML reads it as a line break, "
                "while editors, grep and GitHub show one line",
                file=file,
                line=line,
                col=col,
                hint=f"the character is {_HIDDEN_BREAKS[text[offset]]} (invisible); what follows it on this "
                "line is read as YAML of its own. Delete it, or write it as "
                f"\\u{ord(text[offset]):04x} inside a double-quoted string",
            )
        )
    if len(offsets) > MAX_REPORTED:
        out.append(
            diag("RLC009", f"{len(offsets) - MAX_REPORTED} more hidden line breaks not listed", file=file)
        )
    return out


# --- documents -----------------------------------------------------------------------------------

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


def _open_regular(path: Path, name: str) -> tuple[BinaryIO, os.stat_result]:
    """Open a file for reading, refusing anything but a regular file of at most MAX_BYTES.

    The checks use fstat on the opened file, so a link swapped after them cannot change what is read.
    O_NONBLOCK keeps opening a FIFO from waiting for a writer (it changes nothing for regular files).
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise RlcatError([diag("RLC001", f"no such file: {name}", file=name)]) from None
    except IsADirectoryError:
        raise RlcatError([diag("RLC001", f"is a directory, not a file: {name}", file=name)]) from None
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a socket: it cannot be opened at all
            raise RlcatError([_not_regular(path, name)]) from None
        raise RlcatError([diag("RLC001", f"cannot read {name}: {exc.strerror}", file=name)]) from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise RlcatError([diag("RLC001", f"is a directory, not a file: {name}", file=name)])
        if not stat.S_ISREG(info.st_mode):
            raise RlcatError([_not_regular(path, name, info)])
        if info.st_size > MAX_BYTES:
            raise RlcatError(
                [diag("RLC007", f"file is {info.st_size} bytes; the limit is {MAX_BYTES}", file=name)]
            )
        return os.fdopen(fd, "rb"), info
    except BaseException:
        os.close(fd)
        raise


_SPECIAL_FILES = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _not_regular(path: Path, name: str, info: os.stat_result | None = None) -> Diagnostic:
    try:
        mode = (info or path.stat()).st_mode
    except OSError:
        mode = 0
    kind = next((what for test, what in _SPECIAL_FILES if test(mode)), "a special file")
    return diag(
        "RLC012",
        f"not a regular file: {name} is {kind}",
        file=name,
        hint="rlcat reads recipe and catalog files only; reading a device, pipe or socket may never end",
    )


def _read_limited(stream: BinaryIO, name: str) -> bytes:
    raw = stream.read(MAX_BYTES + 1)  # a file that grew since fstat is still read no further
    if len(raw) > MAX_BYTES:
        raise RlcatError([diag("RLC007", f"file is more than {MAX_BYTES} bytes, the limit", file=name)])
    return raw


def _decode(raw: bytes, name: str) -> str:
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


def read_text(path: Path, display: str | None = None) -> str:
    """Read a regular file as UTF-8, turning every failure into a diagnostic."""
    name = display or str(path)
    stream, _ = _open_regular(path, name)
    with stream:
        return _decode(_read_limited(stream, name), name)


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


def parse_yaml(text: str, file: str) -> Document:
    """Parse YAML text into a Document whose top level is a mapping."""
    hidden = _hidden_line_breaks(text, unscanned_too=False)
    if hidden:
        raise RlcatError(_hidden_break_diagnostics(text, hidden, file))
    _refuse_too_many_values(text, file)
    lines = _Lines(text)
    try:
        root = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        message = " ".join(str(p) for p in (exc.context, exc.problem) if p) or "invalid YAML"
        line, col = lines.at(mark) if mark else (None, None)
        bad_line = text.split("\n")[line - 1] if line and line <= text.count("\n") + 1 else ""
        hint = "YAML does not allow tab characters for indentation" if "\t" in bad_line else None
        raise RlcatError([diag("RLC002", message, file=file, line=line, col=col, hint=hint)]) from None
    except yaml.YAMLError as exc:
        raise RlcatError([diag("RLC002", str(exc).splitlines()[0], file=file)]) from None
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
    builder = _Builder(file, text, lines)
    data = builder.build(root, (), 0)
    if builder.errors:
        raise RlcatError(builder.errors)
    return Document(file, data, builder.positions, builder.notes)


# Tokens of text YAML reads but drops from a value: on a command line they are never meant as YAML.
_DROPPED_TOKENS: dict[type, str] = {
    yaml.DirectiveToken: "a YAML directive (`%`)",
    yaml.DocumentStartToken: "a YAML document marker (`---`)",
    yaml.DocumentEndToken: "a YAML document marker (`...`)",
    yaml.AnchorToken: "a YAML anchor (`&`)",
}


def parse_value(raw: str, source: str) -> Any:
    """A command-line value (--set, --override) read as recipe files read values: 1e-6 is a number,
    and the same tags and limits apply. `source` names the value in diagnostics. Raises
    yaml.YAMLError for text that is not YAML (the caller keeps it as text)."""
    return read_value(raw, source)[0]


def read_value(raw: str, argument: str) -> tuple[Any, dict[Path_, str]]:
    """parse_value, and the notes on parts of the value that YAML 1.1 reads differently.

    Text that YAML would silently drop or take as markup is refused with the argument named: a
    comment (`run #3` would be 'run'), a document marker or directive (`--- a` would be 'a'), an
    anchor, a block scalar header, and hidden line breaks outside quotes (RLC009).
    """
    hidden = _hidden_line_breaks(raw, unscanned_too=True)
    if hidden:
        name = _HIDDEN_BREAKS[raw[hidden[0]]]
        raise RlcatError(
            [
                diag(
                    "RLC009",
                    f"{name} at character {hidden[0] + 1} of the value: YAML reads it as a line break, "
                    "while a terminal or a log shows one line",
                    argument=argument,
                    hint=f"the character is {name} (invisible); delete it, or write it as "
                    f"\\u{ord(raw[hidden[0]]):04x} inside a double-quoted string",
                )
            ]
        )
    _refuse_dropped_text(raw, argument)
    root = yaml.compose(raw, Loader=_Loader)
    if root is None:
        return None, {}
    builder = _Builder(argument, raw, _Lines(raw), argument=True)
    value = builder.build(root, (), 0)
    if builder.errors:
        raise RlcatError(builder.errors)
    return value, builder.notes


def _refuse_dropped_text(raw: str, argument: str) -> None:
    scan = _scan(raw)
    if scan.stopped_at is not None:
        return  # not YAML: compose raises, and the caller keeps the text as it is
    dropped = [what for token, what in _DROPPED_TOKENS.items() if token in scan.tokens]
    if any(style in ("|", ">") for _, _, style in scan.scalars):
        dropped.append("a block scalar header (`|` or `>`)")
    starts = [s[0] for s in scan.scalars]
    # a `#` outside every scalar can only start a comment: the scanner skips it and what follows
    if any(not _inside(m.start(), scan.scalars, starts) for m in re.finditer("#", raw)):
        dropped.append("a YAML comment (` #`)")
    if not dropped:
        return
    try:
        root = yaml.compose(raw, Loader=_Loader)
        builder = _Builder(argument, raw, _Lines(raw), argument=True)
        read = None if root is None else builder.build(root, (), 0)
        reading = f"would read it as {_describe(read)}"
    except yaml.YAMLError:
        reading = "cannot read it"
    flag, _, assignment = argument.partition(" ")
    key = assignment[: -len(raw) - 1] if raw and assignment.endswith("=" + raw) else None
    quoted = shlex.quote(f"{key}={json.dumps(raw.strip(), ensure_ascii=False)}") if key else None
    raise RlcatError(
        [
            diag(
                "RLC105",
                f"the value holds {' and '.join(dropped)}: YAML {reading}",
                argument=argument,
                hint="put the value in double quotes for YAML, inside quotes for the shell"
                + (f": {flag} {quoted}" if quoted else ""),
            )
        ]
    )


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
    stream, info = _open_regular(path, name)  # refuses anything but a regular file, never blocks
    with stream:
        key = (str(path), name, info.st_mtime_ns, info.st_size)
        doc = _parsed.get(key)
        if doc is None:
            doc = _parsed[key] = parse_yaml(_decode(_read_limited(stream, name), name), name)
    return doc


# --- nodes → values ------------------------------------------------------------------------------

# Tokens of a plain scalar's properties (`&anchor`, `!tag`) before its text.
_PROPERTIES = re.compile(r"(?:[&!]\S*\s+)*")


class _Builder:
    def __init__(self, file: str, text: str, lines: _Lines, *, argument: bool = False):
        self.file = file
        self.text = text
        self.lines = lines
        self.argument = argument  # `file` names a command-line argument: findings have no position
        self.positions: dict[Path_, tuple[int, int]] = {}
        self.errors: list[Diagnostic] = []
        self.notes: dict[Path_, str] = {}
        self.count = 0
        self.chars = 0
        self.exhausted = False  # a limit was reached: nothing more is built
        self._visited: set[int] = set()
        self._yaml11_notes: dict[int, Any] = {}  # by node: computed once however often aliases repeat it
        # the outermost alias being expanded: where it is used, and the node it repeats
        self._alias: tuple[Path_, yaml.Node] | None = None

    def _where(self, mark: yaml.Mark) -> Where:
        if self.argument:
            return {"argument": self.file}
        line, col = self.lines.at(mark)
        return {"file": self.file, "line": line, "col": col}

    def _error(self, code: str, message: str, node: yaml.Node, path: Path_, **kw: Any) -> None:
        self._error_at(code, message, node.start_mark, path, **kw)

    def _error_at(self, code: str, message: str, mark: yaml.Mark, path: Path_, **kw: Any) -> None:
        self.errors.append(diag(code, message, **self._where(mark), key=dotted(path) or None, **kw))

    def build(self, node: yaml.Node, path: Path_, depth: int) -> Any:
        if self.exhausted:
            return None
        self.count += 1
        if self.count > MAX_NODES:
            self._limit(f"more than {MAX_NODES} values after expanding aliases (an alias bomb?)", node, path)
            return None
        if depth > MAX_DEPTH:
            if not any(d.code == "RLC007" for d in self.errors):
                self._error("RLC007", f"nesting deeper than {MAX_DEPTH} levels", node, path)
            return None
        # A node met a second time is an alias expanded; the outermost one is what a limit blames.
        node_id = id(node)
        if node_id in self._visited and self._alias is None:
            self._alias = (path, node)
            try:
                return self._build(node, path, depth)
            finally:
                self._alias = None
        self._visited.add(node_id)
        return self._build(node, path, depth)

    def _build(self, node: yaml.Node, path: Path_, depth: int) -> Any:
        mark = node.start_mark
        if self.lines.starts is None:  # _Lines.at inlined: this runs for every value
            self.positions.setdefault(path, (mark.line + 1, mark.column + 1))
        else:
            self.positions.setdefault(path, self.lines.at(mark))
        tag = node.tag
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node, path, depth)
        if isinstance(node, yaml.SequenceNode):
            if tag != "tag:yaml.org,2002:seq":
                self._error("RLC005", f"unsupported tag {tag!r}", node, path)
                return None
            return [self.build(item, (*path, i), depth + 1) for i, item in enumerate(node.value)]
        # `!interp "${...}"`: the one way recipe data asks verl for a live interpolation, visible in
        # the file and reported by validate (RLC407); every other string's `${` is written escaped
        requested = tag == INTERP_TAG and isinstance(node, yaml.ScalarNode)
        if requested:
            tag = _STR
        if tag not in _SCALAR_TAGS:
            self._error(
                "RLC005",
                f"unsupported tag {tag!r}; rlcat reads plain YAML data only and never runs tags",
                node,
                path,
            )
            return None
        assert isinstance(node, yaml.ScalarNode)
        text: str = node.value
        self.chars += len(text)
        if self.chars > MAX_EXPANDED_CHARS:
            self._over_chars(node, path)
            return None
        try:
            value = text if tag == _STR else _SCALARS[tag](node)
        except (ValueError, KeyError):  # an explicit tag on text it cannot read: `!!int 1.5`
            self._error("RLC002", f"'{text}' is not a valid {tag.rsplit(':', 1)[-1]}", node, path)
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
        # a plain scalar ('' from the C composer, None from the Python one) that YAML 1.1 may read
        # differently; the first character rules out almost every value cheaply
        if not node.style and text and text[0] in _YAML11_FIRST:
            note = self._yaml11_notes.get(id(node), _NOTHING)
            if note is _NOTHING:  # once per node: aliases repeat the note, not the work or an error
                note = self._yaml11_notes[id(node)] = self._compare_with_yaml11(node, value, path)
            if note:
                self.notes[path] = note
        return RequestedInterpolation(value) if requested else value

    def _compare_with_yaml11(self, node: yaml.ScalarNode, value: Any, path: Path_) -> str | None:
        """The note on a plain scalar that YAML 1.1 reads differently; refuse one it reads as another
        number."""
        old = _yaml11_reading(node.value)
        if (old is _NOTHING and isinstance(value, str)) or _same(old, value):
            return None
        if old is _NOTHING:
            old = node.value
        start = node.start_mark.index + self.lines.shift
        if self.text[start : start + 1] in ("&", "!"):
            properties = _PROPERTIES.match(self.text, start)
            if properties and "!" in properties.group():
                return None  # an explicit tag reads the same in YAML 1.1 and 1.2
        both_numbers = all(isinstance(v, int) and not isinstance(v, bool) for v in (old, value))
        if both_numbers:  # `010`: octal 8 in YAML 1.1, decimal 10 in YAML 1.2, both valid anywhere
            self._error(
                "RLC010",
                f"'{node.value}' is {old} in YAML 1.1 (octal) and {value} in YAML 1.2, which rlcat reads",
                node,
                path,
                hint=f"write {value} or {old}, whichever you mean, without the leading zero",
            )
            return None
        return _yaml11_note(node.value, old, value)

    def _over_chars(self, node: yaml.Node, path: Path_) -> None:
        if not self.exhausted:
            self._limit(
                f"more than {MAX_EXPANDED_CHARS} characters of keys and values after expanding aliases "
                "(an alias bomb?)",
                node,
                path,
                at_alias=True,
            )

    def _limit(self, message: str, node: yaml.Node, path: Path_, *, at_alias: bool = False) -> None:
        """Report a limit once, at the alias whose expansion crossed it when asked and found."""
        self.exhausted = True
        if self._alias is None or self.argument:
            self._error("RLC007", message, node, path)
            return
        site, repeated = self._alias
        anchored = self.lines.at(repeated.start_mark)[0]
        mark = _alias_mark(self.text, site)
        if mark is None:  # the alias is not where the file's structure says (a skipped duplicate key)
            self._error("RLC007", message, node, path, hint=f"an alias repeats the value on line {anchored}")
            return
        line, col = self.lines.at(mark)
        if at_alias:
            self._error_at(
                "RLC007",
                message,
                mark,
                site,
                hint=f"this alias repeats the value anchored on line {anchored}, with every alias inside it",
            )
        else:
            self._error(
                "RLC007",
                message,
                node,
                path,
                hint=f"expanding the alias on line {line}, column {col}, which repeats the value anchored "
                f"on line {anchored}",
            )

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
            mark = key_node.start_mark
            key_at = (mark.line + 1, mark.column + 1) if self.lines.starts is None else self.lines.at(mark)
            if key in seen:
                self._error(
                    "RLC003",
                    f"duplicate key '{key}' (first defined on line {seen[key]})",
                    key_node,
                    child,
                    hint="YAML loaders silently keep the last value; remove one of them",
                )
                continue
            seen[key] = key_at[0]
            self.chars += len(key)
            if self.chars > MAX_EXPANDED_CHARS:
                self._over_chars(key_node, child)
                break
            self.positions[child] = key_at
            out[key] = self.build(value_node, child, depth + 1)
        return out


def _alias_mark(text: str, site: Path_) -> yaml.Mark | None:
    """Where the alias written at `site` (a path in the file's own structure) is, from the parser's
    events: composed nodes keep no trace of the aliases that repeat them. Run only to place an error."""
    # one frame per open collection: its path, and [the next key (_KEY while a mapping waits for one)
    # or the next index]
    frames: list[tuple[Path_, list[Any]]] = []
    try:
        for event in yaml.parse(text, Loader=_Loader):
            if isinstance(event, yaml.CollectionEndEvent):
                frames.pop()
                _advance(frames)
                continue
            if not isinstance(event, yaml.NodeEvent):
                continue
            if frames:
                parent, state = frames[-1]
                if state[0] is _KEY:  # a mapping waiting for a key: this event is one
                    if not isinstance(event, yaml.ScalarEvent):
                        return None  # a complex key; the builder refuses those
                    state[0] = event.value
                    continue
                path: Path_ = (*parent, state[0])
            else:
                path = ()
            if isinstance(event, yaml.AliasEvent) and path == site:
                return cast("yaml.Mark", event.start_mark)
            if isinstance(event, yaml.CollectionStartEvent):
                first = _KEY if isinstance(event, yaml.MappingStartEvent) else 0
                frames.append((path, [first]))
                continue
            _advance(frames)
    except yaml.YAMLError:  # pragma: no cover - the text was composed without error
        return None
    return None


_KEY = object()  # a mapping's frame state while the next event is a key


def _advance(frames: list[tuple[Path_, list[Any]]]) -> None:
    """A value of the innermost open collection ended: a mapping waits for a key, a list counts on."""
    if frames:
        state = frames[-1][1]
        state[0] = state[0] + 1 if isinstance(state[0], int) else _KEY

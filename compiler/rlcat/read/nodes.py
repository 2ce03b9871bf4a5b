"""YAML nodes → values, with the position of every key: duplicate keys refused, core tags only,
alias expansion bounded."""

from __future__ import annotations

import re
from typing import Any, cast

import yaml

from rlcat.diagnostics import Diagnostic, Where, diag, dotted
from rlcat.files import MAX_BYTES
from rlcat.read.hidden_breaks import Lines
from rlcat.read.yaml_schema import (
    INTERP_TAG,
    NOTHING,
    SCALAR_TAGS,
    SCALARS,
    STR,
    YAML11_FIRST,
    Loader,
    same_reading,
    yaml11_note,
    yaml11_reading,
)
from rlcat.syntax.hydra_value import RequestedInterpolation

# A path of keys and list indexes from the top of a document to a value.
Path_ = tuple[str | int, ...]

MAX_DEPTH = 64
# after alias expansion: real recipes have a few hundred values, and a document is parsed at about
# 10 µs a value, so this bounds a file's parse to well under a second (bench/limits.py)
MAX_NODES = 50_000
# Characters of keys and scalar values after alias expansion. Without aliases a file never holds
# more characters of text than it has bytes, so only aliases reach this: each one counts the whole
# text it repeats, which a plan, a shell script or a JSON dump of the recipe would hold.
MAX_EXPANDED_CHARS = MAX_BYTES

# Tokens of a plain scalar's properties (`&anchor`, `!tag`) before its text.
_PROPERTIES = re.compile(r"(?:[&!]\S*\s+)*")


class Builder:
    def __init__(self, file: str, text: str, lines: Lines, *, argument: bool = False):
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
        if self.lines.starts is None:  # Lines.at inlined: this runs for every value
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
            tag = STR
        if tag not in SCALAR_TAGS:
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
            value = text if tag == STR else SCALARS[tag](node)
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
        if not node.style and text and text[0] in YAML11_FIRST:
            note = self._yaml11_notes.get(id(node), NOTHING)
            if note is NOTHING:  # once per node: aliases repeat the note, not the work or an error
                note = self._yaml11_notes[id(node)] = self._compare_with_yaml11(node, value, path)
            if note:
                self.notes[path] = note
        return RequestedInterpolation(value) if requested else value

    def _compare_with_yaml11(self, node: yaml.ScalarNode, value: Any, path: Path_) -> str | None:
        """The note on a plain scalar that YAML 1.1 reads differently; refuse one it reads as another
        number."""
        old = yaml11_reading(node.value)
        if (old is NOTHING and isinstance(value, str)) or same_reading(old, value):
            return None
        if old is NOTHING:
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
        return yaml11_note(node.value, old, value)

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
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag not in SCALAR_TAGS:
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
        for event in yaml.parse(text, Loader=Loader):
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

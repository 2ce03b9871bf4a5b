"""Shell words → argv fields, as bash expands them, without running anything.

The expansions launch scripts use: quoting (`'…'`, `"…"`, `$'…'`, backslashes), concatenation,
`$VAR`, `${VAR}` and its operators (`:-`, `:=`, `:+`, `:?`, `#`, `%`, `/`, `:offset:length`, case,
length, indirection), arrays (`"${ARR[@]}"`, `${#ARR[@]}`, `${ARR[i]}`), `"$@"`, `$((…))`, brace
expansion (`{a,b}`, `{1..3}`), `~`, and field splitting of unquoted expansions. A command
substitution is never run: its value is unknown (shown as written) unless the caller says what it
prints. Globs are left as written (as bash does when nothing matches: the reader never looks at
the file system).

Words are read from tree-sitter's nodes, with its slips corrected (`raw_commands`): a `\\`-newline
between two parts of one word glues them (tree-sitter makes two words), and a bare newline inside a
command node ends the command there (tree-sitter runs `A=1 B=2` on into the next line's command).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from rlcat.diagnostics import Diagnostic, diag
from rlcat.scripts import arith
from rlcat.scripts.glob import MAX_PATTERN, Glob
from rlcat.scripts.parse import Node, ParsedScript
from rlcat.scripts.state import AMBIENT, EMPTY, Array, Field, Scalar, Text, World, joined, unknown_text

# how a read of a variable every environment has is shown (state.AMBIENT), `$HOME`
AMBIENT_READS = frozenset(f"${name}" for name in AMBIENT)

MAX_TEXT = 64 * 1024  # characters in one word or value: real ones are a few hundred
MAX_FIELDS = 100_000  # fields from one word, elements in one array
MAX_BRACE_WORDS = 1024  # words from one brace expansion
MAX_BRACE_TOKENS = 1024 * 1024  # tokens brace expansion copies for one word (words × their length)
# Work to read one script, in characters: every word built counts its length, every field 16 (and
# again in each command recorded), every pattern match the text's length times the pattern's, every
# search for a word's place the bytes searched, every merge of paths their pairs times the names
# set. The reference scripts take at most 55,000; a script past it is not read (RLC007).
MAX_WORK = 32 * 1024 * 1024
FIELD_WORK = 16
_IFS = re.compile(r"[ \t\n]+")
_BRACE_OR_ESCAPE = re.compile(r"[{},\\]")  # literal text brace expansion reads character by character
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_GLUE = re.compile(rb"(?:\\\r?\n)*\Z")  # nothing or line continuations between two nodes: one word
_NEWLINE = re.compile(rb"(?<!\\)\n")  # an unescaped newline between two nodes: a new command
_ASSIGNMENT_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_OPERATORS = {":-", "-", ":=", "=", ":+", "+", ":?", "?", "#", "##", "%", "%%", "/", "//", "/#", "/%",
              ":", "^", "^^", ",", ",,", "@"}  # fmt: skip
_DEFAULTING = {":-", "-", ":=", "=", ":?", "?"}
_SPECIAL = {"@", "*", "#", "?", "$", "!", "-", "0", "_"}


class TooMuchWork(Exception):
    """The script takes more than MAX_WORK to read: it is refused (RLC007), as a file too large is."""

    def __init__(self, line: int) -> None:
        super().__init__(line)
        self.line = line


class Break:
    """A field boundary inside one word: between the elements of "$@" or "${ARR[@]}"."""


BREAK = Break()


@dataclass
class Piece:
    text: Text
    quoted: bool  # not field-split (quoted, or literal text of the word itself)
    origin: tuple[int, int] | None = None  # an array element's place, kept by "${ARR[@]}"
    site: tuple[int, int] | None = None  # an unquoted variable's assignment: its words are found there


Pieces = list["Piece | Break"]


@dataclass
class RawWord:
    """The nodes of one shell word (tree-sitter may give several for a word it split)."""

    nodes: list[Node]

    @property
    def start(self) -> int:
        return self.nodes[0].start_byte

    @property
    def end(self) -> int:
        return self.nodes[-1].end_byte


@dataclass
class RawCommand:
    """One simple command: `NAME=value` prefixes (assignment nodes and their glued parts), then words."""

    assignments: list[RawWord] = field(default_factory=list)
    words: list[RawWord] = field(default_factory=list)

    @property
    def start(self) -> int:
        return (self.assignments or self.words)[0].start

    @property
    def end(self) -> int:
        return (self.words or self.assignments)[-1].end


def raw_commands(parsed: ParsedScript, command: Node) -> list[RawCommand]:
    """The simple commands in a `command` node, with tree-sitter's slips corrected."""
    items: list[Node] = []
    for child in command.children:
        if child.type == "command_name":
            items.extend(child.named_children or [child])
        elif child.is_named and not child.type.endswith("redirect") and child.type != "comment":
            items.append(child)
        elif child.type.endswith("redirect"):
            items.append(child)  # kept as a separator, dropped below
    commands = [RawCommand()]
    previous: Node | None = None
    for item in items:
        gap = parsed.data[previous.end_byte : item.start_byte] if previous is not None else b" "
        current = commands[-1]
        if previous is not None and _NEWLINE.search(gap):
            current = RawCommand()
            commands.append(current)
        elif (
            previous is not None
            and _GLUE.match(gap)
            and not previous.type.endswith("redirect")
            and not item.type.endswith("redirect")
        ):
            target = current.words or current.assignments
            target[-1].nodes.append(item)
            previous = item
            continue
        previous = item
        if item.type.endswith("redirect"):
            continue
        if item.type == "variable_assignment" and not current.words:
            current.assignments.append(RawWord([item]))
        else:
            current.words.append(RawWord([item]))
    return [c for c in commands if c.assignments or c.words]


def glued(parsed: ParsedScript, nodes: list[Node]) -> list[RawWord]:
    """Sibling word nodes (array elements, `for` lists) grouped into words, tree-sitter's split
    words glued back."""
    words: list[RawWord] = []
    for node in nodes:
        if words and _GLUE.match(parsed.data[words[-1].end : node.start_byte]):
            words[-1].nodes.append(node)
        else:
            words.append(RawWord([node]))
    return words


class Expander:
    """Expands words in a world. Diagnostics are kept once each; `outputs` says what a command
    substitution prints when the caller knows it (nothing is ever run)."""

    def __init__(self, parsed: ParsedScript, outputs: Callable[[str], str | None] | None) -> None:
        self.parsed = parsed
        self.outputs = outputs
        self.diagnostics: list[Diagnostic] = []
        self._said: set[tuple[str, int, str]] = set()
        self.knobs: dict[str, tuple[str | None, int]] = {}
        self.work = 0  # see MAX_WORK
        self.unset_reads: dict[str, int] = {}  # names read that neither the script nor the caller set

    def spend(self, work: int, where: Node | int) -> None:
        """Count `work` against MAX_WORK; raises TooMuchWork past it."""
        self.work += work
        if self.work > MAX_WORK:
            offset = where if isinstance(where, int) else where.start_byte
            raise TooMuchWork(self.parsed.position(offset)[0])

    # -- diagnostics -------------------------------------------------------------------------------

    def say(self, code: str, message: str, node: Node | int, **extra: object) -> None:
        offset = node if isinstance(node, int) else node.start_byte
        line, col = self.parsed.position(offset)
        key = (code, line, message)
        if key in self._said:
            return
        self._said.add(key)
        self.diagnostics.append(diag(code, message, file=self.parsed.file, line=line, col=col, **extra))

    def line(self, node: Node) -> int:
        return node.start_point.row + 1

    # -- words → fields ----------------------------------------------------------------------------

    def fields(self, world: World, word: RawWord) -> list[Field]:
        """The argv fields one word gives: brace expansion, expansions, field splitting."""
        line, col = self.parsed.position(word.start)
        tokens = _tokens(self.parsed, word.nodes)
        variants = [tokens]
        if "{" in tokens:
            budget = _BraceBudget()
            variants = _brace_expand(tokens, budget)
            if budget.cut:
                self.say(
                    "RLC1106",
                    f"brace expansion gives more than {MAX_BRACE_WORDS} words or more than "
                    f"{MAX_BRACE_TOKENS} characters: cut there",
                    word.start,
                )
                variants = variants[:MAX_BRACE_WORDS]
        out: list[Field] = []
        split_around: list[str] = []
        for variant in variants:
            pieces = self._token_pieces(world, _merge_characters(variant), False, word.start)
            found = _split(pieces, line, col, self._locate, split_around)
            self.spend(FIELD_WORK * len(found), word.start)
            out.extend(found)
        # a variable every environment has is a path or a name (`$HOME`, `$PWD`): bash splits it only
        # at a blank the caller's own path holds, which no launch script reckons with either
        for part in dict.fromkeys(p for p in split_around if p not in AMBIENT_READS):
            self.say(
                "RLC1102",
                f"{_short(part)!r} is only known when the script runs: the known text around it is split "
                "into words as bash splits it, and this part is kept as one word (bash would split it "
                "too, at any blank its value holds)",
                word.start,
                hint="give the value with --env NAME=VALUE, or write it in the script",
            )
        if split_around and len(out) > MAX_FIELDS:
            self.say("RLC1106", f"a word expands to more than {MAX_FIELDS} words: cut there", word.start)
            return out[:MAX_FIELDS]
        return out

    def text(self, world: World, nodes: list[Node], assignment: bool = False) -> Text:
        """One value, not split (an assignment's right-hand side, a `case` word, a test operand)."""
        tokens = _merge_characters(_tokens(self.parsed, nodes))
        where = nodes[0] if nodes else 0
        parts = [
            piece.text if isinstance(piece, Piece) else Text(" ")
            for piece in self._token_pieces(world, tokens, assignment, where)
        ]
        return joined(parts)

    def joined(self, parts: list[Text], where: Node | int, separator: str = "") -> Text:
        """`parts` as one value, or an unknown one when it would be longer than MAX_TEXT (said)."""
        size = sum(len(p.value) for p in parts) + len(separator) * max(len(parts) - 1, 0)
        if size > MAX_TEXT:
            return self._too_long(where)
        return joined(parts, separator)

    def _too_long(self, where: Node | int) -> Text:
        self.say(
            "RLC1106",
            f"a value longer than {MAX_TEXT} characters: not kept, its value is unknown",
            where,
            hint="a launch script's values are a few hundred characters; this one is not read",
        )
        return unknown_text("…", "a value too long to keep")

    def _token_pieces(self, world: World, tokens: list[Token], assignment: bool, where: Node | int) -> Pieces:
        """Pieces of a word's tokens: unquoted literal text (with `~` where bash expands it), `$name`
        references tree-sitter split off, and nodes. A word longer than MAX_TEXT is one unknown
        piece; what it costs counts against MAX_WORK."""
        pieces = self._all_token_pieces(world, tokens, assignment)
        size = sum(len(p.text.value) for p in pieces if isinstance(p, Piece))
        self.spend(size, where)
        if size > MAX_TEXT:
            return [Piece(self._too_long(where), True)]
        return pieces

    def _all_token_pieces(self, world: World, tokens: list[Token], assignment: bool) -> Pieces:
        pieces: Pieces = []
        for index, token in enumerate(tokens):
            if isinstance(token, str):
                text = Text(_unescape(token))
                if assignment and "~" in token:
                    text = self._assignment_tilde(world, text.value, index == 0)
                elif index == 0 and token.startswith("~"):
                    text = self._tilde(world, text.value)
                elif index == 0 and _ASSIGNMENT_WORD.match(token) and "=~" in token:
                    name, _, rest = text.value.partition("=")
                    text = Text(f"{name}=") + self._tilde(world, rest)
                pieces.append(Piece(text, True))
            elif isinstance(token, Reference):
                pieces.extend(self._parameter(world, token.node, token.name, None, False))
            else:
                pieces.extend(
                    self.pieces(world, token, quoted=False, first=index == 0, assignment=assignment)
                )
        return pieces

    def pieces(
        self, world: World, node: Node, *, quoted: bool, first: bool = False, assignment: bool = False
    ) -> Pieces:
        """The pieces of one node; `quoted` inside double quotes (or where bash does not split)."""
        kind = node.type
        source = self.parsed.text(node)
        if kind in ("word", "number", "extglob_pattern", "regex", "brace_expression", "variable_name"):
            text = Text(_unescape(source) if kind == "word" else source)
            if assignment and kind == "word" and "~" in source:
                text = self._assignment_tilde(world, text.value, first)
            elif first and kind == "word" and source.startswith("~") and not quoted:
                text = self._tilde(world, text.value)
            return [Piece(text, True)]
        if kind == "raw_string":
            return [Piece(Text(source[1:-1]), True)]
        if kind == "ansi_c_string":
            return [Piece(Text(_ansi_c(source[2:-1])), True)]
        if kind in ("string", "translated_string"):
            return self._string(world, node)
        if kind == "concatenation":
            out: Pieces = []
            for index, child in enumerate(node.children):
                out.extend(
                    self.pieces(
                        world, child, quoted=quoted, first=first and index == 0, assignment=assignment
                    )
                )
            return out
        if kind == "simple_expansion":
            return self._parameter(world, node, self.parsed.text(node.named_children[0]), None, quoted)
        if kind == "expansion":
            return self._expansion(world, node, quoted)
        if kind == "command_substitution":
            return [Piece(self.substitution(world, node), True)]
        if kind == "arithmetic_expansion":
            return [Piece(self.arithmetic(world, source[3:-2], node), quoted)]
        if kind == "process_substitution":
            return [Piece(unknown_text(source), True)]
        if kind == "string_content":
            return [Piece(Text(_unescape_double(source)), True)]
        self.say(
            "RLC1106", f"{kind.replace('_', ' ')} {_short(source)!r} not read: its value is unknown", node
        )
        return [Piece(unknown_text(source), True)]

    def _string(self, world: World, node: Node) -> Pieces:
        """ "…": content and expansions, never split; `"$@"` alone gives one field per argument."""
        inner = [c for c in node.children if c.type not in {'"', '$"'}]
        if len(inner) == 1 and _is_at(self.parsed, inner[0]):
            return self.pieces(world, inner[0], quoted=True)
        out: Pieces = [Piece(EMPTY, True)]  # "" is a field even when empty
        position = node.start_byte + (2 if node.type == "translated_string" else 1)
        for child in inner:
            if child.start_byte > position:  # text tree-sitter gave no node
                out.append(Piece(Text(_unescape_double(self.parsed.slice(position, child.start_byte))), True))
            out.extend(self.pieces(world, child, quoted=True))
            position = child.end_byte
        if node.end_byte - 1 > position:
            out.append(Piece(Text(_unescape_double(self.parsed.slice(position, node.end_byte - 1))), True))
        return out

    # -- parameters --------------------------------------------------------------------------------

    def _expansion(self, world: World, node: Node, quoted: bool) -> Pieces:
        """`${…}`: split into prefix (`#`, `!`), the parameter, the operator and its operands."""
        children = node.children[1:-1] if node.child_count >= 2 else []
        target_index = next(
            (
                i
                for i, c in enumerate(children)
                if c.type in ("variable_name", "subscript", "special_variable_name")
            ),
            None,
        )
        source = self.parsed.text(node)
        if target_index is None:
            if source in ("${#}", "${@}", "${*}", "${?}", "${$}", "${!}", "${-}"):
                return self._parameter(world, node, source[2:-1], None, quoted)
            self.say("RLC1106", f"{_short(source)!r} not read: its value is unknown", node)
            return [Piece(unknown_text(source), True)]
        prefix = "".join(self.parsed.text(c) for c in children[:target_index])
        target = children[target_index]
        rest = children[target_index + 1 :]
        name, index = self.parsed.text(target), None
        if target.type == "subscript":
            name = self.parsed.text(target.named_children[0])
            index = self.parsed.slice(target.named_children[0].end_byte + 1, target.end_byte - 1)
        operator = None
        operands: list[list[Node]] = [[]]
        for child in rest:
            if not child.is_named and operator is None and child.type in _OPERATORS:
                operator = child.type
            elif not child.is_named and operator in ("/", "//", "/#", "/%", ":") and child.type in ("/", ":"):
                operands.append([])
            else:
                operands[-1].append(child)
        if prefix == "#":
            return [Piece(self._length(world, node, name, index), quoted)]
        if prefix == "!":
            return self._indirect(world, node, name, index, quoted)
        if prefix:
            self.say("RLC1106", f"{_short(source)!r} not read: its value is unknown", node)
            return [Piece(unknown_text(source), True)]
        if operator is None:
            return self._parameter(world, node, name, index, quoted)
        return self._operator(world, node, name, index, operator=operator, operands=operands, quoted=quoted)

    def _parameter(self, world: World, node: Node, name: str, index: str | None, quoted: bool) -> Pieces:
        """`$name`, `${name}`, `${name[i]}`, `$@`, `${ARR[@]}`: the pieces it gives."""
        if (index in ("@", "*") and name not in _SPECIAL) or name in ("@", "*"):
            if name in ("@", "*"):
                elements = [
                    Piece(f.text, quoted, (f.line, f.col) if f.line else None) for f in world.positional
                ]
            else:
                var = world.vars.get(name)
                values = (
                    var.values()
                    if isinstance(var, Array)
                    else [Field(var.text, var.line, var.col)]
                    if var
                    else []
                )
                elements = [Piece(f.text, quoted, (f.line, f.col) if f.line else None) for f in values]
            if "*" in (name, index) and quoted:  # "$*": one field, joined by a space
                return [Piece(self.joined([e.text for e in elements], node, " "), True)]
            out: Pieces = []
            for i, element in enumerate(elements):
                if i:
                    out.append(BREAK)
                out.append(element)
            return out
        value = self.value(world, name, index, node)
        if value is None:
            if "u" in world.options and name not in ("@", "*"):
                shown = f"${name}" if index is None else f"${{{name}[{index}]}}"
                self._unbound(shown, name, node)
                return [Piece(unknown_text(shown), True)]
            if index is None and _NAME.match(name) and name not in world.touched:
                self.unset_reads.setdefault(name, self.line(node))
            return [Piece(EMPTY, quoted)]
        var = world.vars.get(name) if index is None else None
        if not quoted and isinstance(var, Scalar) and var.span:
            return [Piece(value, quoted, site=var.span)]
        return [Piece(value, quoted)]

    def _locate(self, chunk: str, site: tuple[int, int]) -> tuple[tuple[int, int], tuple[int, int]] | None:
        """Where a word split out of a variable's value was written, when its text is in the
        assignment (`X="a=1 b=2"`, then `cmd $X`: `b=2` is on the assignment's line); and the part
        of the assignment left to search for the next word."""
        start, end = site
        found = self.parsed.data.find(chunk.encode(), start, end)
        self.spend((end if found < 0 else found) - start, start)
        if found < 0:
            return None
        return self.parsed.position(found), (found + len(chunk.encode()), end)

    def value(self, world: World, name: str, index: str | None, node: Node) -> Text | None:
        """A parameter's text, None when unset."""
        if name.isdigit() and index is None:
            position = int(name)
            if position == 0:
                return Text(self.parsed.file)
            return world.positional[position - 1].text if position <= len(world.positional) else None
        if index is None and name in _SPECIAL:
            return self._special(world, name)
        if name == "LINENO":
            return Text(str(self.line(node)))
        if name in ("RANDOM", "SECONDS", "BASHPID", "EPOCHSECONDS", "EPOCHREALTIME", "SRANDOM"):
            return unknown_text(f"${name}")
        if name == "BASH_SOURCE" and name not in world.vars:
            return Text(self.parsed.file)
        if index is None:
            return world.scalar(name)
        var = world.vars.get(name)
        if var is None:
            return None
        if isinstance(var, Scalar):
            subscript = self._index(world, index, node, False)
            if isinstance(subscript, Text):
                return subscript
            return var.text if subscript == 0 else None
        key = self._index(world, index, node, var.associative)
        if isinstance(key, Text):
            return key
        element = var.get(key)
        return element.text if element else None

    def _special(self, world: World, name: str) -> Text | None:
        if name == "#":
            return Text(str(len(world.positional)))
        if name == "?":
            return Text(str(world.status)) if world.status is not None else unknown_text("$?")
        if name == "-":
            return Text("".join(sorted(o for o in world.options if len(o) == 1)) + "hB")
        if name == "0":
            return Text(self.parsed.file)
        return unknown_text(f"${name}")  # $$, $!, $_: only the running shell knows

    def _index(self, world: World, index: str, node: Node, associative: bool) -> int | str | Text:
        """An array subscript: text for an associative array, arithmetic otherwise; a Text when
        unknown."""
        if associative:
            value = self.text_of_source(world, index, node)
            return value.value if value.known else unknown_text(f"[{index}]")
        number = self.arithmetic(world, index, node)
        if not number.known:
            return number
        return int(number.value)

    def text_of_source(self, world: World, source: str, node: Node) -> Text:
        """A short piece of source (an associative key) with `$name` references replaced."""
        try:
            return Text(arith.substitute(source, self.scope(world)))
        except (arith.Unknowable, arith.ArithError):
            return unknown_text(source)

    def _length(self, world: World, node: Node, name: str, index: str | None) -> Text:
        if index in ("@", "*") or (name in ("@", "*") and index is None):
            if name in ("@", "*"):
                return Text(str(len(world.positional)))
            var = world.vars.get(name)
            count = len(var.values()) if isinstance(var, Array) else int(var is not None)
            return Text(str(count))
        value = self.value(world, name, index, node)
        if value is None:
            return Text("0")
        return Text(str(len(value.value))) if value.known else unknown_text(self.parsed.text(node))

    def _indirect(self, world: World, node: Node, name: str, index: str | None, quoted: bool) -> Pieces:
        if index in ("@", "*"):  # ${!ARR[@]}: the keys
            var = world.vars.get(name)
            keys = [str(k) for k, _ in var.elements] if isinstance(var, Array) else ["0"] if var else []
            out: Pieces = []
            for i, key in enumerate(keys):
                if i:
                    out.append(BREAK)
                out.append(Piece(Text(key), quoted))
            return out
        target = self.value(world, name, index, node)
        if target is None or not target.value:
            return [Piece(EMPTY, quoted)]
        if not target.known or not (_NAME.match(target.value) or target.value.isdigit()):
            return [Piece(unknown_text(self.parsed.text(node)), True)]
        return self._parameter(world, node, target.value, None, quoted)

    def _operator(
        self,
        world: World,
        node: Node,
        name: str,
        index: str | None,
        *,
        operator: str,
        operands: list[list[Node]],
        quoted: bool,
    ) -> Pieces:
        source = self.parsed.text(node)
        if name in ("@", "*") or index in ("@", "*"):
            if operator in _DEFAULTING or operator in (":+", "+"):
                present = self._parameter(world, node, name, index, quoted)
                has = any(isinstance(p, Piece) and p.text.value for p in present)
                if operator.startswith(":+") or operator == "+":
                    return self._operand_pieces(world, operands[0], quoted) if has else []
                return present if has else self._operand_pieces(world, operands[0], quoted)
            self.say("RLC1106", f"{_short(source)!r} not read: its value is unknown", node)
            return [Piece(unknown_text(source), True)]
        value = self.value(world, name, index, node)
        if operator in _DEFAULTING:
            if name not in world.touched and name not in self.knobs:
                default = self._operand_source(node, operands[0]) if "?" not in operator else None
                self.knobs[name] = (default, self.line(node))
            missing = value is None or (operator.startswith(":") and value.known and not value.value)
            if not missing:
                return [Piece(value, quoted)] if value is not None else []
            if "?" in operator:
                message = self._operand_source(node, operands[0]) or "parameter null or not set"
                self.say(
                    "RLC1105",
                    f"${{{name}}} is not set: bash stops here ({_short(message)})",
                    node,
                    hint=f"the caller must set {name} (rlcat reads it with --env {name}=VALUE)",
                )
                return [Piece(unknown_text(f"${name}"), True)]
            default_pieces = self._operand_pieces(world, operands[0], quoted)
            if "=" in operator:
                text = self.joined([p.text for p in default_pieces if isinstance(p, Piece)], node)
                if index is None and not name.isdigit():
                    line, col = self.parsed.position(node.start_byte)
                    world.assign(name, text, line, col)
                return [Piece(text, quoted)]
            return default_pieces
        if operator in (":+", "+"):
            used = value is not None and (
                not operator.startswith(":") or bool(value.value) or not value.known
            )
            return self._operand_pieces(world, operands[0], quoted) if used else []
        if value is None:
            value = EMPTY
        if not value.known:
            return [Piece(unknown_text(source), True)]
        result = self._transform(world, node, value.value, operator, operands)
        return [Piece(result, quoted)]

    def _transform(
        self, world: World, node: Node, value: str, operator: str, operands: list[list[Node]]
    ) -> Text:
        """`#`, `%`, `/`, `:`, `^`, `,` on a known value."""
        source = self.parsed.text(node)
        if operator == ":":
            numbers = [self.arithmetic(world, self._operand_source(node, o) or "0", node) for o in operands]
            if not all(n.known for n in numbers):
                return unknown_text(source)
            offset = int(numbers[0].value)
            start = max(len(value) + offset, 0) if offset < 0 else offset
            if len(numbers) > 1:
                length = int(numbers[1].value)
                end = start + length if length >= 0 else len(value) + length
                return Text(value[start:end])
            return Text(value[start:])
        if operator in ("^", "^^", ",", ",,"):
            upper = operator.startswith("^")
            changed = value.upper() if upper else value.lower()
            return Text(changed if len(operator) == 2 else changed[:1] + value[1:])
        if operator == "@":
            return unknown_text(source)
        literal = _literal_replacement(source, operator)
        if literal is not None:  # `${P//\//_}`: tree-sitter splits at the escaped `/`; the text does not
            pattern_text, replacement = literal
            glob = self._bounded_glob([(pattern_text, False)], node)
        else:
            glob = self.glob(world, operands[0], node)
            replacement_text = self.text(world, operands[1]) if len(operands) > 1 else EMPTY
            if not replacement_text.known:
                return unknown_text(source)
            replacement = replacement_text.value
        if glob is None:
            return unknown_text(source)
        self.spend(len(value) * glob.size(), node)
        if operator in ("#", "##"):
            cut = glob.shortest_prefix(value) if operator == "#" else glob.longest_prefix(value)
            return Text(value if cut is None else value[cut:])
        if operator in ("%", "%%"):
            cut = glob.shortest_suffix(value) if operator == "%" else glob.longest_suffix(value)
            return Text(value if cut is None else value[:cut])
        replaced = _replace(value, glob, replacement, operator)
        return Text(replaced) if replaced is not None else self._too_long(node)

    def _operand_pieces(self, world: World, nodes: list[Node], quoted: bool) -> Pieces:
        out: Pieces = []
        for index, child in enumerate(nodes):
            out.extend(self.pieces(world, child, quoted=quoted, first=index == 0))
        return out

    def _operand_source(self, node: Node, operand: list[Node]) -> str | None:
        if not operand:
            return ""
        return self.parsed.slice(operand[0].start_byte, operand[-1].end_byte)

    def glob(self, world: World, nodes: list[Node], where: Node) -> Glob | None:
        """A pattern (quoted parts match themselves); None when a part is only known by running,
        or when it is longer than MAX_PATTERN (said)."""
        parts: list[tuple[str, bool]] = []
        for child in nodes:
            quoted = child.type in ("string", "raw_string", "ansi_c_string")
            for piece in self.pieces(world, child, quoted=False):
                if not isinstance(piece, Piece):
                    continue
                if not piece.text.known:
                    return None
                parts.append((piece.text.value, quoted))
        return self._bounded_glob(parts, where)

    def _bounded_glob(self, parts: list[tuple[str, bool]], where: Node) -> Glob | None:
        if sum(len(text) for text, _ in parts) > MAX_PATTERN:
            self.say(
                "RLC1106",
                f"a pattern longer than {MAX_PATTERN} characters: not matched, what it decides is unknown",
                where,
            )
            return None
        return Glob.of(parts)

    # -- substitutions and arithmetic --------------------------------------------------------------

    def substitution(self, world: World, node: Node) -> Text:
        """`$(…)` or `` `…` ``: never run. Its output is unknown unless the caller says it;
        `$((…))` that tree-sitter read as a substitution of a subshell is arithmetic."""
        source = self.parsed.text(node)
        if source.startswith("$((") and source.endswith("))"):
            return self.arithmetic(world, source[3:-2], node)
        world.status = None
        inner = source[2:-1] if source.startswith("$(") else source[1:-1]
        known = self.outputs(inner.strip()) if self.outputs else None
        if known is not None:
            return Text(known.rstrip("\n"))
        return unknown_text(source)

    def _unbound(self, shown: str, name: str, node: Node) -> None:
        self.say(
            "RLC1105",
            f"{shown} is not set and the script runs with `set -u`: bash stops here",
            node,
            hint=f"the caller must set {name} (rlcat reads it with --env {name}=VALUE)",
        )

    def scope(self, world: World, node: Node | None = None) -> arith.Scope:
        """What arithmetic sees of `world`; with `node`, an unset variable under `set -u` is where
        bash stops (RLC1105 there, the value unknown), as in `$NAME`."""

        def lookup(name: str) -> str | None:
            base, _, rest = name.partition("[")
            value = self.value(world, base, rest[:-1] if rest else None, self.parsed.root)
            if value is None and node is not None and "u" in world.options:
                self._unbound(name, base, node)
                raise arith.Unknowable(f"{name} is not set")
            if value is not None and not value.known:
                raise arith.Unknowable(f"${name} is only known when the script runs")
            return value.value if value is not None else None

        def assign(name: str, number: int) -> None:
            base, _, rest = name.partition("[")
            if rest:
                var = world.vars.get(base)
                array = var if isinstance(var, Array) else Array()
                world.assign_array(base, array.with_element(int(rest[:-1]), Field(Text(str(number)), 0, 0)))
            else:
                world.assign(base, Text(str(number)))

        return arith.Scope(lookup, assign)

    def arithmetic(self, world: World, expression: str, node: Node) -> Text:
        try:
            return Text(str(arith.evaluate(expression, self.scope(world, node))))
        except arith.Unknowable:
            return unknown_text(f"$(({expression.strip()}))")
        except arith.ArithError as exc:
            self.say("RLC1106", f"arithmetic bash would reject: {exc}", node)
            return unknown_text(f"$(({expression.strip()}))")

    # -- helpers -----------------------------------------------------------------------------------

    def _tilde(self, world: World, text: str) -> Text:
        """`~` and `~/…` through $HOME (shown as `$HOME` when only the caller knows it)."""
        head, slash, tail = text.partition("/")
        home = world.scalar("HOME")
        if head != "~" or home is None:
            return Text(text)  # ~user: left as written
        return home + Text(slash + tail)

    def _assignment_tilde(self, world: World, text: str, first: bool) -> Text:
        """In an assignment, `~` after the `=` and after each `:` (PATH-like values)."""
        parts = [
            self._tilde(world, p) if (i or first) and p.startswith("~") else Text(p)
            for i, p in enumerate(text.split(":"))
        ]
        return joined(parts, ":")


def _is_at(parsed: ParsedScript, node: Node) -> bool:
    """`$@`, `${@}`, `${ARR[@]}` (no operator): the expansions that give one field per element."""
    text = parsed.text(node)
    return text in ("$@", "${@}") or bool(re.fullmatch(r"\$\{[A-Za-z_][A-Za-z0-9_]*\[@\]\}", text))


def _split(
    pieces: Pieces,
    line: int,
    col: int,
    locate: Callable[[str, tuple[int, int]], tuple[tuple[int, int], tuple[int, int]] | None],
    split_around: list[str],
) -> list[Field]:
    """Field splitting: unquoted expansion results split at blanks; empty unquoted words vanish.
    A word split out of a variable's value points where the script wrote it, when found there. A
    value only partly known (`"a=1 $(cmd) b=2"`) splits at its known blanks, each unknown part kept
    whole in one word; the unknown parts split around go into `split_around`."""
    fields: list[Field] = []
    current: list[Piece] = []
    exists = False

    def finish() -> None:
        nonlocal current, exists
        if exists:
            origins = {p.origin for p in current if p.text.value or p.origin}
            origin = origins.pop() if len(origins) == 1 else None
            fields.append(Field(joined([p.text for p in current]), *(origin or (line, col))))
        current, exists = [], False

    for piece in pieces:
        if isinstance(piece, Break):
            exists = exists or bool(current)
            finish()
            continue
        chunks = None if piece.quoted else _known_split(piece.text)
        if chunks is None:
            current.append(piece)
            exists = True
            continue
        if len(chunks) > 1 and not piece.text.known:
            split_around += piece.text.unknown
        cursor = piece.site
        for i, chunk in enumerate(chunks):
            if i:
                finish()
            if chunk.value:
                origin = piece.origin
                if cursor is not None and (found := locate(chunk.value, cursor)) is not None:
                    origin, cursor = found
                current.append(Piece(chunk, True, origin))
                exists = True
    finish()
    return fields


def _known_split(text: Text) -> list[Text] | None:
    """`text` split at its blanks, as bash splits an unquoted expansion. Blanks inside a part only
    the running script knows (each shown as written in the value) do not split: such a part stays
    whole, in one word that is unknown. None when an unknown part is not found in the value (only
    its reason is kept): where its words fall is not known, and the value stays one word."""
    value = text.value
    spans: list[tuple[int, int, str]] = []  # where each unknown part is (state.MAX_UNKNOWN parts at most)
    for part in text.unknown:
        found = [(m.start(), m.end(), part) for m in re.finditer(re.escape(part), value)]
        if not found:
            return None
        spans += found
    spans.sort()
    bounds: list[tuple[int, int]] = []
    start = reach = following = 0  # reach: the furthest end of the spans that start before a blank ends
    for blank in _IFS.finditer(value):
        while following < len(spans) and spans[following][0] < blank.end():
            reach = max(reach, spans[following][1])
            following += 1
        if reach > blank.start():  # inside an unknown part
            continue
        bounds.append((start, blank.start()))
        start = blank.end()
    bounds.append((start, len(value)))
    # no span crosses a blank that splits, so each lies in one chunk: one pass gives each its parts
    chunks: list[Text] = []
    following = 0
    for start, end in bounds:
        within: set[str] = set()
        while following < len(spans) and spans[following][0] < end:
            within.add(spans[following][2])
            following += 1
        parts = tuple(p for p in text.unknown if p in within) if within else ()
        chunks.append(Text(value[start:end], parts))
    return chunks


@dataclass(frozen=True)
class Reference:
    """`$name` that tree-sitter cut in two (`$A/x/$p` gives `$A/x/$` and `p`): rejoined here."""

    name: str
    node: Node


Token = str | Node | Reference


def _tokens(parsed: ParsedScript, nodes: list[Node]) -> list[Token]:
    """A word's parts: unquoted literal text as characters (brace expansion works on them), other
    nodes whole, and a lone `$` joined with the name that follows it."""
    tokens: list[Token] = []
    for node in nodes:
        for part in node.children if node.type == "concatenation" else [node]:
            if part.type not in ("word", "brace_expression"):
                tokens.append(part)
                continue
            text = parsed.text(part)
            after_dollar = bool(tokens) and isinstance(tokens[-1], Node) and tokens[-1].type == "$"
            if after_dollar or _BRACE_OR_ESCAPE.search(text):
                tokens.extend(_characters(text))
            else:  # text that neither brace expansion nor a `$name` reads: one token (merged anyway)
                tokens.append(text)
    out: list[Token] = []
    position = 0
    while position < len(tokens):
        token = tokens[position]
        position += 1
        if isinstance(token, (str, Reference)) or token.type != "$":
            out.append(token)
            continue
        name = ""
        while position < len(tokens):
            following = tokens[position]
            if not isinstance(following, str) or not re.fullmatch(r"[A-Za-z0-9_]", following):
                break
            if not name and following.isdigit():  # $1: one digit only
                name = following
                position += 1
                break
            name += following
            position += 1
        out.append(Reference(name, token) if name else "$")
    return out


def _characters(text: str) -> list[str]:
    """Unquoted source text as tokens: one per character, a backslash escape kept with its
    character (so `\\{` never opens a brace expansion)."""
    tokens, i = [], 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text):
            tokens.append(text[i : i + 2])
            i += 2
        else:
            tokens.append(text[i])
            i += 1
    return tokens


def _merge_characters(tokens: list[Token]) -> list[Token]:
    out: list[Token] = []
    for token in tokens:
        if isinstance(token, str) and out and isinstance(out[-1], str):
            out[-1] += token
        else:
            out.append(token)
    return out


_SEQUENCE = re.compile(r"(-?[0-9]+|[A-Za-z])\.\.(-?[0-9]+|[A-Za-z])(?:\.\.(-?[0-9]+))?\Z")


@dataclass
class _BraceBudget:
    """What one word's brace expansion has made: alternatives and tokens copied."""

    words: int = 0
    tokens: int = 0
    cut: bool = False


def _brace_expand(tokens: list[Token], budget: _BraceBudget) -> list[list[Token]]:
    """bash's brace expansion: the first `{…}` holding a top-level comma or a sequence `a..b`."""
    for start, token in enumerate(tokens):
        if token != "{":
            continue
        depth, commas = 0, []
        for end in range(start, len(tokens)):
            if tokens[end] == "{":
                depth += 1
            elif tokens[end] == "}":
                depth -= 1
                if depth == 0:
                    break
            elif tokens[end] == "," and depth == 1:
                commas.append(end)
        else:
            return [tokens]  # no closing brace: nothing more to expand
        inside = tokens[start + 1 : end]
        alternatives: list[list[Token]] = []
        if commas:
            bounds = [start, *commas, end]
            alternatives = [tokens[a + 1 : b] for a, b in itertools.pairwise(bounds)]
        elif all(isinstance(t, str) for t in inside):
            alternatives = [[w] for w in _sequence("".join(str(t) for t in inside))]
        if not alternatives:
            continue
        results: list[list[Token]] = []
        for alternative in alternatives:
            variant = tokens[:start] + alternative + tokens[end + 1 :]
            budget.words += 1
            budget.tokens += len(variant)
            if budget.words > MAX_BRACE_WORDS or budget.tokens > MAX_BRACE_TOKENS:
                budget.cut = True
                break
            results.extend(_brace_expand(variant, budget))
        return results
    return [tokens]


def _sequence(text: str) -> list[str]:
    match = _SEQUENCE.match(text)
    if not match:
        return []
    first, last, step_text = match.groups()
    step = abs(int(step_text)) if step_text and int(step_text) else 1
    if first.lstrip("-").isdigit() and last.lstrip("-").isdigit():
        a, b = int(first), int(last)
        if abs(b - a) // step > MAX_BRACE_WORDS:
            return []
        width = (
            max(len(first), len(last))
            if (first.lstrip("-").startswith("0") or last.lstrip("-").startswith("0"))
            else 0
        )
        values = range(a, b + 1, step) if a <= b else range(a, b - 1, -step)
        return [str(v).zfill(width) if width else str(v) for v in values]
    if first.isalpha() and last.isalpha():
        a, b = ord(first), ord(last)
        values = range(a, b + 1, step) if a <= b else range(a, b - 1, -step)
        return [chr(v) for v in values]
    return []


def _replace(value: str, glob: Glob, replacement: str, operator: str) -> str | None:
    """${v/p/r}, ${v//p/r}, ${v/#p/r}, ${v/%p/r}: the longest match at the first place one starts
    (never an empty one, but for `/#` and `/%`). None when the result is longer than MAX_TEXT."""
    if operator == "/#":
        end = glob.longest_prefix(value)
        out = value if end is None else replacement + value[end:]
    elif operator == "/%":
        start = glob.longest_suffix(value)
        out = value if start is None else value[:start] + replacement
    else:
        parts: list[str] = []
        size, position, reverse = 0, 0, value[::-1]
        while (found := glob.first_match(value, position, reverse)) is not None:
            parts += [value[position : found[0]], replacement]
            size += found[0] - position + len(replacement)
            position = found[1]
            if size > MAX_TEXT or operator == "/":
                break
        parts.append(value[position:])
        if size > MAX_TEXT:
            return None
        out = "".join(parts)
    return out if len(out) <= MAX_TEXT else None


def _literal_replacement(source: str, operator: str) -> tuple[str, str] | None:
    """`${P/pattern/replacement}` whose operands are plain text (no `$`, quotes or backticks):
    the pattern as a glob and the replacement unescaped, split at the first unescaped `/`."""
    if operator not in ("/", "//", "/#", "/%"):
        return None
    start = source.find(operator, 2) + len(operator)
    body = source[start:-1]
    if any(c in body for c in "$'\"`"):
        return None
    position = 0
    while position < len(body):
        if body[position] == "\\":
            position += 2
            continue
        if body[position] == "/":
            return body[:position], _unescape(body[position + 1 :])
        position += 1
    return body, ""


def _unescape(text: str) -> str:
    """Unquoted text: `\\x` is x, `\\`-newline is nothing."""
    if "\\" not in text:
        return text
    out, i = [], 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text):
            if text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _unescape_double(text: str) -> str:
    """Inside "…": only `\\$`, `` \\` ``, `\\"`, `\\\\` and `\\`-newline are escapes."""
    if "\\" not in text:
        return text
    return re.sub(r'\\([$`"\\\n])', lambda m: "" if m[1] == "\n" else m[1], text)


_C_ESCAPES = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t",
              "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}  # fmt: skip


def _ansi_c(body: str) -> str:
    """$'…': C escapes."""

    def one(match: re.Match[str]) -> str:
        text = match[0][1:]
        if text[0] in _C_ESCAPES:
            return _C_ESCAPES[text[0]]
        if text[0] in "xuU":
            return chr(min(int(text[1:], 16), 0x10FFFF)) if len(text) > 1 else match[0]
        if text[0] in "01234567":
            return chr(int(text, 8) & 0xFF)
        return match[0]

    return re.sub(r"\\(?:x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}|.)", one, body)


def _short(text: str, size: int = 60) -> str:
    line = text.splitlines()[0] if text else ""
    return line[:size] + ("…" if len(line) > size or "\n" in text else "")

"""Walk a parsed script the way bash would run it, without running anything.

Assignments, `export`/`declare`/`local`/`unset`, `set`, `shift`, `cd`, functions, `if`/`case`/loops
over values known statically, `&&`/`||`, pipelines and subshells are evaluated; every other command
is only recorded (`CommandRun`) with its expanded argv and the environment it would get. Nothing
the script names is started, and no file it names is read: `source FILE` and `bash FILE` are
reported, not followed; `bash -c TEXT` and `eval TEXT` with a known TEXT are read like the script.

A condition that needs something only running would tell (a command's exit status, an unknown
value, a file test) forks the path: both branches are read, each remembering what it assumed, and
paths that end a statement in the same state merge again. Paths, steps and nesting are bounded.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from rlcat.scripts import arith
from rlcat.scripts.glob import Glob
from rlcat.scripts.parse import Node, ParsedScript, parse
from rlcat.scripts.state import (
    AMBIENT,
    EMPTY,
    Array,
    Assumed,
    Field,
    Scalar,
    Text,
    World,
    merge,
    unknown_text,
)
from rlcat.scripts.words import FIELD_WORK, MAX_FIELDS, Expander, RawCommand, RawWord, glued, raw_commands

MAX_PATHS = 64  # worlds alive at once; more undecidable branches are read on one side only
MAX_STEPS = 200_000  # statements evaluated over all paths
MAX_CALLS = 32  # nested function calls, `eval` and `bash -c`
MAX_ITERATIONS = 1000  # of one loop on one path
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\+?)=(.*)\Z", re.DOTALL)
# Commands that always succeed and change nothing bash's state that matters here.
_NEUTRAL = {"echo", "printf", "sleep", "trap", "shopt", "ulimit", "umask", "wait", "hash", "alias",
            "unalias", "mkdir", "touch", "date", "pwd", "ls", "cat", "tee", "nvidia-smi", "rocm-smi",
            "ray", "pip", "which", "type", "history", "jobs", "disown", "kill"}  # fmt: skip
# The node types that are statements; each has its method `_<type>` below.
_STATEMENTS = frozenset(
    {
        "command", "variable_assignment", "redirected_statement", "compound_statement", "subshell",
        "pipeline", "negated_command", "list", "if_statement", "case_statement", "for_statement",
        "c_style_for_statement", "while_statement", "function_definition", "declaration_command",
        "unset_command", "test_command",
    }
)  # fmt: skip
Refinements = list[tuple[str, Text]]  # what a test's outcome tells of variables: (name, value)


@dataclass(frozen=True)
class CommandRun:
    """A command the script would start: its argv, `NAME=value` prefixes and exported env."""

    argv: tuple[Field, ...]
    prefix: tuple[tuple[str, Text], ...]  # `VAR=x cmd` assignments, for this command only
    prefix_words: tuple[Field, ...]  # the same as words (`VAR=x`), for a cut command's lost words
    env: tuple[tuple[str, Text], ...]  # what the script exported (and still holds), by name
    env_unset: tuple[str, ...]
    assumptions: tuple[Assumed, ...]
    start: int  # byte offsets of the command in the script
    end: int
    world: int  # the path it ran on (World.uid)


class Evaluator(Expander):
    """Runs a parsed script's control flow statically and records the commands it would start."""

    def __init__(
        self,
        parsed: ParsedScript,
        env: Mapping[str, str],
        args: Sequence[str],
        outputs: Callable[[str], str | None] | None,
    ) -> None:
        super().__init__(parsed, outputs)
        self.runs: list[CommandRun] = []
        self.steps = 0
        self.calls = 0
        self.stopped = False
        self.caller_env = set(env) | set(AMBIENT)
        self.initial = World(positional=tuple(Field(Text(a), 0, 0) for a in args))
        for name in AMBIENT:
            self.initial.vars[name] = Scalar(unknown_text(f"${name}"))
            self.initial.exported.add(name)
        for name, value in env.items():
            self.initial.vars[name] = Scalar(Text(value))
            self.initial.exported.add(name)
        self.caller = {name: var for name, var in self.initial.vars.items() if isinstance(var, Scalar)}

    def run(self) -> list[World]:
        return self.block([self.initial.fork()], self.parsed.root.named_children)

    # -- statements --------------------------------------------------------------------------------

    def block(self, worlds: list[World], statements: Sequence[Node]) -> list[World]:
        """Statements in order on every live path; paths that finished unwinding are kept aside."""
        for statement in statements:
            if statement.type in ("comment", "heredoc_body"):
                continue
            live = [w for w in worlds if w.flow is None]
            if not live:
                break
            done = [w for w in worlds if w.flow is not None]
            after: list[World] = []
            for world in live:
                after.extend(self.statement(world, statement))
            if len(after) > 1:  # merging compares the paths' states pairwise
                self.spend(len(after) * (len(after) - 1) // 2 * len(after[0].vars), statement)
            worlds = done + self._few_paths(merge(after), statement)
        return worlds

    def _few_paths(self, worlds: list[World], where: Node) -> list[World]:
        if len(worlds) <= MAX_PATHS:
            return worlds
        self.say(
            "RLC1106",
            f"more than {MAX_PATHS} undecidable paths through the script: the others are not read",
            where,
            hint="give the values the conditions test with --env NAME=VALUE",
        )
        return worlds[:MAX_PATHS]

    def statement(self, world: World, node: Node) -> list[World]:
        self.steps += 1
        if self.steps > MAX_STEPS:
            if not self.stopped:
                self.stopped = True
                self.say(
                    "RLC1106", f"the script takes more than {MAX_STEPS} steps to read: stopped here", node
                )
            world.flow = "exit"
            return [world]
        handler = getattr(self, "_" + node.type, None) if node.type in _STATEMENTS else None
        if handler is None:
            if node.type == "ERROR":
                return [world]  # reported by parse
            self.say("RLC1106", f"{node.type.replace('_', ' ')} not evaluated", node)
            return [world]
        result: list[World] = handler(world, node)
        return result

    def _command(self, world: World, node: Node) -> list[World]:
        worlds = [world]
        for raw in raw_commands(self.parsed, node):
            worlds = [out for w in worlds if w.flow is None for out in self.simple(w, raw)] + [
                w for w in worlds if w.flow is not None
            ]
        return worlds

    def _variable_assignment(self, world: World, node: Node) -> list[World]:
        return self.simple(world, RawCommand(assignments=[RawWord([node])]))

    def _redirected_statement(self, world: World, node: Node) -> list[World]:
        body = node.child_by_field_name("body")
        return self.statement(world, body) if body is not None else [world]

    def _compound_statement(self, world: World, node: Node) -> list[World]:
        if node.children and node.children[0].type == "((":  # (( arithmetic ))
            expression = self.parsed.slice(node.children[0].end_byte, node.children[-1].start_byte)
            value = self.arithmetic(world, expression, node)
            world.status = None if not value.known else int(value.value == "0")
            return [world]
        return self.block([world], node.named_children)

    def _subshell(self, world: World, node: Node) -> list[World]:
        inner = self.block([world.fork()], node.named_children)
        world.status = inner[0].status if len(inner) == 1 else None
        return [world]

    def _pipeline(self, world: World, node: Node) -> list[World]:
        """Each part runs in a subshell; the status is the last part's."""
        parts = [c for c in node.named_children if c.type != "comment"]
        for part in parts:
            inner = self.statement(world.fork(), part)
            world.status = inner[0].status if len(inner) == 1 else None
        return [world]

    def _negated_command(self, world: World, node: Node) -> list[World]:
        worlds = self.statement(world, node.named_children[-1])
        for w in worlds:
            w.status = None if w.status is None else int(w.status == 0)
        return worlds

    def _list(self, world: World, node: Node) -> list[World]:
        """`a && b`, `a || b`: b runs on the paths where a's status says so."""
        left, operator, right = node.children[0], node.children[1].type, node.children[-1]
        out: list[World] = []
        for w in self.statement(world, left):
            if w.flow is not None:
                out.append(w)
                continue
            for branch in self.decide(w, left):
                runs = (branch.status == 0) == (operator == "&&")
                out.extend(self.statement(branch, right) if runs else [branch])
        return out

    def decide(self, world: World, condition: Node) -> list[World]:
        """The paths with a known status: one, or two when only running would tell."""
        if world.status is not None:
            return [world]
        text = _condition_text(self.parsed.text(condition))
        line = condition.start_point.row + 1
        self.say("RLC1103", f"{text}: decided only when the script runs; both branches read", condition)
        yes, no = world.fork(Assumed(line, text, True)), world.fork(Assumed(line, text, False))
        yes.status, no.status = 0, 1
        return [yes, no]

    def _if_statement(self, world: World, node: Node) -> list[World]:
        branches: list[tuple[list[Node], list[Node]]] = []  # (condition, body); else: ([], body)
        condition: list[Node] = []
        body: list[Node] = []
        part = "condition"
        for child in node.children:
            if child.type in ("if", "fi", ";", "\n", "&"):
                continue
            if child.type == "then":
                part = "body"
            elif child.type == "elif_clause":
                branches.append((condition, body))
                condition, body = self._clause(child)
                branches.append((condition, body))
                condition, body = [], []
                part = "done"
            elif child.type == "else_clause":
                if part != "done":
                    branches.append((condition, body))
                branches.append(([], list(child.named_children)))
                part = "done"
            elif part == "condition":
                condition.append(child)
            elif part == "body":
                body.append(child)
        if part != "done":
            branches.append((condition, body))
        return self.branches(world, [b for b in branches if b[0] or b[1]])

    def _clause(self, node: Node) -> tuple[list[Node], list[Node]]:
        condition: list[Node] = []
        body: list[Node] = []
        seen_then = False
        for child in node.children:
            if child.type == "then":
                seen_then = True
            elif child.is_named:
                (body if seen_then else condition).append(child)
        return condition, body

    def branches(self, world: World, branches: list[tuple[list[Node], list[Node]]]) -> list[World]:
        out: list[World] = []
        pending = [world]
        for condition, body in branches:
            if not condition:  # else
                for w in pending:
                    out.extend(self.block([w], body))
                return out
            still: list[World] = []
            for w in pending:
                for tested in self.block([w], condition):
                    if tested.flow is not None:
                        out.append(tested)
                        continue
                    for branch in self.decide(tested, condition[-1]):
                        if branch.status == 0:
                            out.extend(self.block([branch], body))
                        else:
                            still.append(branch)
            pending = still
        for w in pending:
            w.status = 0  # no branch taken: `if` succeeds
        return out + pending

    def _case_statement(self, world: World, node: Node) -> list[World]:
        value_node = node.child_by_field_name("value")
        if value_node is None:
            return [world]
        value = self.text(world, [value_node])
        variable = _plain_reference(self.parsed, value_node)
        items = [c for c in node.named_children if c.type == "case_item"]
        out: list[World] = []
        pending = [world]
        for item in items:
            patterns = list(item.children_by_field_name("value"))
            body = [
                c for c in item.named_children if c.start_byte >= _body_start(item) and c.type != "comment"
            ]
            still: list[World] = []
            for w in pending:
                taken, rest = self._match(w, value, variable, patterns, value_node)
                for branch in taken:
                    out.extend(self.block([branch], body))
                still.extend(rest)
            pending = still
            if not pending:
                break
        for w in pending:
            w.status = 0
        return out + pending

    def _match(
        self, world: World, value: Text, variable: str | None, patterns: list[Node], value_node: Node
    ) -> tuple[list[World], list[World]]:
        """The paths that take a case item, and those that go on to the next one."""
        taken: list[World] = []
        shown = _condition_text(self.parsed.text(value_node))
        for pattern in patterns:
            glob = self.glob(world, [pattern], pattern)
            literal = self.text(world, [pattern])
            if value.known and glob is not None:
                self.spend(len(value.value) * glob.size(), pattern)
                if glob.matches(value.value):
                    return [*taken, world], []
                continue
            if glob is not None and glob.anything:
                return [*taken, world], []
            line = pattern.start_point.row + 1
            condition = f"{shown} matches {self.parsed.text(pattern)}"
            self.say(
                "RLC1103", f"{condition}: decided only when the script runs; both branches read", pattern
            )
            yes = world.fork(Assumed(line, condition, True))
            if variable and literal.known and glob is not None and glob.literal == literal.value:
                yes.assign(variable, literal)  # on this path the variable holds the pattern's text
            taken.append(yes)
            world = world.fork(Assumed(line, condition, False))
        return taken, [world]

    def _for_statement(self, world: World, node: Node) -> list[World]:
        variable = node.child_by_field_name("variable")
        values = node.children_by_field_name("value")
        body = node.child_by_field_name("body")
        if variable is None or body is None:
            return [world]
        name = self.parsed.text(variable)
        if values:
            fields = [f for word in glued(self.parsed, values) for f in self.fields(world, word)]
        else:
            fields = list(world.positional)
        worlds = [world]
        for index, item in enumerate(fields):
            if index >= MAX_ITERATIONS:
                self.say("RLC1106", f"loop over more than {MAX_ITERATIONS} values: the rest not read", node)
                break
            for w in worlds:
                if w.flow is None:
                    w.assign(name, item.text, item.line, item.col)
            worlds = self._iteration(worlds, body)
            if all(w.flow is not None and w.flow != "continue" for w in worlds):
                break
        return self._loop_done(worlds)

    def _c_style_for_statement(self, world: World, node: Node) -> list[World]:
        parts = self.parsed.text(node).split("((", 1)[1].split("))", 1)[0].split(";")
        body = node.child_by_field_name("body") or node.named_children[-1]
        if len(parts) != 3:
            self.say("RLC1106", "for ((…)) not evaluated", node)
            return [world]
        initial, test, update = parts
        self.arithmetic(world, initial, node)
        worlds = [world]
        for _ in range(MAX_ITERATIONS):
            live = [w for w in worlds if w.flow is None]
            going: list[World] = []
            for w in live:
                value = self.arithmetic(w, test, node) if test.strip() else Text("1")
                w.status = None if not value.known else int(value.value == "0")
                going.extend(b for b in self.decide(w, node) if b.status == 0)
            if not going:
                break
            worlds = [w for w in worlds if w.flow is not None] + self._iteration(going, body)
            for w in worlds:
                if w.flow is None:
                    self.arithmetic(w, update, node)
        return self._loop_done(worlds)

    def _while_statement(self, world: World, node: Node) -> list[World]:
        until = node.children[0].type == "until"
        condition = list(node.children_by_field_name("condition")) or node.named_children[:-1]
        body = node.child_by_field_name("body") or node.named_children[-1]
        worlds = [world]
        finished: list[World] = []
        for _ in range(MAX_ITERATIONS):
            going: list[World] = []
            for w in worlds:
                if w.flow is not None:
                    finished.append(w)
                    continue
                for tested in self.block([w], condition):
                    for branch in self.decide(tested, condition[-1]) if tested.flow is None else [tested]:
                        if branch.flow is None and (branch.status == 0) != until:
                            going.append(branch)
                        else:
                            finished.append(branch)
            if not going:
                worlds = []
                break
            worlds = self._iteration(going, body)
        else:
            self.say("RLC1106", f"loop runs more than {MAX_ITERATIONS} times: the rest not read", node)
            finished.extend(worlds)
        return self._loop_done(finished)

    def _iteration(self, worlds: list[World], body: Node) -> list[World]:
        out = self.block([w for w in worlds if w.flow is None], body.named_children)
        for w in out:
            if w.flow == "continue":
                w.flow = None
        return [w for w in worlds if w.flow is not None] + merge(out)

    @staticmethod
    def _loop_done(worlds: list[World]) -> list[World]:
        for w in worlds:
            if w.flow in ("break", "continue"):
                w.flow = None
        return merge(worlds)

    def _function_definition(self, world: World, node: Node) -> list[World]:
        name = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        if name is not None and body is not None:
            world.functions[self.parsed.text(name)] = body
        return [world]

    def _declaration_command(self, world: World, node: Node) -> list[World]:
        """export / declare / typeset / local / readonly."""
        keyword = node.children[0].type
        flags = set()
        for child in node.named_children:
            text = self.parsed.text(child)
            if child.type == "word" and text[:1] in "-+" and len(text) > 1:
                flags |= {f"{text[0]}{c}" for c in text[1:]}
        export = keyword == "export" or "-x" in flags
        unexport = keyword == "export" and "-n" in flags
        for child in node.named_children:
            if child.type == "variable_assignment":
                name = self.assign(
                    world, child, array=("-A" in flags and "A") or ("-a" in flags and "a") or None
                )
            elif child.type == "variable_name":
                name = self.parsed.text(child)
                if "-A" in flags and name not in world.vars:
                    world.assign_array(name, Array(associative=True))
                elif "-a" in flags and name not in world.vars:
                    world.assign_array(name, Array())
            else:
                word = self.text(world, [child])
                if not word.known or word.value[:1] in "-+":
                    continue
                name = self._assign_text(world, word.value, child)
            if name is None:
                continue
            if keyword == "local" or (
                keyword in ("declare", "typeset") and world.locals and "-g" not in flags
            ):
                world.make_local(name)
            if unexport:
                world.exported.discard(name)
            elif export:
                world.export(name)
        world.status = 0
        return [world]

    def _unset_command(self, world: World, node: Node) -> list[World]:
        functions = any(self.parsed.text(c) == "-f" for c in node.named_children)
        for child in node.named_children:
            text = self.text(world, [child])
            if not text.known or text.value.startswith("-"):
                continue
            if functions:
                world.functions.pop(text.value, None)
            else:
                world.unset(text.value)
        world.status = 0
        return [world]

    def _test_command(self, world: World, node: Node) -> list[World]:
        double = node.children[0].type == "[["
        expressions = list(node.named_children)
        if not expressions:
            world.status = 1
            return [world]
        try:
            result, when_true, when_false = self.test(world, expressions[0], double)
        except _TestFails as failure:
            self.say("RLC1106", f"test bash would reject: {failure}: the test fails (status 2)", node)
            world.status = 2
            return [world]
        if result is not None:
            world.status = 0 if result else 1
            return [world]
        text = _condition_text(self.parsed.text(node))
        line = node.start_point.row + 1
        self.say("RLC1103", f"{text}: decided only when the script runs; both branches read", node)
        yes, no = world.fork(Assumed(line, text, True)), world.fork(Assumed(line, text, False))
        for name, value in when_true:
            yes.assign(name, value)
        for name, value in when_false:
            no.assign(name, value)
        yes.status, no.status = 0, 1
        return [yes, no]

    # -- test expressions --------------------------------------------------------------------------

    def test(self, world: World, node: Node, double: bool) -> tuple[bool | None, Refinements, Refinements]:
        """A test expression: True, False or None (undecidable), and what each outcome tells of a
        variable compared with a literal (`[ "$X" = npu ]` holds: X is npu).

        tree-sitter nests the words and operators of a test with no regard for its precedence
        (`$A = x && $B = y` becomes `$A = (x && $B) = y`), so they are read in source order and
        grouped as bash does: comparisons and unary tests, then `!`, then `-a`/`&&`, then `-o`/`||`.
        """
        tokens = self._test_tokens(node)
        tree, rest = _test_or(tokens)
        if tree is None or rest:
            return None, [], []
        return self._test_tree(world, tree, double)

    def _test_tokens(self, node: Node) -> list[Node | str]:
        """The operands (nodes) and operators (their text) of a test expression, in source order."""
        signed = node.type == "unary_expression" and self.parsed.text(node.children[0]) in ("+", "-")
        if node.type not in ("binary_expression", "unary_expression", "negated_expression") or signed:
            return [node]
        tokens: list[Node | str] = []
        for child in node.children:
            if child.is_named and child.type != "test_operator":
                tokens.extend(self._test_tokens(child))
            else:
                tokens.append(self.parsed.text(child))
        return tokens

    def _test_tree(
        self, world: World, tree: _TestTree, double: bool
    ) -> tuple[bool | None, Refinements, Refinements]:
        kind = tree[0]
        if kind == "!":
            result, yes, no = self._test_tree(world, tree[1], double)
            return (None if result is None else not result), no, yes
        if kind in ("and", "or"):
            a, a_yes, a_no = self._test_tree(world, tree[1], double)
            if double and a is (kind == "or"):  # `[[` stops there; `[` reads (and rejects) it all
                return a, (a_yes if kind == "and" else []), (a_no if kind == "or" else [])
            b, b_yes, b_no = self._test_tree(world, tree[2], double)
            if kind == "and":
                result = False if a is False or b is False else (True if a and b else None)
                return result, a_yes + b_yes, []
            result = True if a or b else (False if a is False and b is False else None)
            return result, [], a_no + b_no
        if kind == "compare":
            return self._compare(world, tree[1], tree[2], tree[3], double)
        if kind == "unary":
            value = self._operand(world, tree[2])
            if not value.known:
                return None, [], []
            if tree[1] in ("-z", "-n"):
                return (value.value == "") == (tree[1] == "-z"), [], []
            if tree[1] == "-v":
                return world.vars.get(value.value) is not None, [], []
            return None, [], []  # file tests: the reader never looks at files
        word = tree[1]
        if word.type == "parenthesized_expression":
            return self.test(world, word.named_children[0], double)
        value = self._operand(world, word)
        return (value.value != "" if value.known else None), [], []

    def _compare(
        self, world: World, op: str, left: Node, right: Node, double: bool
    ) -> tuple[bool | None, Refinements, Refinements]:
        a, literal = self._operand(world, left), self._operand(world, right)
        if op in ("=", "==", "!="):
            glob: Glob | None = None
            if double and right.type not in ("string", "raw_string"):  # a pattern
                glob = self.glob(world, [right], right)
                is_literal = glob is not None and literal.known and glob.literal == literal.value
            else:
                is_literal = literal.known
            name = _plain_reference(self.parsed, left)
            refine = [(name, literal)] if name and is_literal else []
            equal = None
            if a.known and is_literal:
                equal = a.value == literal.value
            elif a.known and glob is not None:
                self.spend(len(a.value) * glob.size(), right)
                equal = glob.matches(a.value)
            if op == "!=":
                return (None if equal is None else not equal), [], refine
            return equal, refine, []
        b = literal
        if op in _NUMBERS:
            if not (a.known and b.known):
                return None, [], []
            if not double:  # `[`: integers as written, or the whole test fails
                return _NUMBERS[op](_test_integer(a.value), _test_integer(b.value)), [], []
            try:  # `[[`: arithmetic; an expression bash rejects makes this comparison false
                i, j = (arith.evaluate(t.value, self.scope(world, left)) for t in (a, b))
            except arith.Unknowable:
                return None, [], []
            except arith.ArithError as exc:
                self.say("RLC1106", f"arithmetic bash would reject: {exc}: the comparison is false", left)
                return False, [], []
            return _NUMBERS[op](i, j), [], []
        if op in ("<", ">") and a.known and b.known:
            return (a.value < b.value) if op == "<" else (a.value > b.value), [], []
        if op == "=~" and a.known and b.known and not re.search(r"[\\^$.|?*+()\[\]{}]", b.value):
            return b.value in a.value, [], []
        return None, [], []

    def _operand(self, world: World, node: Node) -> Text:
        """A word compared in a test; tree-sitter reads a signed number (`+4`, `-1`) as an
        expression, bash as the word it is."""
        if node.type == "unary_expression" and self.parsed.text(node.children[0]) in ("+", "-"):
            return Text(self.parsed.text(node.children[0])) + self.text(world, [node.named_children[-1]])
        return self.text(world, [node])

    # -- simple commands ---------------------------------------------------------------------------

    def simple(self, world: World, raw: RawCommand) -> list[World]:
        """One simple command: prefix assignments, then the command (builtin, function, or a
        recorded external command)."""
        if not raw.words:
            self.record(world, raw, [], [self._prefix_field(world, w) for w in raw.assignments])
            for word in raw.assignments:
                self.assign(world, word.nodes[0], extra=word.nodes[1:])
            if not any(self._has_substitution(w) for w in raw.assignments):
                world.status = 0
            return [world]
        argv = [f for word in raw.words for f in self.fields(world, word)]
        prefix = [self._prefix_field(world, word) for word in raw.assignments]
        if not argv:  # every word expanded to nothing: the assignments stay in the shell
            for word in raw.assignments:
                self.assign(world, word.nodes[0], extra=word.nodes[1:])
            return [world]
        command = argv[0].text.value if argv[0].text.known else None
        if command in ("command", "builtin") and len(argv) > 1:
            argv = argv[1:]
            command = argv[0].text.value if argv[0].text.known else None
        if command in world.functions and not prefix:
            return self.call(world, command, argv, raw)
        builtin = getattr(self, "_builtin_" + (command or "").replace("-", "_").replace(".", "dot"), None)
        if command == ":":
            builtin = self._builtin_true
        elif command == ".":
            builtin = self._builtin_source
        elif command == "[":
            builtin = self._builtin_test
        if builtin is not None:
            result: list[World] = builtin(world, argv, raw)
            return result
        if command == "exec":  # the shell becomes the command: nothing after it runs
            if len(argv) > 1:
                self.record(world, raw, argv[1:], prefix)
                world.flow = "exit"
            return [world]
        if command in ("bash", "sh", "zsh", "dash") and len(argv) > 1:
            return self._shell(world, argv, raw, prefix)
        self.record(world, raw, argv, prefix)
        world.status = 0 if command in _NEUTRAL else None
        return [world]

    def record(
        self, world: World, raw: RawCommand, argv: list[Field], prefix: list[tuple[str, Text, Field]]
    ) -> None:
        env = tuple(
            (name, text)
            for name in sorted(world.exported & world.touched)
            if (text := world.scalar(name)) is not None
            and (name not in self.caller or text != self.caller[name].text)
        )  # what the script adds to the caller's environment or changes in it
        self.spend(FIELD_WORK * (len(env) + len(argv) + len(prefix)), raw.start)  # a copy per command
        unset = tuple(sorted(n for n in self.caller_env if n in world.touched and n not in world.vars))
        self.runs.append(
            CommandRun(
                argv=tuple(argv),
                prefix=tuple((n, v) for n, v, _ in prefix),
                prefix_words=tuple(f for _, _, f in prefix),
                env=env,
                env_unset=unset,
                assumptions=world.assumptions,
                start=raw.start,
                end=raw.end,
                world=world.uid,
            )
        )

    def call(self, world: World, name: str, argv: list[Field], raw: RawCommand) -> list[World]:
        if self.calls >= MAX_CALLS:
            self.say("RLC1106", f"{name}: functions nested more than {MAX_CALLS} deep: not read", raw.start)
            world.status = None
            return [world]
        self.calls += 1
        saved = world.positional
        world.positional = tuple(argv[1:])  # each keeps where the call wrote it
        world.locals.append({})
        worlds = self.block([world], [world.functions[name]])
        self.calls -= 1
        for w in worlds:
            frame = w.locals.pop() if w.locals else {}
            for local, old in frame.items():
                if old is None:
                    w.vars.pop(local, None)
                else:
                    w.vars[local] = old
            w.positional = saved
            if w.flow == "return":
                w.flow = None
        return worlds

    def _shell(
        self, world: World, argv: list[Field], raw: RawCommand, prefix: list[tuple[str, Text, Field]]
    ) -> list[World]:
        """`bash -c TEXT`: TEXT read like the script, in a shell that sees only exported names."""
        words = [f.text for f in argv]
        if len(words) > 2 and words[1].value == "-c" and words[2].known:
            child = World(positional=tuple(argv[4:]))
            for name in world.exported:
                value = world.scalar(name)
                if value is not None:
                    child.vars[name] = Scalar(value)
                    child.exported.add(name)
                    if name in world.touched:  # the env a launch inside reports: what the script set
                        child.touched.add(name)
            for name, value, _ in prefix:
                child.vars[name] = Scalar(value)
                child.exported.add(name)
                child.touched.add(name)
            self._read_text(child, words[2].value, raw.start)
            world.status = None
            return [world]
        self.say("RLC1106", f"{words[0].value} runs another script, which is not read", raw.start)
        self.record(world, raw, argv, prefix)
        world.status = None
        return [world]

    def _read_text(self, world: World, text: str, where: int) -> list[World]:
        """Text given to `bash -c` or `eval`, parsed and read in `world`. Positions inside it are
        reported at the command that holds it."""
        if self.calls >= MAX_CALLS:
            self.say("RLC1106", f"`eval` or `bash -c` nested more than {MAX_CALLS} deep: not read", where)
            return [world]
        parsed, problems = parse(text, self.parsed.file)
        if parsed is None or problems:
            self.say("RLC1106", "the text given to `bash -c` or `eval` does not parse: not read", where)
            return [world]
        inner = Evaluator.__new__(Evaluator)
        inner.__dict__.update(self.__dict__)
        inner.parsed = parsed
        inner.runs = []
        inner.calls = self.calls + 1
        worlds = inner.block([world], parsed.root.named_children)
        line, col = self.parsed.position(where)
        for run in inner.runs:  # their places are in the inner text: point at the outer command
            self.runs.append(
                CommandRun(
                    argv=tuple(Field(f.text, line, col) for f in run.argv),
                    prefix=run.prefix,
                    prefix_words=tuple(Field(f.text, line, col) for f in run.prefix_words),
                    env=run.env,
                    env_unset=run.env_unset,
                    assumptions=run.assumptions,
                    start=where,
                    end=where,
                    world=run.world,
                )
            )
        self.steps = inner.steps
        return worlds

    # -- builtins: each gets the world, the argv fields and the raw command ------------------------

    def _builtin_true(self, world: World, argv: list[Field], raw: RawCommand) -> list[World]:
        world.status = 0
        return [world]

    def _builtin_false(self, world: World, argv: list[Field], raw: RawCommand) -> list[World]:
        world.status = 1
        return [world]

    def _builtin_exit(self, world: World, argv: list[Field], raw: RawCommand) -> list[World]:
        world.flow = "exit"
        return [world]

    def _builtin_return(self, world: World, argv: list[Field], raw: RawCommand) -> list[World]:
        world.flow = "return" if world.locals else "exit"
        return [world]

    def _builtin_break(self, world: World, argv: list[Field], raw: RawCommand) -> list[World]:
        world.flow = "break"
        return [world]

    def _builtin_continue(self, world: World, argv: list[Field], raw: RawCommand) -> list[World]:
        world.flow = "continue"
        return [world]

    def _builtin_set(self, world: World, argv: list[Field], raw: RawCommand) -> list[World]:
        words = [f.text.value for f in argv[1:]]
        i = 0
        while i < len(words):
            word = words[i]
            if word == "--":
                world.positional = tuple(argv[i + 2 :])
                break
            if word in ("-o", "+o") and i + 1 < len(words):
                option = {"nounset": "u", "errexit": "e", "xtrace": "x", "allexport": "a"}.get(
                    words[i + 1], words[i + 1]
                )
                (world.options.add if word == "-o" else world.options.discard)(option)
                i += 2
                continue
            if word[:1] in "-+" and len(word) > 1:
                for letter in word[1:]:
                    (world.options.add if word[0] == "-" else world.options.discard)(letter)
                if "o" in word[1:] and i + 1 < len(words):  # -euo pipefail
                    world.options.add(words[i + 1])
                    i += 1
            else:
                world.positional = tuple(argv[i + 1 :])
                break
            i += 1
        world.status = 0
        return [world]

    def _builtin_shift(self, world: World, argv: list[Field], raw: RawCommand) -> list[World]:
        count = argv[1].text.value if len(argv) > 1 and argv[1].text.known else "1"
        n = int(count) if count.isdigit() else 1
        world.status = 0 if n <= len(world.positional) else 1
        world.positional = world.positional[n:] if n <= len(world.positional) else world.positional
        return [world]

    def _builtin_cd(self, world: World, argv: list[Field], raw: RawCommand) -> list[World]:
        target = argv[1].text if len(argv) > 1 else world.scalar("HOME") or EMPTY
        here = world.scalar("PWD") or unknown_text("$PWD")
        if target.known and target.value.startswith("/"):
            new = Text(posixpath.normpath(target.value))
        elif target.known and target.value not in ("-", ""):
            new = Text(posixpath.join(here.value, target.value), here.unknown)
        else:
            new = unknown_text("$PWD")
        world.assign("OLDPWD", here)
        world.assign("PWD", new)
        world.status = None
        return [world]

    def _builtin_source(self, world: World, argv: list[Field], raw: RawCommand) -> list[World]:
        name = argv[1].text.value if len(argv) > 1 else ""
        self.say(
            "RLC1106",
            f"`{argv[0].text.value} {name}` reads another file, which is not read: what it sets is unknown",
            raw.start,
        )
        world.status = None
        return [world]

    def _builtin_eval(self, world: World, argv: list[Field], raw: RawCommand) -> list[World]:
        if any(not f.text.known for f in argv[1:]):
            self.say("RLC1106", "`eval` of text only known when the script runs: not read", raw.start)
            world.status = None
            return [world]
        return self._read_text(world, " ".join(f.text.value for f in argv[1:]), raw.start)

    def _builtin_let(self, world: World, argv: list[Field], raw: RawCommand) -> list[World]:
        value = EMPTY
        for field in argv[1:]:
            value = self.arithmetic(world, field.text.value, self.parsed.root)
        world.status = None if not value.known else int(value.value == "0")
        return [world]

    def _builtin_read(self, world: World, argv: list[Field], raw: RawCommand) -> list[World]:
        for field in argv[1:]:
            if field.text.known and _NAME.match(field.text.value):
                world.assign(field.text.value, unknown_text(f"${field.text.value}"))
        world.status = None
        return [world]

    def _builtin_export(self, world: World, argv: list[Field], raw: RawCommand) -> list[World]:
        for field in argv[1:]:
            if field.text.known and not field.text.value.startswith("-"):
                name = self._assign_text(world, field.text.value, field)
                if name:
                    world.export(name)
        world.status = 0
        return [world]

    def _builtin_unset(self, world: World, argv: list[Field], raw: RawCommand) -> list[World]:
        for field in argv[1:]:
            if field.text.known and _NAME.match(field.text.value):
                world.unset(field.text.value)
        world.status = 0
        return [world]

    def _builtin_test(self, world: World, argv: list[Field], raw: RawCommand) -> list[World]:
        words = [f.text for f in argv[1:]]
        if argv[0].text.value == "[" and words and words[-1].value == "]":
            words = words[:-1]
        try:
            result = _test_words(words)
        except _TestFails as failure:
            self.say("RLC1106", f"test bash would reject: {failure}: the test fails (status 2)", raw.start)
            world.status = 2
            return [world]
        if result is None:
            world.status = None
            return self.decide(world, raw.words[0].nodes[0])
        world.status = 0 if result else 1
        return [world]

    def _builtin_getopts(self, world: World, argv: list[Field], raw: RawCommand) -> list[World]:
        world.status = 1 if not world.positional else None
        return [world]

    def _builtin_printf(self, world: World, argv: list[Field], raw: RawCommand) -> list[World]:
        if len(argv) > 2 and argv[1].text.value == "-v" and argv[2].text.known:
            world.assign(argv[2].text.value, unknown_text(f"${argv[2].text.value}"))
        world.status = 0
        return [world]

    # -- assignments -------------------------------------------------------------------------------

    def assign(
        self, world: World, node: Node, extra: Sequence[Node] = (), array: str | None = None
    ) -> str | None:
        """`NAME=value`, `NAME+=value`, `NAME=(…)`, `NAME[i]=value`; returns the name."""
        target = node.child_by_field_name("name") or node.named_children[0]
        value = node.child_by_field_name("value")
        operator = next((c.type for c in node.children if c.type in ("=", "+=")), "=")
        index: str | None = None
        if target.type == "subscript":
            name = self.parsed.text(target.named_children[0])
            index = self.parsed.slice(target.named_children[0].end_byte + 1, target.end_byte - 1)
        else:
            name = self.parsed.text(target)
        line, col = self.parsed.position(node.start_byte)
        if value is not None and value.type == "array":
            self._assign_array(world, name, value, append=operator == "+=", associative=array == "A")
            return name
        nodes = ([value] if value is not None else []) + list(extra)
        text = self.text(world, nodes, assignment=True) if nodes else EMPTY
        if index is not None:
            var = world.vars.get(name)
            current = (
                var
                if isinstance(var, Array)
                else Array(((0, Field(var.text, var.line, var.col)),) if var else ())
            )
            key = self._index(world, index, node, current.associative)
            if isinstance(key, Text):
                self.say("RLC1106", f"{name}[{index}]: an index only known when the script runs", node)
                return name
            if operator == "+=":
                old = current.get(key)
                text = (old.text if old else EMPTY) + text
            world.assign_array(name, current.with_element(key, Field(text, line, col)))
            return name
        if operator == "+=":
            var = world.vars.get(name)
            if isinstance(var, Array):
                world.assign_array(name, var.with_element(var.next_index(), Field(text, line, col)))
                return name
            text = (world.scalar(name) or EMPTY) + text
        if array:
            world.assign_array(
                name, Array(((("0" if array == "A" else 0), Field(text, line, col)),), array == "A")
            )
            return name
        world.assign(
            name, text, line, col, (node.start_byte, max([node.end_byte, *(n.end_byte for n in extra)]))
        )
        return name

    def _assign_array(self, world: World, name: str, node: Node, append: bool, associative: bool) -> None:
        var = world.vars.get(name)
        current = var if isinstance(var, Array) and append else Array(associative=associative)
        if isinstance(var, Scalar) and append:
            current = Array(((0, Field(var.text, var.line, var.col)),))
        associative = current.associative or associative
        elements = [c for c in node.named_children if c.type != "comment"]
        # built in a dict, an element set again moving to the end as Array.with_element moves it:
        # one copy of the array per assignment, not one per element
        built: dict[int | str, Field] = dict(current.elements)
        following = current.next_index()
        for word in glued(self.parsed, elements):
            for field in self.fields(world, word):
                keyed = re.match(r"\[([^\]]*)\]=", field.text.value)
                if keyed:
                    key_text = keyed.group(1)
                    element = Field(
                        Text(field.text.value[keyed.end() :], field.text.unknown), field.line, field.col
                    )
                    key: int | str | Text = (
                        key_text if associative else self._index(world, key_text, node, False)
                    )
                    if isinstance(key, Text):
                        continue
                else:
                    key, element = following, field
                built.pop(key, None)
                built[key] = element
                if isinstance(key, int):
                    following = max(following, key + 1)
                if len(built) > MAX_FIELDS:
                    self.say("RLC1106", f"an array of more than {MAX_FIELDS} elements: cut there", node)
                    break
        world.assign_array(name, replace(current, elements=tuple(built.items())))

    def _prefix_field(self, world: World, word: RawWord) -> tuple[str, Text, Field]:
        """`NAME=value` before a command: the name, the value, and the word as written."""
        node = word.nodes[0]
        target = node.child_by_field_name("name") or node.named_children[0]
        value = node.child_by_field_name("value")
        nodes = ([value] if value is not None else []) + word.nodes[1:]
        if value is not None and value.type == "array":  # NAME=(…): kept as written
            text = Text(self.parsed.text(value))
        else:
            text = self.text(world, nodes, assignment=True) if nodes else EMPTY
        name = self.parsed.text(target)
        line, col = self.parsed.position(word.start)
        operator = "+=" if any(c.type == "+=" for c in node.children) else "="
        return name, text, Field(Text(name + operator) + text, line, col)

    def _assign_text(self, world: World, text: str, where: Node | Field) -> str | None:
        """`export NAME=value` where the word was built at run time: split at the first `=`."""
        match = _ASSIGNMENT.match(text)
        if match:
            name, plus, value = match.groups()
            old = world.scalar(name) if plus else None
            world.assign(name, (old or EMPTY) + Text(value))
            return name
        return text if _NAME.match(text) else None

    def _has_substitution(self, word: RawWord) -> bool:
        return any("$(" in self.parsed.text(n) or "`" in self.parsed.text(n) for n in word.nodes)


def _test_words(words: list[Text]) -> bool | None:
    """`test` / `[` over expanded words, as bash's test builtin reads them (test.c): by the number of
    words for up to four (POSIX's rules), else as an expression with `!`, `-a`, `-o` and parentheses.
    None where the outcome depends on what the reader does not see (files, options, a word it does
    not know) or where bash would report a syntax error."""
    if any(not w.known for w in words):
        return None
    try:
        return _WordTest([w.value for w in words]).posix()
    except _Undecided:
        return None


class _Undecided(Exception):
    """The test reads something the reader does not see, or bash rejects its syntax."""


_WORD_UNARY = {"-z", "-n"}  # bash knows more (files, -o, -v, -t): they leave a test undecided


class _WordTest:
    """bash's test.c over known words: `posix` picks the form by count, `expr` parses the rest."""

    def __init__(self, values: list[str]) -> None:
        self.values, self.pos = values, 0

    def posix(self) -> bool:
        v = self.values
        if len(v) == 0:
            return False
        if len(v) == 1:
            return v[0] != ""
        if len(v) == 2:
            return self._two(0)
        if len(v) == 3:
            return self._three(0)
        if len(v) == 4 and v[0] == "!":
            return not self._three(1)
        if len(v) == 4 and v[0] == "(" and v[3] == ")":
            return self._two(1)
        value = self._or()
        if self.pos != len(v):
            raise _Undecided  # bash: "too many arguments"
        return value

    def _two(self, at: int) -> bool:
        op, operand = self.values[at], self.values[at + 1]
        if op == "!":
            return operand == ""
        return self._unary(op, operand)

    def _three(self, at: int) -> bool:
        a, op, b = self.values[at : at + 3]
        if op in _WORD_BINARY:
            return self._binary(a, op, b)
        if op in ("-a", "-o"):
            return (a != "" and b != "") if op == "-a" else (a != "" or b != "")
        if a == "!":
            return not self._two(at + 1)
        if a == "(" and b == ")":
            return op != ""
        raise _Undecided  # bash: "binary operator expected"

    def _or(self) -> bool:
        value = self._and()
        if self._next("-o"):
            other = self._or()  # bash evaluates both sides: an error on either side is reported
            return value or other
        return value

    def _and(self) -> bool:
        value = self._term()
        if self._next("-a"):
            other = self._and()
            return value and other
        return value

    def _term(self) -> bool:
        v, at = self.values, self.pos
        if at >= len(v):
            raise _Undecided  # bash: "argument expected"
        if v[at] == "!":
            self.pos += 1
            return not self._term()
        if v[at] == "(":
            self.pos += 1
            value = self._or()
            if not self._next(")"):
                raise _Undecided  # bash: "`)' expected"
            return value
        if at + 2 < len(v) and v[at + 1] in _WORD_BINARY:
            self.pos += 3
            return self._binary(v[at], v[at + 1], v[at + 2])
        if at + 1 < len(v) and v[at].startswith("-") and len(v[at]) == 2:  # `-a FILE`, `-o OPT` too
            self.pos += 2
            return self._unary(v[at], v[at + 1])
        self.pos += 1
        return v[at] != ""

    def _next(self, word: str) -> bool:
        if self.pos < len(self.values) and self.values[self.pos] == word:
            self.pos += 1
            return True
        return False

    @staticmethod
    def _unary(op: str, operand: str) -> bool:
        if op not in _WORD_UNARY:
            raise _Undecided  # a file test, an option, a variable: not the reader's to see
        return (operand == "") == (op == "-z")

    @staticmethod
    def _binary(a: str, op: str, b: str) -> bool:
        if op in ("=", "=="):
            return a == b
        if op == "!=":
            return a != b
        if op in _NUMBERS:
            return _NUMBERS[op](_test_integer(a), _test_integer(b))
        raise _Undecided  # `<` and `>` sort by a locale's rules; -nt, -ot, -ef read files


# A test expression grouped as bash groups it: ("or"|"and", left, right), ("!", inner),
# ("compare", op, left, right), ("unary", op, operand), ("word", operand)
_TestTree = tuple[Any, ...]
_TEST_BINARY = {
    "=",
    "==",
    "!=",
    "<",
    ">",
    "=~",
    "-eq",
    "-ne",
    "-lt",
    "-le",
    "-gt",
    "-ge",
    "-nt",
    "-ot",
    "-ef",
}
# `test`'s binary operators (bash's test_binop): `[[`'s, but for `=~`
_WORD_BINARY = _TEST_BINARY - {"=~"}
_TEST_LOGICAL = {"-o": "or", "||": "or", "-a": "and", "&&": "and"}


def _test_or(tokens: list[Node | str]) -> tuple[_TestTree | None, list[Node | str]]:
    """The longest test expression at the start of `tokens` (`-o` binding loosest), and the rest."""
    return _test_chain(tokens, "or", _test_and)


def _test_and(tokens: list[Node | str]) -> tuple[_TestTree | None, list[Node | str]]:
    return _test_chain(tokens, "and", _test_not)


def _test_chain(
    tokens: list[Node | str],
    level: str,
    read: Callable[[list[Node | str]], tuple[_TestTree | None, list[Node | str]]],
) -> tuple[_TestTree | None, list[Node | str]]:
    left, rest = read(tokens)
    while left is not None and rest and isinstance(rest[0], str) and _TEST_LOGICAL.get(rest[0]) == level:
        right, rest = read(rest[1:])
        left = None if right is None else (level, left, right)
    return left, rest


def _test_not(tokens: list[Node | str]) -> tuple[_TestTree | None, list[Node | str]]:
    if tokens[:1] == ["!"]:
        inner, rest = _test_not(tokens[1:])
        return (None if inner is None else ("!", inner)), rest
    if len(tokens) >= 2 and isinstance(tokens[0], str) and not isinstance(tokens[1], str):
        return ("unary", tokens[0], tokens[1]), tokens[2:]
    if not tokens or isinstance(tokens[0], str):
        return None, tokens
    if (
        len(tokens) >= 3
        and isinstance(tokens[1], str)
        and tokens[1] in _TEST_BINARY
        and not isinstance(tokens[2], str)
    ):
        return ("compare", tokens[1], tokens[0], tokens[2]), tokens[3:]
    return ("word", tokens[0]), tokens[1:]


class _TestFails(ValueError):
    """`[` or `test` given an operand bash rejects (`[ "x y" -gt 1 ]`): the whole test fails with
    status 2, whatever `!`, `-a` or `-o` around the comparison."""


_NUMBERS: dict[str, Callable[[int, int], bool]] = {
    "-eq": int.__eq__, "-ne": int.__ne__, "-lt": int.__lt__, "-le": int.__le__, "-gt": int.__gt__,
    "-ge": int.__ge__,
}  # fmt: skip
# An integer as `[` reads one (bash's legal_number: base 10, a sign, blanks around; no arithmetic)
_TEST_INTEGER = re.compile(r"[ \t\n\v\f\r]*[+-]?[0-9]+[ \t]*\Z")


def _test_integer(text: str) -> int:
    """An operand of `[`'s -eq … -ge; raises _TestFails where bash says "integer expression expected"."""
    number = int(text) if _TEST_INTEGER.match(text) else None
    if number is None or not -(2**63) <= number < 2**63:
        raise _TestFails(f"{text}: integer expression expected")
    return number


def _plain_reference(parsed: ParsedScript, node: Node) -> str | None:
    """The variable a node reads as a whole (`$X`, `${X}`, `"$X"`), or None."""
    if node.type == "string":
        inner = list(node.named_children)
        if len(inner) != 1 or parsed.text(node) != f'"{parsed.text(inner[0])}"':
            return None
        node = inner[0]
    if node.type in {"simple_expansion", "expansion"}:
        match = re.fullmatch(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", parsed.text(node))
        return match.group(1) if match else None
    return None


def _body_start(item: Node) -> int:
    """Where a case item's commands start: after its `)`."""
    for child in item.children:
        if child.type == ")":
            return child.end_byte
    return item.start_byte


def _condition_text(text: str) -> str:
    line = " ".join(text.split())
    return line[:80] + ("…" if len(line) > 80 else "")

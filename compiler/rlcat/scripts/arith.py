"""bash arithmetic (`$((...))`, `((...))`, `let`, array indexes), evaluated without running anything.

Read from the source text, as bash does: `$name` and `${name}` are replaced by their text first, then
the expression is parsed; a bare name is read as an expression itself (bash evaluates a variable's
value recursively). Integers are 64-bit and wrap, as in bash. Anything only known by running a
command makes the whole result unknown (`Unknowable`), never a guess.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

MAX_TEXT = 4096  # characters of one expression after `$` references are replaced
MAX_NESTING = 64  # parentheses and recursive variable values
_BITS = 1 << 64


class ArithError(ValueError):
    """An expression bash would reject (syntax, division by zero): bash prints it and the command
    fails."""


class Unknowable(ValueError):
    """The value depends on something only running would tell."""


@dataclass
class Scope:
    """What an expression sees: `lookup(name)` gives a variable's text, None when unset, and raises
    Unknowable when only running would tell; `assign` stores a result (`x += 1`)."""

    lookup: Callable[[str], str | None]
    assign: Callable[[str, int], None]


def wrap(value: int) -> int:
    value %= _BITS
    return value - _BITS if value >= _BITS // 2 else value


_REFERENCE = re.compile(
    r"\$(?:\{(?P<hash>#?)(?P<braced>[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[#?@*])(?::-(?P<default>[^}]*))?\}"
    r"|(?P<plain>[A-Za-z_][A-Za-z0-9_]*|[0-9]|[#?]))"
)


def substitute(text: str, scope: Scope) -> str:
    """`$x`, `${x}`, `${#x}`, `${x:-default}` replaced by their text; other `$` forms are unknowable
    here (command substitutions are never run)."""

    def one(match: re.Match[str]) -> str:
        name = match["braced"] or match["plain"]
        value = scope.lookup(name)
        if match["hash"]:
            return str(len(value or ""))
        if match["default"] is not None and not value:
            return match["default"]
        return value or ""

    replaced = _REFERENCE.sub(one, text)
    if "$" in replaced or "`" in replaced:
        raise Unknowable(f"$(({text})) holds a command substitution or an expansion read only when run")
    if len(replaced) > MAX_TEXT:
        raise ArithError(f"expression longer than {MAX_TEXT} characters")
    return replaced


def evaluate(text: str, scope: Scope, nesting: int = 0) -> int:
    """The value of an arithmetic expression (empty text is 0, as in bash)."""
    return _Parser(substitute(text, scope), scope, nesting).run()


_TOKEN = re.compile(
    r"\s*(?:(?P<number>[0-9][0-9A-Za-z_#@]*)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<op>\*\*=|<<=|>>=|\+\+|--|\*\*|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&^|]=|[-+*/%<>=!~&^|?:,()\[\]]))"
)
_ASSIGN = {"=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "^=", "|=", "**="}
_BINARY: dict[str, int] = {
    "||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6,
    "<": 7, ">": 7, "<=": 7, ">=": 7, "<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10,
}  # fmt: skip


class _Parser:
    """Precedence climbing straight to values; `live` is False on a branch bash would not
    evaluate (the right of a decided `&&`, the untaken side of `?:`), where nothing is assigned
    and nothing can fail."""

    def __init__(self, text: str, scope: Scope, nesting: int) -> None:
        self.tokens = self._tokens(text)
        self.pos = 0
        self.scope = scope
        self.nesting = nesting
        self.text = text

    @staticmethod
    def _tokens(text: str) -> list[str]:
        tokens, pos = [], 0
        while pos < len(text):
            match = _TOKEN.match(text, pos)
            if not match or match.end() == pos:
                if text[pos:].strip():
                    raise ArithError(f"syntax error in expression (error token is {text[pos:].strip()!r})")
                break
            tokens.append(match.group(match.lastgroup or 0))
            pos = match.end()
        return tokens

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if token is None or (expected is not None and token != expected):
            raise ArithError(f"syntax error in expression {self.text!r}")
        self.pos += 1
        return token

    def run(self) -> int:
        if not self.tokens:
            return 0
        value = self.comma(True)
        if self.peek() is not None:
            raise ArithError(f"syntax error in expression (error token is {self.peek()!r})")
        return value

    def comma(self, live: bool) -> int:
        value = self.assignment(live)
        while self.peek() == ",":
            self.take()
            value = self.assignment(live)
        return value

    def assignment(self, live: bool) -> int:
        token = self.peek()
        after = self.tokens[self.pos + 1] if self.pos + 1 < len(self.tokens) else None
        if token and _is_name(token) and after in _ASSIGN:
            self.pos += 2
            right = self.assignment(live)
            if not live:
                return 0
            if after != "=":
                right = _apply(after[:-1], self.variable(token), right)
            self.scope.assign(token, wrap(right))
            return wrap(right)
        return self.conditional(live)

    def conditional(self, live: bool) -> int:
        test = self.binary(1, live)
        if self.peek() != "?":
            return test
        self.take()
        yes = self.assignment(live and test != 0)
        self.take(":")
        no = self.assignment(live and test == 0)
        return yes if test else no

    def binary(self, level: int, live: bool) -> int:
        left = self.unary(live)
        while (op := self.peek()) in _BINARY and _BINARY[op] >= level:
            self.take()
            if op == "&&":
                right = self.binary(_BINARY[op] + 1, live and left != 0)
                left = int(bool(left) and bool(right))
            elif op == "||":
                right = self.binary(_BINARY[op] + 1, live and left == 0)
                left = int(bool(left) or bool(right))
            else:
                right = self.binary(_BINARY[op] + 1, live)
                left = _apply(op, left, right) if live else 0
        return left

    def unary(self, live: bool) -> int:
        token = self.peek()
        if token in ("-", "+", "!", "~"):
            self.take()
            value = self.unary(live)
            return wrap({"-": -value, "+": value, "!": int(not value), "~": ~value}[token])
        if token in ("++", "--"):
            self.take()
            name = self.take()
            if not _is_name(name):
                raise ArithError(f"{token} needs a variable")
            value = wrap(self.variable(name) + (1 if token == "++" else -1))
            if live:
                self.scope.assign(name, value)
            return value
        return self.power(live)

    def power(self, live: bool) -> int:
        base = self.postfix(live)
        if self.peek() == "**":
            self.take()
            exponent = self.unary(live)  # right-associative
            return _apply("**", base, exponent) if live else 0
        return base

    def postfix(self, live: bool) -> int:
        token = self.take()
        if token == "(":
            if self.nesting >= MAX_NESTING:
                raise ArithError("expression nested too deep")
            self.nesting += 1
            value = self.comma(live)
            self.nesting -= 1
            self.take(")")
            return value
        if _is_name(token):
            if self.peek() == "[":  # an array element: the scope reads `name[index]`
                self.take()
                token = f"{token}[{self.comma(live)}]"
                self.take("]")
            value = self.variable(token)
            if self.peek() in ("++", "--"):
                op = self.take()
                if live:
                    self.scope.assign(token, wrap(value + (1 if op == "++" else -1)))
            return value
        return _number(token)

    def variable(self, name: str) -> int:
        text = self.scope.lookup(name)
        if not text:
            return 0
        if self.nesting >= MAX_NESTING:
            raise ArithError(f"{name}: expression recursion level exceeded")
        return evaluate(text, self.scope, self.nesting + 1)


def _is_name(token: str) -> bool:
    return token[:1].isalpha() or token[:1] == "_"


def _number(token: str) -> int:
    try:
        if "#" in token:
            base_text, _, digits = token.partition("#")
            base = int(base_text)
            if not 2 <= base <= 36:  # bash goes to 64 with @ and _; launch scripts do not
                raise ArithError(f"invalid arithmetic base {base}")
            return wrap(int(digits, base))
        if token[:2] in ("0x", "0X"):
            return wrap(int(token[2:], 16))
        if token.startswith("0") and len(token) > 1:
            return wrap(int(token[1:], 8))
        return wrap(int(token))
    except ValueError:
        raise ArithError(f"value too great for base (error token is {token!r})") from None


def _apply(op: str, left: int, right: int) -> int:
    if op in ("/", "%"):
        if right == 0:
            raise ArithError("division by 0")
        quotient = abs(left) // abs(right) * (1 if (left >= 0) == (right >= 0) else -1)  # C truncation
        return wrap(quotient if op == "/" else left - quotient * right)
    if op == "**":
        if right < 0:
            raise ArithError("exponent less than 0")
        return wrap(pow(left, right, _BITS))
    if op in ("<<", ">>"):
        right &= 63
        return wrap(left << right) if op == "<<" else left >> right
    table = {
        "+": left + right, "-": left - right, "*": left * right, "&": left & right, "^": left ^ right,
        "|": left | right, "==": int(left == right), "!=": int(left != right), "<": int(left < right),
        ">": int(left > right), "<=": int(left <= right), ">=": int(left >= right),
    }  # fmt: skip
    return wrap(table[op])

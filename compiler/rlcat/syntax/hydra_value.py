"""Render Python values in Hydra's override grammar, and parse override values back.

Every rendered value must reach verl as the same value: through Hydra's own override parser, then
OmegaConf's resolution (property tests check both with generated strings). Strings are left bare
only when the grammar reads them back unchanged as strings; everything else is quoted.

Interpolations: a string is data, so its `${` is escaped and verl receives the text, never the value
of an environment variable or another key (`inert`). Only an `Interpolation` is written as it is.
Which strings are one is decided in three places, each the only one for its kind of text:

- recipe data asks for one with the `!interp` tag (read.nodes makes it a RequestedInterpolation);
- a path starting with `~`, `$HOME` or `$PWD` becomes `${oc.env:HOME}/...` (lower.common.launch_path);
- text written for verl's own command line keeps the meaning it has there: `--override` values,
  the overrides of a launch script, the values of a run `rlcat import` reads (`with_live_interpolations`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from functools import cache
from typing import Any, NoReturn

# Characters Hydra's lexer accepts in an unquoted value (ID chars plus UNQUOTED_CHAR and ':'),
# minus '$' and '\\' which start interpolations and escapes. \Z, not $: "$" also matches before a
# final newline, and a bare "a\n" is a lexer error in Hydra.
_BARE = re.compile(r"^[A-Za-z_/][A-Za-z0-9_/.\-+@:]*\Z")
# Bare words the grammar would read as something other than a string.
# A mapping key inside a value ({k: v}): Hydra's grammar has no quoted keys. Its dictKey takes
# unquoted characters too (`.`, `/`, `*`: module patterns such as `model.layers.{*}`), and braces
# and brackets escaped (`\{`), which `_mapping_key` writes.
_MAPPING_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_\-./*{}\[\]]*")
_KEY_ESCAPES = str.maketrans({c: "\\" + c for c in "{}[]"})
_SPECIAL = re.compile(r"^(?:null|true|false|[+-]?(?:inf|nan))$", re.IGNORECASE)


# A dotted key of Hydra's override grammar (OverrideLexer.g4: KEY_SPECIAL or INT_UNSIGNED segments).
_KEY_SEGMENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_\-$]*|0|[1-9](?:_?[0-9])*")
# `${` and the backslashes right before it: OmegaConf reads `\${` as a literal `${` and `\\${` as a
# backslash followed by a live interpolation.
_INTERPOLATION_START = re.compile(r"(\\*)\$\{")


class Interpolation(str):
    """Text that reaches verl as written, its interpolations resolved by OmegaConf at launch."""


class RequestedInterpolation(Interpolation):
    """An interpolation recipe data asks for with the `!interp` tag: live, and reported (RLC407)
    so that a reviewer sees what verl will resolve at launch."""


def inert(text: str) -> str:
    """`text` as OmegaConf reads it literally: each `${` escaped, the backslashes before it doubled."""
    return _INTERPOLATION_START.sub(lambda m: m.group(1) * 2 + "\\${", text)


def with_live_interpolations(value: Any, live: type[Interpolation] = Interpolation) -> Any:
    """`value` as verl's own command line reads it: each string holding `${` (in lists and mappings
    too) becomes `live`, an interpolation OmegaConf resolves at launch; every other value is kept,
    a string without `${` as plain `str` (the same value whatever its str type: plan.same_value).

    The one rule for text written for verl rather than for rlcat: an `--override` value
    (compile.assemble), an override in a launch script (survey.lint_scripts), a value of a run that
    `rlcat import` reads (importer.solve, with `live=RequestedInterpolation`, so that the recipe it
    writes says `!interp`)."""
    if isinstance(value, str):
        return live(value) if "${" in value else value
    if isinstance(value, list):
        return [with_live_interpolations(v, live) for v in value]
    if isinstance(value, dict):
        return {k: with_live_interpolations(v, live) for k, v in value.items()}
    return value


def leaves(value: Any, *, keys: bool = False) -> Iterator[Any]:
    """The scalars anywhere in `value` (lists and mappings opened; with `keys`, mapping keys too)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, dict):
            if keys:
                stack.extend(item.keys())
            stack.extend(item.values())
        else:
            yield item


def interpolations_in(value: Any) -> tuple[bool, bool]:
    """(escaped, requested) for the strings anywhere in `value`: whether one holds `${` that rlcat
    writes escaped (text verl would otherwise have resolved), and whether one is an interpolation
    asked for with `!interp`."""
    escaped = requested = False
    for item in (value,) if isinstance(value, str) else leaves(value):  # most values are one string
        if isinstance(item, RequestedInterpolation):
            requested = True
        elif isinstance(item, str) and not isinstance(item, Interpolation) and "${" in item:
            escaped = True
    return escaped, requested


def as_config_value(value: Any) -> Any:
    """`value` as it would stand in a Hydra config file: plain types, strings escaped as `render`
    escapes them (the yaml format writes the overrides as such a file)."""
    if isinstance(value, str):
        return str(value) if isinstance(value, Interpolation) else inert(value)
    if isinstance(value, (list, tuple)):
        return [as_config_value(v) for v in value]
    if isinstance(value, dict):
        return {k: as_config_value(v) for k, v in value.items()}
    return value


@cache  # a plan's keys repeat across every plan of a validate run
def key_problem(key: str) -> str | None:
    """Why `key` is not a dotted key in Hydra's override grammar, or None when it is one."""
    for segment in key.split("."):
        if not _KEY_SEGMENT.fullmatch(segment):
            return (
                f"{segment!r} is not a key segment (letters, digits, _, - and $; not starting with a digit)"
            )
    return None


class UnrenderableValue(ValueError):
    """The value has no form in Hydra's override grammar (e.g. a mapping with non-identifier keys)."""


def render(value: Any) -> str:
    """`value` as Hydra override text."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return _string(value if isinstance(value, Interpolation) else inert(value))
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(render(v) for v in value) + "]"
    if isinstance(value, dict):
        for k in value:
            _check_mapping_key(k)
        return "{" + ",".join(f"{k.translate(_KEY_ESCAPES)}:{render(v)}" for k, v in value.items()) + "}"
    raise UnrenderableValue(f"cannot render a {type(value).__name__}")


def _check_mapping_key(key: Any) -> None:
    if not isinstance(key, str) or not _MAPPING_KEY.fullmatch(key):
        raise UnrenderableValue(f"mapping key {key!r} is not an identifier")
    if _SPECIAL.match(key):
        raise UnrenderableValue(f"mapping key {key!r} would be read by Hydra as {key.lower()}, not a string")


def _string(text: str) -> str:
    if _BARE.match(text) and not _SPECIAL.match(text):
        return text
    return quote(text)


def quote(text: str) -> str:
    """Quote a string for Hydra: escape the quote character and backslashes that precede a quote."""
    # double quotes by preference: the shell format wraps whole overrides in single quotes
    q = '"' if '"' not in text or "'" in text else "'"
    out = []
    run = 0  # backslashes seen in a row
    for ch in text:
        if ch == "\\":
            run += 1
            continue
        if run:
            # backslashes are literal unless they precede a quote; then each must be doubled
            out.append("\\" * (run * 2 if ch == q else run))
            run = 0
        out.append("\\" + ch if ch == q else ch)
    if run:
        out.append("\\" * (run * 2))  # they precede the closing quote
    return q + "".join(out) + q


def render_or_repr(value: Any) -> str:
    """Hydra text where the value has one, else Python's repr (for reports, not for overrides)."""
    try:
        return render(value)
    except ValueError:
        return repr(value)


def check_renderable(value: Any) -> None:
    """Raise UnrenderableValue if `value` has no form in Hydra's override grammar, as `render` would
    (the check stage asks this; the text itself is written only by emit)."""
    if value is None or isinstance(value, (str, int, float)):  # bool is an int
        return
    if isinstance(value, (list, tuple)):
        for item in value:
            check_renderable(item)
        return
    if isinstance(value, dict):
        for key, item in value.items():
            _check_mapping_key(key)
            check_renderable(item)
        return
    raise UnrenderableValue(f"cannot render a {type(value).__name__}")


# --- parsing -------------------------------------------------------------------------------------
# The inverse of render: the VALUE side of `key=VALUE` read as Hydra's OverridesParser reads it
# (hydra/grammar/Override{Lexer,Parser}.g4 and overrides_visitor.py), in pure Python so that the
# compile path never loads ANTLR. Sweeps and function calls are refused: they are not one value.

# Characters that Hydra's ID, INT, FLOAT, BOOL, NULL and UNQUOTED_CHAR tokens allow, all kept as
# written in an unquoted value. ASCII only: the lexer's CHAR is [a-zA-Z]. '$' (interpolation), '\\'
# (escapes), ':' and spaces get their own rules below.
_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-/+.%*@?|")
_SPACE = " \t"  # the lexer's WS; any other whitespace outside quotes is an error
_ESCAPABLE = frozenset("\\()[]{}:=, \t")  # a backslash before one of these is the lexer's ESC
# Hydra's typed tokens. An unquoted value that is exactly one of them is not a string; anything
# longer is several tokens, which Hydra joins into a string. (No nested quantifiers: linear.)
_UINT = r"(?:0|[1-9](?:_?[0-9])*)"
_DIGITS = r"[0-9](?:_?[0-9])*"
_POINT = rf"(?:{_UINT}\.(?:{_DIGITS})?|\.{_DIGITS})"
_INT = re.compile(rf"[+-]?{_UINT}")
_FLOAT = re.compile(rf"[+-]?(?:(?:{_POINT}|{_UINT})[eE][+-]?{_DIGITS}|{_POINT}|[Ii][Nn][Ff]|[Nn][Aa][Nn])")
_STARTS = _WORD | {"\\", "$"}  # characters that start (or continue) an unquoted value
_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*")  # a function name
_MAX_DEPTH = 100  # nesting that deep is no config; deeper, Python's recursion limit would end parsing


class HydraValueError(ValueError):
    """Text that is not one plain value in Hydra's override grammar (a sweep, a call, bad syntax)."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(f"{message} (at character {offset})")
        self.offset = offset


def parse(text: str) -> Any:
    """The value Hydra reads from `key=<text>`: None, bool, int, float, str, list or dict.

    Dict keys are what Hydra makes of them: strings, except that `{1:a}`, `{true:a}` and `{null:a}`
    give int, bool and None keys, as Hydra's own parser does.
    """
    return _Parser(text).top()


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def fail(self, message: str, offset: int | None = None) -> NoReturn:
        raise HydraValueError(message, self.pos if offset is None else offset)

    def spaces_end(self, i: int) -> int:
        while i < len(self.text) and self.text[i] in _SPACE:
            i += 1
        return i

    def skip_spaces(self) -> None:
        self.pos = self.spaces_end(self.pos)

    def unexpected(self) -> NoReturn:
        if self.pos == len(self.text):
            self.fail("the text ends where a value is expected")
        char = self.text[self.pos]
        hint = "" if char in "[]{}()'\",:" else " (quote the value to use it)"
        self.fail(f"unexpected {char!r}{hint}")

    def top(self) -> Any:
        self.skip_spaces()  # Hydra's '=' token takes the spaces after it
        if self.pos == len(self.text):
            return ""  # `key=` sets the empty string
        start = self.pos
        value = self.element(0)
        end = self.pos
        self.skip_spaces()
        if self.pos < len(self.text):
            if self.text[self.pos] == ",":
                self.fail("a comma outside brackets makes a sweep, not one value; quote it to keep it")
            self.unexpected()
        if end < self.pos and self.text[start] in "[{'\"":
            # trailing spaces belong to an unquoted word; after a quote or bracket Hydra refuses them
            self.fail("Hydra allows no spaces after a closing quote or bracket", end)
        return value

    def element(self, depth: int) -> Any:
        char = self.text[self.pos : self.pos + 1]
        if char and char in "[{" and depth == _MAX_DEPTH:
            self.fail(f"brackets are nested more than {_MAX_DEPTH} deep")
        if char == "[":
            return self.list_(depth + 1)
        if char == "{":
            return self.dict_(depth + 1)
        if char and char in "'\"":
            return self.quoted()
        return self.primitive(key=False)

    def list_(self, depth: int) -> list[Any]:
        opened = self.pos
        items: list[Any] = []
        self.pos += 1
        self.skip_spaces()  # brackets, commas and colons take the spaces around them
        if self.text.startswith("]", self.pos):
            self.pos += 1
            return items
        while True:
            items.append(self.element(depth))
            if self.closes("]", opened):
                return items

    def dict_(self, depth: int) -> dict[Any, Any]:
        opened = self.pos
        items: dict[Any, Any] = {}
        self.pos += 1
        self.skip_spaces()
        if self.text.startswith("}", self.pos):
            self.pos += 1
            return items
        while True:
            key = self.primitive(key=True)
            self.skip_spaces()
            if not self.text.startswith(":", self.pos):
                self.fail("expected ':' after a dict key")
            self.pos += 1
            self.skip_spaces()
            items[key] = self.element(depth)  # a repeated key: the last value wins, as in Hydra
            if self.closes("}", opened):
                return items

    def closes(self, close: str, opened: int) -> bool:
        """After an item: True at the closing bracket, False after a comma (more items follow)."""
        self.skip_spaces()
        char = self.text[self.pos : self.pos + 1]
        if char in (close, ","):
            self.pos += 1
            if char == close:
                return True
            self.skip_spaces()
            return False
        if not char:
            self.fail(f"{self.text[opened]!r} is never closed", opened)
        self.fail(f"expected ',' or {close!r}")

    def quoted(self) -> str:
        # The string ends at the first quote preceded by an even number of backslashes. Backslashes
        # before a quote escape in pairs (an odd one escapes the quote); all others are literal.
        quote, start, run = self.text[self.pos], self.pos, 0
        out: list[str] = []
        for i in range(self.pos + 1, len(self.text)):
            char = self.text[i]
            if char == "\\":
                run += 1
                continue
            if char == quote:
                out.append("\\" * (run // 2))
                if run % 2 == 0:
                    self.pos = i + 1
                    return "".join(out)
                out.append(quote)
            else:
                out.append("\\" * run + char)
            run = 0
        self.fail("this quote is never closed", start)

    def primitive(self, key: bool) -> Any:
        """An unquoted value (or dict key): words, escapes, interpolations, colons, inner spaces."""
        text, start = self.text, self.pos
        parts: list[str] = []  # the string Hydra makes by joining the tokens (escapes undone)
        while self.pos < len(text):
            char = text[self.pos]
            if char in _WORD:
                parts.append(char)
                self.pos += 1
            elif char == "\\":
                if text[self.pos + 1 : self.pos + 2] in _ESCAPABLE:
                    parts.append(text[self.pos + 1])  # Hydra's ESC token: the backslash goes
                    self.pos += 2
                else:
                    parts.append(char)  # before any other character a backslash is a plain character
                    self.pos += 1
            elif char == "$":
                # `${` up to the first `}`, with at least one character between, is one verbatim token
                close = text.find("}", self.pos + 2) if text.startswith("${", self.pos) else -1
                end = close + 1 if close > self.pos + 2 else self.pos + 1
                if key and end > self.pos + 1:
                    self.fail("a dict key cannot be an interpolation")
                parts.append(text[self.pos : end])
                self.pos = end
            elif char == ":" and not key:
                # Hydra's ':' token includes the spaces around it, so they stay in the string
                end = self.spaces_end(self.pos + 1)
                parts.append(text[self.pos : end])
                self.pos = end
            elif char in _SPACE:
                end = self.spaces_end(self.pos)
                follow = text[end : end + 1]
                # spaces between words (or before a value's ':') are kept; at the end, or before
                # punctuation, they are part of the punctuation token (or trailing) and dropped
                if not (follow in _STARTS or (follow == ":" and not key)):
                    break
                parts.append(text[self.pos : end])
                self.pos = end
            else:
                break
        if self.pos == start:
            self.unexpected()
        raw = text[start : self.pos]
        if text.startswith("(", self.spaces_end(self.pos)) and _ID.fullmatch(raw):
            self.fail(f"{raw}(...) is a function call (a sweep or a cast), not a plain value", start)
        # one INT, FLOAT, BOOL or NULL token is typed; several tokens make a string
        if _INT.fullmatch(raw):
            try:
                return int(raw)
            except ValueError:  # more digits than Python converts (sys.int_info); Hydra fails too
                self.fail("the integer has too many digits", start)
        if _FLOAT.fullmatch(raw):
            return float(raw)
        if raw.lower() in ("true", "false", "null"):
            return None if raw.lower() == "null" else raw.lower() == "true"
        return "".join(parts)

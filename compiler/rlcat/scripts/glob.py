"""Shell patterns (`*`, `?`, `[…]`, backslash escapes), matched in time linear in the text.

One pattern serves every place the reader matches one: `case` items, `[[ x == pattern ]]`, and
the parameter operators `#`, `##`, `%`, `%%`, `/`, `//`, `/#`, `/%`.

A pattern is cut at its stars into segments that each match a fixed number of characters (a run of
literal characters, `?` and classes). Such a segment is a regular expression without repetition, so
searching a text for it takes at most len(text) × len(segment) steps and never backtracks further.
Every question bash asks of a pattern is answered by placing the segments in order, each at its
earliest place after the one before (the first segment at the start, the last one at its latest
place when the longest match is asked for): a constant number of such searches per answer, never a
search per candidate start or end. A regular expression with `.*` for each star, asked the same
questions, backtracks: `${x##*a*a*a*…b}` took minutes on a 128-character value.

    glob = Glob.of([("*/", False)])
    glob.longest_prefix("a/b/c")   # 4: ${x##*/} is "c"
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property, lru_cache

MAX_PATTERN = 4096  # characters of one pattern after expansion (real ones are a few dozen)
_NEVER = "(?!)"  # an invalid class (`[z-a]`): bash matches no character with it


@dataclass(frozen=True)
class _Segment:
    """A run of pattern characters between two stars: each atom matches exactly one character."""

    atoms: tuple[str, ...]  # one regular expression per character
    forward: re.Pattern[str]
    backward: re.Pattern[str]  # the atoms in reverse order, searched in the reversed text

    @classmethod
    def of(cls, atoms: tuple[str, ...]) -> _Segment:
        return cls(
            atoms,
            re.compile("".join(atoms), re.DOTALL),
            re.compile("".join(reversed(atoms)), re.DOTALL),
        )

    def __len__(self) -> int:
        return len(self.atoms)

    def at(self, text: str, position: int) -> bool:
        """Does this segment match `text` at `position`?"""
        return bool(self.forward.match(text, position, position + len(self.atoms)))

    def first(self, text: str, position: int) -> int | None:
        """Where the first match at or after `position` ends."""
        found = self.forward.search(text, position)
        return found.end() if found else None


@dataclass(frozen=True)
class Glob:
    """A compiled pattern: segments between stars (one segment: no star)."""

    segments: tuple[_Segment, ...]
    literal: str | None  # the only text it matches, when it has no wildcard

    @classmethod
    def of(cls, parts: Iterable[tuple[str, bool]]) -> Glob:
        """A pattern from its parts: (text, quoted); quoted text matches itself only."""
        return _compile(tuple(parts))

    @property
    def anything(self) -> bool:
        """Does it match every text (`*`)?"""
        return len(self.segments) > 1 and not any(len(s) for s in self.segments)

    def size(self) -> int:
        """Characters of pattern: with a text's length, the steps one question costs at most."""
        return sum(len(s) for s in self.segments) + len(self.segments)

    def matches(self, text: str) -> bool:
        """Does the pattern match all of `text`?"""
        first, middle, last = self._parts()
        if last is None:
            return len(text) == len(first) and first.at(text, 0)
        if not first.at(text, 0):
            return False
        position = self._middle(text, len(first), middle)
        start = len(text) - len(last)
        return position is not None and start >= position and last.at(text, start)

    def shortest_prefix(self, text: str) -> int | None:
        """The end of the shortest prefix of `text` the pattern matches (`${x#p}`)."""
        return self._prefix(text, 0, longest=False)

    def longest_prefix(self, text: str, start: int = 0, reverse: str | None = None) -> int | None:
        """The end of the longest match of the pattern that starts at `start` (`${x##p}`).
        `reverse` is text[::-1], when the caller has it already."""
        return self._prefix(text, start, longest=True, reverse=reverse)

    def shortest_suffix(self, text: str) -> int | None:
        """The start of the shortest suffix of `text` the pattern matches (`${x%p}`)."""
        end = self._mirrored._prefix(text[::-1], 0, longest=False)
        return None if end is None else len(text) - end

    def longest_suffix(self, text: str) -> int | None:
        """The start of the longest suffix of `text` the pattern matches (`${x%%p}`)."""
        end = self._mirrored._prefix(text[::-1], 0, longest=True, reverse=text)
        return None if end is None else len(text) - end

    def first_match(self, text: str, start: int, reverse: str | None = None) -> tuple[int, int] | None:
        """The leftmost non-empty match at or after `start`, the longest one there (`${x/p/r}`).

        Where the first segment first occurs is where a match starts if one starts anywhere: from
        a later start the other segments can only be placed later."""
        first = self.segments[0]
        if len(self.segments) == 1:
            if not len(first):
                return None
            found = first.forward.search(text, start)
            return (found.start(), found.end()) if found else None
        found = first.forward.search(text, start)
        if found is None:
            return None
        end = self.longest_prefix(text, found.start(), reverse)
        return (found.start(), end) if end is not None and end > found.start() else None

    @cached_property
    def _mirrored(self) -> Glob:
        """The pattern read backwards, for suffixes (searched in the reversed text)."""
        segments = tuple(
            _Segment(tuple(reversed(s.atoms)), s.backward, s.forward) for s in reversed(self.segments)
        )
        return Glob(segments, self.literal[::-1] if self.literal is not None else None)

    # -- placing the segments --------------------------------------------------------------------

    def _parts(self) -> tuple[_Segment, tuple[_Segment, ...], _Segment | None]:
        if len(self.segments) == 1:
            return self.segments[0], (), None
        return self.segments[0], self.segments[1:-1], self.segments[-1]

    def _prefix(self, text: str, start: int, *, longest: bool, reverse: str | None = None) -> int | None:
        first, middle, last = self._parts()
        if not first.at(text, start):
            return None
        if last is None:
            return start + len(first)
        position = self._middle(text, start + len(first), middle)
        if position is None:
            return None
        if not longest:
            return last.first(text, position)
        if not len(last):
            return len(text)
        # the last segment's latest place at or after `position`: its first in the reversed text
        reverse = text[::-1] if reverse is None else reverse
        found = last.backward.search(reverse, 0, len(text) - position)
        return len(text) - found.start() if found else None

    @staticmethod
    def _middle(text: str, position: int, middle: tuple[_Segment, ...]) -> int | None:
        """Each segment at its earliest place after the one before: where the last one ends."""
        for segment in middle:
            if len(segment):
                end = segment.first(text, position)
                if end is None:
                    return None
                position = end
        return position


@lru_cache(maxsize=256)
def _compile(parts: tuple[tuple[str, bool], ...]) -> Glob:
    segments: list[list[str]] = [[]]
    wild = False
    for text, quoted in parts:
        if quoted:
            segments[-1].extend(re.escape(c) for c in text)
            continue
        for atom in _atoms(text):
            if atom is None:
                wild = True
                if segments[-1] or len(segments) == 1:
                    segments.append([])
                continue
            wild = wild or atom == "." or atom.startswith("[") or atom == _NEVER
            segments[-1].append(atom)
    literal = None if wild else "".join(_unescaped(a) for s in segments for a in s)
    return Glob(tuple(_Segment.of(tuple(s)) for s in segments), literal)


def _atoms(pattern: str) -> Iterable[str | None]:
    """One regular expression per character the pattern matches; None for a star."""
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            yield re.escape(pattern[i + 1])
            i += 2
            continue
        if char == "*":
            yield None
        elif char == "?":
            yield "."
        elif char == "[" and (close := pattern.find("]", i + 2)) >= 0:
            yield _class(pattern[i + 1 : close])
            i = close
        else:
            yield re.escape(char)
        i += 1


def _class(body: str) -> str:
    negate = body[:1] in ("!", "^")
    body = body[1:] if negate else body
    escaped = "".join("\\" + c if c in "\\]^[" else c for c in body)
    atom = f"[{'^' if negate else ''}{escaped}]"
    try:
        re.compile(atom)
    except re.error:
        return _NEVER
    return atom


def _unescaped(atom: str) -> str:
    return atom[1:] if atom.startswith("\\") else atom

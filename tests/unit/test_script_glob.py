"""The reader's one pattern matcher (rlcat.scripts.glob) against the definition of a shell pattern.

The oracle is the definition itself, a memoised recursive matcher over every slice (what bash's
`#`, `##`, `%`, `%%`, `/` and `//` ask, read literally); it is exact and slow, so it runs on every
text of up to five characters over a small alphabet, for hand-picked and seeded random patterns.
The matcher's own cost is counted, not timed: the characters its searches may look at grow at most
twice when the text doubles (how long it takes is in bench/script_reader.py).
"""

from __future__ import annotations

import itertools
import random
import re
from functools import cache

import pytest

from rlcat.scripts import glob as glob_module
from rlcat.scripts.glob import Glob

ALPHABET = "ab/"
TEXTS = ["".join(t) for n in range(6) for t in itertools.product(ALPHABET, repeat=n)]
PATTERNS = ["", "*", "**", "a", "a*", "*a", "*a*", "a*b", "?", "a?b", "[ab]*/", "*/", "[!a]*",
            "*[ab]?*b", "a*a*a*b", "[z-a]*", "\\*", "[]ab]", "*[/]"]  # fmt: skip
_random = random.Random(20)
PATTERNS += [
    "".join(_random.choice(["a", "b", "/", "*", "?", "[ab]", "[!b]"]) for _ in range(_random.randint(1, 6)))
    for _ in range(30)
]


def definition(pattern: str) -> object:
    """Does `pattern` match all of a text: the shell's definition, one character at a time."""
    atoms: list[str | None] = []  # None: a star; else a regular expression for one character
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            atoms.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        close = pattern.find("]", i + 2) if char == "[" else -1
        if char == "*":
            atoms.append(None)
        elif char == "?":
            atoms.append(".")
        elif close >= 0:
            body = pattern[i + 1 : close]
            negate = body[:1] in ("!", "^")
            body = "".join("\\" + c if c in "\\]^[" else c for c in (body[1:] if negate else body))
            atoms.append(f"[{'^' if negate else ''}{body}]")
            i = close
        else:
            atoms.append(re.escape(char))
        i += 1

    def one(atom: str, char: str) -> bool:
        try:
            return bool(re.fullmatch(atom, char, re.DOTALL))
        except re.error:
            return False

    def matches(text: str) -> bool:
        @cache
        def at(a: int, t: int) -> bool:
            if a == len(atoms):
                return t == len(text)
            if atoms[a] is None:
                return at(a + 1, t) or (t < len(text) and at(a, t + 1))
            return t < len(text) and one(atoms[a], text[t]) and at(a + 1, t + 1)  # type: ignore[arg-type]

        return at(0, 0)

    return matches


@pytest.mark.parametrize("pattern", PATTERNS)
def test_every_question_is_answered_as_defined(pattern: str) -> None:
    glob = Glob.of([(pattern, False)])
    full = definition(pattern)
    for text in TEXTS:
        n = len(text)
        prefixes = [e for e in range(n + 1) if full(text[:e])]  # type: ignore[operator]
        suffixes = [s for s in range(n + 1) if full(text[s:])]  # type: ignore[operator]
        assert glob.matches(text) == full(text), text  # type: ignore[operator]
        assert glob.shortest_prefix(text) == (prefixes[0] if prefixes else None), text
        assert glob.longest_prefix(text) == (prefixes[-1] if prefixes else None), text
        assert glob.shortest_suffix(text) == (suffixes[-1] if suffixes else None), text
        assert glob.longest_suffix(text) == (suffixes[0] if suffixes else None), text
        for start in range(n + 1):
            expected = next(
                (
                    (a, e)
                    for a in range(start, n + 1)
                    for e in range(n, a, -1)
                    if full(text[a:e])  # type: ignore[operator]
                ),
                None,
            )
            assert glob.first_match(text, start) == expected, (text, start)


def test_quoted_parts_match_only_themselves() -> None:
    glob = Glob.of([("*", True), ("?", False), ("[a]", True)])
    assert glob.matches("*x[a]") and not glob.matches("yx[a]") and not glob.matches("*xa")
    assert Glob.of([("a*", True)]).literal == "a*"
    assert Glob.of([("a", False), ("b", True)]).literal == "ab"
    assert Glob.of([("a?", False)]).literal is None
    assert Glob.of([("*", False)]).anything and not Glob.of([("*a", False)]).anything


class _Counting:
    """A compiled segment that adds the characters each search or match may look at."""

    def __init__(self, pattern: re.Pattern[str], seen: list[int]) -> None:
        self.pattern, self.seen = pattern, seen

    def search(self, text: str, pos: int = 0, endpos: int | None = None) -> re.Match[str] | None:
        end = len(text) if endpos is None else endpos
        found = self.pattern.search(text, pos, end)  # it looks at each place up to the one it finds
        self.seen[0] += max((found.end() if found else end) - pos, 0) * max(len(self.pattern.pattern), 1)
        return found

    def match(self, text: str, pos: int = 0, endpos: int | None = None) -> re.Match[str] | None:
        end = len(text) if endpos is None else endpos
        self.seen[0] += max(end - pos, 0)
        return self.pattern.match(text, pos, end)


def _cost(pattern: str, text: str, question: str) -> int:
    seen = [0]
    glob = Glob.of([(pattern, False)])
    segments = tuple(
        glob_module._Segment(s.atoms, _Counting(s.forward, seen), _Counting(s.backward, seen))  # type: ignore[arg-type]
        for s in glob.segments
    )
    counted = Glob(segments, glob.literal)
    if question == "replace":
        position = 0
        while (found := counted.first_match(text, position)) is not None:
            position = found[1]
    else:
        getattr(counted, question)(text)
    return seen[0]


@pytest.mark.parametrize("question", ["matches", "shortest_prefix", "longest_prefix", "shortest_suffix",
                                      "longest_suffix", "replace"])  # fmt: skip
@pytest.mark.parametrize("pattern", ["*a*a*a*a*a*a*a*a*b", "a*", "*a", "?", "a", "*[ab]?*b*"])
def test_work_grows_with_the_text_not_faster(question: str, pattern: str) -> None:
    """The hostile shapes: a text of `a`s that almost matches a pattern of many stars (a backtracking
    regular expression takes exponential time on it), and short patterns that match everywhere
    (`${x//a/b}`). Doubling the text at most doubles the characters looked at, plus the pattern."""
    costs = [_cost(pattern, "a" * n, question) for n in (256, 512, 1024)]
    for small, large in itertools.pairwise(costs):
        assert large <= 2 * small + 64 * len(pattern), costs

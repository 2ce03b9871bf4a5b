"""`rlcat.syntax.hydra_value.parse`: reads `key=VALUE` values exactly as Hydra's override parser does.

Every case is checked against Hydra's real parser as well as against the expected value, with types
compared all the way down (True is not 1, "1" is not 1, "null" is not None).

Hydra turns a few function calls (`int(3.5)`, `str(1)`, ...) into plain values, while `parse`
refuses every call. To tell a call from a plain value the tests therefore also ask a Hydra parser
that knows no functions at all (`NO_FUNCTIONS`): there every call is an error, and every text it
reads as one element (not a sweep) is a plain value that `parse` must return unchanged.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hydra._internal.grammar.functions import Functions
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Sweep
from hydra.errors import HydraException
from hypothesis import event, example, given, settings
from hypothesis import strategies as st

from rlcat.syntax.hydra_value import HydraValueError, UnrenderableValue, as_config_value, parse, render

from hydra_values import hydra, same
from hydra_values import values as hydra_values

NO_FUNCTIONS = OverridesParser(functions=Functions())


def hydra_plain(text: str) -> tuple[bool, Any]:
    """(True, value) if Hydra reads `k=<text>` as one plain value, else (False, the error or sweep)."""
    try:
        value = NO_FUNCTIONS.parse_override("k=" + text).value()
    except (HydraException, ValueError) as error:  # ValueError: int() of a very long digit string
        return False, error
    return not isinstance(value, Sweep), value


# --- values Hydra and parse read alike -----------------------------------------------------------

INF, NAN = math.inf, math.nan
CASES = [
    # id, text, value
    ("null", "null", None),
    ("NULL", "NULL", None),
    ("Null", "Null", None),
    ("null-prefix-is-str", "nullable", "nullable"),
    ("true", "true", True),
    ("True", "True", True),
    ("FALSE", "FALSE", False),
    ("fAlSe", "fAlSe", False),
    ("true-prefix-is-str", "trueish", "trueish"),
    ("None-is-str", "None", "None"),
    ("int", "42", 42),
    ("zero", "0", 0),
    ("negative", "-7", -7),
    ("plus-sign", "+7", 7),
    ("underscores", "1_000_000", 1_000_000),
    ("leading-zero-is-str", "01", "01"),
    ("double-underscore-is-str", "1__0", "1__0"),
    ("trailing-underscore-is-str", "1_", "1_"),
    ("hex-is-str", "0x10", "0x10"),
    ("float", "1.5", 1.5),
    ("exponent", "1e-6", 1e-6),
    ("exponent-upper", "1E5", 1e5),
    ("leading-point", ".5", 0.5),
    ("trailing-point", "5.", 5.0),
    ("signed-point", "-.5", -0.5),
    ("float-underscores", "1_0.5_5", 10.55),
    ("point-exponent", "1.e5", 1e5),
    ("negative-zero", "-0.0", -0.0),
    ("inf", "inf", INF),
    ("minus-inf", "-inf", -INF),
    ("plus-INF", "+INF", INF),
    ("nan", "nan", NAN),
    ("NaN", "NaN", NAN),
    ("minus-nan", "-nan", NAN),
    ("infinity-is-str", "infinity", "infinity"),
    ("two-points-is-str", "1.5.6", "1.5.6"),
    ("dangling-exponent-is-str", "1e", "1e"),
    ("number-then-word-is-str", "1abc", "1abc"),
    ("word", "vllm", "vllm"),
    ("model-path", "Qwen/Qwen3-8B", "Qwen/Qwen3-8B"),
    ("file-path", "/data/train.parquet", "/data/train.parquet"),
    ("url", "hdfs://host/x", "hdfs://host/x"),
    ("colon", "a:b", "a:b"),
    ("lone-colon", ":", ":"),
    ("unquoted-chars", "a*b?c|d@e+f%g", "a*b?c|d@e+f%g"),
    ("lone-dash", "-", "-"),
    ("dollar", "$HOME", "$HOME"),
    ("empty", "", ""),
    ("only-spaces", "   ", ""),
    ("spaces-trimmed", "  a  ", "a"),
    ("inner-spaces-kept", "a  b", "a  b"),
    ("tabs", "\ta\tb\t", "a\tb"),
    ("int-with-spaces", " 1 ", 1),
    ("bool-with-tab", "true\t", True),
    ("spaces-around-colon-kept", "a : b", "a : b"),
    ("spaces-after-final-colon-kept", "a: ", "a: "),
    ("escaped-space", r"a\ b", "a b"),
    ("escaped-trailing-space", "x\\ ", "x "),
    ("escaped-comma", r"a\,b", "a,b"),
    ("escaped-brackets", r"\[x\]", "[x]"),
    ("escaped-equals", r"a\=b", "a=b"),
    ("escaped-backslash", r"a\\b", "a\\b"),
    ("lone-backslash", r"a\b", "a\\b"),
    ("trailing-backslash", "a\\", "a\\"),
    ("quoted-int-is-str", "'1'", "1"),
    ("quoted-null-is-str", '"null"', "null"),
    ("quoted-true-is-str", "'true'", "true"),
    ("empty-double-quotes", '""', ""),
    ("empty-single-quotes", "''", ""),
    ("quoted-spaces-kept", '"  a b, c=d  "', "  a b, c=d  "),
    ("leading-space-before-quote", ' "x"', "x"),
    ("other-quote-inside", '"it\'s"', "it's"),
    ("escaped-double-quote", r'"say \"hi\""', 'say "hi"'),
    ("escaped-single-quote", r"'it\'s'", "it's"),
    ("backslash-not-before-quote", r'"a\b"', "a\\b"),
    ("escaped-trailing-backslash", r'"a\\"', "a\\"),
    ("backslash-and-quote", r'"a\\\"b"', 'a\\"b'),
    ("backslash-before-other-quote", r"'a\"b'", 'a\\"b'),
    ("unicode-and-newline-quoted", '"é 日\n🙂"', "é 日\n🙂"),
    ("interpolation", "${x}", "${x}"),
    ("interpolation-in-path", "${oc.env:HOME}/x", "${oc.env:HOME}/x"),
    ("interpolation-with-comma", "${oc.env:USER,me}", "${oc.env:USER,me}"),
    ("interpolation-with-space", "${a b}", "${a b}"),
    ("two-interpolations", "a${b}c${d}", "a${b}c${d}"),
    ("quoted-interpolation", "'${x}'", "${x}"),
    ("empty-list", "[]", []),
    ("empty-dict", "{}", {}),
    ("blank-list", "[ ]", []),
    ("nested-list", "[a, b, [c]]", ["a", "b", ["c"]]),
    ("mixed-types", "[1, '1', true, null, 1.0, 'null']", [1, "1", True, None, 1.0, "null"]),
    ("spaced-list", "[ 1 , 2 ]", [1, 2]),
    ("words-in-list", "[a b, c:d]", ["a b", "c:d"]),
    ("dict", "{k: v, k2: [1,2]}", {"k": "v", "k2": [1, 2]}),
    ("spaced-dict", "{ a : 1 }", {"a": 1}),
    ("nested-dict", "{a: {b: {c: [null]}}}", {"a": {"b": {"c": [None]}}}),
    ("dict-key-with-spaces", "{a b: c d}", {"a b": "c d"}),
    ("dict-value-with-colon", "{a: b:c}", {"a": "b:c"}),
    ("dict-key-escaped-colon", r"{a\:b: 1}", {"a:b": 1}),
    ("dict-quoted-value", "{a: 'x, y'}", {"a": "x, y"}),
    ("dict-interpolation-value", "{a: ${x}}", {"a": "${x}"}),
    ("repeated-key-last-wins", "{a:1,a:2}", {"a": 2}),
    (
        "typed-keys-as-hydra-reads-them",
        "{2: x, true: y, null: z, .5: w}",
        {2: "x", True: "y", None: "z", 0.5: "w"},
    ),
    ("interpolations-in-list", "[${x}, '${y}']", ["${x}", "${y}"]),
]


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_reads_values_as_hydra_does(text: str, expected: Any) -> None:
    assert same(hydra(text), expected), f"Hydra reads {text!r} as {hydra(text)!r}"
    assert same(parse(text), expected), f"parse reads {text!r} as {parse(text)!r}"


# --- texts that are not one plain value ----------------------------------------------------------

REFUSED = [
    ("sweep", "a,b"),
    ("sweep-with-spaces", "1 , 2"),
    ("sweep-of-lists", "[1],[2]"),
    ("sweep-of-quoted", "'a','b'"),
    ("choice", "choice(a,b)"),
    ("range", "range(1,5)"),
    ("interval", "interval(0,1)"),
    ("glob", "glob(*)"),
    ("int-cast", "int(3.5)"),
    ("str-cast", "str(1)"),
    ("float-cast", "float(1)"),
    ("sort", "sort(3,1)"),
    ("call-with-space", "a (b)"),
    ("call-in-list", "[choice(a)]"),
    ("call-in-dict", "{a: int(1)}"),
    ("unclosed-list", "[1, 2"),
    ("extra-bracket", "[1]]"),
    ("unclosed-dict", "{a: 1"),
    ("key-without-value", "{a}"),
    ("empty-value-in-dict", "{a:}"),
    ("empty-key", "{:1}"),
    ("quoted-key", "{'a': 1}"),
    ("interpolation-key", "{${x}: 1}"),
    ("trailing-comma", "[a, ]"),
    ("lone-comma", "[,]"),
    ("lone-close", "]"),
    ("parens", "(a)"),
    ("close-paren", "a)"),
    ("unclosed-single-quote", "'abc"),
    ("unclosed-double-quote", '"abc'),
    ("escaped-closing-quote", r'"a\"'),
    ("three-quotes", '"""'),
    ("text-after-quote", '"a"b'),
    ("quote-after-text", "a'b'"),
    ("space-after-quote", "'a' "),
    ("space-after-list", "[1] "),
    ("space-after-dict", "{a: 1} "),
    ("equals", "a=b"),
    ("non-ascii", "é"),
    ("newline", "a\nb"),
    ("semicolon", "a;b"),
    ("hash", "a#b"),
    ("tilde", "~a"),
    ("nested-interpolation", "${a.${b}}"),
    ("empty-interpolation", "${}"),
    ("unclosed-interpolation", "${x"),
]


@pytest.mark.parametrize("text", [c[1] for c in REFUSED], ids=[c[0] for c in REFUSED])
def test_refuses_what_is_not_one_plain_value(text: str) -> None:
    plain, hydra_result = hydra_plain(text)
    assert not plain, f"Hydra reads {text!r} as the plain value {hydra_result!r}"
    with pytest.raises(HydraValueError, match=r"\(at character \d+\)$"):
        parse(text)


@pytest.mark.parametrize(
    ("text", "offset", "words"),
    [
        ("a,b", 1, "sweep"),
        ("[1, 2", 0, "never closed"),
        ("{a: [1, 2", 4, "never closed"),
        ("lr=choice(1,2)", 2, "unexpected '='"),
        ("choice(1,2)", 0, "function call"),
        ("[1, range(3)]", 4, "function call"),
        ("'abc", 0, "never closed"),
        ("{a: 1} ", 6, "no spaces after"),
        ("ok é", 3, "quote the value"),
    ],
)
def test_messages_say_what_and_where(text: str, offset: int, words: str) -> None:
    with pytest.raises(HydraValueError, match=words) as caught:
        parse(text)
    assert caught.value.offset == offset
    assert f"(at character {offset})" in str(caught.value)


def test_casts_are_plain_values_to_hydra_but_refused() -> None:
    """Hydra evaluates `int(3.5)` to 3; parse refuses it all the same (it is not written as a value)."""
    assert same(hydra("int(3.5)"), 3)
    assert same(hydra("str(1)"), "1")
    for text in ("int(3.5)", "str(1)"):
        with pytest.raises(HydraValueError, match="function call"):
            parse(text)


def test_long_and_deep_inputs() -> None:
    """Work is linear in the text; nesting past 100 levels is refused before Python's recursion limit."""
    big = 200_000
    assert parse("[" + ",".join(["a"] * big) + "]") == ["a"] * big
    assert parse("a " * big) == ("a " * big).strip()
    deep: list[Any] = []
    for _ in range(99):
        deep = [deep]
    assert parse("[" * 100 + "]" * 100) == deep
    for text in (
        "[" * 101 + "]" * 101,
        "[" * big,
        "${" * big,
        '"' + "\\" * big,
        "a " * big + "é",
        "1" * 5000,
    ):
        with pytest.raises(HydraValueError):
            parse(text)


# --- parse(render(v)) == v ------------------------------------------------------------------------

keys = st.one_of(
    st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True),
    st.sampled_from(["null", "true", "inf", "nan", "a-b", "_"]),  # render refuses the first four
)
values = hydra_values(st.floats(), keys)  # nan and infinities too: `same` compares floats by repr


@pytest.mark.slow  # fuzzing: hundreds of drawn values (the parametrized cases stay in the inner loop)
@settings(max_examples=300, deadline=None)
@given(values)
@example("A\n")  # render once left this bare ("$" in its regex matched before the newline)
@example({"a": ["vllm\n"]})
def test_parse_inverts_render(value: Any) -> None:
    try:
        text = render(value)
    except UnrenderableValue:
        event("render refused the value")
        return
    back = parse(text)
    assert same(back, as_config_value(value)), f"{value!r} rendered as {text!r} parses back as {back!r}"


# --- parse agrees with Hydra on generated override texts -----------------------------------------

# Pieces of override text: words and numbers of every token type, escapes, interpolations, and
# every character the grammar gives a meaning to (plus a few it refuses).
WORDS = ["a", "b1", "x_y", "Q/Q-8B", "null", "NULL", "true", "False", "inf", "-inf", "NaN", "choice"]
WORDS += ["1", "-1", "+2", "0", "01", "1_000", "1.5", ".5", "1.", "1e-6", "1e", "_", "-", "+", "."]
WORDS += ["/", "%", "*", "@", "?", "|", "$", "${x}", "${a:b,c}", "\\", "\\\\", "\\ ", "\\,", "\\:"]
PUNCTUATION = ["'", '"', "[", "]", "{", "}", "(", ")", ",", ":", "=", " ", "  ", "\t", "${", "\\'"]
PUNCTUATION += ['\\"', "é", "\n", "#", "~"]
TOKENS = WORDS + PUNCTUATION

spaces = st.sampled_from(["", "", " ", "  ", "\t"])
words = st.lists(st.sampled_from([*WORDS, " ", ":", " : "]), min_size=1, max_size=4).map("".join)
quoted = st.builds(
    lambda q, parts: q + "".join(parts) + q,
    st.sampled_from(["'", '"']),
    st.lists(st.sampled_from(["a", " ", ",", "'", '"', "\\", "\\\\", "\\'", '\\"', "${x}"]), max_size=5),
)


def containers(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    item = st.builds(lambda a, x, b: a + x + b, spaces, inner, spaces)
    pair = st.builds(lambda k, s, x: f"{k}{s}:{x}", words, spaces, item)
    return st.one_of(
        st.lists(item, max_size=3).map(lambda xs: "[" + ",".join(xs) + "]"),
        st.lists(pair, max_size=3).map(lambda xs: "{" + ",".join(xs) + "}"),
    )


structured = st.recursive(st.one_of(words, quoted), containers, max_leaves=8)


def insert(text: str, token: str, where: float) -> str:
    i = int(where * len(text))
    return text[:i] + token + text[i:]


texts = st.one_of(
    st.builds(lambda a, w, b: a + w + b, spaces, st.sampled_from(WORDS), spaces),  # scalars
    st.lists(st.sampled_from(TOKENS), max_size=12).map("".join),  # token soup: mostly errors
    st.builds(lambda a, s, b: a + s + b, spaces, structured, spaces),  # mostly valid values
    st.builds(insert, structured, st.sampled_from(TOKENS), st.floats(0, 1)),  # near misses
    st.builds(lambda a, b: a + "," + b, structured, structured),  # sweeps
)


@pytest.mark.slow  # fuzzing: hundreds of drawn values (the parametrized cases stay in the inner loop)
@settings(max_examples=600, deadline=None)
@given(texts)
def test_parse_agrees_with_hydra(text: str) -> None:
    plain, expected = hydra_plain(text)
    if not plain:
        event("Hydra: not a plain value")
        with pytest.raises(HydraValueError):
            parse(text)
        return
    event(f"Hydra: plain {type(expected).__name__}")
    assert same(parse(text), expected), f"Hydra reads {text!r} as {expected!r}, parse as {parse(text)!r}"

r"""`rlcat.syntax.hydra_value.render`: every rendered value reaches verl as the same value.

The property test builds values from strings (with every character Hydra's grammar gives a meaning
to, control characters, line breaks as block scalars give them, and interpolation text), ints,
floats, bools, None and nested lists and mappings, renders them, parses `k=<text>` with Hydra's
`OverridesParser`, resolves the result with OmegaConf as verl does, and requires the same value
with the same types back (True must not come back as 1, "1" must not come back as 1, "null" must
not come back as None, "${x}" must not come back as the value of x).

Strings holding `${...}` are data: render escapes them (`\${`), so Hydra keeps the escape and
OmegaConf reads the text literally. Only an `Interpolation` is written as it is, live.

Mapping keys are identifiers, because Hydra's grammar has no quoted keys. Identifiers that Hydra
reads as another type (`null`, `true`, `inf`, `nan`, ... in any case) cannot be written as string
keys at all, so for those `render` must refuse with UnrenderableValue rather than emit text that
comes back as a None, bool or float key.
"""

from __future__ import annotations

import math
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlcat.syntax.hydra_value import Interpolation, UnrenderableValue, as_config_value, render

from hydra_values import hydra, same, strings, verl_reads
from hydra_values import values as hydra_values

# identifiers Hydra's lexer reads as null, a bool or a float (its NULL/BOOL/FLOAT tokens are
# case-insensitive), so a mapping key spelt like this never comes back as a string
NON_STRING_KEY = re.compile(r"^(?:null|true|false|inf|nan)$", re.IGNORECASE)


def has_non_string_key(value: Any) -> bool:
    if isinstance(value, list):
        return any(has_non_string_key(v) for v in value)
    if isinstance(value, dict):
        if any(NON_STRING_KEY.match(k) for k in value):
            return True
        return any(has_non_string_key(v) for v in value.values())
    return False


# --- strategies ----------------------------------------------------------------------------------

keys = st.one_of(
    st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True),
    st.sampled_from(["null", "Null", "true", "TRUE", "false", "inf", "Inf", "nan", "NaN", "a-b", "_"]),
)
values = hydra_values(st.floats(allow_nan=False, allow_infinity=False), keys)


@pytest.mark.slow  # fuzzing: hundreds of drawn values (the parametrized cases stay in the inner loop)
@settings(max_examples=300, deadline=None)
@given(values)
def test_render_round_trips_through_hydra(value: Any) -> None:
    if has_non_string_key(value):
        with pytest.raises(UnrenderableValue):
            render(value)
        return
    text = render(value)
    parsed = hydra(text)
    assert same(parsed, as_config_value(value)), f"{value!r} rendered as {text!r} parses as {parsed!r}"
    back = verl_reads(text)
    assert same(back, value), f"{value!r} rendered as {text!r} reaches verl as {back!r}"


@pytest.mark.slow  # fuzzing: hundreds of drawn values (the parametrized cases stay in the inner loop)
@settings(max_examples=300, deadline=None)
@given(strings)
def test_strings_round_trip_inside_lists_and_mappings(text: str) -> None:
    """Inside a list or mapping Hydra's grammar is stricter than at the top (no bare spaces or commas)."""
    for value in ([text], [text, text], {"a": text}, {"a": [text, {"b": text}]}):
        rendered = render(value)
        assert same(verl_reads(rendered), value), f"{value!r} rendered as {rendered!r}"


# --- nan and infinity (not equal to themselves, so kept out of the property) ---------------------


@pytest.mark.parametrize("value", [math.nan, -math.nan])
def test_nan(value: float) -> None:
    back = hydra(render(value))
    assert isinstance(back, float)
    assert math.isnan(back)
    (item,) = hydra(render([value]))
    assert isinstance(item, float)
    assert math.isnan(item)


@pytest.mark.parametrize("value", [math.inf, -math.inf])
def test_infinity(value: float) -> None:
    assert hydra(render(value)) == value
    assert hydra(render({"x": [value]})) == {"x": [value]}


# --- examples of the tricky cases ----------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["vllm", "fsdp2", "token-mean", "Qwen/Qwen3-8B", "a:b", "/data/train.parquet", "low_var_kl", "_", "None"],
)
def test_plain_words_stay_bare(text: str) -> None:
    assert render(text) == text
    assert hydra(text) == text


@pytest.mark.parametrize(
    "text",
    [
        "",
        " ",
        "null",
        "NULL",
        "true",
        "True",
        "FALSE",
        "1",
        "-1",
        "1.5",
        "1e5",
        "1_000",
        "inf",
        "-inf",
        "+inf",
        "nan",
        "NaN",
        "a b",
        "a,b",
        "a=b",
        "[1]",
        "{a:1}",
        "it's",
        'say "hi"',
        'it\'s "both"',
        "$HOME",
    ],
)
def test_strings_that_would_change_meaning_are_quoted(text: str) -> None:
    rendered = render(text)
    assert rendered[0] in "'\"" and rendered[-1] == rendered[0], rendered
    back = hydra(rendered)
    assert type(back) is str
    assert back == text


@pytest.mark.parametrize(
    ("text", "rendered"),
    [
        ("it's", '"it\'s"'),  # double quotes by preference; a single quote inside needs no escape
        ('say "hi"', "'say \"hi\"'"),  # single quotes when the text has double quotes only
        ("a\"b'c", '"a\\"b\'c"'),  # both kinds: double quotes, the inner one escaped
        ("a\\b", '"a\\b"'),  # a backslash that precedes no quote is literal
        ("a\\", '"a\\\\"'),  # a trailing backslash precedes the closing quote: doubled
        ('a\\"', "'a\\\"'"),  # backslash then a double quote, in single quotes: both literal
    ],
)
def test_quoting(text: str, rendered: str) -> None:
    assert render(text) == rendered
    assert hydra(rendered) == text


INTERPOLATION_TEXT = [
    "${oc.env:HOME}/data",
    "${x}",
    "\\${x}",
    "\\\\${x}",
    "${",
    "a${b}c${d}",
    "$",
    "${oc.env:SECRET}",
]


@pytest.mark.parametrize("text", INTERPOLATION_TEXT)
def test_interpolation_text_reaches_verl_as_text(text: str) -> None:
    """A string is data: whatever `${...}` it holds, verl gets the text, never a resolved value."""
    assert verl_reads(render(text)) == text
    assert verl_reads(render([text, {"a": text}])) == [text, {"a": text}]


@pytest.mark.parametrize("text", ["${oc.env:HOME}/data", "${x}", "a${x}b"])
def test_an_interpolation_is_written_live(text: str) -> None:
    """An `Interpolation` (rlcat's own, or an --override) reaches OmegaConf as written."""
    assert render(Interpolation(text)) == f'"{text}"'
    assert hydra(render(Interpolation(text))) == text


@pytest.mark.parametrize(
    ("value", "rendered"),
    [
        (True, "True"),
        (False, "False"),
        (None, "null"),
        (0, "0"),
        (-7, "-7"),
        (10**30, str(10**30)),
        (1.5, "1.5"),
        (1e-06, "1e-06"),
        (-0.0, "-0.0"),
        ([], "[]"),
        ({}, "{}"),
        ((1, "a"), "[1,a]"),
        ([True, 1, 1.0, "1", None], '[True,1,1.0,"1",null]'),
        ({"a": 1, "b-c": [None, "x y"]}, '{a:1,b-c:[null,"x y"]}'),
    ],
)
def test_rendering(value: Any, rendered: str) -> None:
    assert render(value) == rendered
    expected = list(value) if isinstance(value, tuple) else value
    assert same(hydra(rendered), expected)


def test_bool_is_not_int() -> None:
    assert type(hydra(render(True))) is bool
    assert type(hydra(render(1))) is int
    assert type(hydra(render(1.0))) is float
    assert same(hydra(render([True, 1, 1.0])), [True, 1, 1.0])


@pytest.mark.parametrize("key", ["a.b", "model.layers.{*}", "lm_head", "blocks[0]", "a/b-c*"])
def test_module_pattern_keys_reach_hydra_as_written(key: str) -> None:
    """FSDP turbo's `fsdp_plan.apply_modules` is keyed by module patterns (`model.layers.{*}`):
    Hydra's dictKey takes `.`, `/`, `*` bare and braces and brackets escaped."""
    assert same(hydra(render({key: {}, "x": 1})), {key: {}, "x": 1})


@pytest.mark.parametrize("key", ["null", "Null", "true", "True", "false", "inf", "Inf", "nan", "NaN"])
def test_keys_hydra_reads_as_other_types_are_refused(key: str) -> None:
    """`{null:1}` parses as {None: 1} and `{true:1}` as {True: 1}; Hydra has no quoted keys."""
    assert not same(hydra("{" + key + ":1}"), {key: 1})  # the grammar really does read them otherwise
    with pytest.raises(UnrenderableValue):
        render({key: 1})
    with pytest.raises(UnrenderableValue):
        render([{"ok": {key: 1}}])


@pytest.mark.parametrize(
    "value", [{1: 2}, {"a b": 1}, {"": 1}, {"1a": 1}, {"a:b": 1}, object(), {1, 2}, b"x"]
)
def test_unrenderable(value: Any) -> None:
    with pytest.raises(UnrenderableValue):
        render(value)

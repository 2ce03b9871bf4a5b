"""How a plain scalar reads: as the YAML 1.2 core schema has it (values), and as YAML 1.1 would
have read it (for notes only, never for values)."""

from __future__ import annotations

import json
import re
from typing import Any

import yaml

try:  # the C parser is ~10x faster; the pure-Python one is the fallback
    _Base: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _Base = yaml.SafeLoader

STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_BOOL = "tag:yaml.org,2002:bool"
_NULL = "tag:yaml.org,2002:null"
SCALAR_TAGS = {STR, _INT, _FLOAT, _BOOL, _NULL}
INTERP_TAG = "!interp"


# --- YAML 1.2 core schema ------------------------------------------------------------------------

# https://yaml.org/spec/1.2.2/#1032-tag-resolution
_CORE_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
_CORE_BOOLS = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_CORE_INT = re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$")
_CORE_FLOAT = re.compile(
    r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)


class Loader(_Base):  # type: ignore[misc]
    """Safe loader whose plain scalars resolve as in the YAML 1.2 core schema."""


Loader.yaml_implicit_resolvers = {}  # PyYAML's YAML 1.1 table is not inherited
for _tag, _pattern, _first in (
    (_NULL, _CORE_NULL, ["~", "n", "N", ""]),
    (_BOOL, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")),
    (_INT, _CORE_INT, list("-+0123456789")),  # before float: `1` is an int
    (_FLOAT, _CORE_FLOAT, list("-+0123456789.")),
    # not in the core schema: kept so that a `<<` key is refused by name rather than read as text
    ("tag:yaml.org,2002:merge", re.compile(r"^(?:<<)$"), ["<"]),
):
    Loader.add_implicit_resolver(_tag, _pattern, _first)


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
SCALARS = {
    STR: _constructor.construct_yaml_str,
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
YAML11_FIRST = frozenset(k for k in _Yaml11.yaml_implicit_resolvers if k)
_YAML11_BOOLS = {"y": True, "n": False, **yaml.constructor.SafeConstructor.bool_values}
_YAML11_SCALARS = {
    _INT: _constructor.construct_yaml_int,  # octal `010`, sexagesimal `1:30`, `1_000`, `0b1`
    _FLOAT: _constructor.construct_yaml_float,
    _NULL: _constructor.construct_yaml_null,
}
NOTHING = object()


def yaml11_reading(text: str) -> Any:
    """What YAML 1.1 reads a plain scalar as, or NOTHING when it reads text (or a tag rlcat refuses)."""
    if not text or text[0] not in YAML11_FIRST:
        return NOTHING
    tag = _yaml11.resolve(yaml.ScalarNode, text, (True, False))  # type: ignore[no-untyped-call]
    if tag == _BOOL:
        return _YAML11_BOOLS[text.lower()]
    if tag not in _YAML11_SCALARS:
        return NOTHING
    try:
        return _YAML11_SCALARS[tag](yaml.ScalarNode(tag, text))
    except ValueError:  # pragma: no cover - the resolver's pattern admits only readable text
        return NOTHING


def same_reading(a: Any, b: Any) -> bool:
    return type(a) is type(b) and repr(a) == repr(b)  # repr: nan equals nan


def describe(value: Any) -> str:
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


def yaml11_note(text: str, old: Any, new: Any) -> str:
    note = f"YAML 1.1 would have read {text} as {describe(old)}; YAML 1.2, which rlcat reads, reads"
    note += f" {describe(new)}"
    if isinstance(old, str):
        return f"{note}: quote it ('{text}') if you mean the text"
    return f"{note}: write {_literal(old)} if you mean {_literal(old)}"

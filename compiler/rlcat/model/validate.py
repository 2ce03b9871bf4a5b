"""Validate documents with the pydantic schemas, and turn pydantic's errors into Diagnostics that
point at the YAML file, line and key."""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticCustomError

from rlcat.diagnostics import Diagnostic, RlcatError, Where, diag, dotted, suggestion_hint

M = TypeVar("M", bound=BaseModel)
# path of a value → (file, line, col)
Locator = Callable[[tuple[str | int, ...]], Where]


def field_error(field_path: str, message: str) -> PydanticCustomError:
    """An error a model validator raises about one of its fields (it checks several together):
    the finding points at that field, where pydantic would give the whole document."""
    return PydanticCustomError("value_error", message, {"field": field_path})


def validate(model: type[M], data: Mapping[str, Any], locate: Locator) -> M:
    """Validate `data` as `model`; every error becomes a Diagnostic at the key's position."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise RlcatError(_diagnostics(model, exc, locate)) from None


_TYPE_NAMES = {
    "int_type": "an integer",
    "float_type": "a number",
    "bool_type": "true or false",
    "string_type": "a string",
    "dict_type": "a mapping",
    "list_type": "a list",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
    "int_from_float": "an integer",
}


# Findings explained per document: a hostile file with 150,000 unknown fields would otherwise cost
# a did-you-mean search each (seconds, and hundreds of MB of messages) to say one thing many times.
MAX_EXPLAINED = 100


def _choice_hint(given: object, ctx: Mapping[str, Any] | None) -> str | None:
    """Did you mean one of the allowed values (`fully_async` for `fully-async`)?"""
    expected = str((ctx or {}).get("expected", ""))
    if not isinstance(given, str) or not expected:
        return None
    return suggestion_hint(given, re.findall(r"'([^']*)'", expected))


def _diagnostics(model: type[BaseModel], exc: ValidationError, locate: Locator) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    errors = exc.errors(include_url=False)
    if len(errors) > MAX_EXPLAINED:
        first = errors[MAX_EXPLAINED]
        out.append(
            diag(
                "RLC007",
                f"{len(errors)} schema errors; the first {MAX_EXPLAINED} are shown",
                **locate(tuple(first["loc"])),
                hint="fix these and validate again",
            )
        )
        errors = errors[:MAX_EXPLAINED]
    union_keys: set[str] = set()
    for err in errors:
        loc = tuple(err["loc"])
        named = (err.get("ctx") or {}).get("field")
        if isinstance(named, str):  # a model validator's error about one field (field_error)
            loc = (*loc, *named.split("."))
        # unions report one error per member; the tags (e.g. 'int', 'str') are not part of the path
        tagged = len(loc)
        loc = tuple(p for p in loc if not (isinstance(p, str) and _is_union_tag(p)))
        if len(loc) < tagged and dotted(loc) in union_keys:
            continue  # a union's first member speaks for it (`int | Todo`: "expected an integer")
        if len(loc) < tagged:
            union_keys.add(dotted(loc))
        bad_key = bool(loc) and loc[-1] == "[key]"  # pydantic marks errors in a mapping's keys so
        if bad_key:
            loc = loc[:-1]
        key = dotted(loc)
        kind = err["type"]
        where = locate(loc)
        given = err.get("input")
        if kind == "extra_forbidden":
            siblings = _field_names(model, loc[:-1])
            out.append(
                diag(
                    "RLC101",
                    f"unknown field '{loc[-1]}'",
                    **where,
                    key=key,
                    hint=suggestion_hint(str(loc[-1]), siblings)
                    or ("fields here: " + ", ".join(sorted(siblings)) if siblings else None),
                )
            )
        elif kind == "missing":
            out.append(diag("RLC104", f"missing required field '{loc[-1]}'", **where, key=key))
        elif kind in _TYPE_NAMES:
            out.append(
                diag(
                    "RLC102",
                    f"expected {_TYPE_NAMES[kind]}, got {_describe(given)}",
                    **where,
                    key=key,
                    hint=_type_hint(kind, given),
                )
            )
        else:
            message = err["msg"]
            if bad_key:
                message = f"invalid name '{loc[-1]}': {message[0].lower()}{message[1:]}"
            elif kind == "literal_error":
                message = f"{_describe(given)} is not allowed: {message[0].lower()}{message[1:]}"
            elif kind == "value_error":
                message = message.removeprefix("Value error, ")
            hint = _choice_hint(given, err.get("ctx")) if kind == "literal_error" else None
            out.append(diag("RLC103", message, **where, key=key or None, hint=hint))
    # one finding per key: unions can report the same key several times
    unique: dict[tuple[str | None, str], Diagnostic] = {}
    for d in out:
        unique.setdefault((d.key, d.code), d)
    return list(unique.values())


def _is_union_tag(part: str) -> bool:
    return part in {"int", "float", "str", "bool", "none", "list[...]", "dict[...]"} or part.startswith(
        ("constrained-", "function-", "literal[", "list[", "dict[", "lax-", "strict-", "json-")
    )


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return f"'{value}'" if len(value) < 60 else "a long string"
    return repr(value)


def _type_hint(kind: str, given: Any) -> str | None:
    if kind in {"int_type", "float_type"} and isinstance(given, str):
        try:
            float(given)
        except ValueError:
            return None
        return "write the number without quotes"
    if kind == "bool_type" and isinstance(given, str):
        return "write true or false without quotes"
    return None


def _field_names(model: type[BaseModel], loc: tuple[str | int, ...]) -> set[str]:
    """The field names (YAML spelling) of the model found at `loc`, for did-you-mean hints."""
    current: Any = model
    for part in loc:
        if isinstance(part, int):
            continue
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            return set()
        by_name = {(f.alias or n): f for n, f in current.model_fields.items()}
        info = by_name.get(str(part))
        if info is None:
            return set()
        current = _model_in(info.annotation)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return {(f.alias or n) for n, f in current.model_fields.items()}
    return set()


def _model_in(annotation: Any) -> Any:
    """The BaseModel class inside Optional[...] / dict[..., X] / list[X], if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType, list, dict):
        for arg in typing.get_args(annotation):
            found = _model_in(arg)
            if found is not None:
                return found
    return None

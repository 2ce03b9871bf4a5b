"""The strict base model and shared field types."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

from rlcat.model.axes import NAME_PATTERN

Name = Annotated[str, StringConstraints(pattern=NAME_PATTERN, max_length=100)]
PositiveInt = Annotated[int, Field(gt=0, le=1_000_000_000)]
NonNegativeInt = Annotated[int, Field(ge=0, le=1_000_000_000)]
Fraction = Annotated[float, Field(gt=0, le=1)]
EnvName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]
# verl keys are dotted Hydra paths; the key index decides whether they exist.
# `allow:` of a recipe or a project: guard ids (and RLC303, a known-broken platform cell) → the reason.
GuardId = Annotated[str, StringConstraints(pattern=r"^RLC(303|[5-9][0-9][0-9])$")]
GuardAllowances = dict[GuardId, Annotated[str, StringConstraints(min_length=1, max_length=2000)]]
VerlKey = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_0-9][A-Za-z0-9_]*)*$")]


def _one_key_per_level(mapping: dict[str, Any], path: str = "") -> dict[str, Any]:
    """Keys of a free-form mapping (each becomes one segment of a verl key) are names, not dotted
    paths or numbers: `{"a.b": 1}` beside `{a: {b: 2}}` would write one key twice."""
    for key, value in mapping.items():
        where = f"{path}{key!r}" if path else repr(key)
        if not isinstance(key, str):
            raise ValueError(f"key {where} is not a name (a {type(key).__name__}); quote it or rename it")
        if "." in key:
            raise ValueError(f"key {where} holds a '.': nest a mapping instead of dotting the key")
        if isinstance(value, dict):
            _one_key_per_level(value, f"{where} → ")
    return mapping


# A mapping of verl settings the schema does not model (model_override_config, engine kwargs, ...).
OpenMapping = Annotated[dict[str, Any], AfterValidator(_one_key_per_level)]


class Strict(BaseModel):
    """Unknown fields are errors (a misspelt field must never be ignored); values are not coerced."""

    # defer_build: a model's validator is built when it first validates, so the nested models are
    # built once, inside the four documents' validators, instead of once more each on their own
    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        frozen=True,
        populate_by_name=True,
        defer_build=True,
        allow_inf_nan=False,  # no NaN or infinite temperature, learning rate or coefficient
    )


# What `rlcat import` writes into a catalog entry where its source does not say the value (a
# model's size, a dataset's summary, the data files a script gives only through a variable): a
# marker, never a guess. The schema accepts it (the imported recipe compiles and proves its round
# trip), `rlcat validate` refuses it (RLC107) at its line until someone fills it in.
TODO_MARK = "TODO:"
TODO_TEXT = f"{TODO_MARK} fill in"


def is_todo(value: object) -> bool:
    """Is `value` a TODO marker (text starting `TODO:`) left to fill in?"""
    return isinstance(value, str) and value.lstrip().startswith(TODO_MARK)


def todo_markers(data: object, path: tuple[str | int, ...] = ()) -> list[tuple[tuple[str | int, ...], str]]:
    """The TODO markers in parsed YAML `data` with their paths, in document order."""
    if isinstance(data, str):
        return [(path, data)] if is_todo(data) else []
    if isinstance(data, dict):
        return [found for key, value in data.items() for found in todo_markers(value, (*path, key))]
    if isinstance(data, list):
        return [found for i, value in enumerate(data) for found in todo_markers(value, (*path, i))]
    return []


def to_fill_in(model: type[BaseModel], field: str) -> str:
    """What to put where a TODO marker stands: the field and the first clause of its description
    (`size (Parameter count as people say it, e.g. 7B or 35B-A3B)`)."""
    info = model.model_fields.get(field)
    described = info.description if info is not None and info.description else ""
    return f"{field} ({described.split(' (', 1)[0].split(';', 1)[0]})" if described else field


def _todo_only(value: str) -> str:
    if not is_todo(value):
        raise ValueError(f"a number, or a '{TODO_TEXT}' marker left to fill in")
    return value


# A field whose value may be left to fill in although its type is not text (a model's positions).
Todo = Annotated[str, AfterValidator(_todo_only)]

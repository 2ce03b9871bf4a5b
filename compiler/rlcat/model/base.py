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

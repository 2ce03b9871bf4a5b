"""The generated plain checks (model/plain.py) against the pydantic schemas they come from.

The compile path validates with the plain checks and only asks pydantic when they reject a
document, so the two must accept exactly the same documents and produce the same values (types
included: an int given for a float field is a float on both sides). Checked on every catalog
document, on hand-picked edge cases of pydantic's strict mode, and on mutated documents from
hypothesis; plus the record behaviour the pipeline relies on (frozen, equality, dump, replace).
"""

from __future__ import annotations

import copy
import math
import os
import pickle
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import event, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from rlcat.catalog import Catalog
from rlcat.model import catalog as catalog_models
from rlcat.model import platform as platform_models
from rlcat.model import recipe as recipe_models
from rlcat.model.checks import Invalid, Plain, dump, python_pattern
from rlcat.model.codegen import GenerationError, portable_pattern
from rlcat.model.plain import CHECKS, DatasetEntry, ModelEntry, PlatformProfile, Recipe
from rlcat.resolve import load_recipe_source

from conftest import REPO

PAIRS: dict[str, tuple[type[Plain], type[BaseModel]]] = {
    "recipe": (Recipe, recipe_models.Recipe),
    "models": (ModelEntry, catalog_models.ModelEntry),
    "datasets": (DatasetEntry, catalog_models.DatasetEntry),
    "platforms": (PlatformProfile, platform_models.PlatformProfile),
}


def typed(value: Any) -> Any:
    """A value with the type of every leaf spelled out, so 1, 1.0 and True compare unequal."""
    if isinstance(value, dict):
        return {k: typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [typed(v) for v in value]
    if isinstance(value, float) and math.isnan(value):
        return ("float", "nan")
    return (type(value).__name__, value)


def outcome(kind: str, data: Any) -> tuple[str, Any]:
    """('ok', typed dump) or ('rejected', None), from the plain check and from pydantic."""
    plain_cls, schema = PAIRS[kind]
    try:
        plain = ("ok", typed(dump(CHECKS[plain_cls](data))))
    except Invalid:
        plain = ("rejected", None)
    try:
        checked = ("ok", typed(schema.model_validate(data).model_dump()))
    except ValidationError:
        checked = ("rejected", None)
    assert plain == checked, f"plain check {plain[0]}, pydantic {checked[0]}"
    return plain


def recipe_documents() -> dict[str, dict[str, Any]]:
    """Every shipped recipe as the compile path validates it: with its `extends` merged."""
    cat = Catalog.default()
    return {p.stem: load_recipe_source(p.stem, cat).data for p in sorted((REPO / "recipes").glob("*.yaml"))}


def entry_documents(kind: str) -> dict[str, dict[str, Any]]:
    folder = REPO / "catalog" / kind
    return {p.stem: yaml.safe_load(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.yaml"))}


DOCUMENTS: dict[str, dict[str, dict[str, Any]]] = {
    "recipe": recipe_documents(),
    **{kind: entry_documents(kind) for kind in ("models", "datasets", "platforms")},
}


@pytest.mark.parametrize(
    ("kind", "name"), [(kind, name) for kind, docs in DOCUMENTS.items() for name in docs]
)
def test_every_catalog_document_validates_the_same(kind: str, name: str) -> None:
    assert outcome(kind, DOCUMENTS[kind][name])[0] == "ok"


def _recipe(**changes: Any) -> dict[str, Any]:
    data = copy.deepcopy(DOCUMENTS["recipe"]["dapo_math_fsdp2_4_4"])
    for dotted, value in changes.items():
        node = data
        *parents, last = dotted.split("__")
        for part in parents:
            node = node.setdefault(part, {})
        if value is DELETE:
            node.pop(last, None)
        else:
            node[last] = value
    return data


DELETE = object()
EDGE_CASES = {
    "bool for an int": _recipe(batch__mini_batch_size=True),
    "float for an int": _recipe(batch__mini_batch_size=32.0),
    "int for a float": _recipe(actor__optim__lr=1),
    "bool for a float": _recipe(actor__optim__lr=True),
    "int too large for a float": _recipe(actor__optim__lr=2**1100),
    "nan under a bound": _recipe(actor__optim__lr=float("nan")),
    "inf under a bound": _recipe(actor__optim__lr=float("inf")),
    "nan without a bound": _recipe(rollout__temperature=float("nan")),
    "zero for a positive int": _recipe(batch__mini_batch_size=0),
    "just above le": _recipe(batch__mini_batch_size=1_000_000_001),
    "at le": _recipe(batch__mini_batch_size=1_000_000_000),
    "fraction at 1": _recipe(rollout__gpu_memory_utilization=1),
    "fraction above 1": _recipe(rollout__gpu_memory_utilization=1.0000001),
    "name with a final newline": _recipe(name="dapo_math_fsdp2_4_4\n"),
    "name with an inner newline": _recipe(name="dapo\nmath"),
    "name of 100 characters": _recipe(name="a" * 100),
    "name of 101 characters": _recipe(name="a" * 101),
    "number as a string": _recipe(batch__mini_batch_size="32"),
    "string for a literal": _recipe(algorithm="DAPO"),
    "null for a required field": _recipe(batch__mini_batch_size=None),
    "missing required field": _recipe(batch__mini_batch_size=DELETE),
    "unknown field": _recipe(batch__mini_batch=3),
    "integer key": _recipe(batch__7=3),
    "alias and name both given": _recipe(algorithm_settings={}),
    "name instead of alias": {
        **{k: v for k, v in _recipe().items() if k != "algo"},
        "algorithm_settings": _recipe()["algo"],
    },
    "tuple for a list": _recipe(trainer__logger=("console",)),
    "list of one wrong item": _recipe(trainer__logger=["console", 3]),
    "mapping with a bad key": _recipe(env={"1BAD": "x"}),
    "allow key with a non-ASCII digit": _recipe(allow={"RLC5\U00016d70\U00016d71": "Kirat Rai digits"}),
    "allow key with Arabic-Indic digits": _recipe(allow={"RLC5\u0661\u0662": "x"}),
    "allow key": _recipe(allow={"RLC601": "checked by hand"}),
    "mapping with a non-string value": _recipe(env={"GOOD": 1}),
    "engine_kwargs for an unknown engine": _recipe(rollout__engine_kwargs={"trt": {}}),
    "critic on dapo": _recipe(critic={"optim": {"lr": 1e-5}}),
    "list for a mapping": _recipe(batch=[1, 2]),
    "empty recipe": {},
    "not a mapping": ["a"],
}


@pytest.mark.parametrize("case", list(EDGE_CASES))
def test_strict_mode_edge_cases_agree(case: str) -> None:
    outcome("recipe", EDGE_CASES[case])


def test_edge_cases_cover_both_outcomes() -> None:
    results = {case: outcome("recipe", data)[0] for case, data in EDGE_CASES.items()}
    assert results["int for a float"] == "ok" and results["name instead of alias"] == "ok"
    assert results["bool for an int"] == "rejected" and results["name with a final newline"] == "rejected"


# --- mutated documents ----------------------------------------------------------------------------

LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-3, max_value=3),
    st.integers(),
    st.sampled_from([2**63, 10**9, 10**9 + 1, 2**1100]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, 1.0, 1e-6, 0.5, -0.0]),
    st.text(max_size=12),
    st.sampled_from(["vllm", "sglang", "grpo", "megatron", "fully_async", "acc", "a\n", "ok_name", "RLC501"]),
)
VALUES = st.recursive(
    LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(["a", "tp", "lr", "x.y"]), inner, max_size=3),
    ),
    max_leaves=4,
)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix] if prefix else []
    if isinstance(node, dict):
        for k, v in node.items():
            found += _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            found += _paths(v, (*prefix, i))
    return found


def _near(value: Any) -> list[Any]:
    if isinstance(value, bool):
        return [not value, None, int(value)]
    if isinstance(value, int):
        as_float = [float(value)] if abs(value) < 2**1000 else []
        return [value + 1, value - 1, -value, 0, *as_float, None, str(value), 10**9, 10**9 + 1]
    if isinstance(value, float):
        whole = [int(value)] if math.isfinite(value) else []
        return [value * 2, -value, 0.0, 1.0, *whole, math.inf, math.nan, None]
    if isinstance(value, str):
        return [value + "\n", value.upper(), "", value + "_x", value[:-1], None]
    if isinstance(value, list):
        return [value[:1], [], value * 2, tuple(value), None]
    return [{}, None, [value]]


@st.composite
def mutants(draw: st.DrawFn) -> tuple[str, Any]:
    kind = draw(st.sampled_from(sorted(DOCUMENTS)))
    name = draw(st.sampled_from(sorted(DOCUMENTS[kind])))
    data = copy.deepcopy(DOCUMENTS[kind][name])
    for _ in range(draw(st.integers(1, 3))):
        paths = _paths(data)
        path = draw(st.sampled_from(paths))
        parent: Any = data
        for part in path[:-1]:
            parent = parent[part]
        action = draw(st.sampled_from(["nudge", "nudge", "replace", "delete", "add"]))
        if action == "nudge":  # a value close to the original: mostly valid, often at a boundary
            parent[path[-1]] = draw(st.sampled_from(_near(parent[path[-1]])))
        elif action == "replace":
            parent[path[-1]] = draw(VALUES)
        elif action == "delete" and isinstance(parent, dict):
            del parent[path[-1]]
        elif isinstance(parent, dict):
            extra = draw(st.sampled_from(["extra", "algo", "async", "algorithm_settings", "tp", "name"]))
            parent[extra] = draw(VALUES)
    return kind, data


# ~1 ms an example; RLCAT_FUZZ_EXAMPLES=50000 runs a longer hunt
@settings(max_examples=int(os.environ.get("RLCAT_FUZZ_EXAMPLES", "2000")), deadline=None)
@given(mutants())
def test_mutated_documents_validate_the_same(mutant: tuple[str, Any]) -> None:
    event(f"{mutant[0]}: {outcome(*mutant)[0]}")


# --- the records ------------------------------------------------------------------------------------


def _geo3k() -> Recipe:
    record = CHECKS[Recipe](DOCUMENTS["recipe"]["geo3k_megatron_4_4"])
    assert isinstance(record, Recipe)
    return record


def test_records_are_frozen_and_compare_by_value() -> None:
    a, b = _geo3k(), _geo3k()
    assert a == b and a is not b and a != a.replace(engine="sglang")
    with pytest.raises(AttributeError, match="frozen"):
        a.engine = "sglang"  # type: ignore[misc]
    with pytest.raises(AttributeError, match="frozen"):
        del a.batch.mini_batch_size
    with pytest.raises(TypeError):
        hash(a)
    with pytest.raises(TypeError, match="no field"):
        a.replace(engines="vllm")


def test_records_copy_and_pickle() -> None:
    a = _geo3k()
    for clone in (copy.copy(a), copy.deepcopy(a), pickle.loads(pickle.dumps(a))):
        assert clone == a and type(clone) is Recipe


def test_dump_spells_aliases_and_drops_what_is_asked() -> None:
    a = _geo3k()
    by_alias = dump(a, by_alias=True, exclude=frozenset({"platforms"}))
    assert "algo" in by_alias and "algorithm_settings" not in by_alias and "platforms" not in by_alias
    assert list(dump(a)) == list(recipe_models.Recipe.model_fields)
    assert dump(a.parallelism.actor, exclude_none=True) == {
        k: v for k, v in dump(a.parallelism.actor).items() if v is not None
    }


def test_rust_end_anchor_is_translated() -> None:
    assert python_pattern("^a$") == r"^a\Z"
    assert python_pattern(r"^a\$") == r"^a\$"  # an escaped dollar sign
    assert python_pattern(r"^a\\$") == r"^a\\\Z"  # an escaped backslash, then the end


@pytest.mark.parametrize("pattern", [r"^RLC[5-8]\d\d$", r"^\w+$", r"\bx", r"^a$|^b$"])
def test_patterns_the_two_regex_engines_may_read_differently_are_refused(pattern: str) -> None:
    with pytest.raises(GenerationError, match="may match differently"):
        portable_pattern(pattern, "Recipe.allow")
    portable_pattern(r"^RLC[5-8][0-9][0-9]$", "Recipe.allow")


def test_plain_module_imports_no_pydantic(tmp_path: Path) -> None:
    import subprocess
    import sys

    code = (
        "import sys, rlcat.model.plain; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'pydantic'))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    assert out.stdout.strip() == "[]"

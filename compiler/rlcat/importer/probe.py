"""What the lowering does with each field, learnt by running it: no table of verl keys lives here.

A `Draft` is a recipe and its model and dataset entries as plain data. `Trial.lower` validates a
draft with the pydantic models and lowers it as a compile does (lower), in well under a
millisecond. `probe` sets one field at a time to two probe values and records the verl keys whose
setting names that field (`Origin.field`) and the keys whose value moved: a field added to the
schema and its lowering is picked up without a line changed here.
"""

from __future__ import annotations

import functools
import json
import pickle
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from rlcat.lower.context import Lowered, Target
from rlcat.lower.steps import lower
from rlcat.model.catalog import DatasetEntry, ModelEntry
from rlcat.model.fields import value_type
from rlcat.model.plan import Layer, Origin, Setting
from rlcat.model.recipe import Recipe
from rlcat.resolve.recipe import Resolved
from rlcat.resolve.source import Source

Doc = Literal["recipe", "model", "dataset"]
DOC_MODELS: dict[Doc, type[BaseModel]] = {"recipe": Recipe, "model": ModelEntry, "dataset": DatasetEntry}
# The recipe's axes: chosen first, from the entry and the keys only an axis sets (solve.choose_axes).
AXES = ("algorithm", "backend", "engine", "mode")
# Fields that are not verl settings: names, documentation, references, the escape hatches (filled
# last, with what no typed field could say), and per-platform layers.
META = frozenset(
    {
        "name",
        "summary",
        "extends",
        "provenance",
        "variants",
        "platforms",
        "env",
        "allow",
        "overrides",
        "model",
        "dataset",
    }
)
ENTRY_NAME = "imported"
PROBE_KEY = "rlcatprobe"  # the entry an open mapping is probed with


@dataclass(frozen=True)
class Leaf:
    """One settable field: a scalar or list field, or an open mapping (its entries are fields)."""

    doc: Doc
    parts: tuple[str, ...]
    annotation: Any
    required: bool  # the document is invalid without it
    open_map: bool = False
    # per part, whether the schema requires it inside its parent: `critic.optim.lr` is needed once
    # the optional `critic:` section is there
    needed: tuple[bool, ...] = ()

    def needed_below(self, section: tuple[str, ...]) -> bool:
        """Is this field required once `section` (an ancestor) is present?"""
        return self.parts[: len(section)] == section and all(self.needed[len(section) :])

    @property
    def path(self) -> str:
        """The field as people write it: `batch.mini_batch_size`; `model:hf_id` for an entry field."""
        dotted = ".".join(self.parts)
        return dotted if self.doc == "recipe" else f"{self.doc}:{dotted}"


@dataclass
class Draft:
    """A recipe and its two catalog entries as plain data (what import writes)."""

    recipe: dict[str, Any]
    model: dict[str, Any]
    dataset: dict[str, Any]

    def doc(self, name: Doc) -> dict[str, Any]:
        return {"recipe": self.recipe, "model": self.model, "dataset": self.dataset}[name]

    def copy(self) -> Draft:
        fresh: Draft = _fresh(self)
        return fresh

    def get(self, leaf: Leaf) -> Any:
        node: Any = self.doc(leaf.doc)
        for part in leaf.parts:
            if not isinstance(node, dict) or part not in node:
                return UNSET
            node = node[part]
        return node

    def with_value(self, leaf: Leaf, value: Any) -> Draft:
        """A copy with the field set (UNSET: removed, and sections left empty removed too, so an
        optional section is absent again rather than present with its defaults)."""
        out = self.copy()
        node = out.doc(leaf.doc)
        trail = []
        for part in leaf.parts[:-1]:
            trail.append((node, part))
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                return out
        if value is UNSET:
            node.pop(leaf.parts[-1], None)
            for parent, part in reversed(trail):
                if parent.get(part) == {}:
                    del parent[part]
        else:
            node[leaf.parts[-1]] = _fresh(value)
        return out


def _fresh(value: Any) -> Any:
    """A deep copy by pickle's round trip: drafts are plain YAML data, and the search copies one for
    every value it tries (copy.deepcopy took a fifth of an import's time)."""
    return pickle.loads(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))


UNSET: Any = type("Unset", (), {"__repr__": lambda self: "<unset>"})()


@functools.cache
def leaves(doc: Doc) -> tuple[Leaf, ...]:
    """Every settable field of a document, in the schema's order (axes and META left out)."""
    found: list[Leaf] = []

    def walk(model: type[BaseModel], prefix: tuple[str, ...], needed: tuple[bool, ...]) -> None:
        for name, info in model.model_fields.items():
            spelt = info.alias or name
            if not prefix and (spelt == "name" or (doc == "recipe" and (spelt in META or spelt in AXES))):
                continue
            inner = value_type(info.annotation)
            chain = (*needed, info.is_required())
            if isinstance(inner, type) and issubclass(inner, BaseModel):
                walk(inner, (*prefix, spelt), chain)
            elif typing.get_origin(inner) is dict:
                args = typing.get_args(inner)
                if args and typing.get_origin(args[0]) is Literal:  # dict[Engine, OpenMapping]
                    for option in typing.get_args(args[0]):
                        parts = (*prefix, spelt, option)
                        found.append(Leaf(doc, parts, dict, False, True, (*chain, False)))
                else:
                    found.append(Leaf(doc, (*prefix, spelt), dict, False, True, chain))
            else:
                found.append(Leaf(doc, (*prefix, spelt), info.annotation, all(chain), False, chain))

    walk(DOC_MODELS[doc], (), ())
    return tuple(found)


@functools.cache
def all_leaves() -> tuple[Leaf, ...]:
    # the catalog entries first: a model path or data file the search can put in an entry (where a
    # built-in one may match it) is not also written as a recipe field
    return tuple(leaf for doc in ("dataset", "model", "recipe") for leaf in leaves(doc))


def base_types(annotation: Any) -> list[Any]:
    """The types a field takes, `None` left out: `int | None` → [int]; Annotated unwrapped."""
    inner = value_type(annotation)
    if typing.get_origin(inner) in (typing.Union, types.UnionType):
        return [value_type(a) for a in typing.get_args(inner) if a is not type(None)]
    return [inner]


_PROBES: dict[Any, list[Any]] = {
    bool: [True, False],
    int: [3, 5, 2, 7],
    float: [0.375, 0.625, 3.5, 5.5],
    str: ["rlcat-probe-a", "rlcat-probe-b"],
}


def probe_values(leaf: Leaf) -> list[Any]:
    """Values to try a field with, most telling first (a validator picks the ones it accepts)."""
    if leaf.open_map:
        return [{PROBE_KEY: 3}, {PROBE_KEY: 5}]
    out: list[Any] = []
    for kind in base_types(leaf.annotation):
        if typing.get_origin(kind) is Literal:
            out += list(typing.get_args(kind))
        elif typing.get_origin(kind) is list:
            item = base_types(typing.get_args(kind)[0])[0]
            out += [[v] for v in _PROBES.get(item, _PROBES[str])]
        else:
            out += _PROBES.get(kind, [])
    return out


def validate(draft: Draft) -> tuple[Recipe, ModelEntry, DatasetEntry] | None:
    """The draft's documents as the schema reads them, or None when it refuses them."""
    try:
        return (
            Recipe.model_validate(draft.recipe),
            ModelEntry.model_validate(draft.model),
            DatasetEntry.model_validate(draft.dataset),
        )
    except (ValidationError, ValueError):
        return None


class Trial:
    """Validate a draft and lower it for one target, as a compile's recipe pass does."""

    def __init__(self, target: Target) -> None:
        self.target = target
        # what the lowering reads of the target, as text: the key of what is learnt from lowerings
        self.target_key = json.dumps(
            [target.profile.model_dump(mode="json"), target.groups], sort_keys=True, default=str
        )
        self._model_origin = Origin(Layer.RECIPE, f"catalog model {ENTRY_NAME}", field="model")
        self._dataset_origin = Origin(Layer.RECIPE, f"catalog dataset {ENTRY_NAME}", field="dataset")

    def lower(self, draft: Draft) -> Lowered | None:
        """The lowering of a draft, or None when the schema refuses it."""
        valid = validate(draft)
        if valid is None:
            return None
        recipe, model, dataset = valid
        resolved = Resolved(
            recipe, Source(draft.recipe, {}), model, self._model_origin, dataset, self._dataset_origin
        )
        return lower(resolved, self.target)


def finals(lowered: Lowered) -> dict[str, Setting]:
    """The value each key ends with in a lowering pass."""
    return {key: history[-1] for key, history in lowered.settings.items() if history}


@dataclass
class Probe:
    """What setting one field does, learnt from two lowerings."""

    leaf: Leaf
    own: set[str] = field(default_factory=set)  # keys whose setting names the field
    moved: set[str] = field(default_factory=set)  # keys whose value changed with the field
    identity: bool = False  # some key took the probe value as it is
    prefix: str | None = None  # an open mapping: the verl key its entries go under
    # a field the lowering reads only together with another (fully_async's two GPU pools): the
    # sibling it was probed with
    companion: Leaf | None = None


def probe_fields(trial: Trial, base: Draft) -> dict[str, Probe]:
    """`probe_field` for every field, by path. What a field does depends only on the target and the
    base draft (the axes' minimal draft, the same for every source with those axes), so a process
    importing several scripts learns it once per target and axes; the probes are only read."""
    documents = json.dumps([base.recipe, base.model, base.dataset], sort_keys=True, default=repr)
    key = (trial.target_key, documents)
    if key not in _LEARNT:
        every = all_leaves()
        _LEARNT[key] = {leaf.path: probe_field(trial, base, leaf, every) for leaf in every}
    return _LEARNT[key]


# by target and base draft; at most one entry per platform and axis combination
_LEARNT: dict[tuple[str, str], dict[str, Probe]] = {}


def probe_field(trial: Trial, base: Draft, leaf: Leaf, siblings: tuple[Leaf, ...]) -> Probe:
    """`probe`, and when the field alone touches nothing, again with each unset sibling set too:
    some fields are only read together."""
    found = probe(trial, base, leaf)
    if found.own or found.moved or leaf.open_map:
        return found
    for sibling in siblings:
        if sibling is leaf or base.get(sibling) is not UNSET or sibling.parts[:-1] != leaf.parts[:-1]:
            continue
        values = probe_values(sibling)
        if not values:
            continue
        paired = probe(trial, base.with_value(sibling, values[0]), leaf)
        if paired.own:
            paired.companion = sibling
            return paired
    return found


def probe(trial: Trial, base: Draft, leaf: Leaf) -> Probe:
    """Set `leaf` to two values it accepts and see which keys its lowering touches."""
    found = Probe(leaf)
    runs: list[tuple[Any, dict[str, Setting]]] = []
    for value in probe_values(leaf):
        lowered = trial.lower(base.with_value(leaf, value))
        if lowered is not None:
            runs.append((value, finals(lowered)))
        if len(runs) == 2:
            break
    label = leaf.path if leaf.doc == "recipe" else leaf.doc
    for value, settings in runs:
        for key, setting in settings.items():
            if leaf.open_map and key.endswith("." + PROBE_KEY):
                found.prefix = key[: -len(PROBE_KEY) - 1]
                found.own.add(key)
            elif setting.origin.field == label and leaf.doc == "recipe":
                found.own.add(key)
            if _plain(setting.value) == _plain(value):
                found.identity = True
    if len(runs) == 2:
        (_, a), (_, b) = runs
        for key in a.keys() | b.keys():
            if key not in a or key not in b or _plain(a[key].value) != _plain(b[key].value):
                found.moved.add(key)
    if leaf.doc != "recipe":
        found.own |= found.moved
    return found


def _plain(value: Any) -> Any:
    return [_plain(v) for v in value] if isinstance(value, (list, tuple)) else value


__all__ = [
    "AXES",
    "Draft",
    "Leaf",
    "Probe",
    "Trial",
    "all_leaves",
    "finals",
    "probe",
    "probe_field",
    "probe_fields",
    "validate",
]

"""The model and dataset a recipe names: the catalog entry the source names (its model id or train
files, IDENTITY) that already lowers to what the source sets (the same data settings too), else a
new entry for the import's folder, holding what the source says and a TODO marker for the rest.

An entry matches when putting it in place of the draft's loses none of the source keys the draft
reproduces and sets no more keys off verl's defaults: the lowering judges, as it judges fields.
"""

from __future__ import annotations

import re
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlcat.catalog import Catalog
from rlcat.diagnostics import Diagnostic, RlcatError, diag
from rlcat.importer.probe import DOC_MODELS, Doc, Draft, Leaf, base_types, finals, leaves, probe_values
from rlcat.importer.solve import Evaluation, Solver
from rlcat.model.axes import NAME_PATTERN
from rlcat.model.base import TODO_TEXT, is_todo
from rlcat.model_facts import FACT_FIELDS, folder_facts, local_folder
from rlcat.resolve.entries import load_entry

KINDS: tuple[Doc, ...] = ("model", "dataset")
_FOLDERS = {"model": "models", "dataset": "datasets"}


def entry_path(kind: Doc, name: str) -> Path:
    """Where the import writes a new entry, below its output folder."""
    return Path("catalog") / _FOLDERS[kind] / f"{name}.yaml"


@dataclass
class NewEntry:
    """A catalog entry the import writes (catalog/models/NAME.yaml or catalog/datasets/NAME.yaml)."""

    kind: Doc
    name: str
    data: dict[str, Any]
    guessed: list[str]  # fields the source does not say, written as TODO markers to fill in


def place_entries(
    solver: Solver, draft: Draft, result: Evaluation, catalog: Catalog, recipe_name: str
) -> tuple[Draft, list[NewEntry], list[Diagnostic]]:
    """Point the recipe at a matching catalog entry of each kind, or at a new one."""
    new: list[NewEntry] = []
    findings: list[Diagnostic] = []
    for kind in KINDS:
        match = _matching_entry(solver, draft, result, catalog, kind)
        if match is not None:
            name, draft = match
            draft.recipe[kind] = name
            continue
        entry = _new_entry(solver, draft, kind, catalog, recipe_name)
        draft.recipe[kind] = entry.name
        new.append(entry)
        if entry.guessed:
            findings.append(
                diag(
                    "RLC1307",
                    f"new {kind} entry {entry_path(kind, entry.name)} needs filling in: the source does "
                    f"not say {', '.join(entry.guessed)} (written `{TODO_TEXT}`; `rlcat validate` "
                    "refuses the entry until they are filled)",
                    file=solver.run.file,
                    hint="take them from the model's config.json or the dataset's card",
                )
            )
    return draft, new, findings


def _matching_entry(
    solver: Solver, draft: Draft, result: Evaluation, catalog: Catalog, kind: Doc
) -> tuple[str, Draft] | None:
    """The first entry (by name) that keeps what the draft reproduces, with the draft adjusted
    so that recipe fields carry what the entry does not say (Solver.carried)."""
    try:
        names = catalog.names(kind)
    except RlcatError:
        return None
    for name in sorted(names):
        try:
            entry, _ = load_entry(kind, name, DOC_MODELS[kind], catalog)
        except RlcatError:
            continue  # a broken entry never matches; `rlcat validate` reports it
        if not _named_by_source(solver, kind, entry):
            continue
        tried = draft.copy()
        setattr(tried, kind, entry.model_dump(by_alias=True, exclude_defaults=True) | {"name": "imported"})
        got = solver.evaluate(tried)
        lost = set(result.matched) - set(got.matched)
        drifted = solver.drifted(got) - solver.drifted(result)
        if got.valid and (lost or drifted) and all(_local_copy(solver.source[k].value, got, k) for k in lost):
            tried = solver.carried(tried, lost, drifted)
            got = solver.evaluate(tried)
        if _keeps(got, result):
            return name, tried
    return None


# The field that says which model or dataset an entry is: a source that does not give it the same
# value (or a local copy of it) is not running that entry, whatever else lowers alike.
IDENTITY: dict[Doc, str] = {"model": "hf_id", "dataset": "train_files"}


def _named_by_source(solver: Solver, kind: Doc, entry: Any) -> bool:
    """Does the source name this entry: every source key its identity field lowers to (the model
    path, the train files) ends in the same file or folder names as the entry's value? A source that
    sets none of them names no entry: the import writes a new one, its identity left to fill in."""
    probe = solver.probes.get(f"{kind}:{IDENTITY[kind]}")
    keys = sorted((probe.own if probe is not None else set()) & set(solver.source))
    ours = _last_parts(getattr(entry, IDENTITY[kind]))
    return bool(keys) and all(_last_parts(solver.source[key].value) == ours for key in keys)


def _last_parts(value: Any) -> list[str]:
    """The last path part of each path in `value` (one path or a list), lowercased."""
    paths = value if isinstance(value, list) else [value]
    return [str(p).rstrip("/").rsplit("/", 1)[-1].lower() for p in paths]


def _local_copy(source: Any, got: Evaluation, key: str) -> bool:
    """Does the source give `key` a local copy of what the entry gives it (a path ending in the
    same file or folder name: `$HOME/models/Qwen2.5-Math-7B` for `Qwen/Qwen2.5-Math-7B`)? Only
    then may the recipe's own fields carry the path and the entry stand."""
    given = finals(got.lowered).get(key) if got.lowered is not None else None
    if given is None or not isinstance(source, str) or not isinstance(given.value, str):
        return False
    return source.rstrip("/").rsplit("/", 1)[-1].lower() == given.value.rstrip("/").rsplit("/", 1)[-1].lower()


def _keeps(got: Evaluation, result: Evaluation) -> bool:
    return (
        got.valid
        and set(result.matched) <= set(got.matched)
        and got.drift <= result.drift
        and len(got.errors) <= len(result.errors)
    )


def _new_entry(solver: Solver, draft: Draft, kind: Doc, catalog: Catalog, recipe_name: str) -> NewEntry:
    data = dict(draft.doc(kind))
    guessed: list[str] = []
    for leaf in leaves(kind):
        field = leaf.parts[0]
        found = solver.probes.get(leaf.path)
        lowered = found is not None and bool(found.own or found.moved)
        filler = data.get(field) in probe_values(leaf) and not isinstance(data.get(field), bool)
        if len(leaf.parts) != 1 or not leaf.required or (lowered and not filler) or _literal(leaf):
            continue
        # no guess: a marker `rlcat validate` refuses at its line until someone fills it in
        data[field] = [TODO_TEXT] if isinstance(data.get(field), list) else TODO_TEXT
        guessed.append(field)
    if kind == "model":
        guessed = _with_local_facts(data, guessed)
    stem = (
        f"{recipe_name}_{kind}"
        if any(is_todo(data.get(f)) or data.get(f) == [TODO_TEXT] for f in ("hf_id", "train_files"))
        else _entry_name(kind, data, recipe_name)
    )
    name = _unique_name(_bounded(stem), kind, catalog)
    data["name"] = name
    return NewEntry(kind, name, data, guessed)


def _with_local_facts(data: dict[str, Any], guessed: list[str]) -> list[str]:
    """A new model entry whose model path is a folder here: its config.json's shape (heads, KV
    heads, positions, …) fills the entry, and its positions replace the guess. Never the network."""
    folder = local_folder(str(data.get("hf_id", "")))
    facts = folder_facts(folder) if folder is not None else None
    if facts is None:
        return guessed
    for fact in FACT_FIELDS:
        value = getattr(facts, fact)
        if value and fact != "extended_max_position_embeddings":
            data[fact] = value
    data["facts_source"] = facts.source
    return [g for g in guessed if g != "max_position_embeddings" or not facts.max_position_embeddings]


def _entry_name(kind: Doc, data: dict[str, Any], recipe_name: str) -> str:
    if kind == "model":
        stem = str(data.get("hf_id", "")).rstrip("/").rsplit("/", 1)[-1]
    else:
        files = data.get("train_files") or [""]
        parts = str(files[0]).rstrip("/").split("/")
        stem = parts[-1].rsplit(".", 1)[0]
        if stem in ("train", "test", "data", "") and len(parts) > 1:
            stem = parts[-2]
    name = re.sub(r"[^a-z0-9_.]+", "_", stem.lower()).strip("_.-")  # the catalog's own way: qwen3_8b
    return name if re.match(NAME_PATTERN, name) else f"{recipe_name}_{kind}"


# An entry's name is at most 100 characters (model.base.Name); _unique_name may add 9 (`_imported`).
MAX_STEM = 91


def _bounded(stem: str) -> str:
    """A name stem cut to MAX_STEM (a model folder's name, or a recipe name with the kind after it,
    can be longer than any entry name may be)."""
    return stem[:MAX_STEM].rstrip("_.-") or "imported"


def same_name(name: str) -> str:
    """A name as people read it: `dapo-math-17k`, `DAPO_Math_17k` and `dapo_math_17k` are one."""
    return name.lower().replace("-", "_")


def _unique_name(name: str, kind: Doc, catalog: Catalog) -> str:
    """`name`, or `name_2`, `name_3`, ... when the catalog holds an entry whose name reads the same
    (same_name): a new entry never looks like one it is not (a matching one was reused)."""
    try:
        taken = {same_name(n) for n in catalog.names(kind)}
    except RlcatError:
        taken = set()
    if same_name(name) not in taken:
        return name
    for n in range(2, 100):
        if same_name(f"{name}_{n}") not in taken:
            return f"{name}_{n}"
    return f"{name}_imported"


def _literal(leaf: Leaf) -> bool:
    return any(typing.get_origin(kind) is typing.Literal for kind in base_types(leaf.annotation))

"""Generate `schemas/verl/renames.json`: the verl config keys that moved, from the releases themselves.

Two kinds of evidence, each read from data rather than typed by hand:

- **verl's own migration** (`migration`): the assignments of `migrate_legacy_reward_impl`
  (`verl/experimental/reward_loop/reward_loop.py`), read with `ast` from each release tree, as
  `rlcat.dev.annotations` reads dataclass fields: `config.reward.num_workers =
  config.reward_model.num_workers` gives `reward_model.num_workers → reward.num_workers`; a loop
  over a list of names, or over a section's `.keys()`, gives one entry per name, or the section.
- **a section moved between two releases** (`moved`): for each pair of consecutive releases and
  each entry config both index, a section the older release has and the newer lacks entirely,
  whose every leaf (its `_target_` aside) the newer release has, with the same default, under one
  other section. At least one of those defaults must be a value (null everywhere is no evidence),
  and the new section is either new in that release or has the same last name
  (`critic.model.fsdp_config → critic.fsdp`: new in 0.9.0; `actor.router_replay →
  actor.megatron.router_replay`: the same name). Ties go to the section sharing the longest
  leading path with the old one; a tie past that is left out (ambiguous).

`STATED` holds the few moves neither kind finds (a leaf renamed, not a section moved), each with
the source that states it. `rlcat dev verl-index` writes the file with the key index, and `--check`
verifies it (build_index).
"""

from __future__ import annotations

import ast
import itertools
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

RENAMES_FILE = "renames.json"
MIGRATION_FILE = Path("verl", "experimental", "reward_loop", "reward_loop.py")
MIGRATION_FUNCTION = "migrate_legacy_reward_impl"
_ROOT = "config"  # the parameter name of the migration function


@dataclass(frozen=True)
class Stated:
    """A move the data does not show by itself, and the source that states it."""

    old: str
    new: str
    since: str  # the first release with `new` (and without `old`)
    source: str


# Leaf renames: the new leaf has another name, so no section comparison finds them.
STATED: tuple[Stated, ...] = (
    # reference/key_drift.md, "Renames": `rollout.skip_rollout / skip_dump_dir` became
    # `skip.rollout.enable / skip.rollout.dump_dir`; verl 0.7.1 verl/workers/config/rollout.py:214-216
    # (RolloutConfig.skip_rollout, skip_dump_dir) and 0.9.0 verl/utils/skip/config.py (SkipManagerConfig)
    Stated(
        "actor_rollout_ref.rollout.skip_rollout",
        "skip.rollout.enable",
        "0.9.0",
        "reference/key_drift.md (Renames); verl 0.9.0 verl/utils/skip/config.py",
    ),
    Stated(
        "actor_rollout_ref.rollout.skip_dump_dir",
        "skip.rollout.dump_dir",
        "0.9.0",
        "reference/key_drift.md (Renames); verl 0.9.0 verl/utils/skip/config.py",
    ),
)


# --- verl's own migration, read from its source -------------------------------------------------


def verl_migration(tree: Path) -> list[tuple[str, str]]:
    """(old key or section, new key or section) for each move `migrate_legacy_reward_impl` makes in
    the release at `tree`, in source order; empty when the release has no such function."""
    file = tree / MIGRATION_FILE
    if not file.is_file():
        return []
    module = ast.parse(file.read_text(encoding="utf-8"), filename=str(file))
    for node in module.body:
        if isinstance(node, ast.FunctionDef) and node.name == MIGRATION_FUNCTION:
            return list(dict.fromkeys(_moves(node.body, {})))
    return []


_EVERY = object()  # a loop variable over a section's `.keys()`: the whole section


def _moves(body: Sequence[ast.stmt], names: dict[str, Any]) -> Iterator[tuple[str, str]]:
    for statement in body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target, value = statement.targets[0], statement.value
            if isinstance(target, ast.Name):
                names[target.id] = _path(value, names)  # an alias: `legacy = config.reward_model.rollout`
                continue
            new, old = _path(target, names), _path(value, names)
            if new and old:
                yield old, new
        elif isinstance(statement, ast.For) and isinstance(statement.target, ast.Name):
            for bound in _loop_values(statement.iter, names):
                yield from _moves(statement.body, {**names, statement.target.id: bound})
        elif isinstance(statement, ast.If):
            yield from _moves(statement.body, names)
            yield from _moves(statement.orelse, names)
        elif isinstance(statement, ast.With):
            yield from _moves(statement.body, names)


def _loop_values(iterated: ast.expr, names: dict[str, Any]) -> list[Any]:
    if isinstance(iterated, (ast.List, ast.Tuple)):
        return [e.value for e in iterated.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    if (
        isinstance(iterated, ast.Call)
        and isinstance(iterated.func, ast.Attribute)
        and iterated.func.attr == "keys"
        and _path(iterated.func.value, names)
    ):
        return [_EVERY]
    return []


def _path(node: ast.expr, names: dict[str, Any]) -> str | None:
    """The dotted config path an expression names (`config.reward.num_workers` → reward.num_workers),
    None for anything else."""
    if isinstance(node, ast.Name):
        if node.id == _ROOT:
            return ""
        bound = names.get(node.id)
        return bound if isinstance(bound, str) else None
    if isinstance(node, ast.Attribute):
        above = _path(node.value, names)
        return None if above is None else _join(above, node.attr)
    if isinstance(node, ast.Subscript):
        above = _path(node.value, names)
        index = node.slice
        if above is None:
            return None
        if isinstance(index, ast.Constant) and isinstance(index.value, str):
            return _join(above, index.value)
        if isinstance(index, ast.Name) and index.id in names:
            bound = names[index.id]
            return above if bound is _EVERY else _join(above, bound) if isinstance(bound, str) else None
    return None


def _join(above: str, name: str) -> str:
    return f"{above}.{name}" if above else name


# --- sections moved between two releases --------------------------------------------------------


def _sections(keys: Mapping[str, Any]) -> set[str]:
    return {key[:i] for key in keys for i, c in enumerate(key) if c == "."}


def moved_sections(older: Mapping[str, Any], newer: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(old section, new section) for each section of `older` (key → default) gone from `newer`
    whose leaves `newer` holds, with the same defaults, under one other section (the module's
    rules), sorted."""
    old_sections, new_sections = _sections(older), _sections(newer)
    found: dict[str, str] = {}
    for key in sorted(older.keys() - newer.keys()):
        parts = key.split(".")
        gone = next(
            (
                section
                for section in (".".join(parts[:n]) for n in range(1, len(parts)))
                if section not in new_sections and section not in newer
            ),
            None,
        )
        if gone is None or gone in found:
            continue
        leaves = {
            k[len(gone) + 1 :]: d
            for k, d in older.items()
            if k.startswith(gone + ".") and k.rsplit(".", 1)[-1] != "_target_"
        }
        if not any(d is not None for d in leaves.values()):
            continue  # nulls alone match any section of nulls
        ranked = []
        last = gone.rsplit(".", 1)[-1]
        for candidate in new_sections:
            if candidate.rsplit(".", 1)[-1] != last and candidate in old_sections:
                continue
            if all(newer.get(f"{candidate}.{leaf}", _MISSING) == d for leaf, d in leaves.items()):
                ranked.append((_shared_parts(gone, candidate), candidate))
        ranked.sort(reverse=True)
        if ranked and (len(ranked) == 1 or ranked[0][0] > ranked[1][0]):
            found[gone] = ranked[0][1]
    return sorted(found.items())


_MISSING = object()


def _shared_parts(a: str, b: str) -> int:
    """How many leading dotted parts two keys share."""
    return next(
        (n for n, (x, y) in enumerate(zip(a.split("."), b.split("."), strict=False)) if x != y),
        min(a.count("."), b.count(".")) + 1,
    )


# --- the file -----------------------------------------------------------------------------------


def renames_doc(
    versions: Sequence[str],
    entries: Callable[[str], Mapping[str, Mapping[str, Any]]],
    tree: Callable[[str], Path],
) -> dict[str, Any]:
    """The renames document: `entries(version)` gives {index file: {key: default}} of a release,
    `tree(version)` its source tree."""
    migration = [
        {
            "old": old,
            "new": new,
            "releases": [v for v in versions if (old, new) in set(verl_migration(tree(v)))],
        }
        for old, new in dict.fromkeys(m for v in versions for m in verl_migration(tree(v)))
    ]
    moved: dict[tuple[str, str, str, str], list[str]] = {}
    for older, newer in itertools.pairwise(versions):
        old_entries, new_entries = entries(older), entries(newer)
        for file in sorted(old_entries.keys() & new_entries.keys()):
            for old, new in moved_sections(old_entries[file], new_entries[file]):
                moved.setdefault((older, newer, old, new), []).append(file.removesuffix(".json"))
    return {
        "format": 1,
        "source": "generated by `rlcat dev verl-index` (rlcat/dev/renames.py) from the key indexes and "
        "the release trees",
        "migration": {
            "function": f"{MIGRATION_FILE.as_posix()}:{MIGRATION_FUNCTION}",
            "moves": migration,
        },
        "moved": [
            {"old": old, "new": new, "from": a, "to": b, "configs": configs}
            for (a, b, old, new), configs in sorted(moved.items())
        ],
        "stated": [{"old": s.old, "new": s.new, "since": s.since, "source": s.source} for s in STATED],
    }


def render(doc: dict[str, Any]) -> str:
    """One item per line, keys sorted: small, greppable diffs."""
    lines = ["{", f'"format": {doc["format"]},', f'"source": {json.dumps(doc["source"])},']
    migration = doc["migration"]
    lines.append(f'"migration": {{"function": {json.dumps(migration["function"])}, "moves": [')
    lines += _items(migration["moves"])
    lines.append("]},")
    lines.append('"moved": [')
    lines += _items(doc["moved"])
    lines.append("],")
    lines.append('"stated": [')
    lines += _items(doc["stated"])
    lines.append("]")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _items(items: Sequence[Mapping[str, Any]]) -> list[str]:
    return [
        json.dumps(item, sort_keys=True, ensure_ascii=False) + ("," if i < len(items) - 1 else "")
        for i, item in enumerate(items)
    ]

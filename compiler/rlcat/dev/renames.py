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

A leaf renamed (not a section moved) neither kind finds; those come from the project's reference
data on verl's config drift (a copy of its table of renames, `REFERENCE_FILE`), a row kept only
where the key indexes confirm it and the reference does not doubt it (`?`, "unverified", "not
1:1"). `rlcat dev verl-index` writes the file with the key index, and `--check` verifies it
(build_index).
"""

from __future__ import annotations

import ast
import itertools
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from rlcat.catalog import repo_root

RENAMES_FILE = "renames.json"
MIGRATION_FILE = Path("verl", "experimental", "reward_loop", "reward_loop.py")
MIGRATION_FUNCTION = "migrate_legacy_reward_impl"
_ROOT = "config"  # the parameter name of the migration function


# The reference data's table of renames (a copy of its "Renames" section, see the file's header)
REFERENCE_FILE = Path("schemas", "verl", "sources", "key_drift_renames.md")
REFERENCE_NAME = "reference/key_drift.md (Renames)"
# words by which the reference says a row is no rename: left out
_DOUBTED = ("?", "unverified", "not 1:1")


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


# --- renames the reference data states -----------------------------------------------------------


def reference_renames() -> str:
    """The text of the reference data's renames table in the rlcat checkout (REFERENCE_FILE)."""
    root = repo_root()
    if root is None:
        raise FileNotFoundError(
            f"not inside an rlcat checkout, whose {REFERENCE_FILE} the table is read from"
        )
    return (root / REFERENCE_FILE).read_text(encoding="utf-8")


def stated_renames(
    text: str, versions: Sequence[str], entries: Callable[[str], Mapping[str, Mapping[str, Any]]]
) -> list[tuple[str, str, str]]:
    """(old, new, since) for each rename of the reference table (`text`) that the key indexes
    confirm: a row the reference does not doubt, whose old and new names pair one to one (`a / b`,
    `{actor,ref}`, a name relative to the first), where a release has the old key (or section) in
    an entry config, a later one has the new and not the old there, and a leaf's default keeps its
    type. `since` is the first such later release."""
    found: dict[tuple[str, str], str] = {}
    for old_cell, new_cell, evidence in _rows(text):
        if any(word in cell for word in _DOUBTED for cell in (new_cell, evidence)):
            continue
        olds, news = _names(old_cell), _names(new_cell)
        if len(olds) != len(news):
            continue
        for old, new in zip(olds, news, strict=True):
            since = _confirmed(old, new, versions, entries)
            if since is not None:
                found.setdefault((old, new), since)
    return [(old, new, since) for (old, new), since in found.items()]


def _rows(text: str) -> Iterator[tuple[str, str, str]]:
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0].startswith("`") and cells[1].startswith("`"):
            yield cells[0], cells[1], cells[3]


def _names(cell: str) -> list[str]:
    """The keys a cell names: backticks and parentheses dropped, `a / b` and `a, b` split, braces
    expanded, a name without a dot taken as a sibling of the first; `x.*` stands for section x."""
    plain = re.sub(r"\([^)]*\)", "", cell.replace("`", ""))
    names: list[str] = []
    for part in re.split(r"\s*(?:/|,(?![^{]*\}))\s*", plain.strip()):
        if part:
            sibling = "." not in part and names
            names += _braces(names[0].rsplit(".", 1)[0] + "." + part if sibling else part)
    return [n.removesuffix(".*") for n in names]


def _braces(name: str) -> list[str]:
    match = re.search(r"\{([^}]*)\}", name)
    if match is None:
        return [name]
    return [
        expanded
        for choice in match.group(1).split(",")
        for expanded in _braces(name[: match.start()] + choice.strip() + name[match.end() :])
    ]


def _confirmed(
    old: str, new: str, versions: Sequence[str], entries: Callable[[str], Mapping[str, Mapping[str, Any]]]
) -> str | None:
    for older, newer in itertools.combinations(versions, 2):
        before, after = entries(older), entries(newer)
        for file in sorted(before.keys() & after.keys()):
            a, b = before[file], after[file]
            if _holds(a, old) and _holds(b, new) and not _holds(b, old) and _same_kind(a, b, old, new):
                return newer
    return None


def _holds(keys: Mapping[str, Any], name: str) -> bool:
    return name in keys or any(k.startswith(name + ".") for k in keys)


def _same_kind(a: Mapping[str, Any], b: Mapping[str, Any], old: str, new: str) -> bool:
    """A leaf renamed keeps the type of its default (`use_legacy_worker_impl: auto` is no
    `use_v1: true`); a section is a section on both sides."""
    if (old in a) != (new in b):
        return False
    return old not in a or type(a[old]) is type(b[new])


# --- the file -----------------------------------------------------------------------------------


def renames_doc(
    versions: Sequence[str],
    entries: Callable[[str], Mapping[str, Mapping[str, Any]]],
    tree: Callable[[str], Path],
    reference: str,
) -> dict[str, Any]:
    """The renames document: `entries(version)` gives {index file: {key: default}} of a release,
    `tree(version)` its source tree, `reference` the text of the reference data's renames table
    (REFERENCE_FILE). A rename the reference states that a section moved already shows is listed
    once, as moved."""
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
        "stated": [
            {"old": old, "new": new, "since": since, "source": REFERENCE_NAME}
            for old, new, since in stated_renames(reference, versions, entries)
            if not any(m[2] == old and m[3] == new for m in moved)
        ],
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

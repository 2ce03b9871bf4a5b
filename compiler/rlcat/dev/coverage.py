"""How much of what real verl runs set lands in typed recipe fields (`rlcat dev schema-coverage`).

The reference launch scripts (`tests/data/upstream_scripts/*.json`: `overrides` is the exact list
verl received when each script ran) are read, and each override key is judged: typed when some
recipe field sets that verl key. Which keys a field sets is never typed by hand: every value of a
plan records the recipe field that set it (`Origin.field`), so the keys come from real compiles —
the plans the caller passes (the docs' compiles of every built-in recipe on every platform and
axis value) and probes of every leaf field (each built-in recipe compiled with the field changed
alone, `--set`). A setting's names in other releases (`alternatives`) count, a field's open mapping
(`rollout.engine_kwargs`) covers every key under its verl prefix, and a config-group choice the
plan makes (`model_engine=megatron`) is typed by the backend.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from rlcat.catalog import Catalog
from rlcat.compile.assemble import Compiled, Request, compile_request
from rlcat.diagnostics import RlcatError
from rlcat.model.fields import field_info, recipe_fields, sample_values, value_type

# fields whose keys are not the schema modelling verl: the escape hatch and the environment
UNTYPED_FIELDS = ("overrides", "env")
ARF = "actor_rollout_ref."


@dataclass
class TypedKeys:
    """The verl keys recipe fields set, with one field that sets each."""

    keys: dict[str, str] = field(default_factory=dict)  # verl key (any release's name) → field
    prefixes: dict[str, str] = field(default_factory=dict)  # open-mapping verl prefix → field

    def field_of(self, key: str) -> str | None:
        if key in self.keys:
            return self.keys[key]
        return next((f for p, f in self.prefixes.items() if key.startswith(p + ".")), None)

    def add(self, compiled: Compiled) -> None:
        """Record what each field set in one compiled plan."""
        open_maps = recipe_fields()[1]
        for key, history in compiled.plan.overrides.items():
            for entry in history.entries:
                owner = entry.origin.field
                if owner is None or owner.split(".", 1)[0] in UNTYPED_FIELDS:
                    continue
                for name in (key, *entry.alternatives):
                    self.keys.setdefault(name, owner)
                mapping = next((m for m in sorted(open_maps) if owner.startswith(m + ".")), None)
                suffix = owner[len(mapping) + 1 :] if mapping else ""
                if mapping and key.endswith("." + suffix):
                    self.prefixes.setdefault(key[: -len(suffix) - 1], mapping)
        for group in compiled.plan.group_choices:
            self.keys.setdefault(group, "backend")


def typed_keys(plans: Iterable[Compiled], catalog: Catalog, platform: str = "cuda") -> TypedKeys:
    """The keys the given plans and the probes of every leaf field (on `platform`) show set."""
    typed = TypedKeys()
    for compiled in plans:
        typed.add(compiled)
    for compiled in probes(catalog, platform):
        typed.add(compiled)
    return typed


def probes(catalog: Catalog, platform: str) -> Iterator[Compiled]:
    """A recipe of each kind compiled with each leaf field set alone to each sample of its type
    (and the required fields of an unset section around it)."""
    paths, open_maps = recipe_fields()
    leaves = [p for p in paths if p in open_maps or not any(q.startswith(p + ".") for q in paths)]
    recipes = one_of_each_kind(catalog, platform)
    for path in leaves:
        if path.split(".", 1)[0] in (*UNTYPED_FIELDS, "platforms", "allow"):
            continue
        context = _required_around(path)
        for sample in sample_values(path):
            for recipe in recipes:
                request = Request(
                    recipe, platform, sets=[*context, f"{path}={sample}"], allow_known_broken=True
                )
                try:
                    yield compile_request(request, catalog)
                except RlcatError:
                    continue


def one_of_each_kind(catalog: Catalog, platform: str) -> list[str]:
    """The first recipe (by name) of each mode × backend × engine × algorithm × critic: a field sets
    the keys its lowering writes for the recipe's axes, so recipes of one kind show the same keys,
    and probing one of them is enough (about a quarter of the compiles of probing all 47)."""
    kinds: dict[tuple[object, ...], str] = {}
    for name in sorted(catalog.names("recipe")):
        try:
            recipe = compile_request(Request(name, platform, allow_known_broken=True), catalog).recipe
        except RlcatError:
            continue
        kind = (recipe.mode, recipe.backend, recipe.engine, recipe.algorithm, recipe.critic is not None)
        kinds.setdefault(kind, name)
    return sorted(kinds.values())


def _required_around(path: str) -> list[str]:
    """`--set` assignments for the required fields of the sections around `path`, so that a field of
    a section the recipe leaves unset (`reward.custom_function.name`) validates alone."""
    out: list[str] = []
    parts = path.split(".")
    for depth in range(1, len(parts)):
        section = ".".join(parts[:depth])
        kind = value_type(field_info(section).annotation)
        if not (isinstance(kind, type) and issubclass(kind, BaseModel)):
            return out
        for name, info in kind.model_fields.items():
            sub = f"{section}.{info.alias or name}"
            if info.is_required() and sub != ".".join(parts[: depth + 1]):
                samples = sample_values(sub)
                if samples:
                    out.append(f"{sub}={samples[0]}")
    return out


# --- measuring -------------------------------------------------------------------------------------


@dataclass
class Coverage:
    """Override keys of the reference scripts: how many land in typed fields, and the rest."""

    scripts: int = 0
    overrides: int = 0
    typed: int = 0
    distinct: set[str] = field(default_factory=set)
    distinct_typed: set[str] = field(default_factory=set)
    unmodelled: Counter[str] = field(default_factory=Counter)

    @property
    def share(self) -> float:
        return self.typed / self.overrides if self.overrides else 0.0

    def concepts(self) -> list[tuple[str, int, list[tuple[str, int]]]]:
        """Unmodelled keys grouped by concept (their verl subtree), most frequent first."""
        groups: dict[str, Counter[str]] = {}
        for key, count in self.unmodelled.items():
            groups.setdefault(concept_of(key), Counter())[key] = count
        rows = [
            (c, sum(keys.values()), sorted(keys.items(), key=lambda kv: (-kv[1], kv[0])))
            for c, keys in groups.items()
        ]
        return sorted(rows, key=lambda row: (-row[1], row[0]))


def override_key(override: str) -> str:
    """`++a.b=1` → `a.b`: the key of one override as verl received it (`~` deletes, `+` adds)."""
    return override.split("=", 1)[0].lstrip("+~")


def concept_of(key: str) -> str:
    """The verl subtree a key belongs to: its parent below the top sections
    (`algorithm.rollout_correction`, `actor_rollout_ref.actor.fsdp_config`), else the key itself
    (`trainer.default_local_dir`, `actor_rollout_ref.rollout.free_cache_engine`)."""
    parent = key.rsplit(".", 1)[0] if "." in key else ""
    depth = parent.count(".") + 1 if parent else 0
    return parent if depth >= (3 if key.startswith(ARF) else 2) else key


def measure(scripts_dir: Path, typed: TypedKeys) -> Coverage:
    cov = Coverage()
    for path in sorted(scripts_dir.glob("*.json")):
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        cov.scripts += 1
        for override in data.get("overrides") or []:
            key = override_key(override)
            cov.overrides += 1
            cov.distinct.add(key)
            if typed.field_of(key) is not None:
                cov.typed += 1
                cov.distinct_typed.add(key)
            else:
                cov.unmodelled[key] += 1
    return cov


def render(cov: Coverage, top: int) -> str:
    lines = [
        f"{cov.scripts} reference scripts, {cov.overrides} overrides verl received",
        f"typed: {cov.typed} of {cov.overrides} overrides ({cov.share:.1%}); "
        f"{len(cov.distinct_typed)} of {len(cov.distinct)} distinct keys",
        "",
        f"most frequent unmodelled concepts (overrides, keys) — top {top}:",
    ]
    for concept, count, keys in cov.concepts()[:top]:
        lines.append(f"  {count:4d}  {concept}")
        if len(keys) > 1 or keys[0][0] != concept:
            lines += [f"          {n:4d}  {k}" for k, n in keys[:8]]
    return "\n".join(lines) + "\n"


def as_json(cov: Coverage) -> str:
    data = {
        "scripts": cov.scripts,
        "overrides": cov.overrides,
        "typed": cov.typed,
        "share": round(cov.share, 4),
        "distinct_keys": len(cov.distinct),
        "distinct_typed": len(cov.distinct_typed),
        "unmodelled": [{"concept": c, "overrides": n, "keys": dict(keys)} for c, n, keys in cov.concepts()],
    }
    return json.dumps(data, indent=2) + "\n"

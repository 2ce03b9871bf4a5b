"""The whole-config proof of `rlcat import --whole`: every leaf key of the config verl composes
from the source, compared both ways with every leaf of the config it composes from the recipe
(interpolations resolved), each difference named with the recipe line that causes it.

The composing is Hydra's (rlcat.dev.whole, run by the command); this module only compares two
flattened configs, so it is tested without Hydra. A difference fails the import unless the user
accepted it (`--accept KEY=REASON`), it is on a key the entrypoint never reads (the run is the
same: RLC802's table), or it is set aside on request (`--aside paths|names|loggers`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rlcat.compile.assemble import Compiled
from rlcat.guards.drift.unread_keys import unread
from rlcat.importer.source import SourceRun
from rlcat.model.plan import Origin
from rlcat.syntax.hydra_value import render_or_repr


class _Absent:
    """A leaf one side's config does not have."""

    def __repr__(self) -> str:
        return "(absent)"


ABSENT: Any = _Absent()

# what `--aside` may set aside, by the last part of a key: where files are (a path the recipe may
# rightly choose anew), what the run is called, where it logs
_PATH_LEAF = re.compile(r"(^|_)(path|paths|dir|files?)$")
_NAME_LEAVES = frozenset({"project_name", "experiment_name"})
ASIDE: dict[str, Callable[[str], bool]] = {
    "paths": lambda key: bool(_PATH_LEAF.search(key.rsplit(".", 1)[-1])),
    "names": lambda key: key.rsplit(".", 1)[-1] in _NAME_LEAVES,
    "loggers": lambda key: key.rsplit(".", 1)[-1] == "logger",
}
_INTERPOLATION = re.compile(r"^\$\{(\.*)([A-Za-z0-9_.]+)\}$")


@dataclass(frozen=True)
class Difference:
    """One leaf whose composed value is not the same on both sides."""

    key: str
    source: Any  # the source's composed value, or ABSENT
    ours: Any  # the recipe's, or ABSENT
    cause: str  # the recipe line (and field) that gives `ours`, or why nothing in the recipe does
    source_line: int | None = None  # the source line that sets the key (or a section holding it)
    accepted: str = ""  # the reason the user gave (`--accept`)
    unread: str = ""  # why the entrypoint never reads the key: the run is the same
    # the source's own setting of the key, which Hydra (or verl at start-up) refuses on this
    # release, so that the source does not run on it: the recipe writes it as Hydra takes it, or
    # leaves it out
    refused: str = ""

    @property
    def failing(self) -> bool:
        return not self.accepted and not self.unread and not self.refused


@dataclass
class WholeProof:
    """The whole-config comparison of one import."""

    leaves: set[str] = field(default_factory=set)  # the keys compared
    set_aside: int = 0  # leaves `--aside` left out
    differences: list[Difference] = field(default_factory=list)
    unused: list[str] = field(default_factory=list)  # `--accept` keys no difference matched
    refused: list[tuple[str, str]] = field(default_factory=list)  # source overrides Hydra refused
    recipe_refused: list[tuple[str, str]] = field(default_factory=list)  # the recipe's (never expected)
    # (the source's override, as composed): what --migrate rewrote before the source was composed
    migrated: list[tuple[str, str]] = field(default_factory=list)

    @property
    def compared(self) -> int:
        return len(self.leaves)

    @property
    def failing(self) -> list[Difference]:
        return [d for d in self.differences if d.failing]

    @property
    def ok(self) -> bool:
        return not self.failing and not self.recipe_refused


@dataclass(frozen=True)
class Attribution:
    """Which recipe line gives each key of the plan: the origin of every override rlcat writes, and
    the recipe's composed text (an interpolation names the key its value comes from)."""

    origins: Mapping[str, Origin]  # plan key → who set it
    raw: Mapping[str, Any]  # the recipe's composed leaves, unresolved

    def cause(self, key: str) -> str:
        seen: set[str] = set()
        while key not in seen:
            seen.add(key)
            origin = _by_section(self.origins, key)
            if origin is not None:
                where = f"{origin.file}:{origin.line}" if origin.file and origin.line else origin.where()
                return where + (f" [{origin.field}]" if origin.field else "")
            target = _interpolated(key, self.raw.get(key))
            if target is None:
                break
            key = target
        return "no recipe line sets it: verl's default"


def compare_whole(
    source: Mapping[str, Any],
    ours: Mapping[str, Any],
    attribution: Attribution,
    *,
    source_lines: Mapping[str, int | None] = {},
    aside: Iterable[str] = (),
    accepted: Mapping[str, str] = {},
    never_read: Callable[[str], str | None] = lambda key: None,
    refused: Mapping[str, str] = {},
) -> WholeProof:
    """Every leaf of `source` and `ours` (flattened, resolved), both ways. `accepted` maps a key,
    or a section holding keys, to the reason the user accepts its differences for; `aside` names
    groups of `ASIDE` not compared; `never_read` says why the entrypoint never reads a key."""
    kinds = [ASIDE[name] for name in aside]
    proof = WholeProof()
    used: set[str] = set()
    for key in sorted(source.keys() | ours.keys()):
        if any(kind(key) for kind in kinds):
            proof.set_aside += 1
            continue
        proof.leaves.add(key)
        theirs, mine = source.get(key, ABSENT), ours.get(key, ABSENT)
        if _same(theirs, mine):
            continue
        accepted_as = _by_section(accepted, key)
        if accepted_as is not None:
            used.add(next(k for k in _sections(key) if k in accepted))
        proof.differences.append(
            Difference(
                key,
                theirs,
                mine,
                attribution.cause(key),
                _by_section(source_lines, key),
                accepted_as or "",
                never_read(key) or "",
                _refused(refused, key),
            )
        )
    proof.unused = sorted(set(accepted) - used)
    return proof


def prove_whole(
    run: SourceRun,
    compiled: Compiled,
    source: Mapping[str, Any],
    ours: Mapping[str, Any],
    ours_raw: Mapping[str, Any],
    *,
    aside: Iterable[str] = (),
    accepted: Mapping[str, str] = {},
    refused: Iterable[tuple[str, str]] = (),
    refused_at_start: Mapping[str, str] = {},
    unread_here: Mapping[str, str] = {},
) -> WholeProof:
    """`compare_whole` for one import: the recipe lines from the compiled plan's origins, the
    source lines from the run, the keys never read from the plan's entrypoint and release, the
    source's overrides Hydra `refused` (override, message), those verl refuses at start-up, and
    the keys the import left out as no code of the release reads them (`unread_here`)."""
    plan = compiled.plan
    origins = {o.key: o.setting.origin for o in compiled.overrides}
    lines = {key: s.line for key, s in (run.groups | run.settings).items()}

    def never_read(key: str) -> str | None:
        found = unread(key, plan.entrypoint, plan.verl_version)
        if found is not None:
            return found.section.why
        why: str | None = _by_section(unread_here, key)
        return why

    proof = compare_whole(
        source,
        ours,
        Attribution(origins, ours_raw),
        source_lines=lines,
        aside=aside,
        accepted=accepted,
        never_read=never_read,
        refused={
            **{key: f"{why} (RLC409: verl refuses it at start-up)" for key, why in refused_at_start.items()},
            **{
                override.split("=", 1)[0].lstrip("+~"): f"Hydra refuses it: {message}"
                for override, message in refused
            },
        },
    )
    proof.refused = list(refused)
    return proof


def _same(a: Any, b: Any) -> bool:
    """Equal as verl receives them: 1 and 1.0 alike, True never a number (bool is an int)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return bool(a == b)


def _refused(refused: Mapping[str, str], key: str) -> str:
    """Why the source's own setting of `key` is refused: a refused key, a section holding it, or a
    section below it (a refused `a.b.c` leaves the source's `a.b` an empty dict)."""
    found = _by_section(refused, key)
    if found is None:
        found = next((why for refused_key, why in refused.items() if refused_key.startswith(key + ".")), None)
    return found or ""


def _sections(key: str) -> list[str]:
    """`key` and every section above it, the longest first."""
    parts = key.split(".")
    return [".".join(parts[:n]) for n in range(len(parts), 0, -1)]


def _by_section(table: Mapping[str, Any], key: str) -> Any:
    """What `table` holds for `key` or the nearest section above it (a dict value set whole)."""
    for section in _sections(key):
        if section in table:
            return table[section]
    return None


def _interpolated(key: str, raw: Any) -> str | None:
    """The key a value `${a.b}` (absolute) or `${..b}` (relative to `key`'s node) refers to."""
    match = _INTERPOLATION.match(raw) if isinstance(raw, str) else None
    if match is None:
        return None
    dots, target = match.groups()
    if not dots:
        return target
    parent = key.split(".")[: -len(dots)]
    return ".".join([*parent, target]) if parent else target


def render_whole(proof: WholeProof, version: str) -> str:
    """The whole-config part of the round-trip report."""
    out = [f"  whole config (verl {version}, composed with Hydra, every leaf both ways):"]
    for override, rewritten in proof.migrated:
        out.append(f"  migrated the source's {override}: composed as {rewritten} (--migrate)")
    for override, message in proof.refused:
        out.append(f"  refused  the source's {override}: {message} (composed without it)")
    for override, message in proof.recipe_refused:
        out.append(f"  refused  the recipe's {override}: {message} (UNEXPLAINED)")
    for d in proof.differences:
        where = f"line {d.source_line}: " if d.source_line else ""
        status, why = (
            ("accepted", f"accepted: {d.accepted}")
            if d.accepted
            else ("unread  ", f"never read: {d.unread}")
            if d.unread
            else ("refused ", f"the source's own setting is refused here: {d.refused}")
            if d.refused
            else ("differs ", "UNEXPLAINED")
        )
        out.append(
            f"  {status} {where}{d.key}: source {_shown(d.source)}, recipe {_shown(d.ours)} "
            f"<- {d.cause} ({why})"
        )
    for key in proof.unused:
        out.append(f"  note     --accept {key}: no difference there")
    out.append(
        f"  {proof.compared} leaves compared"
        + (f" ({proof.set_aside} set aside)" if proof.set_aside else "")
        + f": {proof.compared - len(proof.differences)} same, "
        f"{sum(bool(d.accepted) for d in proof.differences)} accepted, "
        f"{sum(bool(d.unread) and not d.accepted for d in proof.differences)} never read, "
        f"{sum(bool(d.refused) and not (d.accepted or d.unread) for d in proof.differences)} refused "
        "in the source, "
        f"{len(proof.failing)} unexplained"
    )
    return "\n".join(out) + "\n"


def _shown(value: Any) -> str:
    return repr(value) if value is ABSENT else render_or_repr(value)

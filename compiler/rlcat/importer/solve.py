"""From a source's overrides to a recipe: typed fields wherever the lowering can give verl the same
value, `overrides:` for the rest, and the keys the target release lacks left out.

Nothing here knows which verl key a field sets. The axes are the combination whose lowering best
fits the source (its entrypoint, the key index of its entry config, the keys only an axis sets);
then each field is probed (probe.py) and a search sets fields to values taken from the source keys
the field touches, keeping a change only when the lowering then gives more of the source's keys
their value (and fewer others a value verl's default does not have). Every candidate is judged by
lowering it, so a value is typed only where rlcat's own lowering reproduces it.
"""

from __future__ import annotations

import functools
import itertools
import typing
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from math import prod
from typing import Any, Literal

from pydantic import BaseModel

from rlcat.diagnostics import Diagnostic, RlcatError, Severity, diag, did_you_mean
from rlcat.guards.drift.unread_keys import Unread, unread
from rlcat.importer.compare import same
from rlcat.importer.probe import (
    AXES,
    ENTRY_NAME,
    UNSET,
    Draft,
    Leaf,
    Probe,
    Trial,
    all_leaves,
    base_types,
    finals,
    probe_fields,
    probe_values,
    validate,
)
from rlcat.importer.source import SourceRun, SourceSetting
from rlcat.lower.context import Lowered, Target
from rlcat.model import axes as axis_values
from rlcat.model.fields import value_type
from rlcat.model.plan import Layer, Origin, Setting
from rlcat.model.recipe import Recipe
from rlcat.syntax.hydra_value import (
    RequestedInterpolation,
    UnrenderableValue,
    check_renderable,
    with_live_interpolations,
)
from rlcat.verl.check import dataclass_holding, type_matches
from rlcat.verl.index import KeyIndex, available_versions, load_index
from rlcat.verl.renames import Moved, renamed

AXIS_CHOICES: dict[str, tuple[str, ...]] = {
    "algorithm": axis_values.ALGORITHMS,
    "backend": axis_values.BACKENDS,
    "engine": axis_values.ENGINES,
    "mode": axis_values.MODES,
}
_SEARCH_PASSES = 3
# how many defaults that name another key (`${a.b}`) are followed to a value
_REFERENCE_HOPS = 4
# lowerings the joint search of one section may spend (one lowering is about a millisecond), and
# the combinations it may order before choosing them
_JOINT_TRIES = 1000
_JOINT_COMBINATIONS = 200_000
# what carries a `key=null` the release's default already holds
VERL_DEFAULT = Origin(Layer.VERL_DEFAULT, "verl's default (null)", field="verl-default")


@dataclass(frozen=True)
class Evaluation:
    """How well one draft's lowering reproduces the source."""

    valid: bool
    errors: tuple[Diagnostic, ...] = ()
    matched: dict[str, Setting] = field(default_factory=dict)  # source key → the setting that gives it
    drift: int = 0  # keys the source leaves alone that the draft sets off verl's default
    lowered: Lowered | None = None
    # the value each key ends with in `lowered` (probe.finals), read for every candidate of a field
    finals: dict[str, Setting] = field(default_factory=dict)

    def rank(self) -> tuple[int, ...]:
        # a key the source leaves alone set off verl's default changes the run: no number of
        # source keys matched makes up for it (those go to `overrides:` instead)
        return (self.valid, -len(self.errors), -self.drift, len(self.matched))


@dataclass
class Solution:
    """The recipe found for a source, and how each source key is carried."""

    draft: Draft
    axes: dict[str, str]
    index: KeyIndex
    entrypoint: str
    config_name: str
    group_choices: dict[str, str]
    typed: dict[str, Setting]  # source key → the typed setting that gives verl its value
    overrides: dict[str, SourceSetting]  # written key (with prefix) → the source setting
    left_out: dict[str, str]  # source key → why it is not in the recipe
    diagnostics: list[Diagnostic]
    # keys the recipe sets that the source does not (required fields, rlcat's defaults), and
    # whether each holds verl's default
    unasked: dict[str, tuple[Setting, bool]] = field(default_factory=dict)
    adjusted: dict[str, str] = field(default_factory=dict)  # source key → what was changed to compile
    # source key → the key verl's own migration moves it to, where the entrypoint never reads the
    # source's key and the import was asked to move it (--migrate)
    migrated: dict[str, str] = field(default_factory=dict)
    # source keys verl refuses at start-up (a `+` field its dataclass lacks: RLC409): the source's
    # run stops there, the recipe leaves them out
    refused_at_start: dict[str, str] = field(default_factory=dict)
    # source keys `+` adds to a release that has no such key any more (an older one read it): left
    # out, as nothing in the release reads them
    unread_here: dict[str, str] = field(default_factory=dict)
    # source key → why, for the keys of `migrated` that verl renamed between releases (the rest of
    # `migrated` is verl's own migration of keys the entrypoint never reads)
    renamed: dict[str, str] = field(default_factory=dict)

    def migrated_text(self, setting: SourceSetting) -> str:
        """The source's override as --migrate rewrote it: the key's new name (with the prefix the
        release takes there), the value as the source wrote it."""
        return f"{written_name(self.migrated[setting.key], self.index)}={setting.text.partition('=')[2]}"


class Solver:
    def __init__(self, run: SourceRun, target: Target, *, migrate: bool = False) -> None:
        self.run = run
        self.target = target
        # whether a key the entrypoint never reads moves to where verl's migration puts it
        # (which changes the run: upstream's never used it) or is left out (the run as it was)
        self.migrate = migrate
        self.trial = Trial(target)
        # the keys compared: deletions and Hydra's own settings have no recipe form (left_out)
        self.source = {
            k: s for k, s in run.settings.items() if s.prefix != "~" and k.split(".", 1)[0] != "hydra"
        }
        self.index: KeyIndex | None = None
        self.probes: dict[str, Probe] = {}  # by field path, filled by `search`
        # `key=null` where verl's default is null already: nothing to write (a recipe's null means
        # "keep verl's default", so rlcat could not write it anyway); set by choose_axes
        self.null_defaults: set[str] = set()
        # the source's config-group choices no axis selects, carried under `overrides:`
        self.kept_groups: dict[str, SourceSetting] = {}
        # source keys verl itself refuses at start-up (RLC409), by key: left out, and why
        self.refused_at_start: dict[str, str] = {}
        # source keys the release composes (a `+` adds them) but no code of it reads: left out
        self.unread_here: dict[str, str] = {}

    # --- judging a draft -----------------------------------------------------------------------

    def evaluate(self, draft: Draft) -> Evaluation:
        lowered = self.trial.lower(draft)
        if lowered is None:
            return Evaluation(False)
        errors = tuple(d for d in lowered.diagnostics if d.severity >= Severity.ERROR)
        matched: dict[str, Setting] = {}
        drift = 0
        settings = finals(lowered)
        for key, setting in settings.items():
            names = [
                n
                for n in (key, *setting.alternatives)
                if n in self.source and (n == key or self._renames(n, lowered))
            ]
            if names:
                for name in names:
                    if same(self.source[name].value, setting.value):
                        matched[name] = setting
            elif not self._verl_default(key, setting.value, settings=settings):
                drift += 1
        for key in self.null_defaults:
            if key not in settings:
                matched[key] = Setting(key, None, VERL_DEFAULT)
        return Evaluation(True, errors, matched, drift, lowered, settings)

    def _renames(self, name: str, lowered: Lowered) -> bool:
        """May a setting written under another of its names carry the source's `name`? Where the
        release lacks `name` (it was renamed), or, with --migrate, where the entrypoint never reads
        it; not where the release composes and reads `name` itself (the fully-async entrypoint's
        legacy reward keys): the recipe would give verl's config another key than the source's."""
        never_read = self._never_read(name, lowered)
        if never_read:
            return self.migrate
        index = self.index
        return index is None or not (index.has(name) or index.open_dict_of(name) is not None)

    def _verl_default(
        self, key: str, value: Any, index: KeyIndex | None = None, settings: dict[str, Setting] | None = None
    ) -> bool:
        """Is `value` what verl holds for a key the source leaves alone (or is that not known)? A
        default that is another key (the reference's strategy follows the actor's) is that key's
        value: the source's, else the draft's lowering's (`settings`), else its default."""
        index = index or self.index
        if index is None:
            return True
        if not index.has(key):
            # a new key inside an open dict is absent from verl's config: any value is added
            return index.open_dict_of(key) is None
        default = index.default(key)
        for _ in range(_REFERENCE_HOPS):
            target = _referenced(default)
            if target is None or not index.has(target):
                break
            if target in self.source:  # the recipe gives it the source's value, typed or not
                return same(self.source[target].value, value)
            if settings is not None and target in settings:
                return same(settings[target].value, value)
            default = index.default(target)
        if isinstance(default, str) and ("${" in default or default == "???"):
            return True  # a default computed otherwise: not judged
        return same(default, value)

    # --- the axes ------------------------------------------------------------------------------

    def choose_axes(self) -> tuple[dict[str, str], Draft, list[Diagnostic]]:
        """The axis values whose lowering fits the source best, and the base draft for them."""
        best: tuple[tuple[int, ...], dict[str, str], Draft, Lowered] | None = None
        for values in itertools.product(*AXIS_CHOICES.values()):
            combo = dict(zip(AXIS_CHOICES, values, strict=True))
            draft = self.base(combo)
            lowered = self.trial.lower(draft) if draft is not None else None
            if draft is None or lowered is None:
                continue
            rank = self._axis_rank(lowered)
            if best is None or rank > best[0]:
                best = (rank, combo, draft, lowered)
        if best is None:
            raise RlcatError([diag("RLC1301", "no recipe of rlcat's schema lowers on this platform")])
        _, combo, draft, lowered = best
        draft, lowered = self._keep_groups(draft, lowered)
        self.index = _index_of(self.target, lowered)
        index = self.index
        if index is not None:
            self.null_defaults = {
                k
                for k, s in self.source.items()
                if s.value is None and index.has(k) and index.default(k) is None
            }
        return combo, draft, self._entry_findings(combo, lowered)

    def _keep_groups(self, draft: Draft, lowered: Lowered) -> tuple[Draft, Lowered]:
        """The source's config-group choices no axis value selects (`model_engine=veomni`), kept
        whole under `overrides:`, where the release has the option: the keys are then judged
        against that engine's config, not the closest axis's."""
        kept = {
            group: setting.value
            for group, setting in self.run.groups.items()
            if lowered.group_choices.get(group) != setting.value
            and isinstance(setting.value, str)
            and setting.value in self.target.groups.get(group, [])
        }
        if not kept:
            return draft, lowered
        tried = draft.copy()
        tried.recipe["overrides"] = {**tried.recipe.get("overrides", {}), **kept}
        relowered = self.trial.lower(tried)
        if relowered is None or _index_of(self.target, relowered) is None:
            return draft, lowered
        self.kept_groups = {group: self.run.groups[group] for group in kept}
        return tried, relowered

    def _axis_rank(self, lowered: Lowered) -> tuple[int, ...]:
        run = self.run
        entry = run.entrypoint is None or lowered.entrypoint == run.entrypoint
        index = _index_of(self.target, lowered)
        covered = 0
        if index is not None:
            covered = sum(
                1
                for key, s in self.source.items()
                if index.has(key) or index.open_dict_of(key) is not None or s.prefix
            )
        same_entry = int(run.config_name == lowered.config_name)
        for group in run.groups.keys() | lowered.group_choices.keys():
            theirs = run.groups.get(group)
            same_entry += 1 if theirs is not None and theirs.value == lowered.group_choices.get(group) else -1
        agree = 0
        for key, setting in finals(lowered).items():
            if setting.origin.field not in AXES:
                continue
            if key in self.source:
                agree += 1 if same(self.source[key].value, setting.value) else -1
            elif not self._verl_default(key, setting.value, index, finals(lowered)):
                agree -= 1
        return (entry, covered, same_entry, agree)

    def _entry_findings(self, combo: dict[str, str], lowered: Lowered) -> list[Diagnostic]:
        run, found = self.run, []
        where = {"file": run.file, "line": run.line}
        if run.entrypoint is not None and run.entrypoint != lowered.entrypoint:
            found.append(self._foreign_entrypoint(run.entrypoint, combo, lowered, where))
        elif run.config_name is not None and run.config_name != lowered.config_name:
            found.append(
                diag(
                    "RLC1302",
                    f"entry config {run.config_name}: rlcat's recipe for it runs {lowered.config_name}"
                    + "".join(f" with {g}={o}" for g, o in lowered.group_choices.items())
                    + f" ({', '.join(f'{k} {v}' for k, v in combo.items())}); the round trip compares "
                    "the keys",
                    severity=Severity.INFO,
                    **where,
                )
            )
        for group, setting in run.groups.items():
            if lowered.group_choices.get(group) != setting.value:
                found.append(
                    diag(
                        "RLC1302",
                        f"'{setting.text}': no axis value of a recipe selects this config-group option; "
                        f"imported with backend {combo['backend']}, the closest",
                        severity=Severity.WARNING,
                        file=run.file,
                        line=setting.line,
                        col=setting.col,
                        key=group,
                        hint="the recipe schema has no field for verl's other model engines; the keys "
                        "they alone have are left out",
                    )
                )
        return found

    def _foreign_entrypoint(
        self, entrypoint: str, combo: dict[str, str], lowered: Lowered, where: dict[str, Any]
    ) -> Diagnostic:
        """The launch runs a trainer no mode lowers to (verl's other trainers, verl-recipe's)."""
        trainers = self._mode_entrypoints()
        close = did_you_mean(entrypoint.rsplit(".", 1)[-1], [t.rsplit(".", 1)[-1] for t in trainers])
        closest = next((t for t in trainers if close and t.endswith("." + close[0])), lowered.entrypoint)
        outside = not entrypoint.startswith("verl.")
        what = (
            "is not part of the verl release (verl-recipe's trainers)" if outside else "has no mode in rlcat"
        )
        return diag(
            "RLC1302",
            f"{entrypoint} {what}: the recipe cannot name it; imported as mode {combo['mode']} "
            f"({lowered.entrypoint}), the closest core verl trainer being {closest}",
            severity=Severity.WARNING,
            key=entrypoint,
            hint="the recipe schema has no entrypoint field; what that trainer alone reads is compared "
            "against " + lowered.config_name + "'s key index",
            **where,
        )

    def _mode_entrypoints(self) -> list[str]:
        seen: dict[str, None] = {}
        for mode in AXIS_CHOICES["mode"]:
            combo = {a: v[0] for a, v in AXIS_CHOICES.items()} | {"mode": mode}
            draft = self.base(combo)
            lowered = self.trial.lower(draft) if draft is not None else None
            if lowered is not None:
                seen[lowered.entrypoint] = None
        return list(seen)

    def base(self, combo: dict[str, str]) -> Draft | None:
        """The smallest valid draft with these axes (`minimal_draft`), the caller's to change."""
        draft = minimal_draft(tuple(combo.items()))
        return draft.copy() if draft is not None else None

    # --- the fields ----------------------------------------------------------------------------

    def search(self, draft: Draft) -> tuple[Draft, Evaluation]:
        self.probes = probe_fields(self.trial, draft)
        current = self.evaluate(draft)
        for _ in range(_SEARCH_PASSES):
            improved = False
            for found in self.probes.values():
                named = _named_by(found.leaf, current.errors)
                if not (found.own | found.moved) and not named:
                    continue
                for tried in self._tries(draft, found, named, current):
                    result = self.evaluate(tried)
                    if result.rank() > current.rank():
                        draft, current, improved = tried, result, True
            if not improved:
                break
        return self._joint(draft, current)

    def _joint(self, draft: Draft, current: Evaluation) -> tuple[Draft, Evaluation]:
        """Fields that only validate together (a GPU pool split must fit the nodes, so no one of
        them can move alone): in each section where fields own source keys still unmatched, every
        field of the section is set together to combinations of the numbers the section's keys
        hold (and their sums and products), smallest first, until the keys are matched: the
        smallest combination that reproduces the source is the likeliest reading (2 nodes of 8
        GPUs, not 8 nodes). A section whose fields set a key the source leaves alone off verl's
        default (the required GPU pools of a script that says none) is searched the same way, with
        verl's defaults of the section's keys the source leaves alone among the numbers."""
        unmatched = set(self.source) - set(current.matched)
        drifted = self.drifted(current)
        owners = {
            found.leaf.parts[:-1]
            for found in self.probes.values()
            if found.leaf.doc == "recipe" and not found.leaf.open_map and found.own & (unmatched | drifted)
        }
        for section in sorted(owners):
            probes = [
                f for f in self.probes.values() if f.leaf.doc == "recipe" and f.leaf.parts[:-1] == section
            ]
            owned = {k for f in probes for k in f.own | f.moved}
            touched = owned & set(self.source)
            keys = owned & (unmatched | drifted)
            given = [self.source[k].value for k in touched]
            if self.index is not None and owned & drifted:
                given += [self.index.default(k) for k in owned - touched if self.index.has(k)]
            numbers = sorted({v for v in given if isinstance(v, int) and not isinstance(v, bool)})
            if len(probes) < 2 or not numbers:
                continue
            pairs = list(itertools.combinations_with_replacement(numbers, 2))
            derived = [*numbers, *(a * b for a, b in pairs), *(a + b for a, b in pairs)]
            choices = [self._joint_values(draft, f.leaf, derived) for f in probes]
            if prod(len(values) for values in choices) > _JOINT_COMBINATIONS:
                continue
            defaults = [_schema_default(f.leaf) for f in probes]
            ordered = sorted(itertools.product(*choices), key=lambda c: _size(c, defaults))[:_JOINT_TRIES]
            for combination in ordered:
                tried = draft
                for found, value in zip(probes, combination, strict=True):
                    tried = tried.with_value(found.leaf, value)
                result = self.evaluate(tried)
                if result.rank() > current.rank():
                    draft, current = tried, result
                    if (keys & unmatched) <= set(current.matched) and not keys & self.drifted(current):
                        break
        return draft, current

    def carried(self, draft: Draft, lost: set[str], drifted: set[str]) -> Draft:
        """`draft` with the recipe fields that own a lost source key set to the source's value, and
        those that own a drifted key (set off verl's default where the source leaves it alone)
        set to verl's default, wherever that gives verl the value again: a built-in model entry
        stands in for the source's local checkpoint when the recipe's own model path field
        carries the path, and its trust_remote_code when the recipe's field turns it off."""
        wanted = {key: self.source[key].value for key in lost}
        if self.index is not None:
            wanted |= {key: self.index.default(key) for key in drifted if self.index.has(key)}
        for key, value in sorted(wanted.items()):
            for found in self.probes.values():
                if found.leaf.doc != "recipe" or found.leaf.open_map or key not in found.own:
                    continue
                tries = [draft.with_value(found.leaf, typed) for typed in _as_field_value(found.leaf, value)]
                fixed = next((t for t in tries if self._gives(t, key, value)), None)
                if fixed is not None:
                    draft = fixed
                    break
        return draft

    def _gives(self, draft: Draft, key: str, value: Any) -> bool:
        result = self.evaluate(draft)
        if key in self.source:
            return key in result.matched
        setting = finals(result.lowered).get(key) if result.lowered is not None else None
        return setting is not None and same(value, setting.value)

    def drifted(self, result: Evaluation) -> set[str]:
        """Keys the source leaves alone that the draft's lowering sets off verl's default."""
        if result.lowered is None:
            return set()
        return {
            key
            for key, setting in finals(result.lowered).items()
            if not ({key, *setting.alternatives} & set(self.source))
            and not self._verl_default(key, setting.value, settings=finals(result.lowered))
        }

    @staticmethod
    def _joint_values(draft: Draft, leaf: Leaf, derived: list[int]) -> list[Any]:
        values = [draft.get(leaf)]
        for value in derived:
            for typed in _as_field_value(leaf, value):
                if not any(_identical(typed, seen) for seen in values):
                    values.append(typed)
        return values

    def _tries(self, draft: Draft, found: Probe, named: bool, current: Evaluation) -> Iterator[Draft]:
        """Drafts with the field at each candidate value; a field read only with a companion that
        is unset is tried with the companion's candidates too (the pairs)."""
        values = self.candidates(found, named, current)
        partner = found.companion
        if partner is None or draft.get(partner) is not UNSET:
            for value in values:
                yield draft.with_value(found.leaf, value)
            return
        theirs = self.probes.get(partner.path)
        others = self.candidates(theirs, named, current) if theirs is not None else []
        for value in values:
            for other in others:
                yield draft.with_value(found.leaf, value).with_value(partner, other)

    def candidates(self, found: Probe, named: bool, current: Evaluation) -> list[Any]:
        """Values worth trying for a field: what the source gives the keys it touches (and verl's
        defaults of those keys), in the field's types; for a field whose value is not passed on as
        it is (a GPU pool size), sums and products of those numbers too."""
        leaf = found.leaf
        keys = found.own | found.moved
        if leaf.open_map:
            return [self._open_map(found.prefix)] if found.prefix else []
        # the source's keys the field's keys stand for in other releases count as its own
        alternatives = {a for k, s in current.finals.items() if k in keys for a in s.alternatives}
        given = [s.value for k, s in self.source.items() if k in keys or k in alternatives]
        if named:  # a finding names the field: numbers its section's keys are set to may fix it
            given += [s.value for k, s in self.source.items() if _section_key(k, found, current)]
        defaults = []
        if self.index is not None:
            defaults = [self.index.default(k) for k in found.own if self.index.has(k)]
        numbers = [v for v in given if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if (not found.identity or named) and len(numbers) > 1:
            pairs = list(itertools.combinations(sorted(set(numbers)), 2))
            given += [a * b for a, b in pairs] + [a + b for a, b in pairs]
            given += [2 * n for n in set(numbers)]
        options = [v for v in probe_values(leaf) if isinstance(v, bool) or _literal(leaf, v)]
        out: list[Any] = []
        for value in [*given, *defaults, *options]:
            for typed in _as_field_value(leaf, value):
                if not any(_identical(typed, seen) for seen in out):
                    out.append(typed)
        if not leaf.required:
            out.append(UNSET)
        return out

    def _open_map(self, prefix: str | None) -> dict[str, Any]:
        mapping: dict[str, Any] = {}
        for key, setting in self.source.items():
            if prefix and key.startswith(prefix + "."):
                node = mapping
                *parents, last = key[len(prefix) + 1 :].split(".")
                for part in parents:
                    child = node.setdefault(part, {})
                    if not isinstance(child, dict):
                        break
                    node = child
                else:
                    node[last] = setting.value
        return mapping

    def _never_read(self, key: str, lowered: Lowered) -> bool:
        """The lowered entrypoint of the target release never reads `key` (RLC802's table)."""
        return unread(key, lowered.entrypoint, self.target.profile.verl_index) is not None

    # --- the rest: overrides and what is left out ----------------------------------------------

    def solve(self) -> Solution:
        combo, draft, findings = self.choose_axes()
        draft, result = self.search(draft)
        assert self.index is not None and result.lowered is not None
        draft, result = self._refused_types(draft, result)
        lowered = result.lowered
        if lowered is None:  # the search only keeps drafts that validate
            raise RlcatError([diag("RLC1301", "no recipe of rlcat's schema reproduces this source")])
        index = self.index
        overrides: dict[str, SourceSetting] = dict(self.kept_groups)
        left_out: dict[str, str] = {}
        adjusted: dict[str, str] = {}
        migrated: dict[str, str] = {}
        renames: dict[str, str] = {}
        for key, setting in self.run.settings.items():
            adjustment = self._prefix_adjustment(setting, index)
            if adjustment is not None:
                adjusted[key] = adjustment[0]
                findings.append(adjustment[1])
            never_read = unread(key, lowered.entrypoint, index.verl_version)
            if key in result.matched:
                if never_read is not None and never_read.home is not None:  # a typed field moved it
                    migrated[key] = never_read.home
                    findings.append(self._migrated_finding(setting, never_read.home, lowered.entrypoint))
                continue
            moved = renamed(key, index) if setting.prefix != "~" and never_read is None else None
            move = self._move(setting, never_read, moved, lowered.entrypoint)
            if move is not None:
                overrides[written_name(move[0], index)] = setting
                migrated[key] = move[0]
                if moved is not None:
                    renames[key] = moved.rename.why()
                findings.append(move[1])
                continue
            if never_read is not None:
                left_out[key] = self._never_read_reason(never_read.home, lowered.entrypoint, index)
                hint = "the recipe carries it as a comment, as the run it came from ignored it" + (
                    f"; `rlcat import --migrate` moves it to {never_read.home} (it then takes effect)"
                    if never_read.home
                    else ""
                )
                findings.append(self._left_out_finding(setting, left_out[key], hint))
                continue
            why = self._left_out(setting, index)
            if why is not None:
                left_out[key] = (
                    why if moved is None else f"{why}; verl {moved.rename.since} renamed it {moved.new}"
                )
                findings.append(self._left_out_finding(setting, left_out[key], *_migrate_hint(moved)))
                continue
            prefix = "" if key in adjusted else setting.prefix
            overrides[prefix + key] = setting
        for group, setting in self.run.groups.items():
            if lowered.group_choices.get(group) != setting.value:
                left_out[group] = f"config-group choice {setting.value}: no axis value selects it"
        draft.recipe["overrides"] = {
            k: with_live_interpolations(s.value, RequestedInterpolation) for k, s in overrides.items()
        }
        typed = dict(result.matched)
        unasked = {
            key: (setting, self._verl_default(key, setting.value, settings=finals(lowered)))
            for key, setting in finals(lowered).items()
            if not ({key, *setting.alternatives} & self.run.settings.keys())
        }
        return Solution(
            draft,
            combo,
            index,
            lowered.entrypoint,
            lowered.config_name,
            dict(lowered.group_choices),
            typed,
            overrides,
            left_out,
            findings,
            unasked,
            adjusted,
            migrated,
            self.refused_at_start,
            self.unread_here,
            renames,
        )

    def _refused_types(self, draft: Draft, result: Evaluation) -> tuple[Draft, Evaluation]:
        """Fields whose value the compile's key check would refuse (a text where verl holds a
        number) are unset again: the source setting then goes the way of any other."""
        index = self.index
        assert index is not None
        by_path = {p.leaf.path: p.leaf for p in self.probes.values()}
        for key, setting in result.matched.items():
            name = index.name_of(key, setting.alternatives)
            leaf = by_path.get(str(setting.origin.field))
            if name is None or leaf is None or type_matches(index.type_of(name), setting.value, name):
                continue
            draft = draft.with_value(leaf, UNSET)
        return draft, self.evaluate(draft)

    def _left_out(self, setting: SourceSetting, index: KeyIndex) -> str | None:
        """Why a source setting no typed field carries cannot go into `overrides:` either."""
        key, release = setting.key, f"verl {index.verl_version}'s {index.config_name}"
        if setting.prefix == "~":
            return "a deletion (~key) has no form in a recipe"
        if key.split(".", 1)[0] == "hydra":
            return "Hydra's own setting, not verl's config: rlcat's entry config finds its defaults itself"
        if not index.has(key) and index.open_dict_of(key) is None:
            if not setting.prefix:
                return f"{release} has no such key (Hydra would refuse it)"
            built_as = dataclass_holding(index, key) if setting.prefix == "+" else None
            if built_as is not None:
                self.refused_at_start[key] = f"verl builds {built_as[0]} as a dataclass with no such field"
                return (
                    f"{release} builds {built_as[0]} as a dataclass ({built_as[1]}), which has no such "
                    "field (RLC409: verl would refuse it at start-up)"
                )
            holders = _releases_with(key, index)
            if holders:
                self.unread_here[key] = f"{release} has no such key ({', '.join(holders)} had it)"
                return f"{release} has no such key ({', '.join(holders)} had it): verl never reads it here"
        try:
            check_renderable(setting.value)
        except UnrenderableValue as exc:
            return f"rlcat cannot write this value in Hydra's override grammar ({exc})"
        if index.has(key) and not type_matches(index.type_of(key), setting.value, key):
            return (
                f"{release} holds a {index.type_of(key)} there and rlcat's key check refuses a "
                f"{type(setting.value).__name__} (RLC402)"
            )
        return None

    def _prefix_adjustment(self, setting: SourceSetting, index: KeyIndex) -> tuple[str, Diagnostic] | None:
        """The `+`/`++` a source setting needs changed for Hydra to take it on this release: the
        reason, and the finding that says so; None when it stands as written."""
        key = setting.key
        if setting.prefix == "+" and index.has(key):
            reason = "written without the `+`, which Hydra refuses on a key the config has"
            message = (
                f"'{setting.text}': verl {index.verl_version} has this key, so Hydra would refuse "
                "the `+` (Could not append); imported without it"
            )
        elif not setting.prefix and not index.has(key) and index.open_dict_of(key) is not None:
            reason = "written with `++`: Hydra refuses a key inside an open dict without it"
            message = (
                f"'{setting.text}': a new key inside {index.open_dict_of(key)}, which Hydra "
                "refuses without `+` or `++` (Could not override); rlcat writes it with `++`"
            )
        else:
            return None
        finding = diag(
            "RLC1303",
            message,
            severity=Severity.WARNING,
            file=self.run.file,
            line=setting.line,
            col=setting.col,
            key=key,
        )
        return reason, finding

    def _never_read_reason(self, home: str | None, entrypoint: str, index: KeyIndex) -> str:
        moved = f"--migrate moves it to {home}, which changes the run" if home else "it has no new home"
        return (
            f"verl {index.verl_version}'s {entrypoint} never reads it (RLC802): the run ignored it ({moved})"
        )

    def _migrated_finding(self, setting: SourceSetting, home: str, entrypoint: str) -> Diagnostic:
        return diag(
            "RLC1308",
            f"'{setting.text}' is moved to {home}, where verl's own migration puts it: "
            f"{entrypoint} of verl {self.target.profile.verl_index} does not run that migration, so the "
            "setting takes effect in the recipe where upstream's run ignored it",
            file=self.run.file,
            line=setting.line,
            col=setting.col,
            key=setting.key,
            hint="without --migrate the import leaves it out, as the source's run did",
        )

    def _move(
        self, setting: SourceSetting, never_read: Unread | None, moved: Moved | None, entrypoint: str
    ) -> tuple[str, Diagnostic] | None:
        """With --migrate, where a source key goes (the new name, and the finding that says so):
        a key the entrypoint never reads where verl's own migration puts it, a key the release
        renamed under its new name; None for any other key, or without --migrate."""
        if not self.migrate:
            return None
        if never_read is not None and never_read.home is not None:
            return never_read.home, self._migrated_finding(setting, never_read.home, entrypoint)
        if moved is not None:
            return moved.new, self._renamed_finding(setting, moved)
        return None

    def _renamed_finding(self, setting: SourceSetting, moved: Moved) -> Diagnostic:
        return diag(
            "RLC1308",
            f"'{setting.text}' is rewritten as {moved.new}, its name in verl "
            f"{self.target.profile.verl_index}: {moved.rename.why()}",
            file=self.run.file,
            line=setting.line,
            col=setting.col,
            key=setting.key,
            hint="the value is unchanged; without --migrate the import leaves it out, as Hydra would "
            "refuse the old name on this release",
        )

    def _left_out_finding(
        self,
        setting: SourceSetting,
        why: str,
        hint: str = "the recipe carries it as a comment; Hydra would refuse it on this release",
    ) -> Diagnostic:
        return diag(
            "RLC1303",
            f"'{setting.text}' is left out of the recipe: {why}",
            file=self.run.file,
            line=setting.line,
            col=setting.col,
            key=setting.key,
            hint=hint,
        )


def written_name(key: str, index: KeyIndex) -> str:
    """`key` with the prefix Hydra takes for it on the release: none where the release has the
    key, `++` inside an open dict, else `+`."""
    return key if index.has(key) else f"++{key}" if index.open_dict_of(key) else f"+{key}"


def _migrate_hint(moved: Moved | None) -> list[str]:
    """The hint of a left-out key the release renamed: --migrate rewrites it."""
    if moved is None:
        return []
    return [f"`rlcat import --migrate` rewrites it to {moved.new}: {moved.rename.why()}"]


def _referenced(default: Any) -> str | None:
    """The key a default that is only `${absolute.key}` (or `${oc.select:absolute.key,...}`, which
    gives that key's value wherever the key exists) refers to."""
    if isinstance(default, str) and default.startswith("${") and default.endswith("}"):
        inner = default[2:-1]
        if inner.startswith("oc.select:"):
            inner = inner[len("oc.select:") :].split(",", 1)[0]
        if inner and not inner.startswith(".") and all(c.isalnum() or c in "_." for c in inner):
            return inner
    return None


def _releases_with(key: str, index: KeyIndex) -> list[str]:
    """The other releases whose same entry config has `key`."""
    holders = []
    for version in available_versions():
        if version == index.verl_version:
            continue
        try:
            other = load_index(version, index.config_name, index.group_overrides)
        except RlcatError:
            continue
        if other.has(key):
            holders.append(version)
    return holders


def _index_of(target: Target, lowered: Lowered) -> KeyIndex | None:
    groups = tuple(f"{g}={o}" for g, o in lowered.group_choices.items())
    try:
        return load_index(target.profile.verl_index, lowered.config_name, groups)
    except RlcatError:
        return None


def _size(combination: tuple[Any, ...], defaults: list[Any]) -> int:
    """How large a combination of field values is: the sum of its numbers (an unset field counts
    as the schema's default for it)."""
    values = [d if v is UNSET else v for v, d in zip(combination, defaults, strict=True)]
    return sum(v for v in values if isinstance(v, int) and not isinstance(v, bool))


def _schema_default(leaf: Leaf) -> Any:
    """The default the recipe schema gives a field when it is left out (None when it has none)."""
    model: Any = Recipe
    info = None
    for part in leaf.parts:
        fields = {i.alias or n: i for n, i in model.model_fields.items()} if model is not None else {}
        info = fields.get(part)
        if info is None:
            return None
        inner = value_type(info.annotation)
        model = inner if isinstance(inner, type) and issubclass(inner, BaseModel) else None
    return None if info is None or info.is_required() else info.get_default(call_default_factory=True)


@functools.cache
def minimal_draft(combo: tuple[tuple[str, str], ...]) -> Draft | None:
    """The smallest valid draft with these axes: every required field at a probe value (the search
    replaces them), optional sections added only when the schema asks for one. It depends on the
    schema alone, so a process makes it once per combination (callers change copies of it)."""
    recipe = {"name": ENTRY_NAME, "summary": ENTRY_NAME, **dict(combo), "model": ENTRY_NAME}
    draft = Draft(
        {**recipe, "dataset": ENTRY_NAME},
        {"name": ENTRY_NAME},
        {"name": ENTRY_NAME},
    )
    every = all_leaves()
    for leaf in every:
        if leaf.required:
            draft = _fill(draft, leaf)
    if validate(draft) is not None:
        return draft
    sections = sorted({leaf.parts[:1] for leaf in every if leaf.doc == "recipe" and not leaf.required})
    for section in sections:
        tried = draft
        for leaf in every:
            if leaf.doc == "recipe" and not leaf.required and leaf.needed_below(section):
                tried = _fill(tried, leaf)
        if validate(tried) is not None:
            return tried
    return None


def _fill(draft: Draft, leaf: Leaf) -> Draft:
    """The draft with `leaf` at the first probe value the schema accepts (else the first one)."""
    values = probe_values(leaf)
    for value in values:
        tried = draft.with_value(leaf, value)
        if validate(tried) is not None:
            return tried
    return draft.with_value(leaf, values[0]) if values else draft


def _named_by(leaf: Leaf, errors: Iterable[Diagnostic]) -> bool:
    path = ".".join(leaf.parts)
    return leaf.doc == "recipe" and any(
        d.key and (path == d.key or path.startswith(d.key + ".")) for d in errors
    )


def _section_key(key: str, found: Probe, current: Evaluation) -> bool:
    """Is `key` set by a field in the same section as `found`'s field (its siblings)?"""
    section = found.leaf.parts[:-1]
    setting = current.finals.get(key)
    origin = setting.origin.field if setting is not None else None
    return bool(origin) and tuple(str(origin).split(".")[: len(section)]) == section


def _literal(leaf: Leaf, value: Any) -> bool:
    return any(
        typing.get_origin(kind) is Literal and value in typing.get_args(kind)
        for kind in base_types(leaf.annotation)
    )


def _as_field_value(leaf: Leaf, value: Any) -> list[Any]:
    """`value` in the types the field takes (an integral float for an int field, one item for a
    list field); nothing when it fits none of them."""
    out: list[Any] = []
    for kind in base_types(leaf.annotation):
        origin = typing.get_origin(kind)
        if origin is Literal:
            if value in typing.get_args(kind) and not isinstance(value, bool):
                out.append(value)
        elif origin is list:
            items = value if isinstance(value, list) else [value]
            inner = base_types(typing.get_args(kind)[0])[0]
            if all(_fits(inner, v) for v in items):
                out.append(list(items))
        elif _fits(kind, value):
            out.append(int(value) if kind is int else value)
    return out


def _fits(kind: Any, value: Any) -> bool:
    if kind is bool:
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    if kind is int:
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if kind is float:
        return isinstance(value, (int, float))
    if kind is str:
        return isinstance(value, str)
    return False


def _identical(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b

"""Known-issue guards: run every registered guard that applies, return the fixes, report findings.

Families (one folder each): RLC5xx platform known issues, RLC6xx model known issues, RLC7xx
configuration invariants, RLC8xx differences between verl releases, RLC9xx security (what a pull
request could make a launch run). A guard is one module in its
family's folder; every module there is imported below, which registers its guard.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from rlcat.catalog import is_builtin_file, origin_note
from rlcat.diagnostics import Diagnostic, Note, RlcatError, Severity, diag, suggestion_hint
from rlcat.guards.base import REGISTRY, Affects, Allowance, Context, Finding, Guard, Reader, hint_for
from rlcat.model.plan import REMOVED, Layer, Origin, Setting
from rlcat.syntax.hydra_value import render_or_repr

for _module in pkgutil.walk_packages(__path__, prefix=f"{__name__}."):
    importlib.import_module(_module.name)

__all__ = [
    "REGISTRY",
    "Affects",
    "Allowance",
    "Context",
    "Finding",
    "Guard",
    "GuardReport",
    "find_guard",
    "run_guards",
]


@dataclass
class GuardReport:
    """What the guards found, and the fixes the pipeline applies: (setting, is_env) in guard order."""

    diagnostics: list[Diagnostic] = field(default_factory=list)
    fixes: list[tuple[Setting, bool]] = field(default_factory=list)
    fired: list[str] = field(default_factory=list)  # guard ids that found something
    keys: set[str] = field(default_factory=set)  # keys a guard reported (the key check skips them)
    read: set[str] = field(default_factory=set)  # keys of the plan a guard looked at (lint: RLC1102)


def run_guards(
    ctx: Context,
    allow: Mapping[str, Allowance],
    recipe_file: str | None,
    ancestors: Collection[str] = (),
    *,
    skip: Collection[str] = (),
    apply_fixes: bool = True,
    reader: Reader = "recipe",
) -> GuardReport:
    """Run the guards that apply to this recipe and platform, every one on the same plan.

    A finding with a fix returns the fix, with the guard as its origin, and is reported at info
    level; one without a fix is reported at the guard's severity. Guards the recipe allows are
    skipped (the recipe's `allow:` or the project file's), and allowing an error-level guard is itself
    reported as a warning where it was allowed. A finding about a
    value set in one of the recipe's `ancestors` is reported at the recipe's own setting that the
    guard looked at last (the one that changes the outcome, such as the prompt length it sets),
    with the inherited origin as a note; without one, compile_request puts it on `extends:`.

    `skip`: guards not run at all (those that cannot judge the plan, as `rlcat lint` says for a
    script). `apply_fixes=False`: nothing will apply the fixes (a script is checked, not rewritten),
    so a finding with a fix is reported at the guard's severity and no fix is returned.
    `reader`: who reads the findings; a hint that names settings names recipe fields for a recipe
    and verl keys for a launch script (`rlcat lint`).
    """
    report = GuardReport()
    for guard_id in sorted(REGISTRY):
        cls = REGISTRY[guard_id]
        if guard_id in skip or not cls.affects.matches(ctx.recipe, ctx.profile):
            continue
        # a security finding stays visible (a warning, so `validate --strict` fails on it) even when
        # the recipe allows it: the recipe under review must not be able to hide it
        allowance = allow.get(guard_id)
        allowed = allowance if is_security_guard(guard_id) else None
        if allowance is not None and allowed is None:
            if cls.severity >= Severity.ERROR:
                report.diagnostics.append(
                    diag(
                        guard_id,
                        f"error-level guard {cls.name} is silenced by {allowance.by}: {allowance.reason}",
                        severity=Severity.WARNING,
                        file=allowance.file,
                        line=allowance.line,
                        key=allowance.key,
                    )
                )
            continue
        seen = replace(ctx, reads=[])  # the settings this guard looks at, finding by finding
        for finding in cls().check(seen):
            report.fired.append(guard_id)
            if finding.key:
                report.keys.add(finding.key)
            origin = Origin(Layer.GUARD, f"guard {guard_id} {cls.name}", reason=cls.title)
            # point at whoever set the key or variable: a file position, or the command-line argument
            lookup = replace(ctx, reads=[])
            if finding.key:
                setter = lookup.setter(finding.key)
            else:
                setter = lookup.env_setter(finding.env) if finding.env else None
            o = setter.origin if setter is not None else None
            fixed = apply_fixes and bool(finding.fix or finding.fix_env)
            if fixed:
                report.fixes += [(Setting(key, value, origin), False) for key, value in finding.fix.items()]
                report.fixes += [(Setting(n, value, origin), True) for n, value in finding.fix_env.items()]
            removes = any(v is REMOVED for v in finding.fix.values())
            found = diag(
                guard_id,
                finding.message
                + (" (fixed)" if fixed and not removes else "")
                + (f" (allowed by {allowed.by}: {allowed.reason})" if allowed is not None else ""),
                severity=Severity.INFO if fixed else cls.severity,
                file=o.file if o and o.file else (None if o and o.argument() else recipe_file),
                line=o.line if o else None,
                col=o.col if o else None,
                key=finding.key or (f"env.{finding.env}" if finding.env else None),
                hint=hint_for(finding.hint, reader) or (None if apply_fixes else _fix_hint(finding)),
                argument=o.argument() if o else None,
            )
            if o is not None and o.file in ancestors:
                found = _at_own_setting(found, o, seen.reads, recipe_file)
            if o is None or o.argument() is None:
                found = _at_command_line(found, o, seen.reads)
            report.diagnostics.append(found)
        report.read.update(setting.key for setting in seen.reads)
    return report


def _fix_hint(finding: Finding) -> str | None:
    """The guard's fix, said as what to set, where nothing applies it (apply_fixes=False)."""
    fixes = [f"{key}={render_or_repr(value)}" for key, value in finding.fix.items()]
    fixes += [f"{name}={value} in the environment" for name, value in finding.fix_env.items()]
    return "set " + " and ".join(fixes) if fixes else None


def _at_own_setting(
    found: Diagnostic, inherited: Origin, reads: list[Setting], recipe_file: str | None
) -> Diagnostic:
    """A finding about an inherited value, at the last setting of the recipe file itself that the
    guard read on the way to it (unchanged when it read none)."""
    own = [s.origin for s in reads if s.origin.file is not None and s.origin.file == recipe_file]
    if not own or inherited.file is None:
        return found
    return found.moved(own[-1].position(), origin_note(inherited.file, inherited.line, inherited.col))


def _at_command_line(found: Diagnostic, origin: Origin | None, reads: list[Setting]) -> Diagnostic:
    """A finding about a value a file (or verl's default) holds, at the last command-line argument
    the guard read on the way to it: the value the user just changed is what made it a problem (a
    recipe's TP that no longer divides `--override trainer.n_gpus_per_node=2`). Where the value
    itself is set stays as a note (unchanged when the guard read no argument)."""
    typed = [s.origin for s in reads if s.origin.argument() is not None]
    if not typed:
        return found
    to = typed[-1].position()
    if origin is None:
        return found.moved(to, Note(f"{found.key}: verl's default"))
    if origin.file is None:
        return found.moved(to, Note(f"{found.key} is set by {origin.where()}"))
    if found.file != origin.file or found.line != origin.line:
        return found.moved(to, None)  # _at_own_setting moved it, with its note
    if is_builtin_file(origin.file):  # named in words: the user's repository has no such file
        text = f"{found.key} is set in {Path(origin.file).stem}, built-in, line {origin.line}"
        return found.moved(to, Note(text))
    text = f"{found.key} is set in {origin.file}, line {origin.line}"
    return found.moved(to, Note(text, origin.file, origin.line, origin.col))


def is_security_guard(guard_id: str) -> bool:
    """RLC9xx: what a pull request could make a launch run."""
    return guard_id.startswith("RLC9")


def find_guard(id_or_name: str) -> type[Guard]:
    """A guard by id (any case) or name, or a diagnostic with the close ones."""
    by_name = {g.name: g for g in REGISTRY.values()}
    found = REGISTRY.get(id_or_name.upper()) or by_name.get(id_or_name)
    if found is None:
        raise RlcatError(
            [
                diag(
                    "RLC202",
                    f"unknown guard '{id_or_name}'",
                    hint=suggestion_hint(id_or_name, [*REGISTRY, *by_name]),
                )
            ]
        )
    return found

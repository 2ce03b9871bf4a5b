"""Known-issue guards: run every registered guard that applies, return the fixes, report findings.

Families (one folder each): RLC5xx platform known issues, RLC6xx model known issues, RLC7xx
configuration invariants, RLC8xx differences between verl releases, RLC9xx security (what a pull
request could make a launch run). A guard is one module in its
family's folder; every module there is imported below, which registers its guard.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field

from rlcat.diagnostics import Diagnostic, RlcatError, Severity, diag, suggestion_hint
from rlcat.guards.base import REGISTRY, Affects, Context, Finding, Guard
from rlcat.pipeline.plan import REMOVED, Layer, Origin, Setting

for _module in pkgutil.walk_packages(__path__, prefix=f"{__name__}."):
    importlib.import_module(_module.name)

__all__ = ["REGISTRY", "Affects", "Context", "Finding", "Guard", "GuardReport", "find_guard", "run_guards"]


@dataclass
class GuardReport:
    """What the guards found, and the fixes the pipeline applies: (setting, is_env) in guard order."""

    diagnostics: list[Diagnostic] = field(default_factory=list)
    fixes: list[tuple[Setting, bool]] = field(default_factory=list)
    fired: list[str] = field(default_factory=list)  # guard ids that found something
    keys: set[str] = field(default_factory=set)  # keys a guard reported (the key check skips them)


def run_guards(ctx: Context, allow: dict[str, str], recipe_file: str | None) -> GuardReport:
    """Run the guards that apply to this recipe and platform, every one on the same plan.

    A finding with a fix returns the fix, with the guard as its origin, and is reported at info
    level; one without a fix is reported at the guard's severity. Guards the recipe allows are
    skipped, and allowing an error-level guard is itself reported as a warning.
    """
    report = GuardReport()
    for guard_id in sorted(REGISTRY):
        cls = REGISTRY[guard_id]
        if not cls.affects.matches(ctx.recipe, ctx.profile):
            continue
        # a security finding stays visible (a warning, so `validate --strict` fails on it) even when
        # the recipe allows it: the recipe under review must not be able to hide it
        allowed = allow.get(guard_id) if is_security_guard(guard_id) else None
        if guard_id in allow and allowed is None:
            if cls.severity >= Severity.ERROR:
                report.diagnostics.append(
                    diag(
                        guard_id,
                        f"error-level guard {cls.name} is silenced by the recipe: {allow[guard_id]}",
                        severity=Severity.WARNING,
                        file=recipe_file,
                        key=f"allow.{guard_id}",
                    )
                )
            continue
        for finding in cls().check(ctx):
            report.fired.append(guard_id)
            if finding.key:
                report.keys.add(finding.key)
            origin = Origin(Layer.GUARD, f"guard {guard_id} {cls.name}", reason=cls.title)
            # point at whoever set the key or variable: a file position, or the command-line argument
            if finding.key:
                setter = ctx.setter(finding.key)
            else:
                setter = ctx.env_setter(finding.env) if finding.env else None
            o = setter.origin if setter is not None else None
            report.fixes += [(Setting(key, value, origin), False) for key, value in finding.fix.items()]
            report.fixes += [(Setting(name, value, origin), True) for name, value in finding.fix_env.items()]
            fixed = bool(finding.fix or finding.fix_env)
            removes = any(v is REMOVED for v in finding.fix.values())
            report.diagnostics.append(
                diag(
                    guard_id,
                    finding.message
                    + (" (fixed)" if fixed and not removes else "")
                    + (f" (allowed by the recipe: {allowed})" if allowed is not None else ""),
                    severity=Severity.INFO if fixed else cls.severity,
                    file=o.file if o and o.file else (None if o and o.argument() else recipe_file),
                    line=o.line if o else None,
                    col=o.col if o else None,
                    key=finding.key or (f"env.{finding.env}" if finding.env else None),
                    hint=finding.hint,
                    argument=o.argument() if o else None,
                )
            )
    return report


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

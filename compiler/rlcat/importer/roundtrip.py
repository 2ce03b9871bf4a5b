"""The proof an import gives: the written recipe compiled for the platform, and the plan compared
with the source on every key the source sets, every variable it exports and its entry.

A difference is explained when the import or the compile said why (a key the release lacks, a
setting no recipe can say, a guard's fix, the platform profile, a value only running the script
would tell); anything else is unexplained, and `rlcat import` exits 1.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from rlcat.catalog import Catalog
from rlcat.compile.assemble import Compiled, Request, compile_request
from rlcat.diagnostics import Diagnostic, ExitCode, RlcatError, Severity, is_guard_code
from rlcat.guards import Allowance
from rlcat.importer.compare import as_launched, same
from rlcat.importer.solve import Solution
from rlcat.importer.source import SourceRun, SourceSetting
from rlcat.model.plan import Layer
from rlcat.syntax.hydra_value import Interpolation, render_or_repr


@dataclass(frozen=True)
class Line:
    """One compared item: a verl key, an environment variable or the entry."""

    what: str  # `trainer.nnodes`, `env VLLM_USE_V1`, `entry`
    same: bool
    source: str  # the source's value, as written
    ours: str  # the recipe's, as verl receives it
    reason: str = ""  # why it differs (empty: unexplained) or how it is carried
    line: int | None = None
    as_key: str | None = None  # the target release's name for the key, where it has another one

    @property
    def unexplained(self) -> bool:
        return not self.same and not self.reason


@dataclass
class Report:
    lines: list[Line] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    compiled: Compiled | None = None
    findings: list[Diagnostic] = field(default_factory=list)  # guard errors the recipe has

    @property
    def unexplained(self) -> list[Line]:
        return [line for line in self.lines if line.unexplained]

    @property
    def ok(self) -> bool:
        return self.compiled is not None and not self.unexplained and not self.findings


def prove(recipe: Path, catalog: Catalog, platform: str, run: SourceRun, solution: Solution) -> Report:
    """Compile `recipe` for `platform` and compare the plan with the source."""
    report = Report()
    request = Request(str(recipe), platform)
    try:
        compiled = compile_request(request, catalog)
    except RlcatError as exc:
        guard_errors = [d for d in exc.diagnostics if d.severity >= Severity.ERROR and is_guard_code(d.code)]
        if exc.exit_code != ExitCode.FINDINGS or not guard_errors:
            report.diagnostics = exc.diagnostics
            return report
        # the recipe has findings (the source has them too): compare the plan the guards judged
        report.findings = guard_errors
        allow = {d.code: Allowance("compared by rlcat import", "rlcat import") for d in guard_errors}
        request.allow = allow
        request.allow_known_broken = True
        try:
            compiled = compile_request(request, catalog)
        except RlcatError as again:
            report.diagnostics = again.diagnostics
            return report
    report.compiled = compiled
    report.diagnostics = [
        d
        for d in compiled.diagnostics
        if d.severity >= Severity.WARNING and not (report.findings and d.code in request.allow)
    ]
    _compare_entry(report, compiled, run)
    _compare_keys(report, compiled, run, solution)
    _compare_env(report, compiled, run)
    return report


def _compare_entry(report: Report, compiled: Compiled, run: SourceRun) -> None:
    plan = compiled.plan
    ours = (
        plan.entrypoint + " " + plan.config_name + "".join(f" {g}={o}" for g, o in plan.group_choices.items())
    )
    config = run.config_name or "its default config"
    theirs = f"{run.entrypoint or '(not known)'} {config}" + "".join(
        f" {g}={s.value}" for g, s in run.groups.items()
    )
    same_entry = theirs == ours
    reason = "" if same_entry else "no recipe axis selects the source's entry: the keys are compared"
    report.lines.append(Line("entry", same_entry, theirs, ours, reason, run.line))


def _compare_keys(report: Report, compiled: Compiled, run: SourceRun, solution: Solution) -> None:
    ours = {o.key: o for o in compiled.overrides}
    by_alternative = {alt: o for o in compiled.overrides for alt in o.setting.alternatives}
    dropped = {s.key for s in compiled.dropped}
    history = compiled.plan.overrides
    for key, setting in run.settings.items():
        source_text = setting.text.partition("=")[2] if setting.prefix != "~" else "(deleted)"
        found = ours.get(key) or by_alternative.get(key) or ours.get(solution.migrated.get(key, ""))
        if key in solution.left_out:
            report.lines.append(
                Line(key, False, source_text, "(left out)", solution.left_out[key], setting.line)
            )
            continue
        if found is None and setting.value is None:
            report.lines.append(_null_line(key, source_text, solution, setting.line))
            continue
        if found is None:
            why = (
                f"verl {compiled.profile.verl_version} has no such key: left out by the compile"
                if key in dropped
                else ""
            )
            report.lines.append(Line(key, False, source_text, "(not set)", why, setting.line))
            continue
        value = found.setting.value
        shown = render_or_repr(as_launched(value))
        if key in solution.renamed and same(setting.value, value):
            why = f"overrides as {found.key}: renamed (--migrate)"
            report.lines.append(Line(key, True, source_text, shown, why, setting.line, found.key))
            continue
        if key in solution.migrated and same(setting.value, value):
            why = f"moved to {solution.migrated[key]} (--migrate): it takes effect; in the source it did not"
            report.lines.append(Line(key, False, source_text, shown, why, setting.line, found.key))
            continue
        if same(setting.value, value) and (setting.known or _resolved_alike(setting, value)):
            carried = "overrides" if found.setting.origin.field == "overrides" else found.setting.origin.field
            via = f" as {found.key}" if found.key != key else ""
            as_key = found.key if found.key != key else None
            report.lines.append(
                Line(key, True, source_text, shown, f"{carried or 'rlcat'}{via}", setting.line, as_key)
            )
            continue
        report.lines.append(
            Line(key, False, source_text, shown, _why(found.key, history, setting.known), setting.line)
        )
    for key, setting in run.unread.items():
        source_text = setting.text.partition("=")[2]
        found = ours.get(key) or by_alternative.get(key)
        if found is None:  # nothing in the plan sets it: verl keeps its default, as the report says
            why = "Hydra cannot read the source's value (RLC1304): not imported, verl keeps its default"
            report.lines.append(Line(key, False, source_text, "(not set)", why, setting.line))
            continue
        # the recipe gives verl a value the source never said (a required field filled by the
        # first catalog entry): unexplained, so that the import exits 1
        shown = render_or_repr(as_launched(found.setting.value))
        report.lines.append(Line(key, False, f"{source_text} (not readable)", shown, "", setting.line))


def _null_line(key: str, source_text: str, solution: Solution, line: int | None) -> Line:
    """`key=null`: rlcat writes nothing (a recipe's null keeps verl's default), which is the same
    where verl's default is null and a known limitation elsewhere."""
    index = solution.index
    default = index.default(key) if index.has(key) else "(no default)"
    if default is None:
        return Line(key, True, source_text, "(verl's default)", "verl's default is null", line)
    why = f"a recipe cannot write null: it keeps verl's default {render_or_repr(default)}"
    return Line(key, False, source_text, "(not set)", why, line)


def _resolved_alike(setting: SourceSetting, value: object) -> bool:
    """A source value only running would tell is the same as the recipe's only where the recipe
    leaves the same lookup to run time: a path from `$HOME` or `$PWD` (or `~`), which rlcat writes
    as `${oc.env:HOME}/…` for OmegaConf to resolve in the launched process, as the script's shell
    would have. Text written for `$(date)` or `$EXP_NAME` reaches verl as that text: it differs."""
    return isinstance(value, Interpolation) and set(setting.unknown) <= {"$HOME", "$PWD"}


def _why(key: str, history: dict, known: bool) -> str:  # type: ignore[type-arg]
    entries = history.get(key)
    final = entries.final if entries is not None else None
    if final is not None and final.origin.layer == Layer.GUARD:
        return f"changed by guard: {final.origin.label}"
    if final is not None and final.origin.layer == Layer.PLATFORM:
        return f"set by the platform profile: {final.origin.label}"
    if not known:
        return "only known by running the script: kept as written"
    return ""


def _compare_env(report: Report, compiled: Compiled, run: SourceRun) -> None:
    ours = compiled.env_vars
    layers = {s.key: s.origin for s in compiled.env}
    for name, value in run.env.items():
        got = ours.get(name)
        if name in run.env_unknown:  # the recipe's env holds the text as written, not what it prints
            why = "only known by running the script: kept as written"
            report.lines.append(Line(f"env {name}", False, value, got or "(not set)", why, run.line))
            continue
        if got == value:
            report.lines.append(Line(f"env {name}", True, value, got, "env", run.line))
            continue
        origin = layers.get(name)
        why = (
            f"set by the platform profile: {origin.label}"
            if origin and origin.layer == Layer.PLATFORM
            else ""
        )
        report.lines.append(Line(f"env {name}", False, value, got or "(not set)", why, run.line))


def render_report(report: Report, run: SourceRun, solution: Solution, recipe: Path) -> str:
    """The round-trip report people read: one line per compared item, then the counts."""
    out = [f"rlcat import: {run.file} -> {recipe}"]
    if report.compiled is None:
        out.append("  the recipe does not compile (see the diagnostics); nothing was compared")
        return "\n".join(out) + "\n"
    plan = report.compiled.plan
    out.append(f"  compiled for {plan.platform} (verl {plan.verl_version}); compared with the source:")
    for line in report.lines:
        status = "same   " if line.same else "differs"
        where = f"line {line.line}: " if line.line else ""
        if line.same:
            out.append(f"  {status} {where}{line.what}={line.source}  [{line.reason}]")
        else:
            reason = line.reason or "UNEXPLAINED"
            out.append(f"  {status} {where}{line.what}: source {line.source}, recipe {line.ours} ({reason})")
    out += _migrations(run, solution, plan.entrypoint, plan.verl_version)
    counts = share(run, solution)
    keys = [line for line in report.lines if line.what != "entry" and not line.what.startswith("env ")]
    out.append(
        f"  {len(keys)} keys: {sum(line.same for line in keys)} same, "
        f"{sum(not line.same and bool(line.reason) for line in keys)} differ with a reason, "
        f"{sum(line.unexplained for line in keys)} unexplained; "
        f"typed fields {counts['typed']}, overrides {counts['overrides']}, left out {counts['left_out']}"
        + (f", verl's default (null) {counts['verl_default']}" if counts["verl_default"] else "")
    )
    if report.findings:
        out.append(f"  the recipe has {len(report.findings)} guard finding(s) at error level (above)")
    return "\n".join(out) + "\n"


def _migrations(run: SourceRun, solution: Solution, entrypoint: str, release: str) -> list[str]:
    """What --migrate rewrote: each source key, its new name, the script line, and why."""
    if not solution.migrated:
        return []
    out = [f"  --migrate rewrote {len(solution.migrated)} key(s):"]
    for key, new in solution.migrated.items():
        line = run.settings[key].line
        why = solution.renamed.get(key) or (
            f"verl's own migration puts it there; {entrypoint} of verl {release} does not run it, so "
            "the setting takes effect where the source's run ignored it"
        )
        out.append(f"    {f'line {line}: ' if line else ''}{key} -> {new} ({why})")
    return out


def share(run: SourceRun, solution: Solution) -> dict[str, int]:
    """How the source's keys are carried: typed fields, `overrides:`, left out."""
    carried = [solution.typed[key] for key in run.settings if key in solution.typed]
    defaults = sum(1 for s in carried if s.origin.layer == Layer.VERL_DEFAULT)
    return {
        "typed": len(carried) - defaults,
        "verl_default": defaults,
        "overrides": len(solution.overrides),
        "left_out": len(solution.left_out),
    }

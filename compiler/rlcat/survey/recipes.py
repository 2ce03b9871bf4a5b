"""Surveys over the catalog and compiled plans: the recipe list, the difference between two plans,
and every cell of a recipe's matrix compiled. Rendering is emit's (emit/tables.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from rlcat.catalog import Catalog
from rlcat.compile.assemble import Compiled, Request, compile_request
from rlcat.diagnostics import Diagnostic, RlcatError, Severity, is_guard_code
from rlcat.lower.platform import profile_names
from rlcat.model.axes import SPLIT_MODES
from rlcat.model.plan import Plan, Setting
from rlcat.model.platform import PlatformProfile, SupportCell
from rlcat.model.recipe import Recipe
from rlcat.resolve.entries import load_platform
from rlcat.resolve.extends import load_recipe_source
from rlcat.resolve.recipe import Resolved, resolve
from rlcat.resolve.source import platform_block
from rlcat.verl.check import Override


class PlanView(Protocol):
    """What a diff compares: a compiled plan, or a run's plan read back (rlcat.runs.plan_file)."""

    @property
    def plan(self) -> Plan: ...
    @property
    def overrides(self) -> list[Override]: ...
    @property
    def env(self) -> list[Setting]: ...


def _table(c: PlanView) -> tuple[dict[str, Setting], dict[str, Setting]]:
    return {o.key: o.setting for o in c.overrides}, {s.key: s for s in c.env}


@dataclass
class Change:
    kind: str  # added | removed | changed
    table: str  # override | env | entry
    key: str
    before: Any = None
    after: Any = None
    origin_before: str = ""
    origin_after: str = ""


def diff(a: PlanView, b: PlanView) -> list[Change]:
    """Settings that differ from plan a to plan b, with the origin on each side."""
    out: list[Change] = []
    for what in ("entrypoint", "config_name", "group_choices", "verl_version"):
        va, vb = getattr(a.plan, what), getattr(b.plan, what)
        if va != vb:
            out.append(Change("changed", "entry", what, va, vb))
    for name, (ta, tb) in zip(("override", "env"), zip(_table(a), _table(b), strict=True), strict=True):
        for key in [*ta, *(k for k in tb if k not in ta)]:
            sa, sb = ta.get(key), tb.get(key)
            if sa is None and sb is not None:
                out.append(Change("added", name, key, after=sb.value, origin_after=_origin(sb)))
            elif sb is None and sa is not None:
                out.append(Change("removed", name, key, before=sa.value, origin_before=_origin(sa)))
            elif (
                sa is not None
                and sb is not None
                and (sa.value != sb.value or type(sa.value) is not type(sb.value))
            ):
                out.append(Change("changed", name, key, sa.value, sb.value, _origin(sa), _origin(sb)))
    return out


def _origin(s: Setting) -> str:
    o = s.origin
    return f"{o.layer}: {o.label}" + (
        f" ({o.file}:{o.line})" if o.file and o.line and o.file not in o.label else ""
    )


@dataclass
class CompiledCell:
    """One recipe compiled for one platform, mode, engine and backend as `rlcat compile` compiles
    it (or the reason it did not): the one compile behind `rlcat matrix` and the docs' matrix."""

    recipe: str
    platform: str
    mode: str
    engine: str
    backend: str
    compiled: Compiled | None
    diagnostics: list[Diagnostic]
    support: SupportCell | None
    # the error codes `rlcat compile` gives the cell without --allow-known-broken (none: it compiles)
    refused: list[str] = field(default_factory=list)

    @property
    def compiles(self) -> bool:
        """Whether `rlcat compile` compiles the cell: a known-broken cell is compiled here with
        --allow-known-broken, to show its plan, and still does not."""
        return not self.refused

    @property
    def status(self) -> str:
        """The platform's word on this cell: supported, untested, known-broken, or unknown."""
        return self.support.status if self.support else "unknown"

    @property
    def guards(self) -> list[Diagnostic]:
        """Guard findings (RLC5xx-9xx), in the order the compile reported them."""
        return [d for d in self.diagnostics if is_guard_code(d.code)]

    @property
    def guard_ids(self) -> list[str]:
        return sorted({d.code for d in self.guards})

    @property
    def known_issue(self) -> bool:
        """A known issue: the platform marks the cell broken, it does not compile, or a guard
        reports a warning or an error that it could not fix."""
        return (
            self.status == "known-broken"
            or not self.compiles
            or any(d.severity >= Severity.WARNING for d in self.guards)
        )


def compile_cells(
    recipe: str, resolved: Resolved, platforms: dict[str, PlatformProfile], catalog: Catalog
) -> list[CompiledCell]:
    """The recipe compiled on every platform for every mode, engine and backend it allows, each as
    `rlcat compile RECIPE --platform P [--engine E] [--mode M]` compiles it."""
    cells = []
    r = resolved.recipe
    modes, engines, backends = axis_values(r)
    for platform, profile in platforms.items():
        support: dict[tuple[str, str, str], SupportCell] = {
            (s.mode, s.engine, s.backend): s for s in profile.support
        }
        for mode in modes:
            for engine in engines:
                for backend in backends:
                    # only the axes that differ from the recipe's own go on the "command line",
                    # so the origins read as they would for someone compiling the recipe
                    req = Request(
                        recipe,
                        platform,
                        engine=None if engine == r.engine else engine,
                        mode=None if mode == r.mode else mode,
                        backend=None if backend == r.backend else backend,
                        # the docs show a known-broken cell as a known issue, with its plan
                        allow_known_broken=True,
                    )
                    compiled: Compiled | None
                    try:
                        compiled = compile_request(req, catalog)
                        diagnostics = compiled.diagnostics
                    except RlcatError as exc:
                        compiled, diagnostics = None, exc.diagnostics
                    cell = support.get((mode, engine, backend))
                    refused = _refused(compiled, diagnostics, cell, "RLC303" in r.allow)
                    cells.append(
                        CompiledCell(
                            recipe, platform, mode, engine, backend, compiled, diagnostics, cell, refused
                        )
                    )
    return cells


def _refused(
    compiled: Compiled | None, diagnostics: list[Diagnostic], support: SupportCell | None, allowed: bool
) -> list[str]:
    """The error codes of a cell compiled with --allow-known-broken as a compile without the flag
    gives them: RLC303 first where only the flag accepted a known-broken cell."""
    by_flag = support is not None and support.status == "known-broken" and not allowed
    if compiled is not None:
        return ["RLC303"] if compiled.known_broken_by_flag else []
    errors = [d.code for d in diagnostics if d.severity >= Severity.ERROR]
    return ["RLC303", *errors] if by_flag and "RLC303" not in errors else errors


@dataclass
class Cell:
    """A row of `rlcat matrix`: what compile_cells found for one cell."""

    platform: str
    mode: str
    engine: str
    backend: str
    compiles: bool
    support: str
    guards: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def status(self) -> str:
        """What the cell is for this recipe: the platform's word (`support`) where the recipe
        compiles, or where the platform marks the cell known-broken; otherwise "does not compile"
        (a cell the platform supports is not "supported" for a recipe that cannot compile there)."""
        if self.compiles or self.support == "known-broken":
            return self.support
        return "does not compile"


def axis_values(r: Recipe) -> tuple[list[str], list[str], list[str]]:
    """(modes, engines, backends) the recipe allows, its own value first."""
    modes: list[str] = [r.mode, *(m for m in r.variants.mode if m != r.mode)]
    engines: list[str] = [r.engine, *(e for e in r.variants.engine if e != r.engine)]
    backends: list[str] = [r.backend, *(b for b in r.variants.backend if b != r.backend)]
    return modes, engines, backends


def matrix(recipe: str, catalog: Catalog, platforms: list[str] | None = None) -> list[Cell]:
    """Every mode × engine × backend cell the recipe allows on every platform, from compile_cells
    (the compile the docs' matrix reads too)."""
    resolved = resolve(load_recipe_source(recipe, catalog), catalog)
    names = platforms or sorted(catalog.names("platform"))
    profiles = {name: load_platform(name, catalog)[0] for name in names}
    return [matrix_row(c) for c in compile_cells(recipe, resolved, profiles, catalog)]


def matrix_row(c: CompiledCell) -> Cell:
    """The `rlcat matrix` row of a compiled cell."""
    return Cell(c.platform, c.mode, c.engine, c.backend, c.compiles, c.status, c.guard_ids, c.refused)


def list_recipes(
    catalog: Catalog,
    *,
    algorithm: str | None = None,
    backend: str | None = None,
    engine: str | None = None,
    mode: str | None = None,
) -> list[dict[str, Any]]:
    """One row per recipe that matches the filters; a recipe matches an engine it may be compiled with."""
    rows = []
    for name in sorted(catalog.names("recipe")):
        recipe = resolve(load_recipe_source(name, catalog), catalog).recipe
        engines = sorted({recipe.engine, *recipe.variants.engine})
        if algorithm and recipe.algorithm != algorithm:
            continue
        if backend and recipe.trains_with != backend:
            continue
        if mode and recipe.mode != mode:
            continue
        if engine and engine not in engines:
            continue
        res = recipe.resources
        layout = f"{res.nodes}x{res.gpus_per_node}"
        if recipe.mode in SPLIT_MODES:
            layout += f" ({res.trainer_gpus}+{res.rollout_gpus})"
        rows.append(
            {
                "name": recipe.name,
                "algorithm": recipe.algorithm,
                "backend": recipe.trains_with,
                "engine": recipe.engine,
                "engines": engines,
                "mode": recipe.mode,
                "model": recipe.model,
                "dataset": recipe.dataset,
                "gpus": layout,
                "summary": recipe.summary,
            }
        )
    return rows


def resolve_recipe(ref: str, catalog: Catalog, platform: str | None = None) -> Resolved:
    """A recipe resolved for `rlcat show`: extends merged and, with a platform, its platform block."""
    source = load_recipe_source(ref, catalog)
    if platform:
        profile, _ = load_platform(platform, catalog)
        source = platform_block(source, profile_names(profile))
    return resolve(source, catalog)

"""A compile from request to checked plan: load and resolve the recipe, lower it once per layer
(recipe, its platform block, --set) with the platform profile between, put --override on top, run
the guards and apply their fixes, check every key against the release's key index.
docs/architecture.md says why the layers are lowered apart."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import Any

from rlcat.arguments import split_assignment
from rlcat.catalog import Catalog
from rlcat.diagnostics import Diagnostic, ExitCode, RlcatError, Severity, diag, has_errors
from rlcat.guards import Allowance, Context, run_guards
from rlcat.inside import repository_of
from rlcat.lower.common import split_prefix
from rlcat.lower.context import Lowered, Target
from rlcat.lower.platform import platform_env, platform_tweaks, profile_names, required_env_conflicts
from rlcat.lower.steps import lower
from rlcat.model.catalog import ModelEntry
from rlcat.model.plan import REMOVED, Layer, Origin, Plan, Setting, same_value
from rlcat.model.platform import PlatformProfile
from rlcat.model.recipe import Recipe
from rlcat.model_facts import with_local_config
from rlcat.read.document import with_yaml11_hints
from rlcat.resolve.entries import load_platform
from rlcat.resolve.extends import load_recipe_source
from rlcat.resolve.recipe import Resolved, resolve, validate_recipe
from rlcat.resolve.source import Source, command_line_sets, merge_layer, platform_block
from rlcat.syntax.hydra_value import HydraValueError, with_live_interpolations
from rlcat.syntax.hydra_value import parse as parse_hydra_value
from rlcat.verl import index as verl_index
from rlcat.verl.check import Override, check
from rlcat.verl.names import ARF


@dataclass
class Request:
    """What the user asked for: a recipe, a platform, and command-line choices."""

    recipe: str
    platform: str = "cuda"
    engine: str | None = None
    mode: str | None = None
    backend: str | None = None
    sets: list[str] = field(default_factory=list)
    overrides: list[str] = field(default_factory=list)
    # compile a cell the platform marks known-broken (a warning then, not an error)
    allow_known_broken: bool = False
    # guards accepted beyond the recipe's own `allow:` (the project file's `[allow]`); the recipe's win
    allow: dict[str, Allowance] = field(default_factory=dict)
    # `--run-dir`: the folder of the run; verl's file logger writes its metrics there (run_dir_settings)
    run_dir: str | None = None


@dataclass
class Compiled:
    """A checked launch plan, ready to emit."""

    plan: Plan
    recipe: Recipe
    profile: PlatformProfile
    overrides: list[Override]
    env: list[Setting]
    diagnostics: list[Diagnostic]
    dropped: list[Setting]
    guards_fired: list[str] = field(default_factory=list)
    # the entry files the plan was made from: the recipe and its parents, model, dataset, platform
    inputs: list[str] = field(default_factory=list)
    # the command line that makes this plan again (the shell script's "Regenerate with" line)
    regenerate: list[str] = field(default_factory=list)
    # the catalog model the recipe trains (a launch warns when a gated one has no HF_TOKEN)
    model: ModelEntry | None = None
    # a known-broken cell compiled only because --allow-known-broken asked (no recipe or project
    # allowance): `rlcat compile` and `rlcat matrix` without the flag refuse it (RLC303)
    known_broken_by_flag: bool = False
    # the values parent recipes gave that the recipe replaced, by recipe field (Source.shadowed)
    shadowed: dict[tuple[str | int, ...], list[tuple[Any, Origin]]] = field(default_factory=dict)

    @property
    def env_vars(self) -> dict[str, str]:
        return {s.key: str(s.value) for s in self.env}


def compile_request(req: Request, catalog: Catalog | None = None, source: Source | None = None) -> Compiled:
    """Compile a recipe for a platform; raises RlcatError when it cannot be compiled.

    `source`, when given, is the recipe already loaded (validate compiles one file on several
    platforms and loads it once). Findings about values the recipe inherits are reported on the
    recipe itself (Source.onto_recipe)."""
    catalog = catalog or Catalog.default()
    source = source or load_recipe_source(req.recipe, catalog)
    try:
        compiled = _compile(req, catalog, source)
    except RlcatError as exc:
        raise RlcatError(source.onto_recipe(exc.diagnostics), exc.exit_code) from None
    compiled.diagnostics = source.onto_recipe(compiled.diagnostics)
    return compiled


def _compile(req: Request, catalog: Catalog, source: Source) -> Compiled:
    profile, profile_origin = load_platform(req.platform, catalog)
    source = _choose_axes(source, req)
    target = Target(profile, verl_index.groups(profile.verl_index))

    # One lowering pass per layer that changes recipe fields; _assemble keeps what each pass changed.
    resolved = resolve(source, catalog)
    layers: list[tuple[Layer, Lowered]] = [(Layer.RECIPE, lower(resolved, target))]
    with_block = platform_block(source, profile_names(profile))
    if with_block is not source:
        resolved = resolve(with_block, catalog)
        layers.append((Layer.PLATFORM_BLOCK, lower(resolved, target)))
    if req.sets:
        resolved = resolve(command_line_sets(with_block, req.sets), catalog)
        layers.append((Layer.COMMAND_LINE, lower(resolved, target)))
    last = layers[-1][1]
    problems = [d for _, lowered in layers for d in lowered.diagnostics]
    if has_errors(problems):
        raise RlcatError(_unique(problems), ExitCode.INPUT)

    recipe = resolved.recipe
    plan = Plan(
        recipe.name,
        profile.name,
        last.entrypoint,
        last.config_name,
        profile.verl_version,
        profile.verl_index,
        dict(last.group_choices),
    )
    _assemble(plan, layers, profile, profile_origin, recipe)
    problems += required_env_conflicts(plan, profile, recipe)
    for text in req.overrides:
        plan.put(_command_line_override(text))
    if req.run_dir is not None:
        for setting, is_env in run_dir_settings(plan, req.run_dir):
            plan.put(setting, env=is_env)

    group = tuple(f"{g}={o}" for g, o in plan.group_choices.items())
    index = verl_index.load_index(profile.verl_index, plan.config_name, group)
    recipe_file = resolved.source.files[-1] if resolved.source.files else None
    allow = {**req.allow, **_recipe_allowances(recipe, recipe_file)}
    support = _support_status(profile, recipe, resolved.source, req.allow_known_broken, allow.get("RLC303"))
    by_flag = allow.get("RLC303") is None and any(d.code == "RLC303" for d in support)
    problems += resolved.source.onto_recipe(support)

    ancestors = resolved.source.files[:-1]
    # a model path that is a folder here: its config.json is what the run loads (never fetched)
    path = plan.overrides.get(f"{ARF}.model.path")
    model = with_local_config(resolved.model, path.final.value if path and not path.removed else None)
    context = Context(recipe, model, profile, plan, index, repository=repository_of(resolved.source.path))
    guarded = run_guards(context, allow, recipe_file, ancestors)
    for setting, is_env in guarded.fixes:
        plan.put(setting, env=is_env)
    checked = check(plan, index, skip=guarded.keys)
    found = problems + guarded.diagnostics + checked.diagnostics
    diagnostics = _unique(with_yaml11_hints(found, resolved.source.yaml11_hints))
    if has_errors(diagnostics):
        # guard findings are findings about a readable recipe (exit 1); the rest is bad input (exit 2)
        # (a known-broken cell is a finding too: the recipe reads fine, the platform cannot run it)
        guard_codes = set(guarded.fired) | {d.code for d in guarded.diagnostics} | {"RLC303"}
        only_guards = all(d.code in guard_codes for d in diagnostics if d.severity >= Severity.ERROR)
        raise RlcatError(diagnostics, ExitCode.FINDINGS if only_guards else ExitCode.INPUT)
    removed_by_guards = [
        h.entries[-2]
        for h in plan.overrides.values()
        if h.removed and h.final.origin.layer == Layer.GUARD and len(h.entries) > 1
    ]
    return Compiled(
        plan,
        recipe,
        profile,
        checked.overrides,
        plan.active_env(),
        diagnostics,
        removed_by_guards + checked.dropped,
        guarded.fired,
        _inputs(resolved, profile_origin),
        model=resolved.model,
        known_broken_by_flag=by_flag,
        shadowed=resolved.source.shadowed,
    )


def _inputs(resolved: Resolved, profile_origin: Origin) -> list[str]:
    files = [*resolved.source.files, resolved.model_origin.file, resolved.dataset_origin.file]
    return [f for f in [*files, profile_origin.file] if f is not None]


def _recipe_allowances(recipe: Recipe, file: str | None) -> dict[str, Allowance]:
    return {
        guard: Allowance(reason, "the recipe", file, key=f"allow.{guard}")
        for guard, reason in recipe.allow.items()
    }


def _support_status(
    profile: PlatformProfile,
    recipe: Recipe,
    source: Source,
    allow_known_broken: bool,
    allowance: Allowance | None,
) -> list[Diagnostic]:
    """The profile's word on this mode × engine × backend cell, when it is not plain 'supported'. A
    known-broken cell is an error (the run would fail on the cluster), unless the command line
    (--allow-known-broken), the recipe or the project file (`allow: {RLC303: reason}`) accepts it:
    then a warning. Either points at the recipe's `mode:` (or its `--mode`), so a pull request's
    annotation lands on a line."""
    where = source.locate(("mode",))
    for cell in profile.support:
        if (cell.mode, cell.engine, cell.backend) != (recipe.mode, recipe.engine, recipe.backend):
            continue
        cell_name = f"{recipe.mode} × {recipe.engine} × {recipe.backend}"
        why = f": {cell.note}" if cell.note else ""
        if cell.status == "known-broken":
            accepted = allow_known_broken or allowance is not None
            evidence = f"source: {cell.source}" if cell.source else ""
            hint = (
                evidence
                if accepted
                else "pass --allow-known-broken, or accept it with the reason in the recipe (or the project "
                "file's [allow]): "
                'allow: {RLC303: "why it works for you"}' + (f"; {evidence}" if evidence else "")
            )
            return [
                diag(
                    "RLC303",
                    f"platform {profile.name} marks {cell_name} known-broken{why}"
                    + (f" (allowed by {allowance.by}: {allowance.reason})" if allowance is not None else ""),
                    severity=Severity.WARNING if accepted else Severity.ERROR,
                    hint=hint or None,
                    **where,
                )
            ]
        if cell.status == "untested":
            return [diag("RLC304", f"platform {profile.name} has not validated {cell_name}{why}", **where)]
    return []


def _choose_axes(source: Source, req: Request) -> Source:
    """Apply --engine/--mode/--backend, which must be among the recipe's variants."""
    chosen = {"engine": req.engine, "mode": req.mode, "backend": req.backend}
    if not any(chosen.values()):
        return source
    recipe = validate_recipe(source)
    patch: dict[str, Any] = {}
    origins: dict[tuple[str | int, ...], Origin] = {}
    for axis_name, value in chosen.items():
        if value is None:
            continue
        allowed = {getattr(recipe, axis_name), *getattr(recipe.variants, axis_name)}
        if value not in allowed:
            raise RlcatError(
                [
                    diag(
                        "RLC205",
                        f"recipe {recipe.name} does not allow {axis_name} '{value}' "
                        f"(allowed: {', '.join(sorted(allowed))})",
                        **source.locate(("variants", axis_name)),
                        key=f"variants.{axis_name}",
                        hint=f"add it to variants.{axis_name} if the recipe supports it",
                    )
                ]
            )
        patch[axis_name] = value
        origins[(axis_name,)] = Origin(Layer.COMMAND_LINE, f"--{axis_name} {value}")
    return merge_layer(source, patch, origins)


def _assemble(
    plan: Plan,
    layers: list[tuple[Layer, Lowered]],
    profile: PlatformProfile,
    profile_origin: Origin,
    recipe: Recipe,
) -> None:
    """Merge the lowering passes and the profile into one history per key, in layer order.

    The recipe pass sets everything; the platform profile comes next; a later pass (platform block,
    --set) only contributes the keys whose value it changed, so it never undoes a profile tweak it
    did not touch.
    """
    (_, first), rest = layers[0], layers[1:]
    for table, env in ((first.settings, False), (first.env, True)):
        for history in table.values():
            for s in history if len(history) == 1 else sorted(history, key=lambda s: s.origin.layer):
                plan.put(s, env=env)
    # the recipe's own `env:` beats the profile's variables, which stay in the history beneath it
    # (explain shows both); a variable the profile requires is checked by required_env_conflicts
    for s, is_env in [
        *((s, True) for s in platform_env(profile, profile_origin)),
        *platform_tweaks(profile, recipe, profile_origin),
    ]:
        if is_env and s.key in first.recipe_env:
            plan.put_beneath(s, env=True)
        else:
            plan.put(s, env=is_env)
    previous = first
    for layer, lowered in rest:
        for table, env in ((lowered.settings, False), (lowered.env, True)):
            before = previous.env if env else previous.settings
            for key, history in table.items():
                new = history[-1]
                old = before.get(key)
                if old is None or not same_value(old[-1].value, new.value) or old[-1].prefix != new.prefix:
                    plan.put(replace(new, origin=_as_layer(new.origin, layer)), env=env)
            for key in before:
                if key not in table:
                    plan.put(Setting(key, REMOVED, Origin(layer, f"removed by the {layer} layer")), env=env)
        previous = lowered


METRICS_FILE = "metrics.jsonl"
FILE_LOGGER_PATH = "VERL_FILE_LOGGER_PATH"


def run_dir_settings(plan: Plan, run_dir: str) -> list[tuple[Setting, bool]]:
    """`--run-dir DIR`: verl's `file` logger added to trainer.logger, and pointed at DIR/metrics.jsonl
    through VERL_FILE_LOGGER_PATH, which verl's FileLogger reads before anything else
    (verl/utils/tracking.py:534 in 0.9.1, :260 in 0.7.1; it writes one `{"step": N, "data": {...}}`
    line per step). The path is absolute: verl runs from wherever it is launched."""
    origin = Origin(Layer.COMMAND_LINE, f"--run-dir {run_dir}", reason="the run's metrics for rlcat runs add")
    history = plan.overrides.get("trainer.logger")
    current = history.final.value if history is not None and not history.removed else ["console"]
    loggers = list(current) if isinstance(current, list) else [current]
    path = os.path.join(os.path.abspath(run_dir), METRICS_FILE)
    settings = [(Setting(FILE_LOGGER_PATH, path, origin), True)]
    if "file" not in loggers:
        settings.append((Setting("trainer.logger", [*loggers, "file"], origin), False))
    return settings


def _as_layer(origin: Origin, layer: Layer) -> Origin:
    if origin.layer >= layer:
        return origin
    return replace(origin, layer=layer)


def _command_line_override(text: str) -> Setting:
    """`--override key=value`, the value read with Hydra's override grammar, as verl's own command
    line would read it (lists, `{k: v}` mappings, quoted strings, null). Hydra's `+key=` (add) and
    `++key=` (add or override) keep their prefix, which the check judges against the release."""
    written, raw = split_assignment(text, "--override", "verl.key", "trainer.save_freq=50")
    argument = f"--override {text}"
    prefix, key = split_prefix(written)
    if len(prefix) > 2 or not key:
        raise RlcatError(
            [
                diag(
                    "RLC105",
                    f"'{written}': a verl key, with Hydra's + (add a key) or ++ (add or override) "
                    "in front when wanted",
                    key=key or written,
                    argument=argument,
                    hint=f"--override ++{key or 'verl.key'}={raw}",
                )
            ]
        )
    try:
        value = parse_hydra_value(raw)
    except HydraValueError as exc:
        raise RlcatError(
            [
                diag(
                    "RLC105",
                    f"not one value in Hydra's override grammar: {exc}",
                    key=key,
                    argument=argument,
                    hint="quote a value that holds commas, spaces or brackets: key='a,b'",
                )
            ]
        ) from None
    return Setting(key, with_live_interpolations(value), Origin(Layer.COMMAND_LINE, argument), prefix=prefix)


def _unique(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    seen: dict[tuple[Any, ...], Diagnostic] = {}
    for d in diagnostics:
        seen.setdefault((d.code, d.message, d.file, d.line, d.key), d)
    return list(seen.values())


__all__ = ["Compiled", "Request", "Resolved", "compile_request"]

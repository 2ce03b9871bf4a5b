"""`rlcat lint`: what verl would make of a launch script, found without running it.

    read_script (rlcat.scripts: launches, overrides at their line and column, cuts)
      → per launch: the key index of its entry config in the release checked against
      → a Plan of the script's overrides, each with its script position as its origin
      → the guards that can judge a script (run_guards), then the key check (verl.check)
      → findings at file:line:col of the override concerned

The compile path's own pieces judge the script: the key check decides unknown keys (with a
did-you-mean), `+` on a key verl has, types against verl's defaults; the drift guard (RLC801) names
keys another release has; RLC703 does verl's batch arithmetic. What only a script can get wrong is
here: a launch command cut by a line continuation (the reader finds it), the same key twice,
an override without a prefix for a key inside an open dict (rlcat writes those with `++`, Hydra
refuses them as written), an entrypoint or entry config rlcat has no key index for.

The guards read the recipe's axes (mode, backend, engine, algorithm); a script has no recipe, so
they are inferred from what verl would read: the entrypoint gives the mode, the actor's strategy the
backend, the rollout's name the engine, the advantage estimator the algorithm (`script_recipe`).
Guards that need what only a recipe says are skipped (SKIPPED_GUARDS).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from packaging.version import Version

from rlcat.catalog import collect_files
from rlcat.diagnostics import (
    UNREADABLE_FILES,
    Diagnostic,
    Note,
    RlcatError,
    Severity,
    Where,
    diag,
    suggestion_hint,
)
from rlcat.guards import Context, run_guards
from rlcat.inside import repository_of
from rlcat.model.plan import REMOVED, Layer, Origin, Plan, Setting
from rlcat.model_facts import script_model
from rlcat.scripts import Launch, Override, ScriptReading, read_script
from rlcat.syntax.hydra_value import HydraValueError, key_problem, with_live_interpolations
from rlcat.verl.check import check, type_matches
from rlcat.verl.index import (
    KeyIndex,
    available_versions,
    config_name_problem,
    load_index,
    manifest,
    require_release,
)
from rlcat.verl.names import ARF, FULLY_ASYNC_MAIN, MAIN_PPO, ONE_STEP_OFF_MAIN

if TYPE_CHECKING:  # a script is checked without the pydantic models (ScriptAxes, NoModel, NoPlatform)
    from rlcat.model.platform import PlatformProfile

# The entry config each trainer's @hydra.main names (verl 0.9.1): verl/trainer/main_ppo.py:166,
# verl/experimental/fully_async_policy/fully_async_main.py:222,
# verl/experimental/one_step_off_policy/main_ppo.py:109. `--config-name` picks another one of the
# same folder (ppo_megatron_trainer, fully_async_ppo_megatron_trainer).
ENTRY_CONFIGS: dict[str, str] = {
    MAIN_PPO: "ppo_trainer",
    FULLY_ASYNC_MAIN: "fully_async_ppo_trainer",
    ONE_STEP_OFF_MAIN: "one_step_off_ppo_trainer",
}
# The recipe mode of each entrypoint (model/axes.py), for the guards that apply to one mode.
ENTRY_MODES: dict[str, str] = {FULLY_ASYNC_MAIN: "fully_async", ONE_STEP_OFF_MAIN: "one_step_off"}

# Guards that need what only a recipe says, with the reason (docs/lint.md lists them).
SKIPPED_GUARDS: dict[str, str] = {
    "RLC902": "it compares the model path with the model rlcat ships under the recipe's catalog name; "
    "a script names no catalog model",
}

MODEL_PATH = f"{ARF}.model.path"
# Guards that judge the model's shape: run only when the script's model path names a catalog model
# or a local folder with a config.json (model_facts.script_model), with the reason otherwise.
MODEL_GUARDS: dict[str, str] = {
    "RLC601": "it compares prompt + response with the model's position count; the script's model path "
    "names no catalog model and no local folder with a config.json",
    "RLC602": "it compares parallel sizes with the model's attention heads; the script's model path names "
    "no catalog model and no local folder with a config.json",
}

# Input that could not be read at all (exit 2): the files validate cannot read, and bash the reader
# cannot parse.
UNREADABLE = frozenset(UNREADABLE_FILES | {"RLC050"})
# What `--only-launches` turns into notes: a script that starts no trainer rlcat can check.
NOT_A_CHECKED_LAUNCH = ("RLC1104", "RLC1111")
SCRIPT_SUFFIX = ".sh"
# Key-check findings about what rlcat would write, not about what a script gives verl: an
# interpolation a script writes is Hydra's own (live, as verl reads it), and a value the script
# wrote in Hydra's grammar needs no rendering.
NOT_FOR_SCRIPTS = ("RLC405", "RLC407")
# Lost overrides named one by one under a cut; the rest are counted.
NAMED_LOST = 8


# More checks of a launch the script's own findings hold no error for: verl's (`--verl-native`),
# given the script's name as findings show it and the launch
LaunchJudge = Callable[[str, Launch], list[Diagnostic]]


@dataclass
class LintReport:
    files: int = 0
    diagnostics: list[Diagnostic] = field(default_factory=list)


def newest_release() -> str:
    """The newest verl release rlcat has a key index for: what `rlcat lint` checks against by default."""
    versions = available_versions()
    if not versions:
        raise RlcatError([diag("RLC404", "rlcat ships no verl key index", hint="reinstall rlcat")])
    return max(versions, key=Version)


def check_release(version: str) -> str:
    """`version` if rlcat has its key index, else a usage error naming the ones it has."""
    return require_release(version, argument=f"--verl {version}", hint=f"--verl {newest_release()}")


def script_files(paths: Iterable[Path]) -> tuple[list[Path], list[Diagnostic]]:
    """The scripts to lint: each file given, and the `*.sh` files under each folder (recursive, in
    name order, hidden files and folders skipped), with what is wrong on disk. The walk is
    validate's (catalog.collect_files): a link is followed only while it stays inside the folder
    given (or the folder of a file given), so nothing outside it is read or quoted (RLC011)."""
    return collect_files(paths, None, (SCRIPT_SUFFIX,))


def lint_paths(
    paths: Sequence[Path],
    version: str,
    profile: PlatformProfile | None = None,
    env: Mapping[str, str] | None = None,
    only_launches: bool = False,
    *,
    judge: LaunchJudge | None = None,
) -> LintReport:
    """Lint every script under `paths` against verl `version` (the platform's, when `profile` is
    given); never raises for problems in the scripts. `judge` also judges every launch of a script
    rlcat finds no error in (verl's own checks)."""
    files, problems = script_files(paths)
    report = LintReport(files=len(files), diagnostics=problems)
    for path in files:
        reading = read_script(path, env=env or {})
        found = lint_reading(reading, version, profile, only_launches, repository_of(path))
        if judge is not None and not any(d.severity >= Severity.ERROR for d in found):
            found += [d for launch in reading.launches for d in judge(reading.file, launch)]
            found.sort(key=lambda d: (d.line or 0, d.col or 0, d.code))
        report.diagnostics += found
    return report


def lint_reading(
    reading: ScriptReading,
    version: str,
    profile: PlatformProfile | None = None,
    only_launches: bool = False,
    repository: Path | None = None,
) -> list[Diagnostic]:
    """The reader's findings and each launch's, once each, in line order. An override only running
    the script would tell (RLC1102) is a finding only where its value matters (`_unknown_matters`):
    `data.train_files=$HOME/data/train.parquet` is shown as written, and nothing rlcat judges reads it."""
    launched: list[Diagnostic] = []
    matters: set[tuple[int, int]] = set()
    for launch in reading.launches:
        found_here, matters_here = _lint_launch(launch, reading.file, version, profile, repository)
        launched += found_here
        matters |= matters_here
    unknown = {(o.line, o.col) for launch in reading.launches for o in launch.overrides if not o.known}
    quiet = unknown - matters
    told = [
        d for d in reading.diagnostics if not (d.code == "RLC1102" and d.key and (d.line, d.col) in quiet)
    ]
    found = [_as_lint_finding(d, only_launches) for d in _once_per_variable(told)]
    found = _with_lost_overrides(found, reading)
    found += [_as_lint_finding(d, only_launches) for d in launched]
    unique: dict[tuple[object, ...], Diagnostic] = {}
    for d in found:
        unique.setdefault((d.code, d.severity, d.file, d.line, d.col, d.key, d.message), d)
    return sorted(unique.values(), key=lambda d: (d.line or 0, d.col or 0, d.code))


def _once_per_variable(found: list[Diagnostic]) -> list[Diagnostic]:
    """A variable the script requires and nobody sets (RLC1105) is one problem however often the
    script reads it: one finding, at the first read (where bash stops), the later reads as notes."""
    first: dict[str, int] = {}
    out: list[Diagnostic] = []
    for d in sorted(found, key=lambda d: (d.line or 0, d.col or 0)):
        if d.code != "RLC1105":
            out.append(d)
            continue
        at = first.get(d.message)
        if at is None:
            first[d.message] = len(out)
            out.append(d)
            continue
        note = Note(f"read again on line {d.line}", d.file, d.line, d.col)
        out[at] = replace(out[at], notes=(*out[at].notes, note))
    return out


def _as_lint_finding(d: Diagnostic, only_launches: bool) -> Diagnostic:
    """A script that launches nothing rlcat can check is an error for `rlcat lint SCRIPT` (it was
    named to be checked), and a note under --only-launches (the pre-commit hook sees every script)."""
    if d.code in NOT_A_CHECKED_LAUNCH:
        return replace(d, severity=Severity.INFO if only_launches else Severity.ERROR)
    return d


def _with_lost_overrides(found: list[Diagnostic], reading: ScriptReading) -> list[Diagnostic]:
    """The reader's cut findings (RLC1101), with the overrides that never reach verl as notes."""
    cuts = {launch.cut.line: launch.cut for launch in reading.launches if launch.cut and launch.cut.lost}
    out = []
    for d in found:
        cut = cuts.get(d.line or 0) if d.code == "RLC1101" else None
        if cut is not None:
            notes = [
                Note(f"line {o.line}: {o.text} never reaches verl", reading.file, o.line, o.col)
                for o in cut.lost[:NAMED_LOST]
            ]
            if len(cut.lost) > NAMED_LOST:
                last = cut.lost[-1]
                notes.append(Note(f"and {len(cut.lost) - NAMED_LOST} more, to line {last.line}"))
            out.append(replace(d, notes=(*d.notes, *notes)))
        else:
            out.append(d)
    return out


def lint_launch(
    launch: Launch, file: str, version: str, profile: PlatformProfile | None, repository: Path | None = None
) -> list[Diagnostic]:
    """What verl `version` would make of one launch: its keys, prefixes, types, duplicates, and the
    guards that can judge it; `repository` is the one being checked (inside.repository_of)."""
    return _lint_launch(launch, file, version, profile, repository)[0]


def _lint_launch(
    launch: Launch, file: str, version: str, profile: PlatformProfile | None, repository: Path | None = None
) -> tuple[list[Diagnostic], set[tuple[int, int]]]:
    """lint_launch's findings, and where the launch has an override only running the script would
    tell whose value matters (`_unknown_matters`), as (line, col): none in a launch not checked."""
    at: Where = {"file": file, "line": launch.line, "col": launch.col}
    entrypoint = entry_module(launch)
    if entrypoint not in ENTRY_CONFIGS:
        return [_unknown_entrypoint(entrypoint, at)], set()
    config = launch.config_name or ENTRY_CONFIGS[entrypoint]
    not_a_name = config_name_problem(config, **at)
    if not_a_name is not None:
        return [not_a_name], set()
    try:
        base = load_index(version, config)
    except RlcatError:
        return [_not_indexed(version, config, (), at)], set()

    found: list[Diagnostic] = []
    groups: dict[str, Override] = {}
    plan = Plan(file, profile.name if profile else "", entrypoint, config, version, version)
    for override in launch.overrides:
        group = _group_of(override, base)
        if group is not None and not override.known:
            continue  # which option only running the script tells (RLC1102 says so): none is judged
        if group is not None:
            groups[group] = override
            plan.group_choices[group] = override.value_text or ""
            continue
        setting = _setting(override, file, found)
        if setting is not None:
            plan.put(setting)
    for name, value in launch.env.items():
        plan.put(Setting(name, value, _origin(file, launch.line, launch.col)), env=True)
    found += duplicates(launch.overrides, groups, file)

    index = base
    if groups:
        choices = tuple(o.text.lstrip("+") for o in groups.values())
        try:
            index = load_index(version, config, choices)
        except RlcatError:
            only_groups = Plan(file, plan.platform, entrypoint, config, version, version, plan.group_choices)
            bad = [_at_group(d, groups, file) for d in check(only_groups, base).diagnostics]
            return found + (bad or [_not_indexed(version, config, choices, at)]), set()

    axes = script_recipe(entrypoint, plan, index)
    platform = profile or NoPlatform(version)
    model = script_model(
        _model_path(launch) or Context(axes, NoModel(), platform, plan, index).value(MODEL_PATH)
    )
    skip = {**SKIPPED_GUARDS, **(MODEL_GUARDS if model is None else {})}
    ctx = Context(axes, model or NoModel(), platform, plan, index, repository=repository)
    guarded = run_guards(ctx, {}, file, skip=skip, apply_fixes=False, reader="script")
    checked = check(plan, index, skip=guarded.keys)
    found += guarded.diagnostics
    found += [_at_group(d, groups, file) for d in checked.diagnostics if d.code not in NOT_FOR_SCRIPTS]
    found += [
        _no_prefix_in_open_dict(o.setting, index)
        for o in checked.overrides
        if o.prefix == "++" and not o.setting.prefix
    ]
    unknown = [o for o in launch.overrides if not o.known]
    matters = {(o.line, o.col) for o in unknown if _unknown_matters(o, index, guarded.read)}
    return [d if d.line is not None or d.argument else replace(d, **at) for d in found], matters


def _unknown_matters(override: Override, index: KeyIndex, read: set[str]) -> bool:
    """Whether an override only running the script would tell (`$HOME/data/x.parquet`, `$(date)`)
    hides something rlcat must judge: where its words split (an unknown key or word), a value a
    guard reads, or a key whose type not every text fits (a number, a flag, a list). A path or a
    name verl takes as any text (`data.train_files`, `trainer.experiment_name`) is shown as written
    and judged by nobody; an unknown value there is no finding. Nor is one in a launch rlcat does
    not check at all (no key index: RLC1111, RLC1112 say so)."""
    key = override.key
    if override.value_text is None or key_problem(key) is not None or key in read:
        return True
    if _group_of(override, index) is not None:
        return True  # the option must exist in the release
    name = index.name_of(key)
    return name is not None and not type_matches(index.type_of(name), "any text", name)


def _model_path(launch: Launch) -> str | None:
    """The model path a launch gives verl, as written: a value only running the script tells in
    full (`$HOME/models/Qwen3-8B`) still names its model by the folder's name."""
    given = [o.value_text for o in launch.overrides if o.key == MODEL_PATH and o.prefix != "~"]
    return given[-1] if given else None


def entry_module(launch: Launch) -> str:
    """The module a launch runs: `-m verl.trainer.main_ppo`, or `python …/verl/trainer/main_ppo.py`
    read as the module it is in verl's tree."""
    if launch.entry_kind == "module":
        return launch.entrypoint
    parts = launch.entrypoint.removesuffix(".py").split("/")
    for top in ("verl", "recipe"):
        if top in parts:
            return ".".join(parts[len(parts) - 1 - parts[::-1].index(top) :])
    return launch.entrypoint


def _unknown_entrypoint(entrypoint: str, at: Where) -> Diagnostic:
    # by the module's own name (recipe.dapo.main_dapo: main_ppo); the first trainer of a name wins
    last = {name.rsplit(".", 1)[-1]: name for name in reversed(ENTRY_CONFIGS)}
    close = suggestion_hint(entrypoint.rsplit(".", 1)[-1], last)
    closest = last[close.split("'")[1]] if close else MAIN_PPO
    return diag(
        "RLC1111",
        f"{entrypoint} is not a verl trainer rlcat has a key index for: its overrides are not checked "
        f"(the closest core verl trainer is {closest})",
        key=entrypoint,
        hint="rlcat lint checks launches of " + ", ".join(ENTRY_CONFIGS) + "; pass --only-launches to "
        "note other scripts instead of failing on them",
        **at,
    )


def _not_indexed(version: str, config: str, choices: tuple[str, ...], at: Where) -> Diagnostic:
    chosen = f" with {', '.join(choices)}" if choices else ""
    return diag(
        "RLC1112",
        f"rlcat has no key index for verl {version}'s {config}{chosen}: the launch's overrides are not "
        "checked",
        hint=f"rlcat indexes these configs of verl {version}: {', '.join(_indexed(version))}",
        **at,
    )


def _indexed(version: str) -> list[str]:
    """The entry configs (with group choices) the release's key index covers, from its manifest."""
    return [
        " with ".join([entry["config_name"], *entry.get("group_overrides", [])])
        for entry in manifest(version).get("entries", [])
    ]


def _group_of(override: Override, index: KeyIndex) -> str | None:
    """The config group an override chooses an option of (`model_engine=megatron`, or with a
    package `actor@actor_rollout_ref.actor=megatron_actor`), not a key; None for a key."""
    group, at, _ = override.key.partition("@")
    if override.prefix == "~" or not (at or "." not in group):
        return None
    return group if group in index.groups else None


def _origin(file: str, line: int, col: int) -> Origin:
    # field "overrides": the key check words a missing `+` as it does for a recipe's escape hatch
    return Origin(Layer.RECIPE, f"{file}:{line}", file=file, line=line, col=col, field="overrides")


def _setting(override: Override, file: str, found: list[Diagnostic]) -> Setting | None:
    """The override as a plan setting: its value read with Hydra's grammar (None when only running
    the script would tell it: RLC1102 says so), or a finding in `found` when Hydra cannot read it."""
    origin = _origin(file, override.line, override.col)
    key = override.key
    if key.split(".", 1)[0] == "hydra":
        return None  # Hydra's own settings (hydra.run.dir): not verl's config
    if not override.known and (override.value_text is None or key_problem(key) is not None):
        return None  # only running the script tells where its words split (RLC1102 says so)
    if override.prefix == "~":
        return Setting(key, REMOVED, origin)
    if override.value_text is None:
        found.append(
            diag(
                "RLC1114",
                f"'{override.text}' is not an override: Hydra reads key=value, +key=value, ++key=value "
                "or ~key",
                key=key,
                hint="quote the word with the `=` it needs, or remove it",
                **origin.position(),
            )
        )
        return None
    value: Any = None  # a value only running the script tells: the key is checked, not the value
    if override.known:
        try:
            value = with_live_interpolations(override.value())
        except HydraValueError as exc:
            found.append(
                diag(
                    "RLC1114",
                    f"Hydra cannot read the value of '{override.text}': {exc}",
                    key=key,
                    hint="quote a value that holds commas, spaces or brackets: key='a,b'",
                    **origin.position(),
                )
            )
            return None
    return Setting(key, value, origin, prefix=override.prefix)


def duplicates(overrides: Sequence[Override], groups: Mapping[str, Override], file: str) -> list[Diagnostic]:
    """A key overridden more than once: Hydra applies each in turn, so only the last counts, and a
    second `+key=` is refused ("Could not append to config. An item is already at …"; hydra
    _internal/config_loader_impl.py, _apply_overrides_to_config)."""
    first: dict[str, Override] = {}
    found = []
    for override in overrides:
        key = override.key
        if override.prefix == "~" or key not in first:
            first.setdefault(key, override)
            continue
        earlier = first[key]
        refused = override.prefix == "+" and key not in groups
        why = (
            f"Hydra refuses the second +{key} (\"Could not append to config. An item is already at '{key}'\")"
            if refused
            else "Hydra applies both in turn: the earlier value never takes effect"
        )
        found.append(
            diag(
                "RLC1113",
                f"'{key}' is overridden again (first on line {earlier.line}): {why}",
                severity=Severity.ERROR if refused else Severity.WARNING,
                file=file,
                line=override.line,
                col=override.col,
                key=key,
                hint="keep one of them",
                notes=(Note(f"first set here: {earlier.text}", file, earlier.line, earlier.col),),
            )
        )
    return found


def _at_group(d: Diagnostic, groups: Mapping[str, Override], file: str) -> Diagnostic:
    """A finding about a config group choice, at the override that made it."""
    override = groups.get(d.key or "")
    if override is None or d.line is not None:
        return d
    return replace(d, file=file, line=override.line, col=override.col)


def _no_prefix_in_open_dict(setting: Setting, index: KeyIndex) -> Diagnostic:
    """A key the config lacks, written without a prefix inside an open dict: rlcat would write it
    with `++`, but Hydra takes the override as written and refuses a key its struct config lacks
    ("Could not override '…'. To append to your config use +…")."""
    holder = index.open_dict_of(setting.key)
    return diag(
        "RLC401",
        f"verl {index.verl_version} ({index.config_name}) has no key '{setting.key}' (inside the open dict "
        f"'{holder}'): Hydra refuses to override a key the config lacks (\"Could not override "
        f"'{setting.key}'\")",
        key=setting.key,
        hint=f"add it with Hydra's + prefix: +{setting.key}=…",
        **setting.origin.position(),
    )


def script_recipe(entrypoint: str, plan: Plan, index: KeyIndex) -> ScriptAxes:
    """The recipe axes the guards read, inferred from what verl would read in the script's plan:
    the mode from the entrypoint, the backend from the actor's strategy, the engine from the
    rollout's name, the algorithm from the advantage estimator (gae: ppo). Only the axes are set:
    every guard that reads more of a recipe is among SKIPPED_GUARDS."""
    probe = Context(ScriptAxes("", "", "", ""), NoModel(), NoPlatform(plan.verl_index), plan, index)
    estimator = str(probe.value("algorithm.adv_estimator"))
    return ScriptAxes(
        ENTRY_MODES.get(entrypoint, "colocate"),
        str(probe.value(f"{ARF}.actor.strategy")),
        str(probe.value(f"{ARF}.rollout.name")),
        {"gae": "ppo"}.get(estimator, estimator),
    )


# What the guards read of a recipe, its model and its platform (guards.base RecipeView, ModelView,
# PlatformView), as far as a script tells them. Plain values, not the recipe models: an engine or
# backend outside rlcat's axes (hf, veomni) is kept as verl reads it, and matches only the guards
# that apply to every value of the axis; and a cold `rlcat lint` loads no pydantic.


@dataclass(frozen=True)
class ScriptAxes:
    """The axes verl would read from a script; no name, and no critic section of rlcat's."""

    mode: str
    backend: str
    engine: str
    algorithm: str
    name: str = ""
    critic: None = None


@dataclass(frozen=True)
class NoModel:
    """No model the script names is known: every guard that reads the model is skipped
    (MODEL_GUARDS)."""

    name: str = ""
    max_position_embeddings: int = 0
    extended_max_position_embeddings: int | None = None
    num_attention_heads: int | None = None
    num_key_value_heads: int | None = None


@dataclass(frozen=True)
class NoPlatform:
    """No --platform: a profile that matches no platform's guards and names only the release."""

    verl_index: str
    name: str = ""
    family: str = ""
    software: Mapping[str, str] = field(default_factory=dict)
    docker_run: tuple[str, ...] = ()

"""`rlcat validate`: every finding in recipe and catalog files, for pull-request checks.

Unlike `compile`, which stops at the first stage that fails, validation visits every file and
reports what each one gets wrong: YAML errors, schema errors, references, and for recipes the
compile on every platform the recipe targets (guards and key-index checks included).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel

from rlcat.catalog import Catalog, Kind, collect_files, display_path
from rlcat.compile.assemble import Compiled, Request, compile_request
from rlcat.compile.result_checks import result_problems
from rlcat.diagnostics import UNREADABLE_FILES, Diagnostic, RlcatError, Severity, diag, one_per_problem
from rlcat.guards import Allowance
from rlcat.guards.security.container import ESCAPE_HINT, docker_run_hazards
from rlcat.guards.security.environment import hazard
from rlcat.guards.security.values import quoted
from rlcat.model.catalog import DatasetEntry, ModelEntry
from rlcat.model.platform import PlatformProfile
from rlcat.model.project import ProjectSettings
from rlcat.model.results import Result
from rlcat.read.document import Document, load_yaml
from rlcat.resolve.entries import check_name, todo_problems, validate_document
from rlcat.resolve.extends import load_recipe_source
from rlcat.resolve.findings import recipe_anchors, relocate
from rlcat.resolve.recipe import resolve
from rlcat.verl.index import available_versions

# A recipe is checked on the project file's platforms (by default the two primary ones) and on every
# platform its `platforms:` block names, unless --platform says otherwise.
DEFAULT_TARGETS = tuple(ProjectSettings().platforms)
ENTRY_MODELS: dict[Kind, type[BaseModel]] = {
    "model": ModelEntry,
    "dataset": DatasetEntry,
    "platform": PlatformProfile,
    "result": Result,
}
UNREADABLE = UNREADABLE_FILES  # input that could not be read at all (exit 2)
# More checks of a plan rlcat accepts, beside rlcat's own: verl's (`--verl-native`), given the plan
# and the recipe file it was compiled from
PlanJudge = Callable[[Compiled, Path], list[Diagnostic]]


@dataclass
class Report:
    files: int = 0
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def count(self, severity: Severity) -> int:
        return sum(1 for d in self.diagnostics if d.severity == severity)


def collect(paths: Iterable[Path], catalog: Catalog) -> tuple[list[Path], list[Diagnostic]]:
    """The entry files under the given files and folders (catalog.collect_files: links followed
    only inside the catalog root, or outside any root the folder given), and what is wrong on
    disk. The catalog's lookups walk the same way."""
    return collect_files(paths, catalog)


def validate_paths(
    paths: list[Path],
    catalog: Catalog,
    platforms: list[str] | None = None,
    defaults: Sequence[str] = DEFAULT_TARGETS,
    allow: Mapping[str, Allowance] | None = None,
    *,
    judge: PlanJudge | None = None,
) -> Report:
    """Validate every YAML file under `paths`; never raises for problems in the files. `judge`
    also judges every plan rlcat finds no error in (verl's own checks)."""
    files, problems = collect(paths, catalog)
    found = list(problems)
    # a problem on disk in the catalog's folders stays where it is: it is not a recipe's finding
    validated = {display_path(path) for path in files} | {d.file for d in catalog.problems() if d.file}
    for path in files:
        found += catalog.conflicts_of(path)
        found += on_validated_file(
            validate_file(path, catalog, platforms, defaults, allow, judge=judge), path, validated
        )
    # a problem of the catalog stops every lookup: it is reported once, not once per recipe
    unique: dict[tuple[object, ...], Diagnostic] = {}
    for d in found:
        unique.setdefault((d.code, d.severity, d.file, d.line, d.col, d.key, d.message), d)
    return Report(len(files), list(unique.values()))


def on_validated_file(diagnostics: list[Diagnostic], path: Path, validated: set[str]) -> list[Diagnostic]:
    """Findings located outside `validated` (a built-in parent recipe, a platform profile, a model
    entry elsewhere), reported on the file `path` whose validation found them: at
    the line that brings that file in (`extends:`, `model:`, `dataset:`), where each pointed kept as
    a note. An annotation must land on a file of the pull request, or it shows nowhere."""
    target = display_path(path)
    if all(d.file is None or d.file in validated for d in diagnostics):
        return diagnostics
    try:
        anchors = recipe_anchors(load_yaml(path, target))
    except RlcatError:  # the file itself does not read: its own findings say so
        anchors = {}
    return relocate(diagnostics, target, anchors, lambda file: file not in validated)


def validate_file(
    path: Path,
    catalog: Catalog,
    platforms: list[str] | None,
    defaults: Sequence[str] = DEFAULT_TARGETS,
    allow: Mapping[str, Allowance] | None = None,
    *,
    judge: PlanJudge | None = None,
) -> list[Diagnostic]:
    kind = catalog.kind_of(path)
    try:
        if kind != "recipe":
            return _validate_entry(path, kind, catalog)
        return _validate_recipe(path, catalog, platforms, defaults, allow or {}, judge=judge)
    except RlcatError as exc:
        return exc.diagnostics


def _validate_entry(path: Path, kind: Kind, catalog: Catalog) -> list[Diagnostic]:
    doc = load_yaml(path, display_path(path))
    entry = validate_document(ENTRY_MODELS[kind], doc)
    check_name(doc, path, kind, getattr(entry, "name", path.stem))
    if isinstance(entry, Result):
        return result_problems(entry, doc, catalog)
    if not isinstance(entry, PlatformProfile):
        return todo_problems(ENTRY_MODELS[kind], doc)
    found = _platform_environment(entry, doc) + _platform_docker_run(entry, doc)
    if entry.verl_index not in available_versions():
        # a profile names a release whose key index rlcat ships, never a folder of its own
        have = ", ".join(available_versions()) or "none"
        found.append(
            diag(
                "RLC404",
                f"no key index for verl {entry.verl_index} (have: {have})",
                **doc.locate(("verl_index",)),
                key="verl_index",
                hint="name a release rlcat ships a key index for",
            )
        )
    return found


def _platform_environment(profile: PlatformProfile, doc: Document) -> list[Diagnostic]:
    """RLC901 on the profile file itself: every launch on the platform gets its env and its tweaks'
    env, so a variable that changes what runs is reported here, not only when a recipe compiles."""
    variables: list[tuple[tuple[str | int, ...], str, str]] = [
        (("env", i, "value"), var.name, var.value) for i, var in enumerate(profile.env)
    ]
    variables += [
        (("tweaks", i, "env", name), name, value)
        for i, tweak in enumerate(profile.tweaks)
        for name, value in tweak.env.items()
    ]
    found = []
    for path, name, value in variables:
        danger = hazard(name, value)
        if danger is not None:
            found.append(
                diag(
                    "RLC901",
                    f"env {name} of platform {profile.name}: {danger.effect}",
                    severity=Severity.WARNING,
                    **doc.locate(path),
                    key=".".join(str(p) for p in path),
                    hint="put it in the image or the cluster's environment instead",
                )
            )
    return found


def _platform_docker_run(profile: PlatformProfile, doc: Document) -> list[Diagnostic]:
    """RLC901 and RLC904 on the profile file itself, at the `docker_run` entry: every container of a
    docker or podman launch on the platform starts with those options."""
    return [
        diag(
            found.guard,
            f"docker_run {quoted(found.option)} of platform {profile.name}: {found.effect}",
            severity=Severity.WARNING,
            **doc.locate(("docker_run", found.entry)),
            key=f"docker_run.{found.entry}",
            hint="put it in the image instead" if found.guard == "RLC901" else ESCAPE_HINT,
        )
        for found in docker_run_hazards(profile.name, profile.docker_run)
    ]


def _validate_recipe(
    path: Path,
    catalog: Catalog,
    platforms: list[str] | None,
    defaults: Sequence[str],
    allow: Mapping[str, Allowance],
    *,
    judge: PlanJudge | None = None,
) -> list[Diagnostic]:
    source = load_recipe_source(str(path), catalog)
    recipe = resolve(source, catalog).recipe
    # the model and dataset it names, until filled in (on_validated_file moves them onto `model:`)
    named: list[tuple[Kind, str]] = [("model", recipe.model), ("dataset", recipe.dataset)]
    left = [
        d
        for kind, name in named
        for entry_file in [catalog.find(kind, name)]
        for d in todo_problems(ENTRY_MODELS[kind], load_yaml(entry_file, display_path(entry_file)))
    ]
    targets = platforms or list(dict.fromkeys([*defaults, *recipe.platforms]))
    known = catalog.names("platform")
    targets = [t for t in targets if t in known]
    found: list[tuple[str, Diagnostic]] = []
    for platform in targets:
        try:
            compiled = compile_request(Request(str(path), platform, allow=dict(allow)), catalog, source)
            diagnostics = compiled.diagnostics
            if judge is not None and not any(d.severity >= Severity.ERROR for d in diagnostics):
                diagnostics = [*diagnostics, *judge(compiled, path)]
        except RlcatError as exc:
            diagnostics = exc.diagnostics
        found += [(platform, d) for d in diagnostics]
    return left + one_per_problem(found, targets)

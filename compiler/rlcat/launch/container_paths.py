"""RLC1014: the paths of a plan that a container launch would not see, before anything starts.

In a container a path exists only when a mount covers it (`--mount`, the project's
`[launch].mounts`, a bind mount among the profile's `docker_run` flags) or it lives in the image
(`--in-image`). The paths looked at: the data files, every model and tokenizer path, the
checkpoint folder (when the plan saves checkpoints), the rollout and validation dump folders, and
the Hugging Face cache (the plan's HF_HOME / HF_HUB_CACHE / TRANSFORMERS_CACHE, else
`~/.cache/huggingface` when a model comes from the hub).

The container sees the host's HOME and working folder under their own names (docker and podman
get `-e HOME -e PWD -w "$PWD"` from the script; apptainer binds both by default), so `~`, `$HOME`,
`$PWD` and relative paths name the same folders as on the host; with apptainer HOME, the working
folder and /tmp are mounted already.

An input the container does not see (data, a model, a tokenizer) is an error: verl stops at
start-up. An output (checkpoints, dumps) outside every mount is written into the container, which
teardown removes (`docker run --rm`, a pyxis container) or which is read-only (apptainer's image):
an error unless `--allow-outputs-in-container` accepts losing them. A Hugging Face cache outside
every mount is a warning: each node downloads the model again at each launch.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rlcat.diagnostics import Diagnostic, Severity, Where, diag, printable
from rlcat.launch.base import Launch
from rlcat.launch.site import SitePath
from rlcat.syntax.docker_run import docker_run_flags

PATHS_CODE = "RLC1014"
INPUT_KEYS = (
    "data.train_files",
    "data.val_files",
    "custom_reward_function.path",
    "reward.custom_reward_function.path",
)
INPUT_SUFFIXES = (".model.path", ".tokenizer_path", ".model.tokenizer_path", ".model.local_path")
OUTPUT_KEYS = ("trainer.rollout_data_dir", "trainer.validation_data_dir")
CHECKPOINTS = "trainer.default_local_dir"
CACHE_ENV = ("HF_HUB_CACHE", "HF_HOME", "TRANSFORMERS_CACHE")
# verl's default checkpoint folder (trainer.default_local_dir in ppo_trainer.yaml), relative
VERL_CHECKPOINTS = "checkpoints/${trainer.project_name}/${trainer.experiment_name}"
# `org/name`: a model verl fetches from the Hugging Face hub (verl.utils.fs.copy_to_local leaves it
# to transformers, which downloads it into the cache)
_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")
_LEADING = {"${oc.env:HOME}": "HOME", "${oc.env:PWD}": "PWD"}


@dataclass(frozen=True)
class PlanPath:
    key: str
    text: str  # as the plan writes it
    path: SitePath
    kind: str  # input, output, cache
    where: Where


def to_site_path(text: str) -> SitePath | None:
    """A plan's path value as the container resolves it (None: a remote URI). The part before any
    other interpolation (`checkpoints/${trainer.project_name}`) is the folder that must be seen."""
    if "://" in text:
        return None
    variable = None
    for lead, name in _LEADING.items():
        if text.startswith(lead):
            variable, text = name, text[len(lead) :]
    if variable is None and text.startswith("~/"):
        variable, text = "HOME", text[1:]
    fixed = text.split("${", 1)[0]
    if fixed != text:
        fixed = posixpath.dirname(fixed)
    if variable is None and not fixed.startswith("/"):
        variable, fixed = "PWD", "/" + fixed  # relative: the working folder's
    return SitePath(variable, posixpath.normpath(fixed) if fixed not in ("", "/") else "/")


def plan_paths(launch: Launch) -> tuple[list[PlanPath], bool]:
    """The plan's paths, and whether a model comes from the Hugging Face hub."""
    compiled = launch.compiled
    found: list[PlanPath] = []
    hub = False
    values = {o.key: o for o in compiled.overrides}
    for key, override in values.items():
        bare = key.lstrip("+")
        kind = (
            "input"
            if bare in INPUT_KEYS or bare.endswith(INPUT_SUFFIXES)
            else "output"
            if bare in OUTPUT_KEYS or bare == CHECKPOINTS
            else None
        )
        if kind is None:
            continue
        value: Any = override.setting.value
        for text in value if isinstance(value, list) else [value]:
            if not isinstance(text, str) or not text:
                continue
            if kind == "input" and bare.endswith(INPUT_SUFFIXES) and _HUB_ID.fullmatch(text):
                hub = True
                continue
            path = to_site_path(text)
            if path is not None:
                found.append(PlanPath(bare, text, path, kind, override.setting.origin.position()))
    if CHECKPOINTS not in values and _saves_checkpoints(values):
        path = to_site_path(VERL_CHECKPOINTS)
        assert path is not None
        found.append(PlanPath(CHECKPOINTS, VERL_CHECKPOINTS + " (verl's default)", path, "output", {}))
    for setting in compiled.env:
        if setting.key in CACHE_ENV:
            path = to_site_path(str(setting.value))
            if path is not None:
                found.append(
                    PlanPath(setting.key, str(setting.value), path, "cache", setting.origin.position())
                )
    return found, hub


def _saves_checkpoints(values: dict[str, Any]) -> bool:
    save = values.get("trainer.save_freq")
    return save is not None and isinstance(save.setting.value, int) and save.setting.value > 0


def profile_mounts(launch: Launch) -> list[SitePath]:
    """The container folders the profile's `docker_run` binds (`-v SRC:DST`, `--mount
    type=bind,...,target=DST`)."""
    found = []
    for flag in docker_run_flags(launch.compiled.profile.docker_run).flags:
        value = flag.value or ""
        if flag.name == "--volume" and value.count(":") >= 1 and value.startswith("/"):
            found.append(SitePath(None, value.split(":")[1]))
        elif flag.name == "--mount":
            fields = dict(part.partition("=")[::2] for part in value.split(","))
            target = fields.get("target") or fields.get("dst") or fields.get("destination")
            if fields.get("type") == "bind" and target:
                found.append(SitePath(None, target))
    return found


def container_path_problems(launch: Launch, container: str, allow_outputs: bool) -> list[Diagnostic]:
    """RLC1014 for every path of the plan no mount covers and the image does not hold."""
    if container == "none":
        return []
    site = launch.options.site
    seen = [m.target for m in site.mounts] + profile_mounts(launch)
    if container == "apptainer":  # apptainer's default binds
        seen += [SitePath("HOME", "/"), SitePath("PWD", "/"), SitePath(None, "/tmp")]
    covered = [p.local() for p in [*seen, *site.in_image]]
    paths, hub = plan_paths(launch)
    passed = {g.text for g in site.pass_env}
    if hub and not any(p.kind == "cache" for p in paths) and not passed & set(CACHE_ENV):
        paths.append(
            PlanPath(
                "HF_HOME",
                "~/.cache/huggingface (the default)",
                SitePath("HOME", "/.cache/huggingface"),
                "cache",
                {},
            )
        )
    problems = []
    for path in paths:
        if _under(path.path.local(), covered):
            continue
        problems.append(_problem(path, container, allow_outputs))
    return problems


def _under(path: str, folders: Sequence[str]) -> bool:
    return any(path == f or path.startswith(f.rstrip("/") + "/") for f in folders)


def _problem(path: PlanPath, container: str, allow_outputs: bool) -> Diagnostic:
    shown = printable(path.text)
    where = {k: v for k, v in path.where.items() if v is not None} or {"argument": f"--container {container}"}
    where = {**where, "key": path.key}
    folder = path.path.shown() if path.kind != "input" else posixpath.dirname(path.path.shown()) or "/"
    mount = f"--mount {folder}:{folder}"
    if path.kind == "input":
        message = (
            f"{path.key} is {path.path.shown()}, which no mount of the {container} container covers: "
            "verl would not find it"
        )
        hint = f"{mount} (or a folder above it), or --in-image PATH when the image holds it"
        severity = Severity.ERROR
    elif path.kind == "cache":
        message = (
            f"the Hugging Face cache ({path.key}: {shown}) is inside the {container} container: each node "
            "downloads the model again at every launch, and loses it at teardown"
        )
        hint = f"{mount}, or set {path.key} in the recipe's env to a mounted folder"
        severity = Severity.WARNING
    else:
        message = (
            f"{path.key} is {shown}, inside the {container} container: what verl writes there is lost "
            "when the job's teardown removes the container"
        )
        hint = f"{mount} (or a folder above it)" + (
            "" if allow_outputs else ", or --allow-outputs-in-container to accept losing it"
        )
        severity = Severity.WARNING if allow_outputs else Severity.ERROR
    return diag(PATHS_CODE, message, severity=severity, hint=hint, **where)

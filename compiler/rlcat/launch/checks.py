"""The checks a launch runs before anything starts. Each returns diagnostics (RLC10xx); none
changes the launch. Which target runs which is said in the target's `checks`."""

from __future__ import annotations

import fnmatch
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rlcat.diagnostics import Diagnostic, diag, printable
from rlcat.inside import link_leaves, link_target
from rlcat.launch.base import Launch
from rlcat.launch.command import GpuPool
from rlcat.launch.site import check_pass_env
from rlcat.launch.verl_ray_env import keys_verl_sets

# Ray refuses a working_dir package above 100 MiB (ray/_private/runtime_env/packaging.py,
# GCS_STORAGE_MAX_SIZE): the upload fails with HTTPRequestEntityTooLarge after zipping it all.
WORKING_DIR_LIMIT = 100 * 1024 * 1024
# The paths the working_dir check looks at, at most: links inside that fan out (a folder of links to
# a folder of links...) make a tree Ray's upload would walk for ever; far above any project's.
MAX_PACKED_PATHS = 200_000

GPU_VISIBILITY = ("ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES")
# The NOSET variables the Ray job supervisor removes from the driver's runtime env when the job
# names no entrypoint resources (ray/dashboard/modules/job/job_supervisor.py,
# _get_driver_runtime_env: "workaround for GPU detection introduced in #24546").
NOSET_DROPPED_WITHOUT_RESOURCES = (
    "RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES",
    "RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES",
    "RAY_WORKER_NICENESS",
)


def verl_env_conflicts(launch: Launch) -> list[Diagnostic]:
    """RLC1003: a job env key that verl's own ray.init also sets; Ray refuses to merge them."""
    compiled = launch.compiled
    config = {o.key: o.setting.value for o in compiled.overrides}
    verl_keys = keys_verl_sets(compiled.profile.verl_index, config)
    return [
        diag(
            "RLC1003",
            f"{var.name} is in the job's runtime env, and {verl_keys[var.name]}: Ray refuses the "
            "run at verl's ray.init (\"Failed to merge the Job's runtime env\")",
            key=var.name,
            hint="set it on the cluster's nodes before `ray start` instead (or leave it out: verl "
            "forwards it itself)",
            **var.where,
        )
        for var in launch.command.env
        if var.name in verl_keys
    ]


def dollar_in_env(launch: Launch) -> list[Diagnostic]:
    """RLC1004: Ray runs os.path.expandvars over job env values and deletes unknown `${NAME}`
    (ray/_private/utils.py update_envs); there is no escape for a literal `$`."""
    return [
        diag(
            "RLC1004",
            f"{var.name}={printable(var.value)} holds `$`, and Ray expands job env values on each "
            "node (an unknown ${NAME} becomes empty); there is no way to pass a literal `$`",
            key=var.name,
            hint="set the value on the cluster's nodes before `ray start`, or spell it without `$`",
            **var.where,
        )
        for var in launch.command.env
        if "$" in var.value
    ]


def gpu_visibility(launch: Launch) -> list[Diagnostic]:
    """RLC1005: on ROCm, at most one GPU-visibility variable in the Ray processes' env. Ray >= 2.45
    refuses ROCR_ next to HIP_VISIBLE_DEVICES, and verl/single_controller/base/worker.py raises
    "Please don't set ROCR_VISIBLE_DEVICES when HIP/CUDA_VISIBLE_DEVICES is set"."""
    if launch.compiled.profile.family != "rocm":
        return []
    found = [var for var in launch.command.env if var.name in GPU_VISIBILITY]
    if len(found) < 2:
        return []
    names = ", ".join(var.name for var in found)
    return [
        diag(
            "RLC1005",
            f"the env sets {names}: on ROCm Ray and verl accept one GPU-visibility variable",
            key=found[1].name,
            hint="keep one (HIP_VISIBLE_DEVICES), or none and let the NOSET variables leave "
            "visibility to verl",
            **found[1].where,
        )
    ]


def noset_survives(launch: Launch) -> list[Diagnostic]:
    """RLC1009: without entrypoint resources Ray's job supervisor drops some NOSET variables from
    the driver's runtime env, so every task and actor sees visibility set by Ray after all."""
    if launch.options.entrypoint_cpus > 0:
        return []
    return [
        diag(
            "RLC1009",
            f"{var.name} is dropped by Ray's job supervisor when the job names no entrypoint "
            "resources, and Ray then sets GPU visibility per actor after all",
            key=var.name,
            argument="--entrypoint-cpus 0",
            hint="keep --entrypoint-cpus above 0 (the default is 1)",
        )
        for var in launch.command.env
        if var.name in NOSET_DROPPED_WITHOUT_RESOURCES
    ]


def working_dir(folder: Path, excludes: Sequence[str]) -> list[Diagnostic]:
    """RLC1007: the working_dir must be a readable folder whose files, less `excludes`, stay under
    Ray's 100 MiB package limit; the biggest files are named so they can be excluded. RLC011: a
    link in it that leads out of it (Ray's upload would pack what it names: a model, credentials),
    or back into a folder it sits in (Ray's walk would never end)."""
    where = {"argument": f"--working-dir {folder}"}
    if not folder.is_dir():
        return [diag("RLC1007", "not a folder", **where)]
    packed = packed_files(folder, excludes)
    if packed.problems:
        return packed.problems
    sizes = sorted(((size, path) for path, size in packed.files), reverse=True)
    total = sum(size for size, _ in sizes)
    if total <= WORKING_DIR_LIMIT:
        return []
    biggest = ", ".join(f"{printable(path)} ({size / 2**20:.0f} MiB)" for size, path in sizes[:3])
    return [
        diag(
            "RLC1007",
            f"the working_dir holds {total / 2**20:.0f} MiB after excludes, over Ray's 100 MiB "
            f"limit; the biggest: {biggest}",
            hint="exclude them with --exclude PATTERN, or leave out --working-dir when verl is in the image",
            **where,
        )
    ]


@dataclass
class Packed:
    """What Ray's upload would pack from a working_dir: (path relative to it, size) of each file,
    and what stops the launch before anything is packed."""

    files: list[tuple[str, int]] = field(default_factory=list)
    problems: list[Diagnostic] = field(default_factory=list)  # links out, loops, a tree too large


def packed_files(folder: Path, excludes: Sequence[str]) -> Packed:
    """The files Ray's upload packs, found as it finds them (ray/_private/runtime_env/packaging.py,
    _dir_travel and _zip_files): links are followed, to files and to folders alike, and each path
    is matched against the excludes as it is named inside the working_dir (gitignore-like: a name,
    a glob, or a path from the folder; an excluded folder is skipped with everything under it).
    Only regular files are packed (a FIFO or a device is passed by, as Ray does). A link out of
    the folder, or into a folder it sits in, is RLC011 (inside.link_leaves), and not followed."""
    packed = Packed()
    top = os.path.realpath(folder)
    shown = str(folder)
    stack: list[tuple[Path, str, tuple[str, ...]]] = [(folder, "", (top,))]  # folder, rel, real chain
    visited = 0
    while stack:
        current, rel_root, chain = stack.pop()
        try:
            names = sorted(os.listdir(current))
        except OSError:
            continue  # Ray's own walk fails on it and says so
        visited += len(names)
        if visited > MAX_PACKED_PATHS:  # links inside that fan out: Ray would pack it all, many times
            packed.problems.append(
                diag(
                    "RLC1007",
                    f"the working_dir names more than {MAX_PACKED_PATHS} paths (links followed, as "
                    "Ray's upload follows them)",
                    argument=f"--working-dir {shown}",
                    hint="exclude what the job does not need with --exclude PATTERN",
                )
            )
            break
        for name in names:
            rel = os.path.join(rel_root, name) if rel_root else name
            path = current / name
            if _excluded(rel, excludes):
                continue
            if os.path.islink(path) and link_leaves(path, top) is not None:
                packed.problems.append(_link_problem(shown, rel, link_target(path), loop=False))
                continue
            try:
                info = os.stat(path)
            except OSError:
                continue  # a dangling link or a loop: Ray's walk passes it by
            if stat.S_ISDIR(info.st_mode):
                real = os.path.realpath(path)
                if real in chain and os.path.islink(path):
                    packed.problems.append(_link_problem(shown, rel, link_target(path), loop=True))
                else:
                    stack.append((path, rel, (*chain, real)))
            elif stat.S_ISREG(info.st_mode):
                packed.files.append((rel, info.st_size))
    return packed


def _link_problem(folder: str, rel: str, target: str, *, loop: bool) -> Diagnostic:
    what = (
        "a folder it sits in: Ray's upload would walk it without end"
        if loop
        else ("outside it: Ray's upload would pack what it names; not uploaded")
    )
    return diag(
        "RLC011",
        printable(f"{'link loop: ' if loop else ''}{rel} in the working_dir is a link to {target}, {what}"),
        argument=f"--working-dir {folder}",
        hint="remove the link, or --exclude it"
        if loop
        else "copy what the job needs into the working_dir, remove the link, or --exclude it",
    )


def _excluded(rel: str, excludes: Sequence[str]) -> bool:
    name = os.path.basename(rel)
    for pattern in excludes:
        bare = pattern.strip("/")
        if fnmatch.fnmatch(name, bare) or fnmatch.fnmatch(rel, bare) or fnmatch.fnmatch(rel, f"**/{bare}"):
            return True
    return False


def gpus_fit(pools: Sequence[GpuPool], node_gpus: Sequence[float], resource: str = "GPU") -> list[Diagnostic]:
    """RLC1002: the plan's pools on the cluster's alive nodes. verl asks for one STRICT_PACK
    placement group of n_gpus_per_node GPUs per node of a pool (verl 0.9.1
    verl/single_controller/ray/base.py:131-157, get_placement_groups), so a group never spans
    nodes: the check places the groups, biggest first, on the nodes' GPUs, after verl's own total
    (base.py:241, "Total available GPUs ... is less than total desired GPUs")."""
    need = sum(p.gpus for p in pools)
    have = sum(node_gpus)
    shape = " + ".join(f"{p.name} {p.nnodes}×{p.gpus_per_node}" for p in pools)
    nodes = ", ".join(f"{g:g}" for g in sorted(node_gpus, reverse=True)) or "none"
    if need > have:
        message = f"the plan needs {need} {resource}s ({shape}); the cluster has {have:g} (per node: {nodes})"
    elif not _place([p.gpus_per_node for p in pools for _ in range(p.nnodes)], list(node_gpus)):
        message = (
            f"the plan's bundles ({shape}) do not fit on the cluster's nodes ({resource}s per node: {nodes})"
        )
    else:
        return []
    return [
        diag(
            "RLC1002",
            message + "; verl would wait for its placement groups forever or stop with "
            "'Total available GPUs ... is less than total desired GPUs'",
            hint="start the missing nodes, or size the recipe's resources to the cluster",
        )
    ]


def _place(bundles: list[int], free: list[float]) -> bool:
    for bundle in sorted(bundles, reverse=True):
        fitting = [i for i, gpus in enumerate(free) if gpus >= bundle]
        if not fitting:
            return False
        best = min(fitting, key=lambda i: free[i])  # the tightest node keeps big nodes for big bundles
        free[best] -= bundle
    return True


# Variables that carry a credential some plans need, and what needs them.
WANDB_KEY = "WANDB_API_KEY"
HF_TOKENS = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")


def pass_env_conflicts(launch: Launch) -> list[Diagnostic]:
    """RLC1013: a --pass-env name the plan's env sets (two values of one variable)."""
    planned = [var.name for var in launch.command.env]
    return [p for given in launch.options.site.pass_env if (p := check_pass_env(given, planned)) is not None]


def missing_credentials(launch: Launch, where: str) -> list[Diagnostic]:
    """RLC1015 (a warning): the plan logs to wandb without WANDB_API_KEY reaching the job, or trains
    a model the catalog marks gated without HF_TOKEN; `where` says why the submitter's own
    variables do not reach it (the caller decides that they do not)."""
    reaching = {var.name for var in launch.command.env} | {g.text for g in launch.options.site.pass_env}
    logger = next((o for o in launch.compiled.overrides if o.key.lstrip("+") == "trainer.logger"), None)
    loggers = logger.setting.value if logger is not None else []
    found = []
    if isinstance(loggers, list) and "wandb" in loggers and WANDB_KEY not in reaching:
        found.append(
            diag(
                "RLC1015",
                f"the plan logs to wandb (trainer.logger), and {WANDB_KEY} does not reach the job: {where}; "
                "wandb stops the trainer at start-up asking for a login",
                key="trainer.logger",
                hint=f"--pass-env {WANDB_KEY} (its value stays out of the artifact), or [launch].pass_env "
                "in the project file",
                **logger.setting.origin.position(),  # type: ignore[union-attr]
            )
        )
    model = launch.compiled.model
    if model is not None and model.gated and not reaching & set(HF_TOKENS):
        found.append(
            diag(
                "RLC1015",
                f"{model.hf_id} is gated on the Hugging Face hub, and HF_TOKEN does not reach the job: "
                f"{where}; the download is refused (401)",
                key="model",
                hint="--pass-env HF_TOKEN, or a model folder the nodes already have",
            )
        )
    return found

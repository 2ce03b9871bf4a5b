"""How the sbatch script of `--target slurm` runs a command on a node, per `--container` runtime.

Every per-node command of the script (the env probe, `ray start`, the readiness check, the trainer)
goes through one bash function, `on_node`, so `ray start`, the checks and the entrypoint run in the
same container (failure mode 8 of launch_facts: a driver outside the container that holds the
raylet). This module writes that function's body and the steps that start and remove containers:

- docker, podman: one long-lived container per node (`run -d`), started with the platform profile's
  `docker_run` flags and `-e NAME` for every plan env var and every `--pass-env` name, so the env is
  in the container before `ray start` (failure mode 3: `exec -e` reaches the driver only), and with
  the host's HOME and working folder (`-e HOME -e PWD -w "$PWD"`, as apptainer has them), so the
  plan's `~`, `$PWD` and relative paths name the same folders as on the host, and with Slurm's name
  for the node (`-e SLURMD_NODENAME`), so a check inside names the node as Slurm does; commands go
  through `exec`.
- apptainer: `apptainer exec IMAGE` per command; apptainer passes the host env through and binds
  HOME, the working folder and /tmp.
- pyxis: `srun --container-image=IMAGE --container-name=NAME`, a named container shared by the
  job's steps on a node, in the working folder; pyxis passes the step's env through.
- none: the command as it is, in the step's env (the CI path: no container runtime runs there).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import get_args

from rlcat.launch.base import Launch, image_of
from rlcat.model.project import ContainerKind
from rlcat.syntax.bash import shell_word
from rlcat.syntax.docker_run import docker_run_flags

CONTAINERS: tuple[str, ...] = get_args(ContainerKind)
# the container's name on every node; one job, one name (a job id is unique on the cluster)
CONTAINER_NAME = '"rlcat-$SLURM_JOB_ID"'
# `rm -f` at teardown, once `ray stop` has run: docker kills the container at once; podman first
# sends SIGTERM and waits 10 s, which `sleep infinity` as the container's first process ignores, so
# every podman teardown took 10 s more than it needed (measured on the suite's podman site)
_NO_GRACE = {"docker": "", "podman": " -t 0"}


@dataclass(frozen=True)
class Runtime:
    """The container runtime's part of the script: `srun` options, the words before a command on a
    node, and the steps that start and remove the containers (bash lines, already escaped)."""

    srun_options: tuple[str, ...] = ()
    prefix: tuple[str, ...] = ()
    start: tuple[str, ...] = ()
    stop: tuple[str, ...] = ()


def container_of(launch: Launch) -> str:
    """--container, else docker when the launch has an image and none when it has not."""
    return launch.options.container or ("docker" if image_of(launch) else "none")


def runtime(launch: Launch, env_names: list[str], every_node: str) -> Runtime:
    """The runtime of `launch`; `env_names` go into a docker/podman container's env, `every_node`
    is the `srun` prefix (escaped) that runs one task on each node of the job."""
    kind = container_of(launch)
    image = image_of(launch) or ""
    mounts = [mount.bash() for mount in launch.options.site.mounts]
    if kind in ("docker", "podman"):
        passed = [given.text for given in launch.options.site.pass_env]
        run = [
            f"{kind} run -d --rm --name={CONTAINER_NAME}",
            *(" ".join(shell_word(word) for word in flag) for flag in _run_flags(launch, kind)),
            *(f"-v {mount}" for mount in mounts),
            *(f"-e {name}" for name in [*env_names, *passed]),
            '-e HOME -e PWD -e SLURMD_NODENAME -w "$PWD"',
            f"{shell_word(image)} sleep infinity",
        ]
        return Runtime(
            prefix=(kind, "exec", CONTAINER_NAME),
            start=(f"{every_node} \\\n    " + " \\\n    ".join(run),),
            stop=(f"{every_node} {kind} rm -f{_NO_GRACE[kind]} {CONTAINER_NAME} >/dev/null 2>&1 || true",),
        )
    if kind == "apptainer":
        gpu_flag = "--rocm" if launch.compiled.profile.vendor == "amd" else "--nv"
        uri = image if image.endswith(".sif") or "://" in image else f"docker://{image}"
        binds = [f"--bind={mount}" for mount in mounts]
        return Runtime(prefix=("apptainer", "exec", gpu_flag, *binds, shell_word(uri)))
    if kind == "pyxis":
        options = [
            f"--container-image={shell_word(image)}",
            f"--container-name={CONTAINER_NAME}",
            '--container-workdir="$PWD"',
        ]
        if mounts:
            options.append(f"--container-mounts={','.join(mounts)}")
        return Runtime(srun_options=tuple(options))
    return Runtime()


def _run_flags(launch: Launch, kind: str) -> list[tuple[str, ...]]:
    """The profile's `docker_run` flags (the words of each entry, syntax.docker_run), with host
    networking, the GPUs and shared memory added when the profile leaves them out: Ray and NCCL need
    the node's own addresses, Ray's object store /dev/shm (failure mode 8)."""
    parsed = docker_run_flags(launch.compiled.profile.docker_run)
    names = {flag.name for flag in parsed.flags}
    added: list[str] = []
    if not any(flag.name == "--network" and flag.value == "host" for flag in parsed.flags):
        added.append("--network=host")
    if launch.compiled.profile.vendor == "nvidia" and not names & {"--device", "--gpus"}:
        # docker's NVIDIA runtime flag; podman reaches the GPUs through CDI
        added.append("--gpus=all" if kind == "docker" else "--device=nvidia.com/gpu=all")
    if not names & {"--shm-size", "--ipc"}:
        added.append("--ipc=host")
    return [*parsed.words, *([tuple(added)] if added else [])]

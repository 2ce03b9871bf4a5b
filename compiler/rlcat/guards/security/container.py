from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache

from rlcat.catalog import Catalog, builtin_root
from rlcat.diagnostics import Severity
from rlcat.guards.base import Context, Finding, Guard, register
from rlcat.guards.security.environment import docker_run_variables
from rlcat.guards.security.values import quoted
from rlcat.syntax.docker_run import DockerFlag, DockerRunError, docker_run_flags, host_path_hazard

ESCAPE_GUARD = "RLC904"
ENV_GUARD = "RLC901"


@dataclass(frozen=True)
class FlagHazard:
    """What one `docker_run` option of a profile makes a launch do: the guard that reports it, the
    profile entry (its index) that holds it, the option as written, and its effect."""

    guard: str
    entry: int
    option: str
    effect: str


# Capabilities that reach past the container (docker run reference, Runtime privilege and Linux
# capabilities; capabilities(7)): mounts and namespaces, kernel modules, raw I/O and memory, reading
# any file by handle (the "shocker" escape), rebooting, eBPF programs.
ESCAPING_CAPABILITIES = frozenset(
    {"ALL", "SYS_ADMIN", "SYS_MODULE", "SYS_RAWIO", "DAC_READ_SEARCH", "SYS_BOOT", "BPF"}
)
# Devices that are the host's memory or disks.
HOST_DEVICES = re.compile(
    r"^/dev/(mem|kmem|port|sd[a-z].*|hd[a-z].*|vd[a-z].*|xvd[a-z].*|nvme\d.*|dm-\d+|mapper/.*)$"
)
# namespaces a container shares with the host only by these values
HOST_NAMESPACES = {
    "--pid": "every process of the host: it sees them, signals them and (with SYS_PTRACE) reads their memory",
    "--userns": "the host's users: root in the container is root on the host (no user-namespace remapping)",
}


def _capability(name: str) -> str:
    return name.upper().removeprefix("CAP_")


def _mount_source(flag: DockerFlag) -> str | None:
    """The host path a `--volume`/`--mount` binds, or None (a named volume, tmpfs)."""
    value = flag.value or ""
    if flag.name == "--volume":
        source = value.split(":", 1)[0]
        return source if source.startswith("/") else None
    fields = dict(part.partition("=")[::2] for part in value.split(","))
    if fields.get("type", "volume") != "bind":
        return None
    return fields.get("source") or fields.get("src")


def _escape(flag: DockerFlag) -> str | None:
    """Why `flag` reaches past the container, or None."""
    name, value = flag.name, flag.value or ""
    if name == "--privileged" and value.lower() not in ("false", "0"):
        return (
            "the container gets every host device and every capability: its processes can mount the "
            "host's disks and load kernel modules"
        )
    if name == "--entrypoint":
        return (
            "replaces the image's entrypoint: the container runs that program instead, with the "
            "launch's own command as its arguments"
        )
    if name in ("--volume", "--mount"):
        source = _mount_source(flag)
        touches = host_path_hazard(source) if source else None
        if touches is None:
            return None
        return f"mounts host folder {source} ({touches}) into the container: host code and credentials"
    if name == "--volumes-from":
        return "mounts every volume of another container, whatever it holds"
    if name in HOST_NAMESPACES and value == "host":
        return f"shares {HOST_NAMESPACES[name]}"
    if name == "--cap-add" and _capability(value) in ESCAPING_CAPABILITIES:
        return f"adds capability {_capability(value)}, which reaches past the container (capabilities(7))"
    if name == "--device" and HOST_DEVICES.match(value.split(":", 1)[0]):
        return f"gives the container the host's {value.split(':', 1)[0]}: the host's memory or disk"
    if name == "--security-opt" and value.replace(":", "=") == "systempaths=unconfined":
        return "unmasks /proc and /sys paths the runtime hides (/proc/kcore, /sys/firmware)"
    if name == "--env-file":
        return f"loads variables from {value}, which the environment check ({ENV_GUARD}) cannot read"
    return None


@cache
def shipped_docker_run(platform: str) -> frozenset[str]:
    """The `docker_run` entries of the platform profile rlcat ships by that name (none when it ships
    none). They were reviewed with rlcat, as the installation is trusted (SECURITY.md): the ROCm
    profiles carry verl's documented `docker run` line, `--privileged` included. A user catalog
    folder cannot change this answer: only the built-in root is read."""
    catalog = Catalog([builtin_root()])
    if platform not in catalog.names("platform"):
        return frozenset()
    # imported here: loading a profile needs the pydantic models, which a cold `rlcat lint` leaves out
    from rlcat.resolve.entries import load_platform

    profile, _ = load_platform(platform, catalog)
    return frozenset(profile.docker_run)


def docker_run_hazards(platform: str, docker_run: Sequence[str]) -> list[FlagHazard]:
    """Every option of a profile's `docker_run` that changes what the container runs or reaches
    past it: `-e`/`--env` variables judged as `env:` is (RLC901), the other escapes (RLC904), in
    entry order. An entry the shipped profile of that name holds as written is not a hazard (the
    installation is trusted); one that does not parse is the profile model's refusal."""
    try:
        flags = docker_run_flags(docker_run).flags
    except DockerRunError:
        return []
    found = [
        FlagHazard(ENV_GUARD, v.entry, v.option, v.hazard.effect) for v in docker_run_variables(docker_run)
    ]
    for flag in flags:
        why = _escape(flag)
        if why is not None:
            option = flag.name if flag.value is None else f"{flag.name}={flag.value}"
            found.append(FlagHazard(ESCAPE_GUARD, flag.entry, option, why))
    if not found:
        return []
    shipped = shipped_docker_run(platform)
    return sorted((h for h in found if docker_run[h.entry] not in shipped), key=lambda h: h.entry)


@register
class ContainerThatReachesTheHost(Guard):
    """A platform profile's `docker_run` gives the container the host, or another program to run.

    **Why**: `rlcat launch --target slurm --container docker|podman` starts one container per node
    with the profile's `docker_run` flags, and every process of the launch runs in it. A pull request
    that changes a profile in a catalog folder changes those flags for every recipe on the platform,
    and nothing in a recipe shows it. The flags reported: `--privileged` (every device and
    capability: the container can mount the host's disks); `--entrypoint` (another program runs);
    a bind mount (`-v`, `--volume`, `--mount type=bind`) of the host's root or of a folder that holds
    code, credentials or the container runtime (`/etc`, `/root`, `/home`, `/boot`, `/usr`, `/bin`,
    `/sbin`, `/lib`, `/lib64`, `/opt`, `/proc`, `/sys`, `/dev`, `/run`, `/var/run`,
    `/var/lib/docker`, `/var/lib/containerd`, `/var/lib/kubelet`, a folder inside one or one that
    holds one); `--volumes-from`; `--pid=host` and `--userns=host`; `--cap-add` of `ALL`,
    `SYS_ADMIN`, `SYS_MODULE`, `SYS_RAWIO`, `DAC_READ_SEARCH`, `SYS_BOOT` or `BPF`; `--device` of the
    host's memory or disks (`/dev/mem`, `/dev/sda`, `/dev/nvme0n1`, ...);
    `--security-opt systempaths=unconfined`; and `--env-file`, whose variables RLC901 cannot judge.
    `-e`/`--env` variables are judged by RLC901, as a recipe's `env:` is. The finding points at the
    profile entry when the profile file is validated, and at the recipe that runs on the platform.
    An entry of the profile rlcat ships by the same name, as written, is not reported: the
    installation is trusted, and its ROCm profiles carry verl's documented container line,
    `--privileged` included. The same entry in a team's profile is.

    Not reported: `--network=host` and `--ipc=host` (the launch adds them itself: Ray and NCCL need
    the node's addresses, Ray's object store its shared memory); `--device` of accelerators
    (`/dev/kfd`, `/dev/dri`, `/dev/infiniband`); `--cap-add=SYS_PTRACE` (the container's own
    processes only, without `--pid=host`); `--security-opt seccomp=unconfined` or
    `apparmor=unconfined` (more system calls, no capability the container did not have); mounts of
    data folders (`/data`, `/scratch`), which `rlcat launch --mount` adds from the command line.

    **Bad**:

    ```yaml
    docker_run:
      - --privileged
      - -v /:/host
      - --entrypoint /host/tmp/run.sh
    ```

    **Good**: the devices the accelerators need, and data mounts given where the launch is typed
    (`rlcat launch ... --mount /scratch:/scratch`).

    ```yaml
    docker_run:
      - --device /dev/kfd
      - --device /dev/dri
      - --group-add video
    ```
    """

    id = ESCAPE_GUARD
    name = "container_that_reaches_the_host"
    title = "the platform's docker_run flags give the container the host or another program"
    severity = Severity.WARNING
    source = (
        "Docker docs, docker container run (--privileged, --entrypoint, -v, --mount, --pid, --userns, "
        "--cap-add, --device, --security-opt): https://docs.docker.com/reference/cli/docker/container/run/",
        "Docker docs, Runtime privilege and Linux capabilities: "
        "https://docs.docker.com/engine/containers/run/#runtime-privilege-and-linux-capabilities",
        "capabilities(7): https://man7.org/linux/man-pages/man7/capabilities.7.html",
    )
    since = "0.1.0"

    def check(self, ctx: Context) -> Iterator[Finding]:
        for found in docker_run_hazards(ctx.profile.name, ctx.profile.docker_run):
            if found.guard == self.id:
                yield Finding(
                    f"docker_run {quoted(found.option)} of platform {ctx.profile.name}: {found.effect}",
                    hint=ESCAPE_HINT,
                )


ESCAPE_HINT = (
    "give the container only the devices it needs; data mounts belong on the command line "
    "(rlcat launch --mount), where the person who starts the launch sees them"
)

"""A platform profile's `docker_run` flags as `docker run` and `podman run` read them: the one parse
(docker_run_flags) that the profile model (refusing what does not parse, where it is written), the
security guards (judging each flag), the sbatch script (passing the words on) and the docs page use.

Each profile entry is one or more options, split as a POSIX shell splits words (shlex), then paired
with their values as the docker CLI pairs them: `--name=value`, `--name value`, `-e value`, `-evalue`,
and combined short booleans (`-it`). A bare word is refused: after the launcher's own flags it would
become the image or its command. So is an option whose value could be read two ways (one rlcat does
not know, followed by a word: docker would take that word as the image if the option is a switch)."""

from __future__ import annotations

import posixpath
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

# docker run's switches (docker 28 `docker run --help`; podman run reads them alike). Every other
# known option takes a value.
SWITCHES = frozenset(
    {
        "--detach",
        "--disable-content-trust",
        "--init",
        "--interactive",
        "--no-healthcheck",
        "--oom-kill-disable",
        "--privileged",
        "--publish-all",
        "--quiet",
        "--read-only",
        "--rm",
        "--sig-proxy",
        "--tty",
        "--use-api-socket",
    }
)
VALUED = frozenset(
    {
        "--add-host", "--annotation", "--attach", "--blkio-weight", "--blkio-weight-device",
        "--cap-add", "--cap-drop", "--cgroup-parent", "--cgroupns", "--cidfile", "--cpu-period",
        "--cpu-quota", "--cpu-rt-period", "--cpu-rt-runtime", "--cpu-shares", "--cpus",
        "--cpuset-cpus", "--cpuset-mems", "--detach-keys", "--device", "--device-cgroup-rule",
        "--device-read-bps", "--device-read-iops", "--device-write-bps", "--device-write-iops",
        "--dns", "--dns-option", "--dns-search", "--domainname", "--entrypoint", "--env",
        "--env-file", "--expose", "--gpus", "--group-add", "--health-cmd", "--health-interval",
        "--health-retries", "--health-start-interval", "--health-start-period", "--health-timeout",
        "--hostname", "--ip", "--ip6", "--ipc", "--isolation", "--kernel-memory", "--label",
        "--label-file", "--link", "--link-local-ip", "--log-driver", "--log-opt", "--mac-address",
        "--memory", "--memory-reservation", "--memory-swap", "--memory-swappiness", "--mount",
        "--name", "--network", "--network-alias", "--oom-score-adj", "--pid", "--pids-limit",
        "--platform", "--publish", "--pull", "--restart", "--runtime", "--security-opt",
        "--shm-size", "--stop-signal", "--stop-timeout", "--storage-opt", "--sysctl", "--tmpfs",
        "--ulimit", "--user", "--userns", "--uts", "--volume", "--volume-driver", "--volumes-from",
        "--workdir",
    }
)  # fmt: skip
SHORT = {
    "-a": "--attach",
    "-c": "--cpu-shares",
    "-d": "--detach",
    "-e": "--env",
    "-h": "--hostname",
    "-i": "--interactive",
    "-l": "--label",
    "-m": "--memory",
    "-P": "--publish-all",
    "-p": "--publish",
    "-q": "--quiet",
    "-t": "--tty",
    "-u": "--user",
    "-v": "--volume",
    "-w": "--workdir",
}
ALIASES = {"--net": "--network", "--net-alias": "--network-alias"}


@dataclass(frozen=True)
class DockerFlag:
    """One option of a profile's `docker_run`: its long name, its value (None for a switch), and
    the index of the profile entry that holds it."""

    name: str
    value: str | None
    entry: int


@dataclass(frozen=True)
class DockerRun:
    """A profile's `docker_run`, parsed: the words of each entry as written (what the sbatch script
    passes on) and the options they hold."""

    words: tuple[tuple[str, ...], ...]
    flags: tuple[DockerFlag, ...]


class DockerRunError(ValueError):
    """An entry that does not parse; `entry` is its index in `docker_run`."""

    def __init__(self, entry: int, message: str) -> None:
        super().__init__(message)
        self.entry = entry


def docker_run_flags(entries: Sequence[str]) -> DockerRun:
    """Every entry split into words and options; DockerRunError for the first that does not parse."""
    words: list[tuple[str, ...]] = []
    flags: list[DockerFlag] = []
    for index, entry in enumerate(entries):
        try:
            split = shlex.split(entry)
        except ValueError as exc:  # shlex: "No closing quotation", "No escaped character"
            raise DockerRunError(index, f"{entry!r} does not split into words: {exc}") from None
        if not split:
            raise DockerRunError(index, "an empty entry: remove it")
        words.append(tuple(split))
        flags += _options(split, index)
    return DockerRun(tuple(words), tuple(flags))


def _options(words: list[str], index: int) -> list[DockerFlag]:
    found: list[DockerFlag] = []
    rest = list(words)
    while rest:
        word = rest.pop(0)
        if word.startswith("--") and len(word) > 2:
            name, eq, value = word.partition("=")
            name = ALIASES.get(name, name)
            if eq:
                found.append(DockerFlag(name, value, index))
            elif name in SWITCHES or (name not in VALUED and not rest):
                found.append(DockerFlag(name, None, index))
            elif name in VALUED:
                if not rest:
                    raise DockerRunError(index, f"{name} needs a value")
                found.append(DockerFlag(name, rest.pop(0), index))
            else:
                raise DockerRunError(
                    index,
                    f"{name} is an option rlcat does not know, followed by {rest[0]!r}: "
                    f"write it as {name}={rest[0]} if that is its value",
                )
        elif word.startswith("-") and len(word) > 1:
            found += _short(word, rest, index)
        else:
            raise DockerRunError(
                index,
                f"{word!r} is not an option: the image and its command come from the launch, and a "
                "bare word among the options would become them",
            )
    return found


def _short(word: str, rest: list[str], index: int) -> list[DockerFlag]:
    """`-e VALUE`, `-eVALUE` or combined switches such as `-it`."""
    found = []
    for at, letter in enumerate(word[1:], start=1):
        name = SHORT.get(f"-{letter}")
        if name is None:
            raise DockerRunError(index, f"-{letter} (in {word!r}) is not a docker run option rlcat knows")
        if name in SWITCHES:
            found.append(DockerFlag(name, None, index))
            continue
        value = word[at + 1 :]
        if not value:
            if not rest:
                raise DockerRunError(index, f"-{letter} needs a value")
            value = rest.pop(0)
        found.append(DockerFlag(name, value, index))
        break
    return found


# Host folders whose contents run as code, hold credentials, or control the host and its containers:
# a bind mount of one of them, of a folder inside one, or of a folder that holds one (`/`, `/var`).
SENSITIVE_HOST_PATHS = (
    "/etc",
    "/root",
    "/home",
    "/boot",
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib64",
    "/opt",
    "/proc",
    "/sys",
    "/dev",
    "/run",
    "/var/run",
    "/var/lib/docker",
    "/var/lib/containerd",
    "/var/lib/kubelet",
)
# Folders of a home that hold credentials: a launch may mount a data folder of a home
# (`~/data`), never one of these, one inside them, or the home that holds them. `.ray` holds Ray's
# auth_token; `.config` gcloud's, `.docker` registry logins, `.kube` cluster credentials.
CREDENTIAL_FOLDERS = (
    ".ssh", ".gnupg", ".aws", ".azure", ".config", ".docker", ".kube", ".netrc",
    ".git-credentials", ".password-store", ".ray", ".local",
)  # fmt: skip


def host_path_hazard(path: str, *, home_data: bool = False) -> str | None:
    """How `path` (a host path, `..` resolved) touches the sensitive host folders: "the host's root",
    "in /etc", "holds /var/run"; None when it does not. With `home_data`, a folder inside a user's
    home (`/home/USER/data`, `/root/data`) is allowed unless it is, or is inside, one of the
    home's CREDENTIAL_FOLDERS: the rule of `rlcat launch --mount`, where data lives in homes."""
    path = "/" + posixpath.normpath(path).lstrip("/")
    if path == "/":
        return "the host's root"
    if home_data:
        for home, depth in (("/root", 1), ("/home", 2)):  # /root/X, /home/USER/X
            parts = path[len(home) + 1 :].split("/") if path.startswith(home + "/") else []
            if len(parts) >= depth:
                if parts[depth - 1] in CREDENTIAL_FOLDERS:
                    return f"in the credential folder {'/'.join([home, *parts[:depth]])}"
                return None
    for folder in SENSITIVE_HOST_PATHS:
        if path == folder or path.startswith(folder + "/"):
            return f"in {folder}"
        if folder.startswith(path + "/"):
            return f"holds {folder}"
    return None

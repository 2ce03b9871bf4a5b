"""A Ray cluster on this machine for the e2e tests and bench/ray_submit.py: its folder and env, and
its processes, found by what a process cannot overwrite and stopped by PID.

Ray's agents (`ray::DashboardAgent`, `ray::RuntimeEnvAgent`) set their titles over their command
line and environment, so /proc/PID/environ no longer shows the HOME a cluster was started with.
When a raylet was sent SIGTERM it started new agents before it ended; those were orphans that no
HOME search found, and each DashboardAgent then ran on for about 80 s at 60 % of a core (measured).
A session is kept: `ray start` run as a session leader (`start_new_session=True`) gives its session
to every process it starts, and none of them leaves it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Collection
from pathlib import Path

STUB = Path(__file__).resolve().parent.parent / "data" / "launch" / "stub"


def cluster_folder(prefix: str, auth: dict[str, str]) -> tuple[Path, dict[str, str]]:
    """A new folder for a cluster, short (Ray's socket paths under it must stay below 107 bytes),
    holding home/ (with ray_bootstrap_config.yaml `{}`: Ray then reads no cloud metadata at start)
    and out/ (the stand-in trainer's records); and the env of every process of the cluster: that
    HOME, usage stats off, the stand-in first on PYTHONPATH, this Python's bin/ first on PATH, and
    `auth` (RAY_AUTH_MODE, a token), with no other RAY_ variable of the caller's."""
    root = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    (root / "home").mkdir()
    (root / "out").mkdir()
    (root / "home" / "ray_bootstrap_config.yaml").write_text("{}\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAY_", "PYTHONPATH"))}
    env |= {
        "HOME": str(root / "home"),
        "RAY_USAGE_STATS_ENABLED": "0",
        "PYTHONPATH": str(STUB),
        "RLCAT_STUB_OUT": str(root / "out"),
        "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
        **auth,
    }
    return root, env


def free_port(host: str) -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def agent_ports(host: str) -> tuple[str, ...]:
    """Ports of a node's own for its agents: with Ray's defaults, two nodes (or two heads) on one
    machine race for the same ones, and the loser's dashboard agent has no HTTP port (the job
    server then answers "No available agent to submit job", or fails to read the log of a job whose
    driver runs on that node)."""
    return (
        f"--dashboard-agent-listen-port={free_port(host)}",
        f"--dashboard-agent-grpc-port={free_port(host)}",
        f"--runtime-env-agent-port={free_port(host)}",
        f"--metrics-export-port={free_port(host)}",
    )


def ray(
    env: dict[str, str], folder: Path, *args: str, timeout: float
) -> tuple[subprocess.CompletedProcess[str], int]:
    """`ray ARGS` (this Python's) in `folder`, where the drivers of the cluster's jobs then start and
    write (checkpoints), as the leader of a new session: its result (killed after `timeout`
    seconds), and that session, which every process it leaves running keeps."""
    command = shutil.which("ray", path=str(Path(sys.executable).parent))
    assert command, "Ray is not installed: pip install -e '.[test]' brings ray[default]"
    process = subprocess.Popen(
        [command, *args],
        env=env,
        cwd=folder,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate(timeout=10)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err), process.pid


def with_home(home: Path | str) -> list[int]:
    """Every live process (but this one) whose environment holds HOME=`home`: what a test started
    with that HOME and did not retitle (daemons, clients, a job's driver)."""
    marker = f"HOME={home}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            with contextlib.suppress(OSError):
                if marker in (entry / "environ").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
    return found


def in_sessions(sessions: Collection[int]) -> list[int]:
    """Every live process whose session is one of `sessions` (fields 3 and 6 of /proc/PID/stat:
    its state, a zombie left out, and its session)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                stat = (entry / "stat").read_text()
                fields = stat[stat.rindex(")") + 2 :].split()
                if fields[0] != "Z" and int(fields[3]) in sessions:
                    found.append(int(entry.name))
    return found


def stop(find: Callable[[], list[int]], grace: float = 2.0) -> None:
    """SIGTERM to what `find` finds, then SIGKILL to what is left after `grace` seconds, found
    again each time (a dying raylet starts agents), until nothing is found (at most 10 s more)."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 10.0)):
        deadline = time.monotonic() + wait
        while (pids := [pid for pid in find() if pid != os.getpid()]) and time.monotonic() < deadline:
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, sig)
            time.sleep(0.2)

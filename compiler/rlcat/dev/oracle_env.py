"""The verl oracle's environments: one virtual environment per verl release, holding torch and the
real ``verl==X`` with its dependencies, so that verl's own start-up checks can judge a plan.

They live outside the clone (they are large: about 1.9 GB each with the CPU build of torch), once per
machine, under :func:`oracle_home` (``$RLCAT_ORACLE_HOME``, else ``$XDG_CACHE_HOME/rlcat/verl-oracle``,
else ``~/.cache/rlcat/verl-oracle``), one folder per release. ``rlcat dev verl-oracle`` builds them.

The build is ``python -m venv``, then ``pip install torch==<pin> numpy``, then ``pip install verl==X``.
torch is installed first and pinned on purpose: verl asks for an open ``torch`` range, and pip answers
a bare ``torch`` on Linux with the CUDA build, which drags in several GB of ``nvidia-*`` libraries.
The pin (:data:`TORCH_PIN`) is the release whose CPU build pip finds on the development machines;
with torch already installed, verl's range is satisfied and pip installs no other torch. verl's start-up
checks need no GPU: ``import torch`` works on the CPU.

An environment is complete when its marker file (:data:`MARKER`, written last) records the release and
the torch requested and what pip installed; a folder without it, or with another request in it, is a
broken or older build and is removed and built again.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

#: Overrides where the environments live.
HOME_ENV = "RLCAT_ORACLE_HOME"
#: The torch every environment gets before verl (see the module docstring).
TORCH_PIN = "torch==2.13.0"
#: Modules verl imports on an entrypoint's start-up path without declaring them as dependencies:
#: ``verl/workers/rollout/router.py`` (imported by the fully-async rollouter) needs cachetools.
EXTRA_PACKAGES: tuple[str, ...] = ("cachetools",)
#: Written last into a complete environment.
MARKER = "rlcat-oracle.json"
#: The command that builds the environments.
BUILD_COMMAND = "rlcat dev verl-oracle"
#: What the build checks imports once installed (verl's own imports at start-up).
_SMOKE = "import torch, verl, hydra, transformers, tokenizers; print(torch.__version__, verl.__version__)"


def oracle_home() -> Path:
    """The folder holding one environment per release."""
    env = os.environ.get(HOME_ENV)
    if env:
        return Path(env).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "rlcat" / "verl-oracle"


def env_dir(version: str) -> Path:
    return oracle_home() / f"verl-{version}"


def env_python(version: str) -> Path:
    return env_dir(version) / "bin" / "python"


@dataclass(frozen=True)
class Built:
    """One environment: where it is, what it holds, and how long its build took (0 when reused)."""

    version: str
    path: Path
    installed: dict[str, str]
    seconds: float
    reused: bool


def _request(version: str, torch: str) -> dict[str, object]:
    return {"verl": version, "torch": torch, "extras": list(EXTRA_PACKAGES)}


def read_marker(version: str) -> dict[str, object] | None:
    """The marker of the release's environment, or None when there is no complete one."""
    try:
        data = json.loads((env_dir(version) / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not env_python(version).exists():
        return None
    return data


def is_complete(version: str, torch: str = TORCH_PIN) -> bool:
    """Whether the release's environment is built, for this request, and its interpreter exists."""
    marker = read_marker(version)
    return marker is not None and marker.get("request") == _request(version, torch)


def _run(cmd: list[str], log: Path, env: dict[str, str] | None = None) -> str:
    """Run one build step, its output appended to `log`; a failure raises with the log's tail."""
    with log.open("a", encoding="utf-8") as out:
        out.write(f"$ {' '.join(cmd)}\n")
        out.flush()
        done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=out, text=True, env=env, check=False)
        out.write(done.stdout)
    if done.returncode != 0:
        tail = "\n".join(log.read_text(encoding="utf-8", errors="replace").splitlines()[-15:])
        raise RuntimeError(f"`{' '.join(cmd)}` failed (exit {done.returncode}); see {log}:\n{tail}")
    return done.stdout


def _installed(python: Path, log: Path) -> dict[str, str]:
    out = _run([str(python), "-m", "pip", "list", "--format", "json", "--disable-pip-version-check"], log)
    wanted = {"verl", "torch", "ray", "transformers", "tokenizers", "hydra-core", "omegaconf", "tensordict"}
    wanted.update(EXTRA_PACKAGES)
    return {p["name"].lower(): p["version"] for p in json.loads(out) if p["name"].lower() in wanted}


def build(version: str, torch: str = TORCH_PIN, python: str | None = None, *, force: bool = False) -> Built:
    """Make sure the environment of `version` is complete; build it (network) when it is not.

    Idempotent and safe to run twice at once (a lock file beside the folder): a complete environment
    for the same request is reused. The build log is kept in the folder (``build.log``).

    Raises:
        RuntimeError: a step failed (the message quotes the end of the log); the folder is left
            without its marker, so the next run starts over.
    """
    dest = env_dir(version)
    dest.parent.mkdir(parents=True, exist_ok=True)
    with (dest.parent / f".verl-{version}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        marker = read_marker(version)
        if not force and marker is not None and marker.get("request") == _request(version, torch):
            installed = marker.get("installed")
            return Built(version, dest, dict(installed) if isinstance(installed, dict) else {}, 0.0, True)
        start = time.monotonic()
        shutil.rmtree(dest, ignore_errors=True)
        dest.mkdir()
        log = dest / "build.log"
        interpreter = python or sys.executable
        _run([interpreter, "-m", "venv", str(dest)], log)
        py = env_python(version)
        pip = [str(py), "-m", "pip", "install", "--disable-pip-version-check", "-q"]
        _run([*pip, torch, "numpy"], log)
        _run([*pip, f"verl=={version}", *EXTRA_PACKAGES], log)
        offline = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        _run([str(py), "-c", _SMOKE], log, env=offline)
        installed = _installed(py, log)
        stamp = {"request": _request(version, torch), "installed": installed}
        (dest / MARKER).write_text(json.dumps(stamp, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        return Built(version, dest, installed, time.monotonic() - start, False)

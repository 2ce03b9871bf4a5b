"""A podman site for the Slurm tests: the real podman on this machine, set up as a cluster's nodes
would have it, with no registry and no network.

- **An image made here.** A root filesystem holding the interpreter of this test run's virtual
  environment (its standard library, its shared libraries), bash and a few base tools, imported with
  `podman import`. Python packages are not in it: the site mounts the environment's folder, as
  clusters mount a shared software tree, and a setup line activates it.
- **Two nodes on one machine.** Slurm's nodes n1 and n2 run on this one machine; each gets its own
  podman storage (`--root`, `--runroot`, `--tmpdir` by SLURMD_NODENAME, in a `podman` found first
  on the job's PATH), so containers and images are per node as on two machines. The image lives in
  a store both nodes read (`additionalimagestore`), built once.
- **This sandbox's one refusal.** It refuses setrlimit(RLIMIT_NPROC) even to the current value, and
  podman always asks for it: the OCI runtime is runc behind `runc-no-rlimits`
  (tests/data/launch/podman), which removes the rlimits from the container's spec and then runs
  runc. Nothing else of podman or runc is changed.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
from dataclasses import dataclass
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "data" / "launch" / "podman"
IMAGE = "localhost/rlcat-node:e2e"
# the commands the sbatch and Ray run inside a container, beside the interpreter
TOOLS = (
    "bash", "sh", "env", "sleep", "cat", "ls", "mkdir", "rm", "cp", "mv", "ln", "touch", "chmod",
    "hostname", "id", "uname", "head", "tail", "grep", "sed", "awk", "tr", "cut", "sort", "wc",
    "date", "dirname", "basename", "readlink", "timeout", "kill", "ps", "true", "false", "nproc",
)  # fmt: skip
# parts of the standard library nothing here imports or links (half of its size)
UNUSED_STDLIB = {"site-packages", "test", "idlelib", "tkinter", "turtledemo", "ensurepip", "lib2to3"}
UNUSED_STDLIB_PREFIX = "config-"  # the static library and Makefile for building extensions


def missing() -> list[str]:
    search = f"{os.environ['PATH']}:/usr/sbin"  # runc lives in /usr/sbin
    return [tool for tool in ("podman", "runc") if not shutil.which(tool, path=search)]


@dataclass(frozen=True)
class PodmanSite:
    root: Path
    env: dict[str, str]  # what the job's environment adds: the node-local podman first on PATH

    def podman(self, node: str, *args: str) -> subprocess.CompletedProcess[str]:
        """podman as node `node` runs it."""
        env = os.environ | self.env | {"SLURMD_NODENAME": node}
        return subprocess.run(
            [str(self.root / "bin" / "podman"), *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    def containers(self, node: str) -> list[str]:
        listed = self.podman(node, "ps", "-a", "--format", "{{.Names}}")
        assert listed.returncode == 0, listed.stderr
        return listed.stdout.split()


def make_site(root: Path) -> PodmanSite:
    """The wrapper, the runtime's configuration and the shared image store, under `root`."""
    (root / "bin").mkdir(parents=True)
    runc = shutil.which("runc", path=f"{os.environ['PATH']}:/usr/sbin")
    podman = shutil.which("podman")
    assert runc and podman
    shim = root / "bin" / "runc-no-rlimits"
    body = (DATA / "runc-no-rlimits").read_text(encoding="utf-8").replace("@RUNC@", runc)
    shim.write_text(f"#!{sys.executable}\n{body}")
    shim.chmod(0o755)
    (root / "containers.conf").write_text(
        f'[engine]\nruntime = "rlcat-runc"\n\n[engine.runtimes]\nrlcat-runc = ["{shim}"]\n'
    )
    wrapper = root / "bin" / "podman"
    wrapper.write_text(
        (DATA / "podman").read_text(encoding="utf-8").replace("@PODMAN@", podman).replace("@ROOT@", str(root))
    )
    wrapper.chmod(0o755)
    site = PodmanSite(root, {"CONTAINERS_CONF": str(root / "containers.conf"), "PATH": str(root / "bin")})
    stdin = io.BytesIO(_rootfs())
    (root / "images-tmp").mkdir()
    imported = subprocess.run(
        [
            podman,
            "--root",
            str(root / "images"),
            "--runroot",
            str(root / "images-run"),
            "--tmpdir",
            str(root / "images-tmp"),
            "import",
            "-",
            IMAGE,
        ],
        input=stdin.getvalue(),
        capture_output=True,
        env=os.environ | site.env | {"TMPDIR": str(root / "images-tmp")},  # the import's staging
        timeout=120,
        check=False,
    )
    assert imported.returncode == 0, imported.stderr.decode()
    return site


def _rootfs() -> bytes:
    """The image's root filesystem as a tar: the venv's base interpreter at its own path, its
    standard library, the shared libraries it, the tools and the venv's compiled modules load."""
    base = Path(sys.base_prefix)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    interpreter = Path(os.path.realpath(sys.executable))
    stdlib = Path(sysconfig.get_path("stdlib"))  # the base interpreter's, also in a venv
    files: set[str] = {str(interpreter), *(str(p) for p in (base / "bin").glob("python3*"))}
    libdir = sysconfig.get_config_var("LIBDIR")
    if libdir:
        files |= {str(p) for p in Path(libdir).glob(f"lib{version}*.so*")}
    for path in stdlib.rglob("*"):
        top = path.relative_to(stdlib).parts[0]
        if path.is_file() and top not in UNUSED_STDLIB and not top.startswith(UNUSED_STDLIB_PREFIX):
            files.add(str(path))
    tools = [found for tool in TOOLS if (found := shutil.which(tool))]
    files |= set(tools)
    elves = [*tools, str(interpreter), *(f for f in files if f.endswith(".so") or ".so." in f)]
    elves += [str(p) for p in Path(sys.prefix).rglob("*.so*") if p.is_file()]
    files |= _shared_libraries(elves)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", dereference=True) as tar:
        for name in ("tmp", "var/tmp", "proc", "sys", "dev", "run", "root", "home", "etc"):
            info = tarfile.TarInfo(name)
            info.type, info.mode = tarfile.DIRTYPE, 0o1777 if "tmp" in name else 0o755
            tar.addfile(info)
        for name, text in (
            ("etc/passwd", "root:x:0:0:root:/root:/bin/bash\n"),
            ("etc/group", "root:x:0:\n"),
        ):
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for path in sorted(files):
            if os.path.exists(path):
                tar.add(path, arcname=path.lstrip("/"), recursive=False)
    return buffer.getvalue()


def _shared_libraries(elves: list[str]) -> set[str]:
    """Every shared library outside the venv that `elves` load, by ldd (one call per 200 files)."""
    found: set[str] = set()
    for start in range(0, len(elves), 200):
        batch = elves[start : start + 200]
        listed = subprocess.run(["ldd", *batch], capture_output=True, text=True, check=False)
        for line in listed.stdout.splitlines():
            words = line.split()
            if "=>" in words and len(words) > 2 and words[2].startswith("/"):
                found.add(words[2])
            elif words and words[0].startswith("/") and "ld-linux" in words[0]:
                found.add(words[0])
    return {path for path in found if not path.startswith(sys.prefix)}

"""`rlcat launch` on bad input, as a user meets it: the console command in a process of its own. An
unknown target, a GPU request the cluster or the allocation cannot hold, an address where nothing
listens, a Slurm that refuses the job: each is a diagnostic with its code and exit code 1 or 2, no
traceback, nothing on stdout or in the --emit file, nothing submitted, and no process of the
command left running after it exits."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from fake_ray_api import FakeRay, fake_ray_servers

RECIPE = "gsm8k_qwen3_8b_fsdp"  # one node of 8 GPUs
AUTH = ("--ray-auth-mode", "disabled")
# a stand-in `sbatch` that reads the script, as sbatch does, and refuses it
REFUSING_SBATCH = """#!/bin/sh
cat > "$0.script"
echo 'sbatch: error: Batch job submission failed: Requested node configuration is not available' >&2
exit 1
"""


@dataclass
class Outcome:
    code: int
    out: str
    err: str
    left_running: list[str]


def _session_processes(session: int) -> list[str]:
    """The command lines of the live processes of a session (/proc/PID/stat, field 6)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[3]) == session and fields[0] != "Z":
            found.append(cmdline.strip())
    return found


def run_launch(*args: str, path: str | None = None) -> Outcome:
    """`rlcat launch RECIPE ARGS` in a new session; what it printed, and what of its session lives on."""
    env = dict(os.environ)
    if path is not None:
        env["PATH"] = path
    process = subprocess.Popen(
        [sys.executable, "-m", "rlcat", "launch", RECIPE, *AUTH, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
    try:
        out, err = process.communicate(timeout=120)
    finally:
        process.kill()
    return Outcome(process.returncode, out, err, _session_processes(process.pid))


def assert_refused(outcome: Outcome, code: int, *said: str) -> None:
    assert outcome.code == code, outcome.err
    assert "Traceback" not in outcome.err and outcome.out == ""
    for text in said:
        assert text in outcome.err, outcome.err
    assert outcome.left_running == []


@pytest.fixture
def fake_ray() -> Iterator[Callable[..., tuple[FakeRay, str]]]:
    with fake_ray_servers() as start:
        yield start


def test_unknown_target(tmp_path: Path) -> None:
    emit = tmp_path / "job.json"
    outcome = run_launch("--target", "nowhere", "--emit", str(emit))
    assert_refused(outcome, 2, "'nowhere' is not one of 'local', 'ray-job', 'slurm', 'skypilot', 'kuberay'")
    assert not emit.exists()


def test_more_gpus_than_the_cluster_has(fake_ray: Callable[..., tuple[FakeRay, str]]) -> None:
    fake, address = fake_ray(["RUNNING"], node_gpus=[4.0])
    outcome = run_launch("--target", "ray-job", "--submit", "--wait", "--address", address)
    assert_refused(outcome, 1, "RLC1002", "the plan needs 8 GPUs (trainer 1×8); the cluster has 4")
    assert fake.submitted == []


def test_a_node_bundle_no_node_can_hold(fake_ray: Callable[..., tuple[FakeRay, str]]) -> None:
    # eight GPUs in all, but verl asks for one bundle of 8 on one node
    fake, address = fake_ray(["RUNNING"], node_gpus=[4.0, 4.0])
    outcome = run_launch("--target", "ray-job", "--submit", "--address", address)
    assert_refused(outcome, 1, "RLC1002", "do not fit on the cluster's nodes (GPUs per node: 4, 4)")
    assert fake.submitted == []


def test_more_gpus_per_node_than_the_allocation(tmp_path: Path) -> None:
    emit = tmp_path / "job.sbatch"
    outcome = run_launch("--target", "slurm", "--override", "trainer.n_gpus_per_node=16", "--emit", str(emit))
    assert_refused(outcome, 1, "RLC1002", "the plan needs 16 GPUs (trainer 1×16)")
    assert not emit.exists()


def test_no_gpus_at_all() -> None:
    outcome = run_launch("--target", "slurm", "--set", "resources.gpus_per_node=0")
    assert_refused(outcome, 2, "RLC103", "[resources.gpus_per_node]")


def test_an_address_where_nothing_listens() -> None:
    with socket.socket() as sock:  # a port of this machine that was free a moment ago
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    outcome = run_launch("--target", "ray-job", "--submit", "--wait", "--address", f"http://127.0.0.1:{port}")
    assert_refused(outcome, 2, "RLC1008", f"http://127.0.0.1:{port} did not answer", "hint:")


def test_a_slurm_that_refuses_the_job(tmp_path: Path) -> None:
    sbatch = tmp_path / "sbatch"
    sbatch.write_text(REFUSING_SBATCH)
    sbatch.chmod(0o755)
    outcome = run_launch("--target", "slurm", "--submit", "--wait", path=f"{tmp_path}:/usr/bin:/bin")
    assert_refused(
        outcome,
        1,
        "RLC1012",
        "Slurm refused the job: sbatch: error: Batch job submission failed: Requested node configuration",
    )
    assert (tmp_path / "sbatch.script").read_text().startswith("#!/bin/bash\n#SBATCH")  # it was offered

"""`rlcat launch --target slurm` against a real Slurm: `munged`, `slurmctld` and two `slurmd -N`
emulating nodes n1 and n2 on 127.0.0.2 and 127.0.0.3 of this machine, eight fake GPUs each (char
devices listed in a gres file), all from a temporary config; the stand-in trainer of
tests/data/launch/stub on the job's PYTHONPATH.

`rlcat launch --container none --submit --wait` runs the rendered sbatch end to end: nodes from
`scontrol`, IPs from NodeAddr, the env probe, the Ray head and worker through `srun --overlap`,
readiness, the trainer, teardown. Shipped recipes run in their own shapes (2 × 8 CUDA, 1 × 8 ROCm,
and 2 × 8 ROCm up to the env probe). Asserted: every argv word the trainer receives, and every
entry of the plan's env in the driver and on both nodes' Ray workers, is what
`rlcat compile --format json` gives for the same recipe and settings, and the trainer's process
holds nothing else of the launch's but the auth mode, the job's RAY_ADDRESS, the setup lines' and
the passed variables; a job Slurm refuses (more nodes than it has) and an env the probe finds
changed on the nodes (Slurm's gres plugin sets CUDA_VISIBLE_DEVICES in every GPU step) fail with a
diagnostic; a --timeout, and Ctrl-C or SIGTERM to the console script (a process of its own), cancel
a running job with their documented exit codes: each leaves nothing running.

`--container podman` runs on the real podman (tests/e2e/podman_site.py: an image made here, a
storage per node): the shipped 2 × 8 plan arrives as compiled in a container per node, with a
credential passed by name, its checkpoint in a mounted folder outlives the `--rm` containers, and a
node without the image fails the job by its name before anything starts.

Network safety: loopback only (the Ray test's settings: a HOME holding ray_bootstrap_config.yaml,
RAY_USAGE_STATS_ENABLED=0, RAY_AUTH_MODE=disabled, given to the job through sbatch's environment,
never in rlcat's output). Every daemon is bounded in time and stopped by PID, jobs are cancelled and
their processes killed by PID, even when a test fails. Without Slurm the tests skip, unless
RLCAT_REQUIRE_SLURM=1 (CI) makes that a failure.
"""

from __future__ import annotations

import contextlib
import getpass
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import local_ray
import podman_site
import pytest
from podman_site import PodmanSite
from test_launch_ray import _alive, _wait_until, assert_plan_received, compiled_plan

from conftest import REPO, Result

# the Ray tests' worker: no two real clusters on this machine at once (pyproject: --dist loadgroup)
pytestmark = pytest.mark.xdist_group("real-engines")

NODES = {"n1": "127.0.0.2", "n2": "127.0.0.3"}
CONTROLLER = "127.0.0.1"  # slurmctld, and where every daemon's free port is found
GPUS_PER_NODE = 8
CPUS_PER_NODE = 2
DAEMONS = ("munged", "slurmctld", "slurmd", "sbatch", "srun", "scontrol", "sinfo", "squeue", "scancel")
START_SECONDS = 60
JOB_SECONDS = 240
RECIPE = "gsm8k_qwen3_8b_fsdp"  # shipped as 1 × 8
TWO_BY_EIGHT = "ppo_qwen2_7b_gsm8k"  # shipped as 2 × 8
TRICKY = "a b'c\"d;e|f&g*h?[i] {j} `k` $HOME \\l"
SECRET = "s3cr3t-value-never-written"

SLURM_CONF = """\
ClusterName=rlcat
SlurmctldHost={host}(127.0.0.1)
SlurmUser={user}
SlurmdUser={user}
SlurmctldPort={ctld_port}
AuthType=auth/munge
AuthInfo=socket={root}/munge/socket
CryptoType=crypto/munge
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool/%n
SlurmctldPidFile={root}/slurmctld.pid
SlurmdPidFile={root}/slurmd-%n.pid
SlurmctldLogFile={root}/log/slurmctld.log
SlurmdLogFile={root}/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
GresTypes=gpu
SlurmdTimeout=60
InactiveLimit=0
KillWait=5
MinJobAge=60
SlurmdParameters=config_overrides
{nodes}
PartitionName=debug Nodes={names} Default=YES MaxTime=INFINITE State=UP
"""


def _missing() -> list[str]:
    return [name for name in DAEMONS if shutil.which(name, path=_sbin_path()) is None]


def _sbin_path() -> str:
    return f"{os.environ.get('PATH', '')}:/usr/sbin:/sbin"


@pytest.fixture(scope="module", autouse=True)
def _require_slurm() -> None:
    missing = _missing()
    if missing:
        reason = f"Slurm is not installed ({', '.join(missing)} missing): apt-get install slurm-wlm munge"
        if os.environ.get("RLCAT_REQUIRE_SLURM") == "1":
            pytest.fail(reason + " (RLCAT_REQUIRE_SLURM=1)", pytrace=False)
        pytest.skip(reason)


@dataclass
class SlurmCluster:
    root: Path
    env: dict[str, str]
    out: Path
    daemons: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def run(self, *args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            list(args), env=self.env, capture_output=True, text=True, timeout=timeout, check=False
        )

    def jobs(self) -> list[str]:
        return self.run("squeue", "-h", "-o", "%i").stdout.split()

    def job_pids(self) -> list[int]:
        """Every live process of this cluster's jobs and daemons: they all have its HOME."""
        return local_ray.with_home(self.env["HOME"])

    def stop(self) -> None:
        """Cancel the jobs, then stop every process by PID: SIGTERM, SIGKILL after a grace."""
        for job in self.jobs():
            self.run("scancel", job)
        deadline = time.monotonic() + 30
        while self.jobs() and time.monotonic() < deadline:
            time.sleep(0.5)
        local_ray.stop(
            lambda: [*self.job_pids(), *(d.pid for d in self.daemons if d.poll() is None)], grace=10.0
        )
        for daemon in self.daemons:
            with contextlib.suppress(subprocess.TimeoutExpired):
                daemon.wait(timeout=1)

    def ray_pids(self) -> list[int]:
        """The Ray processes the jobs started that are still alive: `ray start`, gcs_server, raylet
        and Ray's Python processes, each run from a path through Ray's package or its `ray` command,
        and workers titled `ray::...`. A word of the command line is matched, never a substring:
        the cluster's folder is in the daemons' command lines, and its random name may hold "ray"
        (a CI run's was /tmp/rlcat-slurm-9khoiray)."""
        daemons = {daemon.pid for daemon in self.daemons}
        found = []
        for pid in self.job_pids():
            with contextlib.suppress(OSError):
                words = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
                if pid not in daemons and any(_is_ray_word(word) for word in words):
                    found.append(pid)
        return found

    def record(self, name: str) -> dict[str, Any]:
        return json.loads((self.out / f"{name}.json").read_text(encoding="utf-8"))


def _is_ray_word(word: str) -> bool:
    return word.startswith("ray::") or "ray" in Path(word).parts


def _write_config(root: Path, env: dict[str, str]) -> None:
    for folder in ("state", "spool", "log", "fakedev", "munge", "home", "out", "work"):
        (root / folder).mkdir(mode=0o755)
    key = root / "munge" / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o600)
    for i in range(GPUS_PER_NODE):
        os.mknod(root / "fakedev" / f"nvidia{i}", 0o666 | 0o020000, os.makedev(1, 3))  # like /dev/null
    nodes = "\n".join(
        f"NodeName={name} NodeHostname={socket.gethostname()} NodeAddr={ip} "
        f"Port={local_ray.free_port(CONTROLLER)} "
        f"CPUs={CPUS_PER_NODE} RealMemory=4000 Gres=gpu:{GPUS_PER_NODE} State=UNKNOWN"
        for name, ip in NODES.items()
    )
    (root / "slurm.conf").write_text(
        SLURM_CONF.format(
            host=socket.gethostname(),
            user=getpass.getuser(),
            ctld_port=local_ray.free_port(CONTROLLER),
            root=root,
            nodes=nodes,
            names=",".join(NODES),
        )
    )
    (root / "gres.conf").write_text(
        "AutoDetect=off\n"
        + "".join(
            f"NodeName={name} Name=gpu File={root}/fakedev/nvidia[0-{GPUS_PER_NODE - 1}]\n" for name in NODES
        )
    )
    (root / "home" / "ray_bootstrap_config.yaml").write_text("{}\n")


@pytest.fixture(scope="module")
def slurm() -> Iterator[SlurmCluster]:
    root = Path(tempfile.mkdtemp(prefix="rlcat-slurm-", dir="/tmp"))
    root.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAY_", "SLURM_", "PYTHONPATH"))}
    env |= {
        "PATH": f"{Path(sys.executable).parent}:{_sbin_path()}",
        "SLURM_CONF": str(root / "slurm.conf"),
        "HOME": str(root / "home"),
        "RAY_USAGE_STATS_ENABLED": "0",
        "PYTHONPATH": str(local_ray.STUB),
        "RLCAT_STUB_OUT": str(root / "out"),
    }
    cluster = SlurmCluster(root, env, root / "out")
    try:
        _write_config(root, env)
        munge = root / "munge"
        cluster.daemons.append(
            _daemon(
                env,
                "munged",
                "-F",
                "--force",
                f"--socket={munge}/socket",
                f"--key-file={munge}/munge.key",
                f"--log-file={munge}/munged.log",
                f"--pid-file={munge}/munged.pid",
                f"--seed-file={munge}/munged.seed",
            )
        )
        _wait_for((munge / "socket").exists, "munged did not create its socket")
        cluster.daemons.append(_daemon(env, "slurmctld", "-D", "-c", "-i"))
        for name in NODES:
            cluster.daemons.append(_daemon(env, "slurmd", "-D", "-N", name))
        _wait_for(
            lambda: (
                sorted(cluster.run("sinfo", "-h", "-N", "-o", "%N %t").stdout.split())
                == sorted([*NODES, *(["idle"] * len(NODES))])
            ),
            "the nodes did not become idle: " + str(root / "log"),
        )
        yield cluster
    finally:
        try:
            cluster.stop()
        finally:
            shutil.rmtree(root, ignore_errors=True)


def _daemon(env: dict[str, str], *args: str) -> subprocess.Popen[bytes]:
    path = shutil.which(args[0], path=env["PATH"])
    assert path, args[0]
    return subprocess.Popen([path, *args[1:]], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _wait_for(ready: Callable[[], bool], message: str) -> None:
    deadline = time.monotonic() + START_SECONDS
    while not ready():
        assert time.monotonic() < deadline, message
        time.sleep(0.3)


@pytest.fixture
def in_cluster(slurm: SlurmCluster, monkeypatch: pytest.MonkeyPatch) -> SlurmCluster:
    """rlcat runs in-process; sbatch, which it starts, and so the job get the cluster's env."""
    for name in list(os.environ):
        if name.startswith(("RAY_", "SLURM_")) or name == "PYTHONPATH":
            monkeypatch.delenv(name)
    for name, value in slurm.env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(slurm.root / "work")  # where sbatch puts the job's output file
    return slurm


def _launch(
    rlcat: Callable[..., Result], name: str, *args: str, recipe: str = RECIPE, platform: str = "cuda"
) -> Result:
    return rlcat(
        "launch",
        recipe,
        "--platform",
        platform,
        "--target",
        "slurm",
        "--container",
        "none",
        "--ray-auth-mode",
        "disabled",
        "--set",
        f"trainer.experiment={name}",
        *args,
        "--submit",
        "--wait",
        "--timeout",
        str(JOB_SECONDS),
    )


# What the job's env holds that neither the plan nor the submitting shell gave it: Slurm's own
# variables (the gres plugin's device lists among them), Ray's for its driver, Python's for the
# stand-in's interpreter. Everything else the trainer receives is the plan's or the launch's.
NOT_THE_LAUNCHS = re.compile(
    r"SLURM_\w*|SLURMD_NODENAME|CUDA_VISIBLE_DEVICES|ROCR_VISIBLE_DEVICES|GPU_DEVICE_ORDINAL|"
    r"ZE_AFFINITY_MASK|SRUN_DEBUG|HOSTNAME|COLUMNS|LINES|TMPDIR|ENVIRONMENT|OLDPWD|PWD|SHLVL|_"
)


def _received_env(env: dict[str, str], submitting: dict[str, str]) -> dict[str, str]:
    """The entries of the trainer's `env` that the submitting shell did not give it (sbatch passes
    that shell's env on), less Slurm's and Ray's own: what the launch gave."""
    return {k: v for k, v in env.items() if submitting.get(k) != v and not NOT_THE_LAUNCHS.fullmatch(k)}


@pytest.mark.parametrize(
    ("word", "ray"),
    [
        ("/root/venv/bin/ray", True),  # `ray start`
        ("/v/lib/python3.11/site-packages/ray/core/src/ray/raylet/raylet", True),
        ("/v/lib/python3.11/site-packages/ray/dashboard/agent.py", True),
        ("ray::IDLE", True),
        ("--socket=/tmp/rlcat-slurm-9khoiray/munge/socket", False),  # munged, in a CI run
        ("actor_rollout_ref.rollout.ray_wait_register_center_timeout=300", False),
    ],
)
def test_a_ray_process_is_told_by_a_word_of_its_command_line(word: str, ray: bool) -> None:
    assert _is_ray_word(word) is ray


def test_the_sbatch_runs_the_plan_on_both_nodes(
    rlcat: Callable[..., Result], in_cluster: SlurmCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the shipped 2 × 8 CUDA plan, as it is: one node of eight GPUs each for the trainer
    name = "slurm_delivered"
    monkeypatch.setenv("RLCAT_SECRET", SECRET)  # the submitting shell's; passed by name only
    plan_args = (
        "--set",
        f"trainer.experiment={name}",
        "--set",
        f"env.RLCAT_PROBE={TRICKY}",
        "--override",
        "+trainer.rlcat_interp=${oc.env:HOME}/x",
    )
    launch_args = (
        "--pass-env",
        "RLCAT_SECRET",
        "--setup",
        f"export RLCAT_SETUP_MARK={shlex.quote(TRICKY)}",
        "--sbatch-arg=--comment=rlcat-e2e",
    )
    submitting = dict(os.environ)
    result = _launch(rlcat, name, *plan_args[2:], *launch_args, recipe=TWO_BY_EIGHT)
    assert result.code == 0, result.err + result.out[-5000:]
    # the sbatch option reached sbatch (the controller keeps an ended job for MinJobAge seconds)
    job = re.search(r"submitted Slurm job (\d+)", result.err)
    assert job, result.err
    assert "Comment=rlcat-e2e" in in_cluster.run("scontrol", "show", "job", job.group(1)).stdout
    assert "rlcat stand-in: ok" in result.out  # the job's output, followed
    assert f"cluster ready: 2 node(s), {2 * GPUS_PER_NODE} GPU(s)" in result.out
    assert "teardown (exit 0)" in result.out
    plan = compiled_plan(rlcat, TWO_BY_EIGHT, "cuda", *plan_args)
    assert "trainer.nnodes=2" in plan["overrides"] and "trainer.n_gpus_per_node=8" in plan["overrides"]
    record = in_cluster.record(name)
    # the setup line ran before `ray start` and the trainer on each node; the passed variable
    # arrived; and, with the auth mode and the address of the job's Ray, they are all the
    # trainer's process holds beyond the submitting shell's env and Slurm's (its Ray workers on
    # the nodes hold Ray's and verl's runtime env besides)
    launch_env = {"RAY_AUTH_MODE": "disabled", "RLCAT_SETUP_MARK": TRICKY, "RLCAT_SECRET": SECRET}
    assert_plan_received(record, plan, launch_env)
    address = record["driver_env"]["RAY_ADDRESS"]
    assert address.startswith(NODES["n1"] + ":")
    # (RLCAT_SECRET is the submitting shell's own value, which sbatch passes on: not a difference)
    script_env = plan["env"] | {"RAY_AUTH_MODE": "disabled", "RLCAT_SETUP_MARK": TRICKY}
    assert _received_env(record["driver_env"], submitting) == script_env | {"RAY_ADDRESS": address}
    assert '+trainer.rlcat_interp="${oc.env:HOME}/x"' in record["argv"]
    # the value of a passed variable is in no artifact
    emitted = rlcat(
        "launch", TWO_BY_EIGHT, "--target", "slurm", "--container", "none", "--ray-auth-mode", "disabled",
        *plan_args, *launch_args,
    )  # fmt: skip
    assert emitted.code == 0, emitted.err
    assert SECRET not in emitted.out and SECRET not in result.out and "RLCAT_SECRET" in emitted.out
    assert sorted(node["ip"] for node in record["nodes"]) == sorted(NODES.values())
    assert record["cluster_gpus"] == 2 * GPUS_PER_NODE
    assert in_cluster.jobs() == []
    assert in_cluster.ray_pids() == []  # the script's teardown stopped both nodes' Ray


def test_a_job_slurm_refuses_is_a_diagnostic(rlcat: Callable[..., Result], in_cluster: SlurmCluster) -> None:
    # an sbatch option of the command line reaches sbatch with --submit: a partition it has not
    result = _launch(rlcat, "no_partition", "--sbatch-arg=--partition=nosuch")
    assert result.code == 1, result.err
    assert "RLC1012" in result.err and "invalid partition" in result.err.lower(), result.err
    # more GPUs per node than the nodes have: sbatch refuses at once
    result = _launch(
        rlcat, "too_many_gpus", "--set", "resources.nodes=1", "--set", "resources.gpus_per_node=16"
    )
    assert result.code == 1, result.err
    assert "RLC1012" in result.err and "Requested node configuration is not available" in result.err
    assert "Traceback" not in result.err
    # more nodes than the partition has: this controller (no EnforcePartLimits) accepts the job and
    # would leave it pending forever; rlcat cancels it and says why
    result = _launch(
        rlcat, "too_many_nodes", "--set", "resources.nodes=4", "--set", "resources.gpus_per_node=8"
    )
    assert result.code == 1, result.err
    assert "RLC1012" in result.err and "will never start it as asked (Partition" in result.err, result.err
    assert in_cluster.jobs() == []


def test_the_env_probe_stops_a_job_whose_nodes_differ(
    rlcat: Callable[..., Result], in_cluster: SlurmCluster
) -> None:
    # the seed's hand-written script (ROCm, 2 × 8) exports CUDA_VISIBLE_DEVICES; Slurm's gres plugin
    # sets its own in every GPU step, so the trainer's nodes would not see the plan's value (eight
    # devices: as many as each node's share, or the compile refuses it first, RLC504)
    planned = "7,6,5,4,3,2,1,0"
    result = _launch(
        rlcat, "probe", "--set", f"env.CUDA_VISIBLE_DEVICES='{planned}'", recipe=TWO_BY_EIGHT, platform="rocm"
    )
    assert result.code == 1, result.err + result.out[-3000:]
    said = f"rlcat env probe: CUDA_VISIBLE_DEVICES is '0,1,2,3,4,5,6,7' on node n1; the plan sets '{planned}'"
    assert said in result.out
    assert "on node n2" in result.out
    assert "ray start" not in result.out.split("rlcat env probe")[0]  # nothing started before it
    assert not (in_cluster.out / "probe.json").exists()
    assert in_cluster.jobs() == []


def test_the_jobs_own_output_and_its_end_at_once(
    rlcat: Callable[..., Result], in_cluster: SlurmCluster, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # an earlier job's output where Slurm's default name would put this one's (job ids start again
    # with a new controller state), and a fixed output path a team sets for every job
    work = in_cluster.root / "work"
    for job in range(1, 200):
        (work / f"slurm-{job}.out").write_text("STALE: an earlier job's output\n")
    (work / "fixed.out").write_text("STALE: the fixed path's earlier output\n")
    monkeypatch.setenv("SBATCH_OUTPUT", str(work / "fixed.out"))
    # an sbatch whose --wait returns far later than the job ends (Slurm's own polls back off to
    # 32 s): rlcat must notice the end itself
    real = shutil.which("sbatch", path=in_cluster.env["PATH"])
    slow = tmp_path / "bin"
    slow.mkdir()
    (slow / "sbatch").write_text(
        "#!/bin/bash\n"
        f'{real} "$@"; code=$?\n'
        'for word in "$@"; do [ "$word" = --wait ] && sleep 3600; done\n'
        "exit $code\n"
    )
    (slow / "sbatch").chmod(0o755)
    monkeypatch.setenv("PATH", f"{slow}:{in_cluster.env['PATH']}")
    # the shipped 1 × 8 plan on ROCm, as it is
    submitting = dict(os.environ)
    result = rlcat(
        "launch", RECIPE, "--platform", "rocm", "--target", "slurm", "--container", "none",
        "--ray-auth-mode", "disabled", "--set", "trainer.experiment=own_output",
        "--submit", "--wait", "--timeout", "150",
    )  # fmt: skip
    assert result.code == 0, result.err + result.out[-3000:]
    plan = compiled_plan(rlcat, RECIPE, "rocm", "--set", "trainer.experiment=own_output")
    assert "trainer.nnodes=1" in plan["overrides"] and "trainer.n_gpus_per_node=8" in plan["overrides"]
    record = in_cluster.record("own_output")
    assert_plan_received(record, plan, {"RAY_AUTH_MODE": "disabled"})
    received = _received_env(record["driver_env"], submitting)
    assert received.pop("RAY_ADDRESS").startswith(NODES["n1"] + ":")
    assert received == plan["env"] | {"RAY_AUTH_MODE": "disabled"}
    for env in [record["driver_env"], *(node["env"] for node in record["nodes"])]:
        # Slurm's gres plugin sets ROCR_VISIBLE_DEVICES beside CUDA_VISIBLE_DEVICES; on ROCm the
        # script removes it from every step (verl raises on the two together)
        assert "ROCR_VISIBLE_DEVICES" not in env and env.get("CUDA_VISIBLE_DEVICES")
    assert "STALE" not in result.out
    assert "rlcat stand-in: ok" in result.out and "teardown (exit 0)" in result.out
    found = re.search(r"submitted Slurm job (\d+); its output: (slurm-\1-[0-9a-f]{8}\.out)", result.err)
    assert found, result.err
    assert "rlcat stand-in: ok" in (work / found.group(2)).read_text()
    assert f"Slurm job {found.group(1)} COMPLETED with exit code 0:0" in result.err
    assert (work / "fixed.out").read_text() == "STALE: the fixed path's earlier output\n"
    assert in_cluster.jobs() == []


def test_a_timeout_cancels_the_running_job_and_leaves_nothing(
    rlcat: Callable[..., Result], in_cluster: SlurmCluster
) -> None:
    # a stand-in trainer that would hold its GPUs for ten minutes; rlcat's --timeout ends it,
    # in whichever step the job then is (Ray starting, or the trainer holding)
    result = rlcat(
        "launch", RECIPE, "--target", "slurm", "--container", "none", "--ray-auth-mode", "disabled",
        "--set", "trainer.experiment=held", "--set", "env.RLCAT_STUB_HOLD='600'",
        "--submit", "--wait", "--timeout", "10",
    )  # fmt: skip
    job = re.search(r"submitted Slurm job (\d+)", result.err)
    assert job, result.err
    assert result.code == 1, result.err + result.out[-3000:]  # ExitCode.FINDINGS, as documented
    said = f"RLC1010 error: Slurm job {job.group(1)} did not end within --timeout 10 s; it was cancelled"
    assert said in result.err and "Traceback" not in result.err
    _cancelled_leaving_nothing(in_cluster, job.group(1), "held")


def _cancelled_leaving_nothing(cluster: SlurmCluster, job_id: str, experiment: str) -> None:
    """The job ended CANCELLED and nothing of it is left: no step, no Ray on either node, and no
    trainer (of `experiment`, where it had started)."""
    _wait_until(lambda: not cluster.jobs() and not cluster.ray_pids(), "the job left processes", 60)
    shown = cluster.run("scontrol", "show", "job", "-o", job_id).stdout
    assert "JobState=CANCELLED" in shown, shown
    if (cluster.out / f"{experiment}.json").exists():  # the trainer had started: it ended with its job
        assert not _alive(cluster.record(experiment)["pid"])


# Runs the command that follows with SIGINT at its default, as a terminal starts its foreground
# command, then becomes it (exec: the same process, which the test signals). A test run started in
# the background by a non-interactive shell ignores SIGINT, and every process it starts inherits
# that: the console script would never see the Ctrl-C (its job left running, holding the nodes).
AS_FROM_A_TERMINAL = (
    sys.executable,
    "-c",
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execv(sys.argv[1], sys.argv[1:])",
)


@pytest.mark.parametrize(
    ("sent", "code", "said"),
    [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")],
    ids=["ctrl-c", "sigterm"],
)
def test_the_console_script_cancels_its_job_on_ctrl_c_and_sigterm(
    in_cluster: SlurmCluster, tmp_path: Path, sent: signal.Signals, code: int, said: str
) -> None:
    # `rlcat launch ... --submit --wait` as a user runs it (the installed console script, a process of
    # its own), stopped by Ctrl-C at the terminal or by a SIGTERM from a CI runner or a scheduler once
    # its job runs: the job is cancelled on the way out, whatever step it is in, and the exit code is
    # the documented one (ExitCode.INTERRUPTED, ExitCode.TERMINATED)
    name = f"signal_{sent.name.lower()}"
    script = shutil.which("rlcat", path=str(Path(sys.executable).parent))
    assert script, "the rlcat console script is not installed beside this Python"
    err = tmp_path / "err"
    with err.open("w") as stderr:
        process = subprocess.Popen(
            [*AS_FROM_A_TERMINAL, script, "launch", RECIPE, "--target", "slurm", "--container", "none",
             "--ray-auth-mode", "disabled", "--set", f"trainer.experiment={name}",
             "--set", "env.RLCAT_STUB_HOLD='600'", "--submit", "--wait"],
            stdout=subprocess.DEVNULL, stderr=stderr, env=dict(os.environ), cwd=in_cluster.root / "work",
        )  # fmt: skip
        try:
            # stopped once the job's Ray runs (which also shows that ray_pids finds Ray's processes)
            _wait_until(
                lambda: bool(in_cluster.ray_pids()) or process.poll() is not None,
                "the job's Ray did not start",
                60,
            )
            assert process.poll() is None, err.read_text()
            process.send_signal(sent)
            exit_code = process.wait(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    text = err.read_text()
    assert exit_code == code, text
    job = re.search(r"submitted Slurm job (\d+)", text)
    assert job, text
    assert f"RLC1010 info: Slurm job {job.group(1)} cancelled" in text, text
    assert text.rstrip().endswith(said) and "Traceback" not in text
    _cancelled_leaving_nothing(in_cluster, job.group(1), name)


@pytest.fixture(scope="module")
def podman(slurm: SlurmCluster) -> Iterator[PodmanSite]:
    """The real podman as the nodes' container runtime (tests/e2e/podman_site.py), its image built
    here once; without podman and runc the tests skip, unless RLCAT_REQUIRE_PODMAN=1 (CI). Any
    container a failed test leaves is removed (the cluster's own stop kills what has its HOME)."""
    lacking = podman_site.missing()
    if lacking:
        reason = "needs " + ", ".join(lacking) + " (Debian's podman and runc)"
        if os.environ.get("RLCAT_REQUIRE_PODMAN") == "1":
            pytest.fail(reason + " (RLCAT_REQUIRE_PODMAN=1)", pytrace=False)
        pytest.skip(reason)
    site = podman_site.make_site(slurm.root / "podman")
    try:
        yield site
    finally:
        for node in NODES:
            site.podman(node, "rm", "--all", "--force", "--time", "0")


@pytest.fixture
def in_containers(in_cluster: SlurmCluster, podman: PodmanSite, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The site's podman first on the job's PATH, a credential in the submitting shell, and a team
    catalog whose `cuda` profile gives the containers the nodes' GPU devices (the built-in profile
    leaves the GPUs to CDI, which this machine has no spec for); the catalog's folder."""
    monkeypatch.setenv("PATH", f"{podman.env['PATH']}:{in_cluster.env['PATH']}")
    monkeypatch.setenv("CONTAINERS_CONF", podman.env["CONTAINERS_CONF"])
    monkeypatch.setenv("WANDB_API_KEY", SECRET)  # the submitting shell's credential, passed by name
    catalog = in_cluster.root / "team-catalog"
    (catalog / "catalog" / "platforms").mkdir(parents=True, exist_ok=True)
    devices = "".join(
        f"  - --device={in_cluster.root}/fakedev/nvidia{i}:/dev/nvidia{i}\n" for i in range(GPUS_PER_NODE)
    )
    profile = (REPO / "catalog" / "platforms" / "cuda.yaml").read_text(encoding="utf-8")
    (catalog / "catalog" / "platforms" / "cuda.yaml").write_text(profile + "docker_run:\n" + devices)
    return catalog


def _launch_in_podman(
    rlcat: Callable[..., Result], podman: PodmanSite, catalog: Path, name: str, image: str = podman_site.IMAGE
) -> Result:
    """The shipped 2 × 8 CUDA plan, launched on a site whose nodes run podman: the image, the folders
    the containers mount (this Python's environment and the checkout, read-only, as a shared software
    tree; the cluster's folder, which holds HOME, the working folder and the stand-in's output), the
    setup line that activates the environment, and the variables the stand-in needs and the
    credential, passed by name."""
    root = podman.root.parent
    return rlcat(
        "launch", TWO_BY_EIGHT, "--platform", "cuda", "--target", "slurm", "--ray-auth-mode", "disabled",
        "--set", f"trainer.experiment={name}", "--catalog", str(catalog),
        "--container", "podman", "--image", image, "--pull", "never",
        f"--mount={sys.prefix}:{sys.prefix}:ro", f"--mount={REPO}:{REPO}:ro", f"--mount={root}:{root}",
        "--setup", f"source {shlex.quote(sys.prefix)}/bin/activate",
        "--pass-env", "PYTHONPATH", "--pass-env", "RLCAT_STUB_OUT", "--pass-env", "WANDB_API_KEY",
        "--submit", "--wait", "--timeout", str(JOB_SECONDS),
    )  # fmt: skip


def test_podman_containers_on_both_nodes_run_the_plan_and_keep_its_checkpoint(
    rlcat: Callable[..., Result],
    in_cluster: SlurmCluster,
    in_containers: Path,
    podman: PodmanSite,
) -> None:
    # the shipped 2 × 8 CUDA plan in a podman container per node: the plan's env reaches Ray's
    # workers through `run -e`, the passed credential by name, the checkpoint lands in a mounted
    # folder and outlives the `--rm` containers, and teardown leaves no container
    name = "in_podman"
    result = _launch_in_podman(rlcat, podman, in_containers, name)
    assert result.code == 0, result.err + result.out[-5000:]
    assert "teardown (exit 0)" in result.out
    catalog = ("--catalog", str(in_containers))
    plan = compiled_plan(rlcat, TWO_BY_EIGHT, "cuda", "--set", f"trainer.experiment={name}", *catalog)
    record = in_cluster.record(name)
    assert_plan_received(record, plan, {"RAY_AUTH_MODE": "disabled", "WANDB_API_KEY": SECRET})
    # the driver and both nodes' Ray workers ran in podman containers (podman marks its containers
    # with container=podman), on both nodes, and saw the nodes' eight devices
    for env in [record["driver_env"], *(node["env"] for node in record["nodes"])]:
        assert env.get("container") == "podman", env
    assert sorted(node["ip"] for node in record["nodes"]) == sorted(NODES.values())
    assert record["cluster_gpus"] == 2 * GPUS_PER_NODE
    # the checkpoint, saved inside the head's container under the working folder (a mount), is on
    # the host after the containers are gone
    checkpoint = Path(record["checkpoint"])
    assert checkpoint.is_relative_to(in_cluster.root / "work"), checkpoint
    assert json.loads(checkpoint.read_text(encoding="utf-8")) == record["argv"]
    assert podman.containers("n1") == [] and podman.containers("n2") == []
    assert in_cluster.jobs() == [] and in_cluster.ray_pids() == []


def test_a_node_without_the_image_fails_the_job_naming_it(
    rlcat: Callable[..., Result],
    in_cluster: SlurmCluster,
    in_containers: Path,
    podman: PodmanSite,
) -> None:
    # an image only n1 holds, and --pull never: n2 is named before any container or Ray starts
    only_n1 = "localhost/rlcat-only-n1:e2e"
    tagged = podman.podman("n1", "tag", podman_site.IMAGE, only_n1)
    assert tagged.returncode == 0, tagged.stderr
    result = _launch_in_podman(rlcat, podman, in_containers, "no_image", image=only_n1)
    assert result.code == 1, result.err + result.out[-3000:]
    said = f"rlcat: node n2: no image {only_n1} (--pull never: load or pull it on every node first)"
    assert said in result.out, result.out[-3000:]
    assert "rlcat: node n1" not in result.out
    assert "ray start" not in result.out
    assert podman.containers("n1") == [] and podman.containers("n2") == []
    assert not (in_cluster.out / "no_image.json").exists()
    assert in_cluster.jobs() == []

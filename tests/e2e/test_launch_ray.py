"""`rlcat launch --target ray-job` against a real Ray cluster: a head on 127.0.0.2 and a worker on
127.0.0.3, eight fake GPUs each (`--num-gpus`, so placement is real), the stand-in trainer of
tests/data/launch/stub on the cluster's PYTHONPATH.

Asserted: shipped recipes launch in their own shapes, unreshaped (1 × 8 and 2 × 8, CUDA and ROCm,
colocated and fully async); every argv word and every env entry the trainer receives, in the driver
and on every node, is the one `rlcat compile --format json` gives for the same recipe and settings
(the job's whole runtime env is the plan's env and RAY_AUTH_MODE, nothing else); the env
probe ran on both nodes before the trainer, the overrides compose with Hydra against the verl tree
of the platform's release, a local --working-dir (uploaded by Ray's public JobSubmissionClient)
is the working directory of the driver and of every node, less its excludes; the console script,
run as a process, stops the running job on SIGTERM, leaves no trainer process, and exits 143; each failure a
check predicts happens on real Ray when the check is bypassed (a runtime-env key verl's ray.init
also sets; `$` in an env value and a NOSET variable without entrypoint CPUs, which the env probe
then finds on every node and fails the job), while `rlcat launch` refuses them, and a plan that
needs more GPUs than the cluster, before anything is submitted.

Network safety: loopback only. Ray runs with a HOME holding `ray_bootstrap_config.yaml` = `{}`
(else the dashboard probes the cloud metadata address at every head start) and
RAY_USAGE_STATS_ENABLED=0 (the cluster's settings, never in rlcat's output). A test checks that no
socket of the Ray processes leaves 127.0.0.0/8. Every process is bounded in time and stopped by PID
in the fixture's teardown, even when a test fails.

The cluster requires token authentication (RAY_AUTH_MODE=token, a token made for the run in
RAY_AUTH_TOKEN): every launch, through rlcat's REST client and through Ray's JobSubmissionClient,
shows that the token reaches the dashboard, and a test shows a request without it refused.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import local_ray
import pytest

from rlcat.compile.assemble import Request, compile_request
from rlcat.launch.base import Launch, LaunchOptions
from rlcat.launch.command import launch_command
from rlcat.launch.ray_job import submission
from rlcat.launch.ray_rest import TERMINAL_STATES, RayJobsClient

from conftest import REPO, Result

# One cluster for every test here, on one xdist worker (pyproject: --dist loadgroup); the Slurm
# tests that start Ray join the same group, so no two clusters of this machine overlap.
pytestmark = pytest.mark.xdist_group("real-engines")

HEAD_IP, WORKER_IP = "127.0.0.2", "127.0.0.3"
GPUS_PER_NODE = 8
START_SECONDS = 120  # bound on each `ray start`
JOB_SECONDS = 180  # bound on each job
RECIPE = "gsm8k_qwen3_8b_fsdp"  # shipped as 1 × 8 (colocated)
TWO_BY_EIGHT = "ppo_qwen2_7b_gsm8k"  # shipped as 2 × 8 (colocated)
FULLY_ASYNC = "qwen3_5_35b_megatron_async"  # shipped as 2 × 8: 8 trainer GPUs + 8 rollout GPUs
TRICKY = "a b'c\"d;e|f&g*h?[i] {j} `k` \\l"
TOKEN = secrets.token_hex(16)  # the cluster's; rlcat reads it from RAY_AUTH_TOKEN, as Ray's clients do
AUTH = ("--ray-auth-mode", "token")


@dataclass
class RayCluster:
    address: str
    out: Path
    home: Path
    env: dict[str, str]
    gcs: str = ""  # HOST:PORT, what `ray start --head` prints for workers and ray.init

    sessions: list[int] = field(default_factory=list)  # of its `ray start`s (e2e/local_ray.py)

    def pids(self) -> list[int]:
        """Every live process started for this cluster: in the session of one of its `ray start`s
        (every Ray process of it, its retitled agents too), or with its HOME (what started elsewhere
        works for it: a client, a job's driver)."""
        return sorted({*local_ray.in_sessions(self.sessions), *local_ray.with_home(self.home)})

    def stop(self) -> None:
        """Stop this cluster's processes by their PIDs (never `ray stop`, which would stop every Ray
        of this user on the machine): SIGTERM, then SIGKILL for what is left after 2 s (the GCS,
        the raylets and the autoscaler's monitor take Ray 2.60 over 10 s to end on SIGTERM; the
        test's cluster keeps nothing worth their orderly end, as `ray stop --force` does not)."""
        local_ray.stop(self.pids)

    def record(self, name: str) -> dict[str, Any]:
        return json.loads((self.out / f"{name}.json").read_text(encoding="utf-8"))


def _ray(cluster: RayCluster, *args: str) -> subprocess.CompletedProcess[str]:
    """`ray ARGS` in the cluster's env and folder, as the leader of a session the cluster keeps."""
    done, session = local_ray.ray(cluster.env, cluster.home.parent, *args, timeout=START_SECONDS)
    cluster.sessions.append(session)
    return done


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[RayCluster]:
    root, env = local_ray.cluster_folder("rlcat-ray-", {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": TOKEN})
    home, out = root / "home", root / "out"
    gcs, dashboard = local_ray.free_port(HEAD_IP), local_ray.free_port(HEAD_IP)
    cluster = RayCluster(f"http://{HEAD_IP}:{dashboard}", out, home, env, f"{HEAD_IP}:{gcs}")
    common = (
        "--num-gpus",
        str(GPUS_PER_NODE),
        "--object-store-memory",
        str(80 * 2**20),
        "--disable-usage-stats",
    )
    try:
        head_args = (
            "start",
            "--head",
            f"--node-ip-address={HEAD_IP}",
            f"--port={gcs}",
            f"--dashboard-host={HEAD_IP}",
            f"--dashboard-port={dashboard}",
            "--include-dashboard=true",
            f"--temp-dir={root / 'ray'}",
            "--num-cpus=2",
            *local_ray.agent_ports(HEAD_IP),
            *common,
        )
        worker_args = (
            "start",
            f"--address={HEAD_IP}:{gcs}",
            f"--node-ip-address={WORKER_IP}",
            # a folder of its own, as on a machine of its own: each node unpacks a job's working_dir
            # into its temp dir, first deleting what is there, which would be the head's copy
            # (the driver's working directory) if the two nodes shared one
            f"--temp-dir={root / 'ray-worker'}",
            "--num-cpus=1",
            *local_ray.agent_ports(WORKER_IP),
            *common,
        )
        # Ray gives a raylet 30 s to register (ray/_private/node.py, not configurable); on a busy
        # machine of two cores (the rest of the suite runs beside this) that can pass: start the
        # cluster again from nothing, at most three times in all
        for attempt in range(1, 4):
            head = _ray(cluster, *head_args)
            worker = _ray(cluster, *worker_args) if head.returncode == 0 else head
            if worker.returncode == 0:
                break
            cluster.stop()
            assert attempt < 3, worker.stderr[-3000:]
        client = RayJobsClient(cluster.address, token=TOKEN)
        deadline = time.monotonic() + 60
        while len([n for n in client.nodes() if n.alive]) < 2:
            assert time.monotonic() < deadline, "the worker did not join within 60 s"
            time.sleep(0.5)
        yield cluster
    finally:
        try:
            cluster.stop()
        finally:
            shutil.rmtree(root, ignore_errors=True)


def _launch(
    rlcat: Callable[..., Result],
    cluster: RayCluster,
    name: str,
    *args: str,
    recipe: str = RECIPE,
    platform: str = "cuda",
) -> Result:
    return rlcat(
        "launch",
        recipe,
        "--platform",
        platform,
        "--target",
        "ray-job",
        *AUTH,
        "--set",
        f"trainer.experiment={name}",
        *args,
        "--submit",
        "--wait",
        "--address",
        cluster.address,
        "--timeout",
        str(JOB_SECONDS),
    )


def compiled_plan(rlcat: Callable[..., Result], recipe: str, platform: str, *args: str) -> dict[str, Any]:
    """`rlcat compile RECIPE -p PLATFORM --format json ARGS...`: the plan every launch of the same
    recipe and settings must deliver, word for word (the oracle, not any launch artifact)."""
    result = rlcat("compile", recipe, "--platform", platform, "--format", "json", *args)
    assert result.code == 0, result.err
    plan: dict[str, Any] = json.loads(result.out)
    return plan


def assert_plan_received(record: dict[str, Any], plan: dict[str, Any], launch_env: dict[str, str]) -> None:
    """The stand-in trainer got the plan: its module is the plan's entrypoint, its argv is
    `--config-name=NAME` and then every override of the plan in order, each word as compiled, and
    the driver and every node's Ray worker hold each entry of the plan's env (with `launch_env`,
    what the launch adds by design, such as RAY_AUTH_MODE) with its compiled value."""
    assert record["module"] == plan["entrypoint"]
    assert record["argv"] == [f"--config-name={plan['config_name']}", *plan["overrides"]]
    env = plan["env"] | launch_env
    assert record["nodes"], record.get("ray_error")
    for where in [record["driver_env"], *(node["env"] for node in record["nodes"])]:
        assert {k: where.get(k) for k in env} == env
    assert record["composed"], record.get("compose_error")


def _job_env(cluster: RayCluster, said: str) -> dict[str, str]:
    """The env_vars of the runtime env of the job rlcat said it submitted, as Ray holds them (every
    variable the submission set; the rest of the trainer's env is the cluster's own)."""
    job = re.search(r"RLC1010 info: submitted (raysubmit_\w+)", said)
    assert job, said
    info = RayJobsClient(cluster.address, token=TOKEN).info(job.group(1))
    env: dict[str, str] = info["runtime_env"]["env_vars"]
    return env


def _bypassing_checks(cluster: RayCluster, name: str, sets: list[str], cpus: float = 1.0) -> dict[str, Any]:
    """Submit the launch rlcat would refuse, straight through the REST client: what real Ray does."""
    sets = [f"trainer.experiment={name}", *sets]
    compiled = compile_request(Request(RECIPE, "cuda", sets=sets))
    launch = Launch(compiled, launch_command(compiled, "token"), LaunchOptions(entrypoint_cpus=cpus))
    client = RayJobsClient(cluster.address, token=TOKEN)
    job = client.submit(submission(launch))
    deadline = time.monotonic() + JOB_SECONDS
    while (info := client.info(job))["status"] not in TERMINAL_STATES:
        if time.monotonic() > deadline:
            client.stop(job)
            pytest.fail(f"{job} did not end within {JOB_SECONDS} s")
        time.sleep(0.5)
    return {"info": info, "logs": client.logs(job)}


def _job_count(cluster: RayCluster) -> int:
    return len(json.loads(_get(cluster.address + "/api/jobs/")))


def _get(url: str, token: str | None = TOKEN) -> str:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10) as response:
        return str(response.read().decode())


@pytest.fixture(autouse=True)
def _submitting_user(monkeypatch: pytest.MonkeyPatch) -> None:
    """rlcat runs in this process: the cluster's token where Ray's clients look first, and no
    RAY_ADDRESS that would send Ray's JobSubmissionClient elsewhere."""
    for name in ("RAY_ADDRESS", "RAY_API_SERVER_ADDRESS", "RAY_AUTH_TOKEN_PATH", "RAY_AUTH_MODE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RAY_AUTH_TOKEN", TOKEN)


# --- the plan arrives as it was made ------------------------------------------------------------


def test_a_shipped_2x8_rocm_plan_arrives_as_compiled_on_every_node(
    rlcat: Callable[..., Result], ray_cluster: RayCluster
) -> None:
    name = "delivered"
    plan_args = (
        "--set",
        f"trainer.experiment={name}",
        "--set",
        f"env.RLCAT_PROBE={TRICKY}",
        "--override",
        f"+trainer.rlcat_probe='{TRICKY.replace(chr(92), chr(92) * 2).replace(chr(39), chr(92) + chr(39))}'",
        "--override",
        "+trainer.rlcat_interp=${oc.env:HOME}/x",
    )
    result = _launch(rlcat, ray_cluster, name, *plan_args[2:], recipe=TWO_BY_EIGHT, platform="rocm")
    assert result.code == 0, result.err + result.out[-3000:]
    assert "rlcat stand-in: ok" in result.out  # the job's logs, streamed
    plan = compiled_plan(rlcat, TWO_BY_EIGHT, "rocm", *plan_args)
    assert "trainer.nnodes=2" in plan["overrides"] and "trainer.n_gpus_per_node=8" in plan["overrides"]
    record = ray_cluster.record(name)
    assert_plan_received(record, plan, {"RAY_AUTH_MODE": "token"})
    # the driver saved its checkpoint where the cluster's processes run (verl's relative
    # default_local_dir), never in the checkout the tests run from
    assert Path(record["checkpoint"]).is_relative_to(ray_cluster.home.parent), record["checkpoint"]
    # the job's env is the plan's and the auth mode, nothing else of rlcat's
    assert _job_env(ray_cluster, result.err) == plan["env"] | {"RAY_AUTH_MODE": "token"}
    assert plan["env"]["RLCAT_PROBE"] == TRICKY
    assert plan["env"]["RAY_EXPERIMENTAL_NOSET_HIP_VISIBLE_DEVICES"] == "1"
    assert record["release"] == plan["verl_index"] == "0.9.0"  # ROCm's release: composed against it
    assert '+trainer.rlcat_interp="${oc.env:HOME}/x"' in record["argv"]  # a live interpolation
    # the env probe ran on both nodes before the trainer, and found the plan's env
    assert f"as planned on 2 node(s): {HEAD_IP}, {WORKER_IP}" in result.out
    assert result.out.index("rlcat env probe:") < result.out.index("rlcat stand-in: ok")
    assert sorted(node["ip"] for node in record["nodes"]) == [HEAD_IP, WORKER_IP]
    assert record["cluster_gpus"] == 2 * GPUS_PER_NODE
    # the log, followed on the dashboard's tail websocket: Ray's echo of the entrypoint shows the
    # trainer's line, not the env probe's thirty lines of source
    echo = "(rlcat env probe) && exec python3 -m verl.trainer.main_ppo --config-name="
    assert re.search(r"^Running entrypoint for job raysubmit_\w+: " + re.escape(echo), result.out, re.M)
    assert "NodeAffinitySchedulingStrategy" not in result.out and "env_differences" not in result.out
    assert "does not stream the job's log" not in result.err  # the websocket handshake is RFC 6455's


def test_a_fully_async_plan_and_a_local_working_dir_arrive_on_every_node(
    rlcat: Callable[..., Result], ray_cluster: RayCluster, tmp_path: Path
) -> None:
    # the shipped 2 × 8 fully-async plan on CUDA: its own entrypoint, a trainer pool and a rollout
    # pool of 8 GPUs each (one node each), uploaded code beside it
    folder = tmp_path / "project"
    (folder / "pkg").mkdir(parents=True)
    reward = "def score(answer):\n    return 1.0  # uploaded by rlcat\n"
    (folder / "pkg" / "reward.py").write_text(reward)
    (folder / ".gitignore").write_text("scratch/\n")
    (folder / "scratch").mkdir()
    (folder / "scratch" / "notes.txt").write_text("stays here\n")
    (folder / "model.safetensors").write_bytes(b"\0" * 64)  # rlcat's default excludes
    result = _launch(rlcat, ray_cluster, "working_dir", "--working-dir", str(folder), recipe=FULLY_ASYNC)
    assert result.code == 0, result.err + result.out[-3000:]
    record = ray_cluster.record("working_dir")
    plan = compiled_plan(rlcat, FULLY_ASYNC, "cuda", "--set", "trainer.experiment=working_dir")
    assert plan["entrypoint"] == "verl.experimental.fully_async_policy.fully_async_main"
    assert {"trainer.n_gpus_per_node=8", "rollout.nnodes=1", "rollout.n_gpus_per_node=8"} <= {
        *plan["overrides"]
    }
    assert_plan_received(record, plan, {"RAY_AUTH_MODE": "token"})
    assert _job_env(ray_cluster, result.err) == plan["env"] | {"RAY_AUTH_MODE": "token"}
    assert record["cluster_gpus"] == 2 * GPUS_PER_NODE
    uri = record["working_dir"]  # the job's runtime_env on the cluster
    assert re.fullmatch(r"gcs://_ray_pkg_[0-9a-f]{16}\.zip", uri), uri
    assert f"--working-dir {folder} RLC1010 info: uploaded as {uri}" in result.err
    arrived = {".gitignore": "scratch/\n", "pkg/reward.py": reward}
    assert record["working_dir_files"] == arrived  # the driver's working directory
    assert [node["working_dir_files"] for node in record["nodes"]] == [arrived, arrived]


def _alive(pid: int) -> bool:
    """A process that has not ended (a zombie, ended but not yet reaped, counts as ended)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][:1] not in "ZX"
    except OSError:
        return False


def _wait_until(done: Callable[[], bool], what: str, seconds: float = JOB_SECONDS) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, what
        time.sleep(0.3)


def _stop_jobs(cluster: RayCluster) -> None:
    client = RayJobsClient(cluster.address, token=TOKEN)
    for job in json.loads(_get(cluster.address + "/api/jobs/")):
        if job["status"] not in TERMINAL_STATES and job.get("submission_id"):
            client.stop(job["submission_id"])


def test_the_console_script_stops_a_running_job_on_sigterm(
    rlcat: Callable[..., Result], ray_cluster: RayCluster, tmp_path: Path
) -> None:
    # `rlcat launch ...` as a user runs it (the installed console script, a process of its own),
    # following a shipped 1 × 8 ROCm plan whose stand-in trainer holds its GPUs until stopped
    name = "sigterm"
    plan_args = ("--set", f"trainer.experiment={name}", "--set", "env.RLCAT_STUB_HOLD='600'")
    script = shutil.which("rlcat", path=str(Path(sys.executable).parent))
    assert script, "the rlcat console script is not installed beside this Python"
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")} | {"RAY_AUTH_TOKEN": TOKEN}
    out, err = tmp_path / "out", tmp_path / "err"
    with out.open("w") as stdout, err.open("w") as stderr:
        process = subprocess.Popen(
            [script, "launch", RECIPE, "--platform", "rocm", "--target", "ray-job", *AUTH, *plan_args,
             "--submit", "--wait", "--address", ray_cluster.address],
            stdout=stdout, stderr=stderr, env=env, cwd=tmp_path,
        )  # fmt: skip
        try:
            record_file = ray_cluster.out / f"{name}.json"
            _wait_until(
                lambda: record_file.exists() or process.poll() is not None, "the trainer did not start"
            )
            assert process.poll() is None, err.read_text() + out.read_text()[-3000:]
            # the job's log, streamed while it runs (not printed once it has ended)
            _wait_until(lambda: "rlcat stand-in: holding" in out.read_text(), "the log did not arrive", 60)
            process.send_signal(signal.SIGTERM)
            code = process.wait(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
            _stop_jobs(ray_cluster)  # a failed test leaves no job holding the cluster's CPUs
    said = err.read_text()
    assert code == 143, said  # ExitCode.TERMINATED, as documented
    job = re.search(r"RLC1010 info: submitted (raysubmit_\w+)", said)
    assert job, said
    assert f"RLC1010 info: {job.group(1)} stopped" in said and said.rstrip().endswith("terminated")
    assert "Traceback" not in said
    # the job was stopped on the cluster, and its trainer is gone
    client = RayJobsClient(ray_cluster.address, token=TOKEN)
    _wait_until(lambda: client.info(job.group(1))["status"] in TERMINAL_STATES, "the job did not end", 60)
    assert client.info(job.group(1))["status"] == "STOPPED"
    record = ray_cluster.record(name)
    _wait_until(lambda: not _alive(record["pid"]), "the trainer outlived its stopped job", 60)
    # what it ran is the plan: the shipped shape, as compiled
    plan = compiled_plan(rlcat, RECIPE, "rocm", *plan_args)
    assert "trainer.nnodes=1" in plan["overrides"] and "trainer.n_gpus_per_node=8" in plan["overrides"]
    assert_plan_received(record, plan, {"RAY_AUTH_MODE": "token"})
    assert _job_env(ray_cluster, said) == plan["env"] | {"RAY_AUTH_MODE": "token"}


# --- each predicted failure: refused by rlcat, and real on Ray ----------------------------------


def test_env_key_verl_sets_is_refused_and_fails_on_ray(
    rlcat: Callable[..., Result], ray_cluster: RayCluster
) -> None:
    before = _job_count(ray_cluster)
    refused = _launch(rlcat, ray_cluster, "conflict", "--set", "env.PYTHONHASHSEED='0'")
    assert refused.code == 1
    assert "RLC1003" in refused.err and "PYTHONHASHSEED" in refused.err
    assert _job_count(ray_cluster) == before  # nothing was submitted
    real = _bypassing_checks(ray_cluster, "conflict", ["env.PYTHONHASHSEED='0'"])
    assert real["info"]["status"] == "FAILED"
    assert "Failed to merge the Job's runtime env" in real["logs"]


def test_dollar_and_noset_without_cpus_are_refused_and_real(
    rlcat: Callable[..., Result], ray_cluster: RayCluster
) -> None:
    dollar = _launch(rlcat, ray_cluster, "dollar", "--set", "env.RLCAT_DOLLAR=$HOME/a")
    assert dollar.code == 1 and "RLC1004" in dollar.err
    noset = _launch(
        rlcat,
        ray_cluster,
        "noset",
        "--set",
        "env.RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES='1'",
        "--entrypoint-cpus",
        "0",
    )
    assert noset.code == 1 and "RLC1009" in noset.err

    # on real Ray, Ray expands the `$` and drops the NOSET variable on every node: the env probe
    # finds both and fails the job before the trainer starts
    sets = ["env.RLCAT_DOLLAR=$HOME/a", "env.RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES='1'"]
    real = _bypassing_checks(ray_cluster, "dollar_noset", sets, cpus=0)
    assert real["info"]["status"] == "FAILED", real["logs"][-3000:]
    logs = real["logs"]
    for ip in (HEAD_IP, WORKER_IP):
        expanded = f"rlcat env probe: RLCAT_DOLLAR is {str(ray_cluster.home) + '/a'!r} on node {ip}"
        assert expanded in logs, logs[-3000:]
        dropped = f"RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES is not set on node {ip}"
        assert dropped in logs
    assert "rlcat stand-in" not in logs and not (ray_cluster.out / "dollar_noset.json").exists()


def test_too_few_gpus_is_refused_before_submitting(
    rlcat: Callable[..., Result], ray_cluster: RayCluster
) -> None:
    before = _job_count(ray_cluster)
    result = rlcat(
        "launch",
        RECIPE,
        "--target",
        "ray-job",
        *AUTH,
        "--set",
        "resources.nodes=4",
        "--submit",
        "--address",
        ray_cluster.address,
    )
    assert result.code == 1
    assert "RLC1002" in result.err and "needs 32 GPUs" in result.err and "has 16" in result.err
    assert _job_count(ray_cluster) == before


def test_unreachable_address_is_bad_input(rlcat: Callable[..., Result], ray_cluster: RayCluster) -> None:
    closed = local_ray.free_port(HEAD_IP)
    result = rlcat(
        "launch",
        RECIPE,
        "--target",
        "ray-job",
        *AUTH,
        "--submit",
        "--address",
        f"http://{HEAD_IP}:{closed}",
    )
    assert result.code == 2
    assert "RLC1008" in result.err and "Traceback" not in result.err


def test_the_gcs_port_is_not_the_dashboard(rlcat: Callable[..., Result], ray_cluster: RayCluster) -> None:
    # the address `ray start --head` prints: Ray's GCS, a gRPC server, answers HTTP with HTTP/2 bytes
    result = rlcat("launch", RECIPE, "--target", "ray-job", *AUTH, "--submit", "--address", ray_cluster.gcs)
    assert result.code == 2, result.err
    assert f"RLC1008 error: http://{ray_cluster.gcs} answered, but not over HTTP" in result.err
    assert "hint: the address is the dashboard's, http://HEAD:8265" in result.err
    assert "internal error" not in result.err and "\x00" not in result.err and "\x04" not in result.err


def test_auth_disabled_against_a_token_cluster_is_refused_before_submitting(
    rlcat: Callable[..., Result], ray_cluster: RayCluster
) -> None:
    before = _job_count(ray_cluster)
    result = rlcat(
        "launch", RECIPE, "--target", "ray-job", "--ray-auth-mode", "disabled",
        "--submit", "--address", ray_cluster.address,
    )  # fmt: skip
    assert result.code == 1, result.err
    assert "RLC1006" in result.err and "is not the cluster's authentication mode, token" in result.err
    assert "hint: the cluster checks a token" in result.err
    assert _job_count(ray_cluster) == before


def test_the_cluster_requires_its_token(
    rlcat: Callable[..., Result], ray_cluster: RayCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert json.loads(_get(ray_cluster.address + "/api/version"))["ray_version"]
    with pytest.raises(urllib.error.HTTPError) as refused:
        _get(ray_cluster.address + "/api/version", token=None)
    assert refused.value.code == 401
    monkeypatch.setenv("RAY_AUTH_TOKEN", "not-the-token")
    result = _launch(rlcat, ray_cluster, "wrong_token")
    assert result.code == 1
    assert "RLC1008" in result.err and "HTTP 403" in result.err and "Traceback" not in result.err
    assert "hint: the cluster checks a token: give its token in RAY_AUTH_TOKEN" in result.err


# --- network safety -----------------------------------------------------------------------------


def _socket_inodes(pid: int) -> set[str]:
    inodes = set()
    try:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    except OSError:
        pass
    return inodes


def _tcp_sockets() -> dict[str, tuple[str, str]]:
    """inode → (local address, remote address) of every TCP socket (/proc/net/tcp and tcp6)."""
    found = {}
    for table, width in (("/proc/net/tcp", 4), ("/proc/net/tcp6", 16)):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            found[fields[9]] = (_address(fields[1], width), _address(fields[2], width))
    return found


def _address(hex_address: str, width: int) -> str:
    host = bytes.fromhex(hex_address.split(":", maxsplit=1)[0])
    # /proc writes each 32-bit word in host (little-endian) order
    words = b"".join(host[i : i + 4][::-1] for i in range(0, len(host), 4))
    return str(ipaddress.ip_address(words[:width]))


def test_ray_processes_touch_only_loopback(ray_cluster: RayCluster) -> None:
    pids = ray_cluster.pids()
    assert len(pids) >= 4  # gcs, raylets, dashboard, agents
    sockets = _tcp_sockets()
    seen = 0
    for pid in pids:
        for inode in _socket_inodes(pid):
            if inode not in sockets:
                continue
            seen += 1
            for address in sockets[inode]:
                ip = ipaddress.ip_address(address)
                mapped = ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) else None
                ip = mapped or ip
                assert ip.is_loopback or ip.is_unspecified, f"pid {pid}: socket on {ip}"
    assert seen > 0


def test_the_submit_benchmark_runs_on_this_cluster(ray_cluster: RayCluster, tmp_path: Path) -> None:
    # bench/ray_submit.py (rlcat against plain `ray job submit`, to RUNNING) on a real cluster: both
    # clients reach RUNNING with the token, and every job it started is stopped (its figures are
    # judged by whoever measures, bench/README.md); no warm-up submissions: this cluster has run
    # jobs already, and its job agent is up
    before = _job_count(ray_cluster)
    results = tmp_path / "results.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env |= {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": TOKEN}  # a token cluster's users have both
    run = subprocess.run(
        [sys.executable, str(REPO / "bench" / "ray_submit.py"), "--address", ray_cluster.address,
         "--ray-auth-mode", "token", "--repeat", "1", "--no-warm-up", "--json", str(results)],
        env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    data = json.loads(results.read_text(encoding="utf-8"))
    assert [len(times) for times in data["samples"].values()] == [1, 1]
    jobs = json.loads(_get(ray_cluster.address + "/api/jobs/"))
    assert len(jobs) == before + 2  # one measured submission of each client
    assert all(job["status"] in TERMINAL_STATES for job in jobs)  # none left running

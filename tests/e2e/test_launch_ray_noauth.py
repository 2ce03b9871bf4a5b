"""`rlcat launch --target ray-job` against a real Ray head without token authentication (the
settings of test_launch_ray.py otherwise: loopback, a HOME holding ray_bootstrap_config.yaml,
no usage stats, every process stopped by PID).

Asserted: a launch that says `--ray-auth-mode token` is refused before anything is submitted (its
job's env would carry RAY_AUTH_MODE=token, every Ray worker of the job would abort, and the job
stay PENDING); such a job, submitted past rlcat's check, does stay PENDING, and a --timeout then
says so rather than "stopped".
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterator

import local_ray
import pytest
from test_launch_ray import HEAD_IP, RECIPE, RayCluster, _job_count, _ray

from rlcat.compile.assemble import Request, compile_request
from rlcat.diagnostics import RlcatError
from rlcat.launch import ray_job
from rlcat.launch.base import Launch, LaunchOptions
from rlcat.launch.command import launch_command
from rlcat.launch.ray_rest import RayApiError, RayJobsClient

from conftest import Result

pytestmark = pytest.mark.xdist_group("real-engines")


@pytest.fixture(scope="module")
def open_cluster() -> Iterator[RayCluster]:
    """One head, 8 fake GPUs, RAY_AUTH_MODE=disabled."""
    root, env = local_ray.cluster_folder("rlcat-rayopen-", {"RAY_AUTH_MODE": "disabled"})
    home, out = root / "home", root / "out"
    gcs, dashboard = local_ray.free_port(HEAD_IP), local_ray.free_port(HEAD_IP)
    cluster = RayCluster(f"http://{HEAD_IP}:{dashboard}", out, home, env, f"{HEAD_IP}:{gcs}")
    try:
        head = _ray(
            cluster,
            "start",
            "--head",
            f"--node-ip-address={HEAD_IP}",
            f"--port={gcs}",
            f"--dashboard-host={HEAD_IP}",
            f"--dashboard-port={dashboard}",
            "--include-dashboard=true",
            *local_ray.agent_ports(HEAD_IP),
            f"--temp-dir={root / 'ray'}",
            "--num-cpus=2",
            "--num-gpus=8",
            f"--object-store-memory={80 * 2**20}",
            "--disable-usage-stats",
        )
        assert head.returncode == 0, head.stderr[-3000:]
        yield cluster
    finally:
        try:
            cluster.stop()
        finally:
            shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(autouse=True)
def _submitting_user(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("RAY_ADDRESS", "RAY_API_SERVER_ADDRESS", "RAY_AUTH_TOKEN_PATH", "RAY_AUTH_MODE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RAY_AUTH_TOKEN", "a-token-this-cluster-does-not-check")


def test_token_auth_against_a_cluster_without_it_is_refused_before_submitting(
    rlcat: Callable[..., Result], open_cluster: RayCluster
) -> None:
    assert RayJobsClient(open_cluster.address).authentication_mode() == "disabled"
    before = _job_count(open_cluster)
    result = rlcat(
        "launch", RECIPE, "--target", "ray-job", "--ray-auth-mode", "token",
        "--submit", "--wait", "--address", open_cluster.address, "--timeout", "60",
    )  # fmt: skip
    assert result.code == 1, result.err
    assert (
        "RLC1006 error: RAY_AUTH_MODE=token is not the cluster's authentication mode, disabled" in result.err
    )
    assert "every Ray worker of the job would abort" in result.err
    assert "hint: --ray-auth-mode disabled" in result.err
    assert _job_count(open_cluster) == before


def test_a_timeout_says_a_job_ray_did_not_stop_is_still_pending(open_cluster: RayCluster) -> None:
    # the launch rlcat now refuses, submitted past its check: RAY_AUTH_MODE=token in the job's env
    sets = ["trainer.experiment=pending"]
    compiled = compile_request(Request(RECIPE, "cuda", sets=sets))
    launch = Launch(compiled, launch_command(compiled, "token"), LaunchOptions())
    client = RayJobsClient(open_cluster.address)
    # a head just started answers "No available agent to submit job" until its dashboard agent is
    # up: seconds when the machine is quiet, past 120 s once under the whole suite's load
    deadline = time.monotonic() + 300
    while True:
        try:
            job = client.submit(ray_job.submission(launch))
            break
        except RayApiError as exc:
            assert exc.status == 500 and time.monotonic() < deadline, str(exc)
            time.sleep(1)
    time.sleep(3)  # long enough for a worker to abort; the job is then PENDING for good
    with pytest.raises(RlcatError) as timed_out:
        raise ray_job._timed_out(client, job, 3.0)
    [said] = timed_out.value.diagnostics
    status = client.info(job)["status"]
    if status == "PENDING":
        assert said.message.endswith("rlcat asked Ray to stop it, and it is still PENDING"), said.message
    else:  # Ray stopped it after all: the message says that state, not an assumed one
        assert said.message.endswith(f"it was stopped and is {status}"), said.message
    assert said.severity.name == "ERROR"

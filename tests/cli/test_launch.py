"""`rlcat launch`: every target renders, each check refuses what it predicts (RLC10xx), bad input
is a diagnostic with its exit code, and --submit --wait against a stand-in of the Ray Jobs REST API
follows, reports and stops jobs (the real cluster is tests/e2e/test_launch_ray.py)."""

from __future__ import annotations

import ast
import base64
import contextlib
import functools
import hashlib
import io
import json
import os
import re
import shlex
import socket
import subprocess
import sys
import threading
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from fake_ray_api import WEBSOCKET_GUID, FakeRay, fake_ray_servers

import rlcat
from rlcat.cli.process import Terminated
from rlcat.launch import ray_job
from rlcat.launch.base import LaunchOptions
from rlcat.launch.checks import gpus_fit
from rlcat.launch.command import GpuPool
from rlcat.launch.kuberay import k8s_env_value
from rlcat.launch.ray_rest import LogTail, websocket_accept
from rlcat.launch.targets import TARGETS

from conftest import Result

Run = Callable[..., Result]
AUTH = ("--ray-auth-mode", "disabled")

# every device of an 8-GPU node: fewer would be RLC504 before any launch check
EIGHT = "0,1,2,3,4,5,6,7"


def launch(rlcat: Run, *args: str, recipe: str = "gsm8k_qwen3_8b_fsdp") -> Result:
    return rlcat("launch", recipe, *args)


# --- every target renders ------------------------------------------------------------------------


def test_the_command_line_offers_every_registered_target(rlcat: Run) -> None:
    result = rlcat("launch", "--help")
    for name in TARGETS:
        assert name in result.out


def test_local_script_is_bash_and_runs_the_plans_argv(rlcat: Run, tmp_path: Path) -> None:
    path = tmp_path / "launch.sh"
    result = launch(rlcat, "--target", "local", *AUTH, "--emit", str(path))
    assert result.code == 0, result.err
    assert path.stat().st_mode & 0o100  # executable
    text = path.read_text()
    assert subprocess.run(["bash", "-n", str(path)], check=False).returncode == 0
    assert "export RAY_AUTH_MODE=disabled" in text
    assert "RLCAT_PREFLIGHT" in text and "python3 -m verl.trainer.main_ppo --config-name=ppo_trainer" in text


def test_ray_job_body_is_the_rest_submission(rlcat: Run) -> None:
    result = launch(rlcat, "--target", "ray-job", *AUTH, "--platform", "rocm")
    assert result.code == 0, result.err
    body = json.loads(result.out)
    assert set(body) == {"entrypoint", "runtime_env", "metadata", "entrypoint_num_cpus"}
    env = body["runtime_env"]["env_vars"]
    # the env probe with the plan's env (less the visibility variables Ray sets per worker), then
    # the trainer in its place
    words = shlex.split(body["entrypoint"])
    assert words[:2] == ["python3", "-c"] and "NodeAffinitySchedulingStrategy" in words[2]
    split = words.index("&&")
    probed = dict(zip(words[3:split:2], words[4:split:2], strict=True))
    visibility = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES")
    assert probed == {k: v for k, v in env.items() if k not in visibility}
    assert probed["RAY_EXPERIMENTAL_NOSET_HIP_VISIBLE_DEVICES"] == "1"
    assert words[split + 1 : split + 5] == ["exec", "python3", "-m", "verl.trainer.main_ppo"]
    assert env["RAY_AUTH_MODE"] == "disabled" and env["RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES"] == "1"
    assert body["entrypoint_num_cpus"] == 1.0  # keeps the NOSET variables in the driver's env
    assert body["metadata"]["rlcat_verl_index"] == "0.9.0"
    assert all(isinstance(v, str) for v in body["metadata"].values())


def test_skypilot_task_exports_env_before_ray_start(rlcat: Run, tmp_path: Path) -> None:
    result = launch(rlcat, "--target", "skypilot", *AUTH, "--platform", "rocm")
    assert result.code == 0, result.err
    task = yaml.safe_load(result.out)
    assert set(task) == {"name", "resources", "num_nodes", "run"}
    assert task["resources"] == {"accelerators": "MI300X:8", "image_id": "docker:verl-rocm:0.9.0.amd0-rocm"}
    run = task["run"]
    script = tmp_path / "run.sh"
    script.write_text(run)
    assert subprocess.run(["bash", "-n", str(script)], check=False).returncode == 0
    assert run.index("export NCCL_MIN_NCHANNELS=112") < run.index("ray start --head")
    assert "sleep 10" not in run and "RLCAT_WAIT" in run


def test_kuberay_manifest_shape(rlcat: Run) -> None:
    result = launch(rlcat, "--target", "kuberay", "--ray-auth-mode", "token", "--platform", "rocm")
    assert result.code == 0, result.err
    job = yaml.safe_load(result.out)
    assert (job["apiVersion"], job["kind"]) == ("ray.io/v1", "RayJob")
    spec = job["spec"]
    assert spec["shutdownAfterJobFinishes"] is True
    assert spec["rayClusterSpec"]["authOptions"] == {"mode": "token"}
    head = spec["rayClusterSpec"]["headGroupSpec"]
    container = head["template"]["spec"]["containers"][0]
    assert container["resources"]["limits"] == {"amd.com/gpu": 8}
    names = [e["name"] for e in container["env"]]
    assert "RAY_AUTH_MODE" not in names  # KubeRay sets it, with the token, from authOptions
    assert "RAY_EXPERIMENTAL_NOSET_HIP_VISIBLE_DEVICES" in names
    assert "workerGroupSpecs" not in spec["rayClusterSpec"]  # one node: the head holds the GPUs
    assert "runtimeEnvYAML" not in spec  # env in the pods, not in the job (RLC1003, RLC1004)


def test_kuberay_workers_for_a_multi_node_recipe(rlcat: Run) -> None:
    result = launch(
        rlcat,
        "--target",
        "kuberay",
        *AUTH,
        "--image",
        "registry.example/verl:1",
        "--set",
        "resources.nodes=2",
    )
    assert result.code == 0, result.err
    cluster = yaml.safe_load(result.out)["spec"]["rayClusterSpec"]
    [group] = cluster["workerGroupSpecs"]
    assert group["replicas"] == group["minReplicas"] == group["maxReplicas"] == 1
    assert group["template"]["spec"]["containers"][0]["image"] == "registry.example/verl:1"


def test_kubernetes_expansion_is_escaped() -> None:
    assert k8s_env_value("a$(HOME)b$c$$") == "a$$(HOME)b$$c$$$$"


@pytest.mark.parametrize("value", ['"a\x1b[1mb"', '"a\n  ::warning::b"'], ids=["control", "workflow-command"])
@pytest.mark.parametrize("target", ["kuberay", "skypilot"])
def test_yaml_targets_refuse_what_yaml_shows_raw(rlcat: Run, target: str, value: str) -> None:
    result = launch(
        rlcat, "--target", target, *AUTH, "--image", "r/verl:1", "--override", f"+trainer.x={value}"
    )
    if target == "skypilot":  # run: holds every value as one bash word, $'...' for control characters
        assert result.code == 0 and "+trainer.x=" in result.out
        return
    assert result.code == 2 and result.out == "" and "RLC405" in result.err
    assert "hint: use --target ray-job (JSON escapes it)" in result.err


def test_kuberay_needs_an_image(rlcat: Run) -> None:
    result = launch(rlcat, "--target", "kuberay", *AUTH)  # the cuda profile names no image
    assert result.code == 1
    assert "RLC1011" in result.err and "--image" in result.err


def test_slurm_renders_an_sbatch_script(rlcat: Run) -> None:
    result = launch(rlcat, "--target", "slurm", *AUTH)  # tests/cli/test_launch_slurm_script.py: the details
    assert result.code == 0, result.err
    assert result.out.startswith("#!/bin/bash\n#SBATCH ")


# --- the checks ---------------------------------------------------------------------------------


def test_auth_mode_must_be_explicit(rlcat: Run) -> None:
    result = launch(rlcat, "--target", "local")
    assert result.code == 2 and "RLC1006" in result.err
    clash = launch(rlcat, "--target", "local", *AUTH, "--set", "env.RAY_AUTH_MODE=token")
    assert clash.code == 2 and "RLC1006" in clash.err
    from_plan = launch(rlcat, "--target", "local", "--set", "env.RAY_AUTH_MODE=token")
    assert from_plan.code == 0 and "export RAY_AUTH_MODE=token" in from_plan.out


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (("--set", "env.PYTHONHASHSEED='0'"), "RLC1003", "PYTHONHASHSEED"),
        (("--set", "env.VERL_FULL_DETERMINISM='1'"), "RLC1003", "VERL_FULL_DETERMINISM"),
        (
            ("--override", "transfer_queue.enable=True", "--set", "env.TRANSFER_QUEUE_ENABLE='1'"),
            "RLC1003",
            "transfer_queue.enable",
        ),
        (
            ("--override", "++ray_kwargs.ray_init.runtime_env.env_vars.MY_VAR=x", "--set", "env.MY_VAR=y"),
            "RLC1003",
            "MY_VAR",
        ),
        (("--set", "env.DATA=$HOME/data"), "RLC1004", "DATA"),
        (("--platform", "rocm", "--entrypoint-cpus", "0"), "RLC1009", "NOSET_CUDA"),
        (
            (
                "--platform",
                "rocm",
                "--set",
                f"env.HIP_VISIBLE_DEVICES={EIGHT}",
                "--set",
                f"env.ROCR_VISIBLE_DEVICES={EIGHT}",
            ),
            "RLC1005",
            "ROCR_VISIBLE_DEVICES",
        ),
    ],
    ids=[
        "determinism-key",
        "always-added-key",
        "transfer-queue",
        "ray-init-env",
        "dollar",
        "noset",
        "visibility",
    ],
)
def test_ray_job_checks_refuse_before_anything_starts(
    rlcat: Run, args: tuple[str, ...], code: str, message: str
) -> None:
    result = launch(rlcat, "--target", "ray-job", *AUTH, *args)
    assert result.code == 1, result.err
    assert code in result.err and message in result.err
    assert result.out == ""


def test_runtime_env_keys_follow_the_verl_release(rlcat: Run) -> None:
    # verl 0.7.1 (rocm-7.0.2) forwards no determinism keys: a job may set them
    result = launch(
        rlcat, "--target", "ray-job", *AUTH, "--platform", "rocm-7.0.2", "--set", "env.PYTHONHASHSEED='0'"
    )
    assert result.code == 0, result.err
    assert "RLC1003" not in result.err
    assert json.loads(result.out)["runtime_env"]["env_vars"]["PYTHONHASHSEED"] == "0"
    # verl 0.9.0 (rocm) forwards it itself: the same key is refused there
    newer = launch(
        rlcat, "--target", "ray-job", *AUTH, "--platform", "rocm", "--set", "env.PYTHONHASHSEED='0'"
    )
    assert newer.code == 1 and "RLC1003" in newer.err and "verl 0.9.0" in newer.err, newer.err


def test_dollar_is_fine_where_no_job_env_expands_it(rlcat: Run) -> None:
    for target in ("local", "skypilot"):
        result = launch(rlcat, "--target", target, *AUTH, "--set", "env.DATA=$HOME/data")
        assert result.code == 0, result.err
        assert "DATA='$HOME/data'" in result.out


def test_visibility_is_a_rocm_rule(rlcat: Run) -> None:
    args = ("--set", f"env.HIP_VISIBLE_DEVICES={EIGHT}", "--set", f"env.CUDA_VISIBLE_DEVICES={EIGHT}")
    rocm = launch(rlcat, "--target", "local", *AUTH, "--platform", "rocm", *args)
    assert rocm.code == 1 and rocm.out == ""
    assert "RLC1005 error: the env sets HIP_VISIBLE_DEVICES, CUDA_VISIBLE_DEVICES" in rocm.err, rocm.err
    cuda = launch(rlcat, "--target", "local", *AUTH, "--platform", "cuda", *args)
    assert cuda.code == 0, cuda.err
    assert "RLC1005" not in cuda.err
    lines = cuda.out.splitlines()
    assert f"export HIP_VISIBLE_DEVICES={EIGHT}" in lines and f"export CUDA_VISIBLE_DEVICES={EIGHT}" in lines


def test_working_dir_over_the_limit_names_the_biggest_files(rlcat: Run, tmp_path: Path) -> None:
    big = tmp_path / "proj"
    big.mkdir()
    with (big / "weights.dat").open("wb") as fh:
        fh.truncate(101 * 2**20)  # sparse: no disk used
    (big / "train.py").write_text("print()\n")
    result = launch(rlcat, "--target", "ray-job", *AUTH, "--working-dir", str(big))
    assert result.code == 1 and "RLC1007" in result.err and "weights.dat" in result.err
    excluded = launch(rlcat, "--target", "ray-job", *AUTH, "--working-dir", str(big), "--exclude", "*.dat")
    assert excluded.code == 0, excluded.err
    body = json.loads(excluded.out)
    assert body["runtime_env"]["working_dir"] == str(big) and "*.dat" in body["runtime_env"]["excludes"]


def test_gpu_fit_places_whole_node_bundles() -> None:
    pools = [GpuPool("trainer", 2, 4)]
    assert gpus_fit(pools, [4, 4]) == []
    assert gpus_fit(pools, [8]) == []  # two 4-GPU placement groups fit one 8-GPU node
    [few] = gpus_fit(pools, [4])
    assert "needs 8 GPUs" in few.message and few.code == "RLC1002"
    [split] = gpus_fit([GpuPool("trainer", 1, 8)], [4, 4])  # enough GPUs, but no node holds 8
    assert "do not fit" in split.message
    assert gpus_fit([GpuPool("trainer", 1, 4), GpuPool("rollout", 1, 4)], [8]) == []


# --- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ("--target", "nowhere"),
        ("--target", "ray-job", *AUTH, "--emit", "x.json", "--submit"),
        ("--target", "ray-job", *AUTH, "--wait"),
        ("--target", "ray-job", *AUTH, "--submit"),  # no --address
        ("--target", "ray-job", *AUTH, "--submit", "--address", "ftp://host:1"),
        ("--target", "local", *AUTH, "--submit"),
    ],
    ids=["unknown-target", "emit-and-submit", "wait-alone", "no-address", "not-http", "local-submit"],
)
def test_bad_launch_requests(rlcat: Run, args: tuple[str, ...]) -> None:
    result = launch(rlcat, *args)
    assert result.code in (1, 2), result.err
    assert "Traceback" not in result.err and result.err.strip()


# --- --submit against a stand-in of the REST API --------------------------------------------------


@pytest.fixture
def fake_ray() -> Iterator[Callable[..., tuple[FakeRay, str]]]:
    with fake_ray_servers() as start:
        yield start


@pytest.fixture
def no_sleep(monkeypatch: pytest.MonkeyPatch) -> None:
    """No sleeping between status reads, and a log tail waited on for 10 ms, not a second."""
    monkeypatch.setattr(ray_job.time, "sleep", lambda seconds: None)
    monkeypatch.setattr("rlcat.cli.launch.LaunchOptions", functools.partial(LaunchOptions, poll_seconds=0.01))


def submit(rlcat: Run, address: str, *args: str) -> Result:
    return launch(rlcat, "--target", "ray-job", *AUTH, "--submit", "--address", address, *args)


def test_a_ctrl_c_the_moment_the_job_exists_stops_it(
    rlcat: Run, fake_ray: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Ray has taken the job, and Ctrl-C arrives before rlcat follows it (while it says so): with
    # --wait the job is rlcat's to stop, so it does; without --wait it only submitted it
    real = ray_job.diag

    def interrupted(code: str, message: str, **kw: Any) -> Any:
        if message.startswith("submitted raysubmit_test"):
            raise KeyboardInterrupt
        return real(code, message, **kw)

    monkeypatch.setattr(ray_job, "diag", interrupted)
    for wait, stops in (((), 0), (("--wait",), 1)):
        fake, address = fake_ray(["RUNNING"])
        result = submit(rlcat, address, *wait)
        assert result.code == 130, result.err  # ExitCode.INTERRUPTED
        assert len(fake.stopped) == stops, wait
        assert ("RLC1010 info: raysubmit_test stopped" in result.err) == bool(stops), result.err


def test_submit_without_wait_prints_the_submission_id(rlcat: Run, fake_ray: Any) -> None:
    fake, address = fake_ray(["RUNNING"])
    result = submit(rlcat, address)
    assert result.code == 0, result.err
    assert result.out == "raysubmit_test\n"
    assert "RLC1010" in result.err and "submitted raysubmit_test" in result.err
    [body] = fake.submitted
    assert body["runtime_env"]["env_vars"]["RAY_AUTH_MODE"] == "disabled"


def test_pass_env_values_go_in_the_posted_body_only(
    rlcat: Run, fake_ray: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake, address = fake_ray(["RUNNING"])
    missing = submit(rlcat, address, "--pass-env", "RLCAT_NOT_SET_ANYWHERE")
    assert missing.code == 2 and "RLC1013" in missing.err and fake.submitted == []
    monkeypatch.setenv("WANDB_API_KEY", "sk-secret")
    result = submit(rlcat, address, "--pass-env", "WANDB_API_KEY")
    assert result.code == 0, result.err
    [body] = fake.submitted
    assert body["runtime_env"]["env_vars"]["WANDB_API_KEY"] == "sk-secret"
    assert body["metadata"]["rlcat_pass_env"] == "WANDB_API_KEY" and "sk-secret" not in result.err


def test_wait_streams_logs_and_returns_success(rlcat: Run, fake_ray: Any, no_sleep: None) -> None:
    _, address = fake_ray(["PENDING", "RUNNING", "SUCCEEDED"])
    result = submit(rlcat, address, "--wait")
    assert result.code == 0, result.err
    assert result.out == "step 0\nstep 1\nstep 2\n"  # each line once, as the logs grew
    assert "SUCCEEDED" in result.err


def test_wait_returns_the_drivers_exit_code(rlcat: Run, fake_ray: Any, no_sleep: None) -> None:
    _, address = fake_ray(["RUNNING", "FAILED"], exit_code=7)
    result = submit(rlcat, address, "--wait")
    assert result.code == 7
    assert "FAILED (driver exit code 7)" in result.err


def test_too_few_gpus_submits_nothing(rlcat: Run, fake_ray: Any) -> None:
    fake, address = fake_ray(["RUNNING"], gpus=4)
    result = submit(rlcat, address)
    assert result.code == 1 and "RLC1002" in result.err
    assert fake.submitted == []


@pytest.mark.parametrize(("signal_exception", "code"), [(KeyboardInterrupt, 130), (Terminated, 143)])
def test_ctrl_c_and_sigterm_stop_the_job(
    rlcat: Run,
    fake_ray: Any,
    monkeypatch: pytest.MonkeyPatch,
    signal_exception: type[BaseException],
    code: int,
) -> None:
    fake, address = fake_ray(["RUNNING"])

    def interrupted(tail: LogTail, seconds: float) -> str:
        raise signal_exception

    monkeypatch.setattr(LogTail, "read", interrupted)  # while rlcat follows the job's log
    result = submit(rlcat, address, "--wait")
    assert result.code == code
    assert fake.stopped == ["/api/jobs/raysubmit_test/stop"]
    assert "raysubmit_test stopped" in result.err


def test_timeout_stops_the_job(rlcat: Run, fake_ray: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    fake, address = fake_ray(["RUNNING"])
    clock = iter(range(0, 10_000, 100))
    monkeypatch.setattr(ray_job.time, "monotonic", lambda: float(next(clock)))
    monkeypatch.setattr(ray_job.time, "sleep", lambda seconds: None)
    result = submit(rlcat, address, "--wait", "--timeout", "150")
    assert result.code == 1 and "--timeout" in result.err
    assert fake.stopped == ["/api/jobs/raysubmit_test/stop"]


# --- a local working_dir: uploaded by Ray's public JobSubmissionClient ---------------------------

TOKEN = "rlcat-test-token"


@pytest.fixture
def ray_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """The submitting user's environment: no RAY_ADDRESS of their own, the cluster's token."""
    for name in ("RAY_ADDRESS", "RAY_API_SERVER_ADDRESS", "RAY_AUTH_TOKEN_PATH", "RAY_AUTH_MODE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RAY_AUTH_TOKEN", TOKEN)
    return monkeypatch


def project(root: Path) -> Path:
    """A working dir with code, a file under a folder .gitignore names, and weights the default
    excludes leave out."""
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "reward.py").write_text("def score(x):\n    return 1.0\n")
    (root / "run.sh").write_text("echo run\n")
    (root / ".gitignore").write_text("scratch/\n")
    (root / "scratch").mkdir()
    (root / "scratch" / "notes.txt").write_text("local notes\n")
    (root / "model.safetensors").write_bytes(b"\0" * 64)
    return root


def submit_token(rlcat: Run, address: str, *args: str) -> Result:
    token_auth = ("--ray-auth-mode", "token")
    return launch(rlcat, "--target", "ray-job", *token_auth, "--submit", "--address", address, *args)


def test_a_local_working_dir_is_uploaded_through_rays_client(
    rlcat: Run, fake_ray: Any, ray_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    folder = project(tmp_path / "proj")
    fake, address = fake_ray(["RUNNING"], token=TOKEN)
    result = submit_token(rlcat, address, "--working-dir", str(folder))
    assert result.code == 0, result.err
    [(uri, package)] = fake.packages.items()
    assert re.fullmatch(r"gcs://_ray_pkg_[0-9a-f]{16}\.zip", uri)
    with zipfile.ZipFile(io.BytesIO(package)) as archive:
        files = {name for name in archive.namelist() if not name.endswith("/")}
        assert archive.read("pkg/reward.py") == b"def score(x):\n    return 1.0\n"
    assert files == {".gitignore", "pkg/reward.py", "run.sh"}  # not scratch/ nor the weights
    [body] = fake.submitted
    assert body["runtime_env"]["working_dir"] == uri  # the package's URI in place of the folder
    assert body["runtime_env"]["env_vars"]["RAY_AUTH_MODE"] == "token"
    assert body["metadata"]["rlcat_recipe"] == "gsm8k_qwen3_8b_fsdp" and body["entrypoint_num_cpus"] == 1.0
    assert f"--working-dir {folder} RLC1010 info: uploaded as {uri}" in result.err
    assert result.out == "raysubmit_test\n"
    # every request, rlcat's own and Ray's client's, carried the cluster's token
    methods = {(method, path.split("/")[2]) for method, path, _ in fake.requests}
    assert {("GET", "version"), ("GET", "packages"), ("PUT", "packages"), ("POST", "jobs")} <= methods
    assert {auth for _, _, auth in fake.requests} == {f"Bearer {TOKEN}"}

    again = submit_token(rlcat, address, "--working-dir", str(folder))
    assert again.code == 0, again.err
    assert [m for m, path, _ in fake.requests if m == "PUT"] == ["PUT"]  # the cluster had it: not sent twice
    assert fake.submitted[-1]["runtime_env"]["working_dir"] == uri


def test_rays_warnings_while_packing_are_findings_escaped_as_all_output(
    rlcat: Run, fake_ray: Any, ray_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    folder = project(tmp_path / "proj")
    with (folder / "big\x1b[2J.dat").open("wb") as big:  # a name that would clear the terminal
        big.truncate(10 * 2**20)  # Ray warns of a file from 10 MiB
    _, address = fake_ray(["RUNNING"], token=TOKEN)
    result = submit_token(rlcat, address, "--working-dir", str(folder))
    assert result.code == 0, result.err
    [warning] = [line for line in result.err.splitlines() if " RLC1010 warning: Ray: " in line]
    assert "big\\x1b[2J.dat" in warning and "\x1b" not in result.err
    assert result.err.index("RLC1010 warning: Ray:") < result.err.index("RLC1010 info: uploaded as gcs://")


def test_an_upload_the_cluster_refuses_is_its_word(
    rlcat: Run, fake_ray: Any, ray_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake, address = fake_ray(["RUNNING"], token=TOKEN, max_body=100)
    result = submit_token(rlcat, address, "--working-dir", str(project(tmp_path / "proj")))
    assert result.code == 1, result.err
    assert "RLC1008" in result.err and "RuntimeError: Request failed with status code 413" in result.err
    assert "Maximum request body size 100 exceeded" in result.err and "Traceback" not in result.err
    assert fake.packages == {} and fake.submitted == []


def test_without_rays_client_a_local_working_dir_is_refused_before_anything_is_sent(
    rlcat: Run, fake_ray: Any, ray_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    ray_env.setitem(sys.modules, "ray.job_submission", None)  # as if `ray` were not installed
    fake, address = fake_ray(["RUNNING"], token=TOKEN)
    result = submit_token(rlcat, address, "--working-dir", str(project(tmp_path / "proj")))
    assert result.code == 2
    assert "RLC1007" in result.err and "`ray` is not installed here" in result.err
    assert 'hint: pip install "ray[default]" beside rlcat, or give a URI Ray fetches itself' in result.err
    assert fake.requests == []
    # a remote URI needs no upload, so no Ray: the documented REST API posts it as given
    remote = submit_token(rlcat, address, "--working-dir", "https://example.org/proj.zip")
    assert remote.code == 0, remote.err
    assert fake.submitted[-1]["runtime_env"]["working_dir"] == "https://example.org/proj.zip"


# Ray's upload follows links, to files and to folders (ray/_private/runtime_env/packaging.py:
# _dir_travel iterates a linked folder, ZipFile.write reads what a link names): the check sees what
# the upload packs, and refuses a link out of the working dir before anything is sent.


def _linked_out(tmp_path: Path) -> tuple[Path, Path]:
    """A working dir whose links lead out of it: to credentials, to a folder holding more, and to a
    200 MiB file (sparse: no disk used) that the size check used to skip."""
    home = tmp_path / "home"
    (home / ".aws").mkdir(parents=True)
    (home / ".aws" / "credentials").write_text("aws_secret_access_key = OUTSIDE-SECRET\n")
    with (home / "model.dat").open("wb") as big:
        big.truncate(200 * 2**20)
    folder = project(tmp_path / "proj")
    (folder / "creds").symlink_to(home / ".aws" / "credentials")
    (folder / "dotaws").symlink_to(home / ".aws", target_is_directory=True)
    (folder / "weights.dat").symlink_to(home / "model.dat")
    return folder, home


def test_a_link_out_of_the_working_dir_is_refused_before_anything_is_sent(
    rlcat: Run, fake_ray: Any, ray_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    folder, _ = _linked_out(tmp_path)
    fake, address = fake_ray(["RUNNING"], token=TOKEN)
    result = submit_token(rlcat, address, "--working-dir", str(folder))
    assert result.code == 1 and "Traceback" not in result.err, result.err
    for name in ("creds", "dotaws", "weights.dat"):
        assert f"RLC011 error: {name} in the working_dir is a link to " in result.err, result.err
    assert fake.packages == {} and fake.submitted == []
    assert "OUTSIDE-SECRET" not in result.out + result.err
    rendered = launch(rlcat, "--target", "ray-job", *AUTH, "--working-dir", str(folder))  # no --submit
    assert rendered.code == 1 and rendered.out == "" and "RLC011" in rendered.err
    # an excluded link is not packed, so not refused
    excludes = ("--exclude", "creds", "--exclude", "dotaws", "--exclude", "*.dat")
    kept = launch(rlcat, "--target", "ray-job", *AUTH, "--working-dir", str(folder), *excludes)
    assert kept.code == 0, kept.err


def test_the_size_check_counts_a_link_inside_as_the_upload_packs_it(rlcat: Run, tmp_path: Path) -> None:
    folder = project(tmp_path / "proj")
    (folder / "store").mkdir()
    with (folder / "store" / "weights.dat").open("wb") as big:
        big.truncate(101 * 2**20)
    (folder / "current.bin.txt").symlink_to("store/weights.dat")  # packed under its own name
    exclude = ("--exclude", "store")
    result = launch(rlcat, "--target", "ray-job", *AUTH, "--working-dir", str(folder), *exclude)
    assert result.code == 1 and "RLC1007" in result.err and "current.bin.txt (101 MiB)" in result.err, (
        result.err
    )


def test_a_link_loop_in_the_working_dir_is_refused(rlcat: Run, tmp_path: Path) -> None:
    folder = project(tmp_path / "proj")
    (folder / "pkg" / "again").symlink_to("..", target_is_directory=True)
    result = launch(rlcat, "--target", "ray-job", *AUTH, "--working-dir", str(folder))
    assert result.code == 1 and "RLC011 error: link loop: pkg/again in the working_dir" in result.err


def test_links_inside_that_fan_out_are_a_bounded_walk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rlcat.launch import checks

    monkeypatch.setattr(checks, "MAX_PACKED_PATHS", 50)
    folder = tmp_path / "proj"
    (folder / "b").mkdir(parents=True)
    for i in range(10):
        (folder / "b" / f"f{i}.py").write_text("")
        (folder / f"to-b-{i}").symlink_to("b", target_is_directory=True)  # 10 ways into b: 110 paths
    [problem] = checks.working_dir(folder, ())
    assert problem.code == "RLC1007" and "more than 50 paths" in problem.message


def test_the_check_sees_the_files_rays_packaging_packs(tmp_path: Path) -> None:
    """The oracle is Ray's own packing (the function its JobSubmissionClient upload calls): the
    same files, under the same names, with the same sizes, links inside the folder included."""
    packaging = pytest.importorskip("ray._private.runtime_env.packaging")
    from rlcat.launch.base import DEFAULT_EXCLUDES
    from rlcat.launch.checks import packed_files

    folder = tmp_path / "proj"
    (folder / "pkg" / "deep").mkdir(parents=True)
    (folder / "pkg" / "deep" / "reward.py").write_text("def score(x):\n    return 1.0\n")
    (folder / ".env.example").write_text("A=1\n")  # hidden files are packed
    (folder / ".git").mkdir()
    (folder / ".git" / "config").write_text("[core]\n")  # excluded
    (folder / "w.safetensors").write_bytes(b"\0" * 300)  # excluded
    (folder / "run.sh").write_text("echo run\n")
    (folder / "run-again.sh").symlink_to("run.sh")  # a file link inside: packed as a copy
    (folder / "lib").symlink_to("pkg", target_is_directory=True)  # a folder link inside: walked again
    os.mkfifo(folder / "pipe")  # neither a file nor a folder: passed by
    found = packed_files(folder, DEFAULT_EXCLUDES)
    assert found.problems == []
    archive_path = tmp_path / "pkg.zip"
    packaging._zip_files(str(folder), list(DEFAULT_EXCLUDES), str(archive_path), include_gitignore=False)
    with zipfile.ZipFile(archive_path) as archive:
        ray_files = {i.filename: i.file_size for i in archive.infolist() if not i.is_dir()}
    assert dict(found.files) == ray_files
    assert "lib/deep/reward.py" in ray_files and "run-again.sh" in ray_files


@pytest.mark.parametrize("variable", ["RAY_ADDRESS", "RAY_API_SERVER_ADDRESS"])
def test_a_ray_address_elsewhere_would_redirect_the_upload(
    rlcat: Run, fake_ray: Any, ray_env: pytest.MonkeyPatch, tmp_path: Path, variable: str
) -> None:
    folder = project(tmp_path / "proj")
    fake, address = fake_ray(["RUNNING"], token=TOKEN)
    ray_env.setenv(variable, "http://127.0.0.9:8265")
    result = submit_token(rlcat, address, "--working-dir", str(folder))
    assert result.code == 2
    said = f"RLC105 error: {variable}=http://127.0.0.9:8265 is set, and Ray's JobSubmissionClient"
    assert said in result.err
    assert fake.requests == []
    ray_env.setenv(variable, address + "/")  # the same dashboard: Ray's client goes where rlcat checked
    same = submit_token(rlcat, address, "--working-dir", str(folder))
    assert same.code == 0, same.err
    assert len(fake.packages) == 1


def test_a_wrong_token_is_the_clusters_refusal(
    rlcat: Run, fake_ray: Any, ray_env: pytest.MonkeyPatch
) -> None:
    fake, address = fake_ray(["RUNNING"], token="another-token")
    result = submit_token(rlcat, address)
    assert result.code == 1
    assert "RLC1008" in result.err and "HTTP 403 Forbidden: Invalid authentication token" in result.err
    assert "hint: the cluster checks a token: give its token in RAY_AUTH_TOKEN" in result.err
    assert fake.requests == [
        ("GET", "/api/authentication_mode", f"Bearer {TOKEN}"),
        ("GET", "/api/version", f"Bearer {TOKEN}"),
    ]
    assert fake.submitted == []


def test_of_ray_rlcat_imports_only_the_public_job_submission_client() -> None:
    imported: dict[str, str] = {}
    for path in sorted(Path(rlcat.__file__).parent.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if not re.search(r"^\s*(import|from)\s.*\bray\b", text, re.MULTILINE):
            continue  # no statement that could import Ray: not worth parsing
        for node in ast.walk(ast.parse(text)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                if name == "ray" or name.startswith("ray."):
                    imported[name] = path.name
    assert imported == {"ray.job_submission": "ray_rest.py"}


# --- the launch's auth mode, the log, the result: as the cluster has them ----------------------


def test_timeout_says_the_state_the_job_is_really_in(
    rlcat: Run, fake_ray: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a job Ray does not stop (PENDING, its workers aborting): rlcat must not say "stopped"
    _, address = fake_ray(["PENDING"], stops=False)
    clock = iter(range(0, 10_000, 100))
    monkeypatch.setattr(ray_job.time, "monotonic", lambda: float(next(clock)))
    monkeypatch.setattr(ray_job.time, "sleep", lambda seconds: None)
    result = submit(rlcat, address, "--wait", "--timeout", "150")
    assert result.code == 1
    assert (
        "RLC1010 error: raysubmit_test did not end within --timeout 150 s; rlcat asked Ray to stop "
        "it, and it is still PENDING" in result.err
    )
    assert "info:" not in result.err.split("did not end")[0].splitlines()[-1]
    assert "hint: see `ray job status raysubmit_test`" in result.err
    _, address = fake_ray(["RUNNING"])
    clock = iter(range(0, 10_000, 100))
    result = submit(rlcat, address, "--wait", "--timeout", "150")
    assert (
        "RLC1010 error: raysubmit_test did not end within --timeout 150 s; it was stopped and is STOPPED"
        in result.err
    )


@pytest.mark.parametrize(
    ("cluster", "launched", "said"),
    [
        ("disabled", "token", "every Ray worker of the job would abort, and the job stay PENDING"),
        ("token", "disabled", "the cluster refuses every request without its token"),
    ],
)
def test_an_auth_mode_the_cluster_does_not_have_is_refused_before_submitting(
    rlcat: Run, fake_ray: Any, ray_env: pytest.MonkeyPatch, cluster: str, launched: str, said: str
) -> None:
    fake, address = fake_ray(["RUNNING"], auth_mode=cluster, token=TOKEN if cluster == "token" else None)
    result = launch(
        rlcat, "--target", "ray-job", "--ray-auth-mode", launched, "--submit", "--address", address
    )
    assert result.code == 1, result.err
    assert (
        f"RLC1006 error: RAY_AUTH_MODE={launched} is not the cluster's authentication mode, {cluster}"
        in result.err
    )
    assert said in result.err and "hint: " in result.err
    assert fake.submitted == []
    assert [path for _, path, _ in fake.requests] == ["/api/authentication_mode"]


def test_token_auth_without_a_token_here_is_refused_with_a_hint(
    rlcat: Run, fake_ray: Any, ray_env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    ray_env.delenv("RAY_AUTH_TOKEN")
    ray_env.setenv("HOME", str(tmp_path))  # no ~/.ray/auth_token
    fake, address = fake_ray(["RUNNING"], token=TOKEN)
    result = submit_token(rlcat, address)
    assert result.code == 1
    assert "checks a token, and none is set here" in result.err
    assert "hint: the cluster checks a token: give its token in RAY_AUTH_TOKEN" in result.err
    assert fake.submitted == []


@contextlib.contextmanager
def one_connection(serve: Callable[[socket.socket], None]) -> Iterator[str]:
    """A server on 127.0.0.1 whose first connection `serve` answers, in a thread; its HOST:PORT."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()

        def accept() -> None:
            connection, _ = server.accept()
            with connection:
                serve(connection)

        thread = threading.Thread(target=accept, daemon=True)
        thread.start()
        yield f"127.0.0.1:{server.getsockname()[1]}"
        thread.join(timeout=10)


def test_a_port_that_does_not_speak_http_is_a_clear_rlc1008(rlcat: Run) -> None:
    # what a gRPC server (Ray's GCS port, 6379) answers an HTTP request with: an HTTP/2 frame
    def answer(connection: socket.socket) -> None:
        connection.recv(65536)
        connection.sendall(b"\x00\x00\x06\x04\x00\x00\x00\x00\x00\x00\x05\x00\x00@\x00\x1b[31m")

    with one_connection(answer) as address:
        result = submit(rlcat, address)
    assert result.code == 2, result.err
    assert f"RLC1008 error: http://{address} answered, but not over HTTP" in result.err
    assert "hint: the address is the dashboard's, http://HEAD:8265" in result.err
    assert "internal error" not in result.err and "BadStatusLine" not in result.err
    assert "\x1b" not in result.err and "\x00" not in result.err


ECHOED = "Running entrypoint for job raysubmit_test: {entrypoint}\n"


@pytest.fixture
def fast_polls(monkeypatch: pytest.MonkeyPatch) -> None:
    """Status reads every 10 ms instead of every second (LaunchOptions.poll_seconds)."""
    monkeypatch.setattr("rlcat.cli.launch.LaunchOptions", functools.partial(LaunchOptions, poll_seconds=0.01))


def test_wait_streams_the_log_once_in_linear_traffic(rlcat: Run, fake_ray: Any, fast_polls: None) -> None:
    lines = "".join(f"trainer step {i}: loss {i / 7:.5f}\n" for i in range(3000))
    log = ECHOED + lines
    states = ["PENDING", *["RUNNING"] * 60, "SUCCEEDED"]
    fake, address = fake_ray(states, log=log, chunk=len(log) // 50 + 1)
    result = submit(rlcat, address, "--wait")
    assert result.code == 0, result.err
    entrypoint = fake.submitted[-1]["entrypoint"]
    # every line once, in order; Ray's echo of the entrypoint without the env probe's source
    trainer = entrypoint.split(" && exec ", 1)[1]
    assert (
        result.out
        == f"Running entrypoint for job raysubmit_test: (rlcat env probe) && exec {trainer}\n" + lines
    )
    assert "NodeAffinitySchedulingStrategy" not in result.out
    # each byte of the log crossed the network once (GET /logs, polled, sent it all every second)
    assert fake.log_bytes == len(log.replace("{entrypoint}", entrypoint).encode())
    assert not any(path.endswith("/logs") for _, path, _ in fake.requests)


def test_a_tail_that_drops_is_opened_again_without_printing_a_line_twice(
    rlcat: Run, fake_ray: Any, fast_polls: None
) -> None:
    lines = "".join(f"step {i}\n" for i in range(500))
    fake, address = fake_ray(["RUNNING"] * 10 + ["SUCCEEDED"], log=ECHOED + lines, chunk=700, drops=2)
    result = submit(rlcat, address, "--wait")
    assert result.code == 0, result.err
    assert result.out.split("\n", 1)[1] == lines  # every line once, in order
    assert fake.tails == 3 and fake.drops == 0


def test_without_the_tail_websocket_the_log_is_printed_once_at_the_end(
    rlcat: Run, fake_ray: Any, no_sleep: None
) -> None:
    fake, address = fake_ray(["RUNNING", "RUNNING", "SUCCEEDED"], log=ECHOED + "one\ntwo", tail=False)
    result = submit(rlcat, address, "--wait")
    assert result.code == 0, result.err
    assert result.out.startswith(
        "Running entrypoint for job raysubmit_test: (rlcat env probe) && exec python3"
    )
    assert result.out.endswith("\none\ntwo\n") and result.out.count("\n") == 3
    assert "does not stream the job's log" in result.err
    assert [path for _, path, _ in fake.requests].count("/api/jobs/raysubmit_test/logs") == 1


def test_a_failed_jobs_reason_is_rays_not_the_trainers_last_print(
    rlcat: Run, fake_ray: Any, no_sleep: None
) -> None:
    message = (
        "Job entrypoint command failed with exit code 7, last available logs (truncated to 20,000 chars):\n"
        "step 1\nsaving checkpoint to /ckpt\n"
    )
    _, address = fake_ray(["RUNNING", "FAILED"], exit_code=7, message=message)
    result = submit(rlcat, address, "--wait")
    assert result.code == 7
    assert (
        "raysubmit_test FAILED (driver exit code 7): Job entrypoint command failed with exit code 7\n"
        in result.err
    )
    assert "saving checkpoint" not in result.err


def test_the_websocket_handshake_is_rfc_6455s() -> None:
    # the RFC's own worked example (section 1.3): the answer a real server (aiohttp, Ray's) sends
    assert websocket_accept(b"dGhlIHNhbXBsZSBub25jZQ==") == b"s3pPLMBiTxaQ9kYGzzhZRbK+xOo="


def test_the_log_websocket_reads_what_rfc_6455_allows_a_server_to_send() -> None:
    # a message in three parts with a character cut between two, lengths in 7, 16 and 64 bits, a
    # ping in between (answered with a pong), then the close frame
    big = ("x" * 70_000 + "\n").encode()
    frames = (
        bytes([0x01, 3]) + b"ab\xc3"  # text, not final: "ab" and half of "é"
        + bytes([0x89, 4]) + b"ping"
        + bytes([0x00, 126]) + (300).to_bytes(2, "big") + b"\xa9" + b"c" * 298 + b"\n"
        + bytes([0x80, 127]) + len(big).to_bytes(8, "big") + big
        + bytes([0x88, 2]) + (1000).to_bytes(2, "big")
    )  # fmt: skip
    answered: list[bytes] = []

    def serve(connection: socket.socket) -> None:
        request = b""
        while b"\r\n\r\n" not in request:
            request += connection.recv(4096)
        key = re.search(rb"Sec-WebSocket-Key: (\S+)", request)
        assert key is not None
        accept = base64.b64encode(hashlib.sha1(key.group(1) + WEBSOCKET_GUID).digest())
        head = b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        connection.sendall(head + b"Sec-WebSocket-Accept: " + accept + b"\r\n\r\n")
        for at in range(0, len(frames), 1000):  # cut anywhere, as TCP may
            connection.sendall(frames[at : at + 1000])
        connection.settimeout(10)
        answered.append(connection.recv(4096))

    with one_connection(serve) as address:
        tail = LogTail(f"http://{address}", "/api/jobs/x/logs/tail", None, 10)
        text = ""
        while not tail.closed:
            text += tail.read(1.0)
    assert text == "abé" + "c" * 298 + "\n" + big.decode()
    assert tail.ended
    pong = answered[0]
    assert pong[0] == 0x8A and pong[1] == 0x80 | 4  # a pong, masked as a client's frames must be
    mask = pong[2:6]
    assert bytes(b ^ mask[i % 4] for i, b in enumerate(pong[6:10])) == b"ping"

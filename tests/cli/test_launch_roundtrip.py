"""Property: tricky override and env values (quotes, `$`, brackets, `${oc.env:...}`, spaces, line
breaks, backslashes) reach the trainer's argv and env unchanged through every target's reader:
the local script through bash, the ray-job entrypoint through `/bin/sh -c` (Ray's job supervisor
runs it with `subprocess.Popen(entrypoint, shell=True)`), the RayJob entrypoint through YAML and
`sh -c`, the SkyPilot `run:` through YAML and bash. A fake `python3` and `ray` on PATH record what
arrives; tests/e2e/test_launch_ray.py delivers through real Ray.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rlcat.emit.hydra_value import render
from rlcat.launch.base import Launch, LaunchOptions
from rlcat.launch.command import EnvVar, launch_command
from rlcat.launch.kuberay import manifest
from rlcat.launch.local import Local
from rlcat.launch.ray_job import submission
from rlcat.launch.skypilot import task
from rlcat.pipeline.assemble import Request, compile_request

FAKE_PYTHON = """#!/bin/sh
# a fake python3: `python3 - ...` (a heredoc check) succeeds; `python3 -m MODULE ARGS` records
if [ "$1" = "-" ]; then cat >/dev/null; exit 0; fi
exec "{real}" -c 'import json, os, sys
json.dump({{"argv": sys.argv[1:], "env": dict(os.environ)}}, open(os.environ["RECORD"], "w"))' "$@"
"""

PIECES = st.sampled_from(
    ["'", '"', "$", "${oc.env:HOME}", "[1,2]", "{a: b}", " ", "\n", "\\", "`x`", ";", "*", "é"]
)
VALUES = st.lists(st.one_of(PIECES, st.text("abc=:,/-_", max_size=3)), min_size=1, max_size=8).map("".join)


@pytest.fixture(scope="module")
def fake_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("bin")
    python = folder / "python3"
    python.write_text(
        FAKE_PYTHON.format(
            real=os.path.realpath(
                subprocess.check_output(["sh", "-c", "command -v python3"], text=True).strip()
            )
        )
    )
    python.chmod(0o755)
    ray = folder / "ray"
    ray.write_text("#!/bin/sh\nexit 0\n")
    ray.chmod(0o755)
    return folder


def _launch(value: str, env_value: str | None) -> Launch:
    overrides = [f"+trainer.rlcat_tricky={render(value)}"]
    compiled = compile_request(Request("gsm8k_qwen3_8b_fsdp", "cuda", overrides=overrides))
    command = launch_command(compiled, "disabled")
    if env_value is not None:  # an env value as a recipe's `env:` gives it
        command = replace(command, env=(*command.env, EnvVar("RLCAT_TRICKY", env_value)))
    return Launch(compiled, command, LaunchOptions(image="registry.example/verl:1"))


def _run(args: list[str], fake_bin: Path, tmp_path: Path, **extra_env: str) -> dict[str, object]:
    record = tmp_path / "record.json"
    record.unlink(missing_ok=True)
    env = {"PATH": f"{fake_bin}:/usr/bin:/bin", "RECORD": str(record), "HOME": str(tmp_path), **extra_env}
    subprocess.run(args, env=env, check=True, timeout=30, capture_output=True)
    return dict(json.loads(record.read_text()))


SETTINGS = settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@SETTINGS
@given(value=VALUES, env_value=VALUES)
def test_local_script_delivers(fake_bin: Path, tmp_path: Path, value: str, env_value: str) -> None:
    launch = _launch(value, env_value)
    script = tmp_path / "launch.sh"
    script.write_text(Local().render(launch))
    got = _run(["bash", str(script)], fake_bin, tmp_path)
    assert got["argv"] == list(launch.command.argv[1:])
    assert got["env"]["RLCAT_TRICKY"] == env_value  # type: ignore[index]


@SETTINGS
@given(value=VALUES)
def test_ray_job_entrypoint_delivers_through_sh(fake_bin: Path, tmp_path: Path, value: str) -> None:
    launch = _launch(value, None)
    body = json.loads(json.dumps(submission(launch)))  # as the REST body carries it
    got = _run(["sh", "-c", body["entrypoint"]], fake_bin, tmp_path)
    assert got["argv"] == list(launch.command.argv[1:])


@SETTINGS
@given(value=VALUES, env_value=VALUES)
def test_rayjob_manifest_delivers(fake_bin: Path, tmp_path: Path, value: str, env_value: str) -> None:
    launch = _launch(value, env_value)
    job = yaml.safe_load(yaml.safe_dump(manifest(launch)))
    got = _run(["sh", "-c", job["spec"]["entrypoint"]], fake_bin, tmp_path)
    assert got["argv"] == list(launch.command.argv[1:])
    [container] = job["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]["containers"]
    env = {e["name"]: e["value"] for e in container["env"]}
    assert env["RLCAT_TRICKY"].replace("$$", "$") == env_value  # Kubernetes reads `$$` as `$`


@SETTINGS
@given(value=VALUES, env_value=VALUES)
def test_skypilot_run_delivers(fake_bin: Path, tmp_path: Path, value: str, env_value: str) -> None:
    launch = _launch(value, env_value)
    run = yaml.safe_load(yaml.safe_dump(task(launch)))["run"]
    got = _run(
        ["bash", "-c", run],
        fake_bin,
        tmp_path,
        SKYPILOT_NODE_RANK="0",
        SKYPILOT_NODE_IPS="127.0.0.1",
        SKYPILOT_NUM_NODES="1",
        SKYPILOT_NUM_GPUS_PER_NODE="8",
    )
    assert got["argv"] == list(launch.command.argv[1:])
    assert got["env"]["RLCAT_TRICKY"] == env_value  # type: ignore[index]

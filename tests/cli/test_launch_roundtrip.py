"""Property: tricky override and env values (quotes, `$`, brackets, `${oc.env:...}`, spaces, line
breaks, backslashes, unicode, control characters) reach the trainer's argv and env unchanged through
every target's reader, or are refused with the diagnostic that says why:

- local: the script run by bash;
- ray-job: the REST body's entrypoint through `/bin/sh -c` (Ray's job supervisor runs it with
  `subprocess.Popen(entrypoint, shell=True)`, ray/dashboard/modules/job/job_supervisor.py): the env
  probe's arguments and the trainer's argv; the env through JSON (a `$` is refused, RLC1004: Ray
  expands it);
- slurm: the sbatch script's own export, env-probe and trainer lines run by bash, with `srun` and the
  Ray steps replaced by functions that run their command here;
- skypilot: the task's `run:` block, read back from YAML, run by bash on rank 0;
- kuberay: the manifest's entrypoint, read back from YAML, through every shell of the submission
  mode it names (kuberay_chain: HTTPMode's `/bin/sh -c`, under dash and bash); its pod env as
  Kubernetes reads it (`$$` is `$`).

Text no process can receive (NUL, a lone surrogate) is refused by every target (RLC405); the YAML
targets also refuse text a YAML reader would see raw (a hidden character, `##[`, a line that begins
with `::`). A fake `python3` on PATH records what arrives; tests/e2e/test_launch_ray.py and
test_launch_slurm.py deliver through real Ray and Slurm.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kuberay_chain import chain

from rlcat.compile.assemble import Request, compile_request
from rlcat.diagnostics import RlcatError, Severity, has_errors, printable
from rlcat.launch.base import Launch, LaunchOptions, Target
from rlcat.launch.command import EnvVar, launch_command
from rlcat.launch.kuberay import KubeRay
from rlcat.launch.local import Local
from rlcat.launch.ray_job import RayJob
from rlcat.launch.skypilot import SkyPilot
from rlcat.launch.slurm import Slurm
from rlcat.syntax.hydra_value import render

FAKE_PYTHON = """#!/bin/sh
# a fake python3: `python3 - ...` (a heredoc check) succeeds; the Ray env probe (`python3 -c CODE
# ARGS` that imports ray) records its ARGS; any other `-c CODE` (Slurm's env probe) runs; `python3
# -m MODULE ARGS` records its argv and env
if [ "$1" = "-" ]; then cat >/dev/null; exit 0; fi
if [ "$1" = "-c" ]; then
    case "$2" in
    *"import ray"*) shift 2; exec "{real}" -c 'import json, os, sys
json.dump(sys.argv[1:], open(os.environ["RECORD"] + ".probe", "w"))' "$@" ;;
    esac
    exec "{real}" "$@"
fi
exec "{real}" -c 'import json, os, sys
json.dump({{"argv": sys.argv[1:], "env": dict(os.environ)}}, open(os.environ["RECORD"], "w"))' "$@"
"""

# The Slurm script's steps, run here: srun runs its command (its options are dropped), a node's Ray
# is not started, `watched` and `on_node` run the command in the foreground.
SLURM_HERE = """set -euo pipefail
srun() { while [[ $1 == -* ]]; do shift; done; "$@"; }
on_node() { shift; "$@"; }
watched() { "$@"; }
say() { :; }
die() { printf "%s\\n" "$*" >&2; exit 1; }
RLCAT_NODE_COUNT=1
RLCAT_HEAD=node1
RAY_ADDRESS=127.0.0.1:6379
"""

PIECES = st.sampled_from(
    [
        "'",
        '"',
        "$",
        "${oc.env:HOME}",
        "$(id)",
        "[1,2]",
        "{a: b}",
        " ",
        "\t",
        "\n",
        "\n::warning::x",
        "\\",
        "`x`",
        ";",
        "*",
        "#",
        "~",
        "é",
        "日本",
        "\U0001f642",
        "\u202e",
        "\r",
        "\u2028",
        "##[",
        "\x1b[1m",
    ]
)
VALUES = st.lists(st.one_of(PIECES, st.text("abc=:,/-_", max_size=3)), min_size=1, max_size=8).map("".join)


def _unpassable(text: str) -> bool:
    return "\0" in text or any("\ud800" <= char <= "\udfff" for char in text)


def _yaml_shows_raw(text: str) -> bool:
    """Text a YAML target may refuse (RLC405): in a literal block, a hidden character, `##[` or a
    line that begins with `::` would reach a terminal or CI log as it is."""
    lines = text.split("\n")
    return any(printable(line) != line or line.lstrip().startswith("::") for line in lines)


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
    """The launch of a plan with `value` in an override and `env_value` in its env; RlcatError when
    the plan is refused before any target sees it."""
    overrides = [f"+trainer.rlcat_tricky={render(value)}"]
    compiled = compile_request(Request("gsm8k_qwen3_8b_fsdp", "cuda", overrides=overrides))
    command = launch_command(compiled, "disabled")
    if env_value is not None:  # an env value as a recipe's `env:` gives it
        command = replace(command, env=(*command.env, EnvVar("RLCAT_TRICKY", env_value)))
    return Launch(compiled, command, LaunchOptions(image="registry.example/verl:1", container="none"))


def _artifact(target: Target, value: str, env_value: str | None) -> tuple[Launch | None, str | set[str]]:
    """(the launch, its rendered artifact), or (the launch if made, the codes it was refused with)."""
    launch = None
    try:
        launch = _launch(value, env_value)
        findings = target.checks(launch)
        if has_errors(findings):
            return launch, {d.code for d in findings if d.severity >= Severity.ERROR}
        return launch, target.render(launch)
    except RlcatError as exc:
        return launch, {d.code for d in exc.diagnostics}


def _run(args: list[str], fake_bin: Path, tmp_path: Path, **extra_env: str) -> dict[str, object]:
    record = tmp_path / "record.json"
    record.unlink(missing_ok=True)
    Path(f"{record}.probe").unlink(missing_ok=True)
    env = {"PATH": f"{fake_bin}:/usr/bin:/bin", "RECORD": str(record), "HOME": str(tmp_path), **extra_env}
    done = subprocess.run(args, env=env, timeout=30, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return dict(json.loads(record.read_text()))


def _slurm_steps(script: str) -> str:
    """The script's exports, env probe and trainer, as it wrote them, after SLURM_HERE."""
    lines = script.split("\n")
    exports = lines[
        lines.index("set -euo pipefail") + 1 : lines.index(
            next(x for x in lines if x.startswith("RLCAT_NODE_COUNT="))
        )
    ]
    probe_start = lines.index("read -r -d '' RLCAT_ENV_PROBE <<'RLCAT_ENV_PROBE' || true")
    probe_end = next(i for i, x in enumerate(lines) if "the env of a node differs" in x) + 1
    trainer = lines[lines.index("RLCAT_RC=0") :]
    return "\n".join([SLURM_HERE, *exports, *lines[probe_start:probe_end], *trainer])


# Each target: how its artifact is run here, and what a record of the run must hold.
Deliver = Callable[[str, Path, Path], dict[str, object]]


def _local(artifact: str, fake_bin: Path, tmp_path: Path) -> dict[str, object]:
    script = tmp_path / "launch.sh"
    script.write_text(artifact)
    return _run(["bash", str(script)], fake_bin, tmp_path)


def _ray_job(artifact: str, fake_bin: Path, tmp_path: Path) -> dict[str, object]:
    body = json.loads(artifact)  # the REST body as Ray's dashboard decodes it
    got = _run(["/bin/sh", "-c", body["entrypoint"]], fake_bin, tmp_path)
    # Ray sets the job's runtime env on the driver: the env as the body carries it
    env = body["runtime_env"]["env_vars"]
    # the env probe ran first, and compares each node's env with the plan's, NAME VALUE ...
    probed = json.loads((tmp_path / "record.json.probe").read_text())
    assert dict(zip(probed[::2], probed[1::2], strict=True)) == env
    return {**got, "env": {**dict(got["env"]), **env}}  # type: ignore[arg-type]


def _slurm(artifact: str, fake_bin: Path, tmp_path: Path) -> dict[str, object]:
    return _run(["bash", "-c", _slurm_steps(artifact)], fake_bin, tmp_path)


def _skypilot(artifact: str, fake_bin: Path, tmp_path: Path) -> dict[str, object]:
    run = yaml.safe_load(artifact)["run"]
    nodes = {"SKYPILOT_NODE_IPS": "127.0.0.1", "SKYPILOT_NUM_NODES": "1", "SKYPILOT_NUM_GPUS_PER_NODE": "8"}
    return _run(["bash", "-c", run], fake_bin, tmp_path, SKYPILOT_NODE_RANK="0", **nodes)


def _kuberay(artifact: str, fake_bin: Path, tmp_path: Path) -> dict[str, object]:
    job = yaml.safe_load(artifact)
    runs = [_run(args, fake_bin, tmp_path, **extra) for args, extra in chain(job)]
    got = runs[0]
    assert all(run["argv"] == got["argv"] for run in runs)
    [container] = job["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]["containers"]
    # the pod's env as Kubernetes sets it: `$$` is one `$`
    pod_env = {e["name"]: e["value"].replace("$$", "$") for e in container["env"]}
    return {**got, "env": {**dict(got["env"]), **pod_env}}  # type: ignore[arg-type]


TARGETS: dict[str, tuple[Target, Deliver]] = {
    "local": (Local(), _local),
    "ray-job": (RayJob(), _ray_job),
    "slurm": (Slurm(), _slurm),
    "skypilot": (SkyPilot(), _skypilot),
    "kuberay": (KubeRay(), _kuberay),
}


def _refusals(target: str, value: str, env_value: str) -> tuple[set[str], bool]:
    """(the codes the launch must be refused with, or none; whether a YAML refusal is allowed)."""
    if _unpassable(value):
        return {"RLC405"} if "\0" in value else {"RLC105"}, False
    if target == "ray-job" and "$" in env_value:
        return {"RLC1004"}, False  # Ray expands job env values; no escape exists
    return set(), target == "kuberay" and (_yaml_shows_raw(value) or _yaml_shows_raw(env_value))


@pytest.mark.parametrize("target", TARGETS)
def test_a_tricky_value_arrives_unchanged(fake_bin: Path, tmp_path: Path, target: str) -> None:
    """The inner loop's case: quotes, `$`, brackets and line breaks in an override and an env value."""
    arrives_unchanged_or_is_refused(fake_bin, tmp_path, target, "multi\nline 'q' \"d\" $HOME [x]", "a\nb c")


@pytest.mark.slow  # fuzzing: 20 drawn pairs of values per target, each run through its readers
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=VALUES, env_value=VALUES)
@pytest.mark.parametrize("target", TARGETS)
def test_values_arrive_unchanged_or_are_refused(
    fake_bin: Path, tmp_path: Path, target: str, value: str, env_value: str
) -> None:
    arrives_unchanged_or_is_refused(fake_bin, tmp_path, target, value, env_value)


def arrives_unchanged_or_is_refused(
    fake_bin: Path, tmp_path: Path, target: str, value: str, env_value: str
) -> None:
    renderer, deliver = TARGETS[target]
    launch, outcome = _artifact(renderer, value, env_value)
    refused, may_refuse = _refusals(target, value, env_value)
    if isinstance(outcome, set):
        assert outcome == refused or (may_refuse and outcome == {"RLC405"}), (outcome, refused)
        return
    assert not refused, f"{target} rendered what it must refuse ({refused})"
    assert launch is not None
    got = deliver(outcome, fake_bin, tmp_path)
    assert got["argv"] == list(launch.command.argv[1:])
    assert f"+trainer.rlcat_tricky={render(value)}" in launch.command.argv
    env = got["env"]
    assert isinstance(env, dict)
    assert env["RLCAT_TRICKY"] == env_value
    assert env["RAY_AUTH_MODE"] == "disabled"


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("unpassable", ["\x00", "\ud800"], ids=["nul", "lone-surrogate"])
def test_what_no_process_can_receive_is_refused(target: str, unpassable: str) -> None:
    renderer, _ = TARGETS[target]
    _, outcome = _artifact(renderer, f"a{unpassable}b", "plain")
    assert outcome == _refusals(target, f"a{unpassable}b", "plain")[0]

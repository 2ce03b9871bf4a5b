"""`rlcat launch --target slurm`, as rendered text: the script's shape (what each line prevents, in
launch_facts' failure modes), its checks, and `--submit` without Slurm. The container runtimes have
golden files (tests/cli/test_launch_slurm_golden.py); a real Slurm runs the script in
tests/e2e/test_launch_slurm.py."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from rlcat.diagnostics import Diagnostic
from rlcat.launch import slurm_submit
from rlcat.launch.base import Console, LaunchOptions

from conftest import SLURM_SITE, Result

Run = Callable[..., Result]
SEED = "ppo_qwen2_7b_gsm8k_2x8"


def slurm(rlcat: Run, *args: str, recipe: str = SEED, platform: str = "rocm") -> Result:
    return rlcat(
        "launch", recipe, "--platform", platform, "--target", "slurm", "--ray-auth-mode", "disabled",
        *SLURM_SITE, *args,
    )  # fmt: skip


def _bash_ok(text: str, tmp_path: Path) -> None:
    script = tmp_path / "job.sbatch"
    script.write_text(text)
    checked = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stderr


def test_the_script_is_sized_from_the_plan(rlcat: Run, tmp_path: Path) -> None:
    path = tmp_path / "job.sbatch"
    result = slurm(rlcat, "--emit", str(path))
    assert result.code == 0, result.err
    assert path.stat().st_mode & 0o100
    text = path.read_text()
    _bash_ok(text, tmp_path)
    assert "#SBATCH --nodes=2\n" in text and "#SBATCH --gpus-per-node=8\n" in text
    assert "#SBATCH --ntasks-per-node=1\n" in text and "#SBATCH --exclusive\n" in text
    assert "RLCAT_ACCELERATORS=16\n" in text
    assert text.count("--num-gpus=8 --block &") == 2  # head and workers


def test_fully_async_asks_for_both_pools(rlcat: Run) -> None:
    result = slurm(rlcat, recipe="dapo_math_fsdp2_4_4")
    assert result.code == 0, result.err
    assert "RLCAT_ACCELERATORS=8\n" in result.out  # trainer 1×4 + rollout 1×4
    assert "trainer 1×4 + rollout 1×4" in result.out


def test_env_is_exported_before_anything_starts(rlcat: Run) -> None:
    text = slurm(rlcat, "--container", "docker").out
    first_step = text.index("srun --overlap")
    assert text.index("export NCCL_MIN_NCHANNELS=112") < first_step
    # the container gets every plan variable at `docker run`, not at `docker exec` (failure mode 3)
    assert "-e NCCL_MIN_NCHANNELS \\\n" in text
    assert text.index("docker run") < text.index("RLCAT_ENV_PROBE") < text.index("ray start --head")
    assert "docker build" not in text


def test_every_step_overlaps_and_nothing_sleeps_to_synchronise(rlcat: Run) -> None:
    text = slurm(rlcat).out
    steps = re.findall(r"(?:^\s*|exec |\$\()srun\b[^\n]*", text, re.M)
    assert steps and all("--overlap" in step for step in steps), steps
    assert not re.search(r"sleep (5|10)\b", text)
    assert 'until (exec 3<>"/dev/tcp/$RLCAT_HEAD_IP/$RAY_PORT")' in text
    assert "ray.nodes()" in text  # readiness: every node and GPU
    assert 'export RAY_ADDRESS="$RLCAT_HEAD_IP:$RAY_PORT"' in text
    assert "trap teardown EXIT" in text and "check_nodes" in text


def test_nodes_ip_and_ports(rlcat: Run) -> None:
    text = slurm(rlcat).out
    assert 'mapfile -t RLCAT_NODES < <(scontrol show hostnames "$SLURM_JOB_NODELIST")' in text
    assert "NodeAddr=" in text and "hostname --ip-address" not in text.split("node_ip() {")[1]
    assert '--node-ip-address="$RLCAT_HEAD_IP"' in text and '--node-ip-address="$node_ip"' in text
    assert "SLURM_JOB_ID %" in text and "--port=6379" not in text
    assert '--num-cpus="$RLCAT_CPUS"' in text and "SLURM_CPUS_PER_TASK" in text


def test_network_interface_sets_nccl_and_gloo(rlcat: Run, tmp_path: Path) -> None:
    text = slurm(rlcat, "--network-interface", "ib0", "--cpus-per-node", "28").out
    _bash_ok(text, tmp_path)
    assert "export NCCL_SOCKET_IFNAME=ib0\nexport GLOO_SOCKET_IFNAME=ib0\n" in text
    assert "ip -4 -o addr show dev ib0" in text
    assert "#SBATCH --cpus-per-task=28\n" in text and "--exclusive" not in text
    assert "NCCL_SOCKET_IFNAME ib0" in text  # the probe checks it on every node too


def test_network_interface_against_the_plan(rlcat: Run) -> None:
    result = slurm(rlcat, "--network-interface", "ib0", "--set", "env.NCCL_SOCKET_IFNAME=eth0")
    assert result.code == 1 and "RLC105" in result.err and "NCCL_SOCKET_IFNAME=eth0" in result.err
    result = slurm(rlcat, "--network-interface", "ib0; rm -rf /")
    assert result.code == 1 and "not a network interface name" in result.err


def test_rocm_drops_slurms_second_visibility_variable(rlcat: Run) -> None:
    assert "env -u ROCR_VISIBLE_DEVICES" in slurm(rlcat, "--container", "none").out
    assert "ROCR_VISIBLE_DEVICES" not in slurm(rlcat, "--container", "none", platform="cuda").out


def test_hostile_values_stay_words(rlcat: Run, tmp_path: Path) -> None:
    pwned = tmp_path / "pwned"
    result = slurm(
        rlcat, "--container", "docker", "--set", f"env.RLCAT_X='$(touch {pwned})`touch {pwned}`;\"'",
        "--mount", "/data/a b:/data", "--image", "reg/verl:1$(id)",
    )  # fmt: skip
    assert result.code == 0, result.err
    _bash_ok(result.out, tmp_path)
    [export] = [line for line in result.out.splitlines() if line.startswith("export RLCAT_X=")]
    shown = subprocess.run(
        ["bash", "-c", export + '; printf %s "$RLCAT_X"'], capture_output=True, text=True, check=True
    )
    assert shown.stdout == f'$(touch {pwned})`touch {pwned}`;"' and not pwned.exists()
    assert "'reg/verl:1$(id)' sleep infinity" in result.out and "-v '/data/a b':/data" in result.out


def test_a_container_needs_an_image(rlcat: Run) -> None:
    result = slurm(rlcat, "--container", "docker", platform="cuda")  # the cuda profile names none
    assert result.code == 1 and "RLC1011" in result.err
    assert slurm(rlcat, platform="cuda").code == 0  # default: none without an image


def test_a_plan_bigger_than_the_allocation(rlcat: Run) -> None:
    # the script asks Slurm for the recipe's 2 × 8; the plan's trainer wants 2 × 16
    result = slurm(rlcat, "--override", "trainer.n_gpus_per_node=16")
    assert result.code == 1 and result.out == ""
    assert "RLC1002" in result.err and "the plan needs 32 GPUs (trainer 2×16)" in result.err


@pytest.mark.parametrize("container", ["docker", "podman", "apptainer", "pyxis", "none"])
def test_every_runtime_runs_ray_and_the_trainer_in_one_place(
    rlcat: Run, tmp_path: Path, container: str
) -> None:
    text = slurm(rlcat, "--container", container).out
    _bash_ok(text, tmp_path)
    [on_node] = re.findall(r"exec srun [^\n]*", text)
    assert on_node.endswith('"$@"')
    # ray start, the readiness check and the trainer all go through on_node
    assert 'on_node "$RLCAT_HEAD" ray start --head' in text
    assert 'watched on_node "$RLCAT_HEAD" env RAY_ADDRESS="$RAY_ADDRESS" \\\n    python3 -m verl' in text


@pytest.mark.parametrize(
    ("container", "removal"),
    [
        # docker kills at once; podman would wait 10 s for `sleep infinity`, which ignores SIGTERM
        ("docker", 'docker rm -f "rlcat-$SLURM_JOB_ID"'),
        ("podman", 'podman rm -f -t 0 "rlcat-$SLURM_JOB_ID"'),
    ],
)
def test_teardown_removes_the_containers_without_a_grace_period(
    rlcat: Run, container: str, removal: str
) -> None:
    text = slurm(rlcat, "--container", container).out
    [teardown] = re.findall(rf"srun [^\n]* {container} rm [^\n]*", text)
    assert removal in teardown, teardown


def test_submit_without_slurm_is_bad_input(
    rlcat: Run, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    result = slurm(rlcat, "--submit")
    assert result.code == 2 and "RLC1012" in result.err and "sbatch is not on PATH" in result.err


def test_submit_reports_a_refusal(rlcat: Run, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fake = tmp_path / "sbatch"
    fake.write_text(
        "#!/bin/sh\ncat >/dev/null\n"
        "echo 'sbatch: error: Batch job submission failed: Invalid account' >&2\nexit 1\n"
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    result = slurm(rlcat, "--submit", "--wait")
    assert result.code == 1
    assert (
        "RLC1012" in result.err
        and "Slurm refused the job: sbatch: error: Batch job submission failed" in result.err
    )


def test_submit_hands_the_script_to_sbatch(
    rlcat: Run, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake = tmp_path / "sbatch"
    fake.write_text(f'#!/bin/sh\necho "$@" > {tmp_path}/args\ncat > {tmp_path}/script\necho 42\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    result = slurm(rlcat, "--submit")
    assert result.code == 0, result.err
    assert result.out == "42\n" and "submitted Slurm job 42" in result.err
    # the job's output in a file of its own: never an earlier job's slurm-JOBID.out
    args = (tmp_path / "args").read_text()
    assert re.fullmatch(r"--parsable --output=slurm-%j-[0-9a-f]{8}\.out\n", args), args
    assert "its output: slurm-42-" in result.err
    assert (tmp_path / "script").read_text() == slurm(rlcat).out


@pytest.mark.parametrize(
    ("state", "exit_code", "expected"),
    [
        ("COMPLETED", "0:0", 0),
        ("FAILED", "7:0", 7),  # the batch script's own code, as sbatch --wait returns it
        ("CANCELLED", "0:15", 1),  # ended by a signal
        ("TIMEOUT", "0:0", 1),  # did not complete, though nothing failed
        ("NODE_FAIL", None, 1),
    ],
)
def test_an_ended_jobs_exit_code_is_what_sbatch_wait_would_return(
    state: str, exit_code: str | None, expected: int
) -> None:
    assert slurm_submit._exit_code(state, exit_code) == expected


def _stand_ins(fakes: dict[str, str], folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Slurm's commands as the shell scripts `fakes` (name → body), first on PATH, run in `folder`."""
    for name, body in fakes.items():
        (folder / name).write_text("#!/bin/sh\n" + body)
        (folder / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}:/usr/bin:/bin")
    monkeypatch.chdir(folder)


DENIED = "scancel: error: Kill job error on job id 42: Access/permission denied"


def test_a_cancel_slurm_refuses_is_never_said_to_have_cancelled(
    rlcat: Run, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # a running job whose `scancel` fails (another user's job, a controller that went away): the
    # --timeout must not say the job was cancelled
    fakes = {
        "sbatch": 'cat >/dev/null\necho 42\nfor w in "$@"; do [ "$w" = --wait ] && exec sleep 60; done\n',
        "scontrol": "echo 'JobId=42 JobState=RUNNING Reason=None'\n",
        "scancel": f"echo '{DENIED}' >&2\nexit 1\n",
    }
    _stand_ins(fakes, tmp_path, monkeypatch)
    result = slurm(rlcat, "--submit", "--wait", "--timeout", "1")
    assert result.code == 1, result.err
    assert f"RLC1010 warning: could not cancel Slurm job 42: {DENIED}" in result.err
    said = "did not end within --timeout 1 s; rlcat could not cancel it: it may still be running"
    assert said in result.err
    assert "it was cancelled" not in result.err and "Slurm job 42 cancelled" not in result.err


def test_a_ctrl_c_the_moment_the_job_exists_cancels_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # sbatch has printed the job id, and Ctrl-C (or SIGTERM) arrives before rlcat follows the job:
    # with --wait the job is rlcat's to cancel, so it does; without --wait it only submitted it
    cancelled = tmp_path / "cancelled"
    fakes = {
        "sbatch": 'cat >/dev/null\necho 42\nfor w in "$@"; do [ "$w" = --wait ] && exec sleep 60; done\n',
        "scancel": f'echo "$@" >> {cancelled}\n',
    }
    _stand_ins(fakes, tmp_path, monkeypatch)
    told: list[str] = []

    def tell(found: list[Diagnostic]) -> None:
        told.extend(d.message for d in found)
        if found[0].message.startswith("submitted Slurm job 42"):
            raise KeyboardInterrupt

    console = Console(log=lambda text: None, tell=tell)
    for wait in (True, False):
        with pytest.raises(KeyboardInterrupt):
            slurm_submit.submit_batch("#!/bin/bash\ntrue\n", LaunchOptions(), wait=wait, console=console)
    assert cancelled.read_text() == "42\n"  # once: for the launch that waited
    assert told.count("Slurm job 42 cancelled") == 1

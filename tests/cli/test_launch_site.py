"""What a site adds to `rlcat launch` (launch/site.py, launch/container_paths.py): mounts, paths in
the image, variables passed by name, setup lines, sbatch options, the image preflight, and their
project defaults. The scripts are read back by real bash (`bash -n`, and the parts that run alone:
the setup lines, the image check with a stand-in `docker`); the real-Slurm run of a pass-env name,
a setup line and an sbatch option is in tests/e2e/test_launch_slurm.py."""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from rlcat.launch import site
from rlcat.launch.site import Given, parse_mount, parse_sbatch_arg
from rlcat.launch.slurm import IMAGE_CHECK

from conftest import Result

Run = Callable[..., Result]
SEED = "ppo_qwen2_7b_gsm8k_2x8"
DATA = ("--mount", "~/data:~/data")


def slurm(rlcat: Run, *args: str, container: str = "docker") -> Result:
    return rlcat(
        "launch", SEED, "--platform", "rocm", "--target", "slurm", "--ray-auth-mode", "disabled",
        "--container", container, *args,
    )  # fmt: skip


def _bash_n(text: str, tmp_path: Path) -> None:
    script = tmp_path / "job.sbatch"
    script.write_text(text)
    checked = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stderr


@pytest.mark.parametrize(
    ("spec", "why"),
    [
        ("/:/host", "the host's root"),
        ("/etc:/etc", "in /etc"),
        ("/var:/data", "holds /var/run"),
        ("~:/h", "in /home"),
        ("~/.ssh:/keys", "credential folder"),
        ("~/.ray/x:/x", "credential folder"),
        ("/data:/usr/lib", "covers the container's /usr/lib (in /usr)"),
        ("data:/data", "is not absolute"),
        ("/data/../etc:/x", "holds `..`"),
        ("/a,b:/c", "separates mounts for pyxis"),
        ("/data", "is not SRC:DST"),
        ("/data:/data:rx", "is not SRC:DST"),
        ("$SCRATCH/d:/d", "is not absolute"),
        ("/da\nta:/x", "control character"),
    ],
)
def test_unsafe_or_malformed_mounts_are_refused(spec: str, why: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/me")
    found = parse_mount(Given(spec, {"argument": f"--mount {spec}"}))
    assert not isinstance(found, site.Mount), spec
    assert found.code == "RLC1013" and why in found.message, found.message


def test_a_mount_is_one_bash_word_per_side(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", "/home/me")
    mount = parse_mount(Given("~/my data:/data:ro"))
    assert isinstance(mount, site.Mount) and mount.read_only
    assert mount.bash() == "\"$HOME\"'/my data':/data:ro"
    shown = subprocess.run(
        ["bash", "-c", f'printf "%s\\n" {mount.bash()}'],
        env={"HOME": "/home/me", "PATH": os.environ["PATH"]},
        capture_output=True,
        text=True,
        check=True,
    )
    assert shown.stdout == "/home/me/my data:/data:ro\n"


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("cat <<EOF", "here-document"),
        ("echo 'unbalanced", "bash does not parse"),
        ("if true; then", "bash does not parse"),
        ("fi", "bash does not parse"),
        ("module load rocm \\", "trailing backslash"),
        ("echo a\nRLCAT_IMAGE_CHECK", "one line"),
    ],
)
def test_setup_lines_that_would_leave_their_place_are_refused(line: str, why: str) -> None:
    found = site.check_setup_line(Given(line, {"argument": "--setup"}))
    assert found is not None and found.code == "RLC1013" and why in found.message, found


def test_setup_lines_run_as_written_before_every_command(rlcat: Run, tmp_path: Path) -> None:
    lines = ["export MARK='a b'\"$(echo c)\"", "cd /tmp && export WHERE=$PWD", 'echo "here <<<x" >/dev/null']
    result = slurm(rlcat, *DATA, "--allow-outputs-in-container", *(f"--setup={x}" for x in lines))
    assert result.code == 0, result.err
    _bash_n(result.out, tmp_path)
    text = result.out
    block = text[text.index("RLCAT_SETUP_LINES=(") : text.index("'exec \"$@\"'") + len("'exec \"$@\"'")]
    # the script's own lines, run by real bash: the setup lines, in order, then the command
    ran = subprocess.run(
        [
            "bash",
            "-c",
            block + '\nbash -c "$RLCAT_SETUP" rlcat-setup sh -c \'echo "$MARK|$WHERE|$0" \' "x y"',
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert ran.stdout == "a bc|/tmp|x y\n"
    # every command on a node goes through them: the tools check, the probe, ray start, the trainer
    assert text.count('bash -c "$RLCAT_SETUP" rlcat-setup') == 3  # on_node, tools check, env probe


def test_sbatch_args_are_sbatchs_grammar_less_what_rlcat_sets(rlcat: Run, tmp_path: Path) -> None:
    good = ["--partition=gpu", "-A team", "--time 2-00:00:00", "-qhigh", "--constraint=a100&ib", "--requeue"]
    result = slurm(rlcat, *DATA, "--allow-outputs-in-container", *(f"--sbatch-arg={a}" for a in good))
    assert result.code == 0, result.err
    _bash_n(result.out, tmp_path)
    header = [line for line in result.out.split("\n") if line.startswith("#SBATCH")]
    assert header[-6:] == [
        "#SBATCH --partition=gpu",
        "#SBATCH --account=team",
        "#SBATCH --time=2-00:00:00",
        "#SBATCH --qos=high",
        "#SBATCH --constraint=a100&ib",
        "#SBATCH --requeue",
    ]
    for arg, why in [
        ("--nodes=3", "--set resources.nodes=N"),
        ("-o out.log", "reads the job's own"),
        ("--export=NONE", "--pass-env"),
        ("--gres=gpu:4", "accelerators per node"),
        ("--partition", "needs a value"),
        ("--requeue=1", "is a switch"),
        ("--partition=gpu\n#SBATCH --nodes=9", "control character"),
        ("--comment=a b", "holds a space"),
        ("--comment=$(id)", "holds a space"),
        ("--no-such=1", "is not an sbatch option"),
        ("partition=gpu", "is not an sbatch option"),
    ]:
        found = parse_sbatch_arg(Given(arg, {"argument": f"--sbatch-arg {arg}"}))
        assert not isinstance(found, site.SbatchArg), arg
        assert found.code == "RLC1013" and why in found.message, (arg, found.message)


def test_pass_env_names_reach_the_container_and_values_reach_nothing(
    rlcat: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-live-never-in-an-artifact"
    monkeypatch.setenv("WANDB_API_KEY", secret)
    result = slurm(rlcat, *DATA, "--allow-outputs-in-container", "--pass-env", "WANDB_API_KEY")
    assert result.code == 0, result.err
    _bash_n(result.out, tmp_path)
    assert "    -e WANDB_API_KEY \\" in result.out.split("\n")
    assert secret not in result.out + result.err
    assert "RLC1015" not in result.err  # the wandb logger's key reaches the job now
    # ray-job: the names in the body's metadata, the value only in what --submit posts
    body = json.loads(
        rlcat(
            "launch",
            SEED,
            "-p",
            "rocm",
            "--target",
            "ray-job",
            "--ray-auth-mode",
            "disabled",
            "--pass-env",
            "WANDB_API_KEY",
        ).out
    )
    assert body["metadata"]["rlcat_pass_env"] == "WANDB_API_KEY"
    assert "WANDB_API_KEY" not in body["runtime_env"]["env_vars"] and secret not in json.dumps(body)


def test_pass_env_refuses_what_is_not_the_submitters(rlcat: Run) -> None:
    for name, why in [
        ("PATH", "node's or the container's own"),
        ("SLURM_JOB_ID", "Slurm's"),
        ("A-B", "not a variable name"),
    ]:
        result = slurm(rlcat, *DATA, "--pass-env", name)
        assert result.code == 2 and "RLC1013" in result.err and why in result.err, result.err
    planned = slurm(rlcat, *DATA, "--allow-outputs-in-container", "--pass-env", "VLLM_USE_V1")
    assert planned.code == 1 and "the plan's env sets VLLM_USE_V1" in planned.err


def test_wandb_without_its_key_is_a_warning_where_the_env_stops(rlcat: Run) -> None:
    docker = slurm(rlcat, *DATA, "--allow-outputs-in-container")
    assert docker.code == 0 and "RLC1015 warning: the plan logs to wandb" in docker.err
    assert "recipes/ppo_qwen2_7b_gsm8k_2x8.yaml:" in docker.err  # where trainer.logger is set
    none = slurm(rlcat, container="none")  # sbatch and srun pass the submitting shell's env
    assert none.code == 0 and "RLC1015" not in none.err


def test_a_gated_catalog_model_without_hf_token_is_a_warning(rlcat: Run, tmp_path: Path) -> None:
    models = tmp_path / "catalog" / "models"
    models.mkdir(parents=True)
    builtin = Path(__file__).resolve().parents[2] / "catalog" / "models" / "qwen2_7b_instruct.yaml"
    (models / builtin.name).write_text(builtin.read_text() + "gated: true\n")
    args = ("--catalog", str(tmp_path), *DATA, "--allow-outputs-in-container", "--pass-env", "WANDB_API_KEY")
    gated = slurm(rlcat, *args)
    assert gated.code == 0 and "RLC1015 warning: Qwen/Qwen2-7B-Instruct is gated" in gated.err
    assert "RLC1015" not in slurm(rlcat, *args, "--pass-env", "HF_TOKEN").err
    assert (
        "RLC1015"
        not in slurm(rlcat, *DATA, "--allow-outputs-in-container", "--pass-env", "WANDB_API_KEY").err
    )


def test_paths_the_container_would_not_see(rlcat: Run, tmp_path: Path) -> None:
    bare = slurm(rlcat)
    assert bare.code == 1 and bare.out == ""
    assert re.search(
        r"gsm8k\.yaml:\d+ RLC1014 error: data\.train_files is ~/data/gsm8k/train\.parquet", bare.err
    )
    assert "--mount ~/data/gsm8k:~/data/gsm8k" in bare.err
    assert "RLC1014 error: trainer.default_local_dir is checkpoints/" in bare.err
    # the data mounted: only the checkpoints are left, an error until accepted or mounted
    mounted = slurm(rlcat, *DATA)
    assert mounted.code == 1 and "data.train_files" not in mounted.err
    accepted = slurm(rlcat, *DATA, "--allow-outputs-in-container")
    assert accepted.code == 0 and "RLC1014 warning: trainer.default_local_dir" in accepted.err
    kept = slurm(
        rlcat,
        *DATA,
        "--mount",
        "$PWD/checkpoints:$PWD/checkpoints",
        "--set",
        "trainer.checkpoint.dir=/ckpt/run1",
    )
    assert kept.code == 1 and "trainer.default_local_dir is /ckpt/run1" in kept.err
    ok = slurm(rlcat, *DATA, "--mount", "/scratch/ckpt:/ckpt", "--set", "trainer.checkpoint.dir=/ckpt/run1")
    assert ok.code == 0, ok.err
    # in the image, or apptainer's own binds of HOME and the working folder; none: host paths
    assert slurm(rlcat, "--in-image", "~/data", "--allow-outputs-in-container").code == 0
    assert slurm(rlcat, container="apptainer").code == 0
    assert slurm(rlcat, container="none").code == 0
    # the Hugging Face cache of a hub model: a warning until mounted
    assert "the Hugging Face cache (HF_HOME" in accepted.err
    cache = slurm(
        rlcat, *DATA, "--allow-outputs-in-container", "--mount", "~/.cache/huggingface:~/.cache/huggingface"
    )
    assert "Hugging Face cache" not in cache.err


def test_the_image_check_names_the_node_and_the_image(tmp_path: Path) -> None:
    """IMAGE_CHECK as each node runs it, with a stand-in docker that has no image and cannot pull."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "docker").write_text(
        '#!/bin/sh\n[ "$1 $2" = "image inspect" ] && [ "$3" = here:1 ] && exit 0\nexit 1\n'
    )
    (fake / "docker").chmod(0o755)
    env = {"PATH": f"{fake}:/usr/bin:/bin"}
    host = subprocess.run(["hostname"], capture_output=True, text=True, check=True).stdout.strip()

    def check(image: str, pull: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", "-c", IMAGE_CHECK, "rlcat-image", image, "docker", pull],
            env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip

    assert check("here:1", "never").returncode == 0 and check("here:1", "missing").returncode == 0
    never = check("gone:1", "never")
    assert never.returncode == 1
    assert (
        never.stderr
        == f"rlcat: node {host}: no image gone:1 (--pull never: load or pull it on every node first)\n"
    )
    missing = check("gone:1", "missing")
    assert (
        missing.returncode == 1
        and f"node {host}: no image gone:1, and docker pull gone:1 failed" in missing.stderr
    )
    assert check("here:1", "always").returncode == 1  # always pulls, and this docker cannot


def test_project_defaults_and_where_they_come_from(
    rlcat: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "rlcat.toml").write_text(
        'platforms = ["rocm"]\n\n[launch]\nray_auth_mode = "disabled"\ncontainer = "docker"\n'
        'mounts = ["~/data:~/data"]\npass_env = ["WANDB_API_KEY"]\nsetup = ["module load rocm"]\n'
        'pull = "never"\n\n[launch.slurm]\nsbatch_args = ["--partition=gpu"]\n'
    )
    monkeypatch.chdir(tmp_path)
    result = rlcat(
        "launch", SEED, "--target", "slurm", "--allow-outputs-in-container", "--sbatch-arg=--qos=high"
    )
    assert result.code == 0, result.err
    assert (
        "export RAY_AUTH_MODE=disabled" in result.out and '    -v "$HOME"/data:"$HOME"/data \\' in result.out
    )
    assert (
        "#SBATCH --partition=gpu\n#SBATCH --qos=high\n" in result.out
    )  # the project's, then the command line's
    assert "    'module load rocm'" in result.out and "    -e WANDB_API_KEY \\" in result.out
    assert "rlcat-image verl-rocm:0.9.0.amd0-rocm docker never ||" in result.out
    # the project's pull policy reaches KubeRay's pods too, and --pull beats it
    for args, policy in (
        ((), "Never"),
        (("--pull", "always"), "Always"),
        (("--pull", "missing"), "IfNotPresent"),
    ):
        manifest = rlcat("launch", SEED, "--target", "kuberay", *args)
        assert manifest.code == 0, manifest.err
        cluster = yaml.safe_load(manifest.out)["spec"]["rayClusterSpec"]
        [container] = cluster["headGroupSpec"]["template"]["spec"]["containers"]
        assert container["imagePullPolicy"] == policy, args
    shown = rlcat("config", "--format", "json")
    rows = {row["setting"]: row for row in json.loads(shown.out)["settings"]}
    assert rows["launch.mounts"]["value"] == ["~/data:~/data"]
    assert rows["launch.mounts"]["source"].endswith("rlcat.toml:6")
    assert rows["launch.slurm.sbatch_args"]["source"].endswith("rlcat.toml:12")
    assert rows["launch.in_image"]["source"] == "default"
    # the project's auth mode against the plan's own: RLC1006 names the project file's setting
    clash = rlcat(
        "launch", SEED, "--target", "slurm", "--container", "none", "--set", "env.RAY_AUTH_MODE=token"
    )
    assert clash.code == 2 and "[launch].ray_auth_mode disabled differs from RAY_AUTH_MODE=token" in clash.err
    # a bad entry of the project file is refused where it is written
    (tmp_path / "rlcat.toml").write_text(
        '[launch]\nray_auth_mode = "disabled"\nmounts = ["/data:/d", "/etc:/etc"]\n'
    )
    bad = rlcat("launch", SEED, "-p", "rocm", "--target", "slurm")
    assert bad.code == 2 and "rlcat.toml:3 RLC1013 error: mounts host folder /etc (in /etc)" in bad.err
    assert "[launch.mounts[1]]" in bad.err

"""A platform profile's `docker_run` flags, judged like `env:` (syntax.docker_run parses them once):

- an entry that does not split into words (an unbalanced quote) is refused where the profile is
  read, with its file, line and key, by `validate` and by `launch --target slurm` (no traceback);
- `-e`/`--env` variables that change what runs are RLC901, options that give the container the host
  or another program are RLC904: warnings on the profile file itself, so `validate --strict` fails;
- what the guards judge is what docker receives: the sbatch script's `docker run` step, run by real
  bash with a `docker` that records its argv, passes each entry's words exactly as parsed.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from rlcat.docsite.platforms import docker_run_line
from rlcat.model.platform import PlatformProfile
from rlcat.syntax.docker_run import docker_run_flags

from conftest import REPO, SLURM_SITE, Result

Run = Callable[..., Result]
SHIPPED = (REPO / "catalog" / "platforms" / "rocm.yaml").read_text(encoding="utf-8")
ANCHOR = "  - --device /dev/dri\n"
PRIVILEGED = "  - --privileged\n"


def _profile(tmp_path: Path, *entries: str, name: str = "hostile") -> tuple[Path, str]:
    """A copy of the rocm profile named `name`, without the `--privileged` the shipped one carries,
    with `entries` (YAML scalars) after /dev/dri."""
    assert SHIPPED.count(ANCHOR) == 1 and SHIPPED.count(PRIVILEGED) == 1
    text = (
        SHIPPED.replace("name: rocm\n", f"name: {name}\n", 1)
        .replace(PRIVILEGED, "", 1)
        .replace(ANCHOR, ANCHOR + "".join(f"  - {e}\n" for e in entries), 1)
    )
    path = tmp_path / "catalog" / "platforms" / f"{name}.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    return path, text


def _line_of(text: str, entry: str) -> int:
    return text.split(f"  - {entry}\n", maxsplit=1)[0].count("\n") + 1


def _launch(rlcat: Run, tmp_path: Path, *extra: str) -> Result:
    return rlcat(
        "launch", "ppo_qwen2_7b_gsm8k_2x8", "--platform", "hostile", "--catalog", str(tmp_path),
        "--target", "slurm", "--ray-auth-mode", "disabled", "--container", "docker", *SLURM_SITE, *extra,
    )  # fmt: skip


UNBALANCED = {
    "single-quote": '"-e A=\'b"',
    "double-quote": "'--env=\"PATH=/x'",
    "trailing-backslash": "'-v /a:/b\\'",
}


@pytest.mark.parametrize("entry", UNBALANCED.values(), ids=UNBALANCED.keys())
def test_an_entry_that_does_not_split_is_refused_where_it_is_written(
    rlcat: Run, tmp_path: Path, entry: str
) -> None:
    _, text = _profile(tmp_path, entry)
    checked = rlcat("validate", str(tmp_path), "--format", "json")
    assert checked.code == 1, checked.out
    (refusal,) = json.loads(checked.out)["diagnostics"]
    assert refusal["file"].endswith("catalog/platforms/hostile.yaml")
    assert (refusal["code"], refusal["line"], refusal["key"]) == (
        "RLC103",
        _line_of(text, entry),
        "docker_run[2]",
    )
    launched = _launch(rlcat, tmp_path, "--emit", str(tmp_path / "job.sbatch"))
    assert launched.code == 2, launched.err
    assert "RLC103" in launched.err and "docker_run[2]" in launched.err
    assert "Traceback" not in launched.err and "internal error" not in launched.err
    assert not (tmp_path / "job.sbatch").exists()


HOSTILE = {
    "ld-preload": ("'-e LD_PRELOAD=/tmp/x.so'", "RLC901"),
    "pythonpath-long": ("--env=PYTHONPATH=/patches", "RLC901"),
    "quoted-env": ("\"-e 'BASH_ENV=/tmp/rc'\"", "RLC901"),
    "host-root": ("'-v /:/host'", "RLC904"),
    "privileged": ("--privileged", "RLC904"),
    "entrypoint": ("'--entrypoint /bin/sh'", "RLC904"),
    "docker-socket": ("'--mount type=bind,src=/var/run/docker.sock,dst=/s'", "RLC904"),
    "host-pid": ("--pid=host", "RLC904"),
}


@pytest.mark.parametrize(("entry", "code"), HOSTILE.values(), ids=HOSTILE.keys())
def test_flags_that_change_what_runs_are_reported_on_the_profile(
    rlcat: Run, tmp_path: Path, entry: str, code: str
) -> None:
    _, text = _profile(tmp_path, entry)
    checked = rlcat("validate", str(tmp_path), "--format", "json")
    assert checked.code == 0, checked.out
    (finding,) = json.loads(checked.out)["diagnostics"]
    assert (finding["code"], finding["severity"]) == (code, "warning")
    assert (finding["line"], finding["key"]) == (_line_of(text, entry), "docker_run.2")
    assert rlcat("validate", str(tmp_path), "--strict").code == 1


def test_the_shipped_flags_are_trusted_under_their_own_name_only(rlcat: Run, tmp_path: Path) -> None:
    """verl's documented ROCm container runs `--privileged`; rlcat ships it in its rocm profiles,
    reviewed with the installation. The same flag in a team's profile is reported."""
    _profile(tmp_path / "shipped-name", "--privileged", name="rocm")
    _profile(tmp_path / "team-name", "--privileged", name="mi300-team")
    shipped = rlcat("validate", str(tmp_path / "shipped-name"), "--format", "json")
    team = rlcat("validate", str(tmp_path / "team-name"), "--format", "json")
    assert json.loads(shipped.out)["diagnostics"] == []  # the shipped profile as written
    (finding,) = json.loads(team.out)["diagnostics"]
    assert (finding["code"], finding["key"]) == ("RLC904", "docker_run.2")
    assert "--privileged" in finding["message"]


def test_every_shipped_profile_is_clean(rlcat: Run) -> None:
    checked = rlcat("validate", str(REPO / "catalog" / "platforms"), "--strict", "--format", "json")
    assert checked.code == 0, checked.out
    assert not any(d["code"] in ("RLC901", "RLC904") for d in json.loads(checked.out)["diagnostics"])


# The script's container step, run here: srun runs its command, docker records its argv.
HERE = """set -euo pipefail
srun() { while [[ $1 == -* ]]; do shift; done; "$@"; }
die() { printf "%s\\n" "$*" >&2; exit 1; }
SLURM_JOB_ID=7
RLCAT_NODE_COUNT=1
"""
FAKE_DOCKER = """#!{python}
import json, os, sys
json.dump(sys.argv[1:], open(os.environ["RECORD"], "w"))
"""


def _container_step(script: str) -> str:
    lines = script.split("\n")
    start = next(i for i, x in enumerate(lines) if x.startswith("srun ") and "docker run" in lines[i + 1])
    end = next(i for i in range(start, len(lines)) if "die 'a node could not start" in lines[i])
    return "\n".join([HERE, *lines[start : end + 1]])


ENTRIES = ["\"-e 'A=1 2' -e B\"", "'--label rlcat.note=\"x y\"'", "--ulimit=nofile=1024"]


def _docker_argv(text: str, tmp_path: Path) -> list[str]:
    """What `docker` receives when real bash runs `text`."""
    fake = tmp_path / "bin"
    fake.mkdir(exist_ok=True)
    python = os.path.realpath(subprocess.check_output(["sh", "-c", "command -v python3"], text=True).strip())
    (fake / "docker").write_text(FAKE_DOCKER.format(python=python))
    (fake / "docker").chmod(0o755)
    record = tmp_path / "docker.json"
    env = {"PATH": f"{fake}:/usr/bin:/bin", "RECORD": str(record), "HOME": str(tmp_path / "home")}
    done = subprocess.run(
        ["bash", "-c", text],
        env=env,
        timeout=30,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return list(json.loads(record.read_text()))


def test_docker_receives_the_words_that_were_judged(rlcat: Run, tmp_path: Path) -> None:
    path, _ = _profile(tmp_path, *ENTRIES)
    out = tmp_path / "job.sbatch"
    assert _launch(rlcat, tmp_path, "--image", "img:1", "--emit", str(out)).code == 0
    received = _docker_argv(_container_step(out.read_text()), tmp_path)
    assert received[:4] == ["run", "-d", "--rm", "--name=rlcat-7"]
    profile = yaml.safe_load(path.read_text())
    words = [w for entry in docker_run_flags(profile["docker_run"]).words for w in entry]
    assert received[4 : 4 + len(words)] == words
    assert words[4:10] == ["-e", "A=1 2", "-e", "B", "--label", "rlcat.note=x y"]
    # the mounts as the node's bash resolves them, the host's HOME and working folder, and Slurm's
    # name for the node
    home = str(tmp_path / "home")
    assert received[received.index("-v") + 1] == f"{home}/data:{home}/data"
    named = received[received.index("-w") - 6 : received.index("-w") + 1]
    assert named == ["-e", "HOME", "-e", "PWD", "-e", "SLURMD_NODENAME", "-w"]


def test_the_docs_page_line_runs_the_same_words(tmp_path: Path) -> None:
    path, _ = _profile(tmp_path, *ENTRIES)
    profile = PlatformProfile.model_validate(yaml.safe_load(path.read_text()))
    words = [w for entry in docker_run_flags(profile.docker_run).words for w in entry]
    image = profile.image.split(" ", 1)[0]
    assert _docker_argv(docker_run_line(profile), tmp_path) == ["run", "-it", "--rm", *words, image]

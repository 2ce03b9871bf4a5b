"""The KubeRay entrypoint reaches the trainer as the planned argv through every shell of the submission
mode the manifest names (kuberay_chain: real bash and dash, Ray's own joins), for the built-in recipes
and for hostile values; and a line quoted by syntax.bash.through_shells survives each layer of shells
it was quoted for. A fake `python3` records the argv it gets; `touch` in a value would leave a file."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml
from kuberay_chain import FAKE_RAY, chain

from rlcat.compile.assemble import Request, compile_request
from rlcat.launch.base import Launch, LaunchOptions
from rlcat.launch.command import launch_command
from rlcat.launch.kuberay import ENTRYPOINT_SHELLS, KubeRay
from rlcat.syntax.bash import BASH, POSIX_SH, Shell, through_shells
from rlcat.syntax.hydra_value import render

RECIPES = Path(__file__).parents[2] / "recipes"
REAL_PYTHON = os.path.realpath(subprocess.check_output(["sh", "-c", "command -v python3"], text=True).strip())
FAKE_PYTHON = f"""#!{REAL_PYTHON}
import json, os, sys
json.dump(sys.argv[1:], open(os.environ["RECORD"], "w"))
"""

HOSTILE = {
    "command-substitution": "$(touch pwned)",
    "backticks": "`touch pwned`",
    "parameter": "${x}",
    "bad-substitution": "${oc.env:HOME}",
    "quotes": 'it\'s "q" \'\' ""',
    "newline": "a\ntouch pwned",
    "semicolon": "x; touch pwned ;",
    "k8s-expansion": "$(HOME) $$ $$(x)",
    "windows-quoting": 'a\\" b\\\\" c',
    "and-or": "x && touch pwned || touch pwned",
}


@pytest.fixture(scope="module")
def fake_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("bin")
    for name, text in (("python3", FAKE_PYTHON), ("ray", FAKE_RAY.format(real=REAL_PYTHON))):
        (folder / name).write_text(text)
        (folder / name).chmod(0o755)
    return folder


def _received(args: list[str], extra: dict[str, str], fake_bin: Path, tmp_path: Path) -> list[str]:
    """The argv the fake trainer got when `args` ran in an empty folder (where `touch` would write)."""
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    record = tmp_path / "record.json"
    record.unlink(missing_ok=True)
    env = {"PATH": f"{fake_bin}:/usr/bin:/bin", "RECORD": str(record), "HOME": str(tmp_path), **extra}
    done = subprocess.run(args, env=env, cwd=work, timeout=30, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert list(work.iterdir()) == [], f"a value ran a command: {done.stderr}"
    assert record.exists(), done.stderr
    return list(json.loads(record.read_text()))


def _manifest(recipe: str, overrides: tuple[str, ...] = ()) -> tuple[list[str], dict[str, object]]:
    """(the planned argv after `python3`, the RayJob as a YAML reader gets it)."""
    compiled = compile_request(Request(recipe, "cuda", overrides=list(overrides)))
    options = LaunchOptions(image="registry.example/verl:1")
    launch = Launch(compiled, launch_command(compiled, "token"), options)
    return list(launch.command.argv[1:]), yaml.safe_load(KubeRay().render(launch))


def _delivered(job: dict[str, object], fake_bin: Path, tmp_path: Path) -> list[list[str]]:
    return [_received(args, extra, fake_bin, tmp_path) for args, extra in chain(job)]


@pytest.mark.parametrize("recipe", sorted(p.stem for p in RECIPES.glob("*.yaml")))
def test_builtin_recipes_reach_the_trainer(fake_bin: Path, tmp_path: Path, recipe: str) -> None:
    planned, job = _manifest(recipe)
    assert _delivered(job, fake_bin, tmp_path) == [planned] * len(chain(job))


@pytest.mark.parametrize("value", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_values_reach_the_trainer_as_text(fake_bin: Path, tmp_path: Path, value: str) -> None:
    override = f"+trainer.rlcat_tricky={render(value)}"
    planned, job = _manifest("gsm8k_qwen3_8b_fsdp", (override,))
    assert override in planned
    assert _delivered(job, fake_bin, tmp_path) == [planned] * len(chain(job))


def test_the_manifest_names_the_mode_it_is_quoted_for() -> None:
    """HTTPMode: one shell (the supervisor's /bin/sh), so one quoting for POSIX sh."""
    _, job = _manifest("gsm8k_qwen3_8b_fsdp")
    spec = job["spec"]
    assert isinstance(spec, dict)
    assert spec["submissionMode"] == "HTTPMode"
    assert ENTRYPOINT_SHELLS == (POSIX_SH,)


LAYERS = {
    "bash": (BASH,),
    "sh": (POSIX_SH,),
    "bash-sh": (BASH, POSIX_SH),
    "sh-bash": (POSIX_SH, BASH),
    "bash-bash-sh": (BASH, BASH, POSIX_SH),
}


@pytest.mark.parametrize("shells", LAYERS.values(), ids=LAYERS.keys())
def test_each_layer_of_quoting_is_undone_by_one_shell(
    fake_bin: Path, tmp_path: Path, shells: tuple[Shell, ...]
) -> None:
    argv = ["python3", "-m", "x", *HOSTILE.values(), "", "é \U0001f642", "tab\there"]
    text = through_shells(argv, shells)
    program = "/bin/sh" if shells[0] is POSIX_SH else "bash"
    assert _received([program, "-c", text], {}, fake_bin, tmp_path) == argv[1:]
    if len(shells) > 1:  # one layer fewer is not enough: the inner shell gets words it would split
        fewer = through_shells(argv, shells[1:])
        assert fewer != text


def test_no_shells_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one shell"):
        through_shells(["x"], ())

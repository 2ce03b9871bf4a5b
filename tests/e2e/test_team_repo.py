"""A team's recipe repository end to end, as a new user builds one: rlcat installed from its wheel
(not editable) into a fresh virtualenv, offline from the wheelhouse; `rlcat init` in a folder outside
the checkout; a recipe of the team's own with `rlcat new` and a model of its own in catalog/; every
command finding the team's catalog without options; an error the child inherits from its parent
reported on the child in every format; and the generated pre-commit config and workflow run as
written — the wheel-folder install route (`rlcat init --rlcat-source wheels:DIR`, DIR holding rlcat's
wheel): the first `git commit` runs both hooks with the real pre-commit and passes, a bad recipe's
commit is refused, and the workflow's `run:` steps run in order, its `pip install` included."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from e2e.hook_commits import break_a_recipe, first_commit, hook_result
from rlcat import __version__ as VERSION
from rlcat.dev import wheelhouse
from rlcat.dev.hook_repo import clean_env, commit, git
from rlcat.model.project import parse_rlcat_source
from rlcat.scaffold import WORKFLOW, team_files

from conftest import REPO

PARENT = "gsm8k_qwen3_8b_fsdp"
TEAM_MODEL = "team_qwen3_8b"
TEAM_MODEL_PATH = "team-org/Qwen3-8B-tuned"
FORMATS = ("text", "json", "github", "sarif")


@pytest.fixture(scope="module")
def wheels(rlcat_wheel: Path) -> list[Path]:
    """The folders pip installs from, offline: the wheelhouse and the folder holding rlcat's wheel."""
    house = wheelhouse.wheelhouse_dir()
    if not wheelhouse.is_complete(house):
        pytest.skip(f"the wheelhouse is not fetched ({house}): run `rlcat dev fetch-verl` once, with network")
    return [house, rlcat_wheel.parent]


def _pip_env(tmp: Path, links: list[Path]) -> dict[str, str]:
    """pip reaches nothing but these folders: no index, no config file, no cache shared with others.
    It compiles no bytecode at install (`PIP_COMPILE=0`, pip's `--no-compile`): a test's commands
    compile the modules they import, and compiling every module of every package was more than half
    of an install's CPU (rlcat[docs]: 8.7 s, and 3.8 s without)."""
    return clean_env(
        PIP_NO_INDEX="1",
        PIP_FIND_LINKS=" ".join(str(link) for link in links),
        PIP_CONFIG_FILE=os.devnull,
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PIP_CACHE_DIR=str(tmp / "pip-cache"),
        PIP_COMPILE="0",
    )


def _venv(folder: Path) -> dict[str, str]:
    """A fresh virtualenv, and PATH with its bin/ first: `python` and `rlcat` are its own, as after
    actions/setup-python and a pip install."""
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True, capture_output=True)
    return {"PATH": f"{folder / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"}


def _sh(command: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """One `run:` of a workflow, as GitHub's ubuntu runners run it."""
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )


def _run(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return _sh(shlex.join(args), cwd, env)


def _uncomment(path: Path, changes: dict[str, str]) -> dict[str, int]:
    """Replace commented-out lines of a recipe `rlcat new` wrote, as a user edits it; the 1-based
    line of each."""
    lines = path.read_text(encoding="utf-8").splitlines()
    where = {}
    for old, new in changes.items():
        index = lines.index(old)
        lines[index] = new
        where[new.strip()] = index + 1
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return where


def _make_team_model(team: Path) -> None:
    seed = yaml.safe_load((REPO / "catalog" / "models" / "qwen3_8b.yaml").read_text(encoding="utf-8"))
    entry = {**seed, "name": TEAM_MODEL, "hf_id": TEAM_MODEL_PATH}
    text = "# yaml-language-server: $schema=../../schemas/model.schema.json\n" + yaml.safe_dump(
        entry, sort_keys=False
    )
    (team / "catalog" / "models" / f"{TEAM_MODEL}.yaml").write_text(text, encoding="utf-8")


def _break_the_token_budget(recipe: Path) -> tuple[int, int]:
    """Responses longer than the parent's per-GPU token budget allows (RLC703, on the parent's
    budget lines): the lines of the child's `max_response_length` and `extends`."""
    at = _uncomment(
        recipe, {"# batch:": "batch:", "#   max_response_length: 2048": "  max_response_length: 28000"}
    )
    extends = recipe.read_text(encoding="utf-8").splitlines().index(f"extends: {PARENT}") + 1
    return at["max_response_length: 28000"], extends


def _on_the_child(findings: list[tuple[str, int]], child: str, lines: tuple[int, int], output: str) -> None:
    """Every RLC703 finding is on the child file, at the line that changed the outcome or at its
    `extends:` line — never on the parent, which is not in the team's repository."""
    assert findings, output
    for file, line in findings:
        assert file == child, output
        assert line in lines, output


def test_team_repository_from_the_installed_wheel(wheels: list[Path], tmp_path: Path) -> None:
    env = {**_pip_env(tmp_path, wheels), **_venv(tmp_path / "venv")}
    install = _run(env, tmp_path, "python", "-m", "pip", "install", "-q", f"rlcat=={VERSION}")
    assert install.returncode == 0, install.stderr
    probe = _run(env, tmp_path, "python", "-c", "import rlcat; print(rlcat.__file__)")
    assert probe.stdout.startswith(str(tmp_path / "venv")), "the wheel's copy runs, not the checkout's"

    init = _run(env, tmp_path, "rlcat", "init", "team", "--rlcat-source", f"wheels:{wheels[1]}")
    assert init.returncode == 0, init.stderr
    team = tmp_path / "team"
    readme = (team / "README.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"```bash\n(.*?)```", readme, re.S)
    for line in block.splitlines():  # the README's rlcat commands run as written
        if line.startswith("rlcat "):
            r = _sh(line, team, env)
            assert r.returncode == 0, (line, r.stdout, r.stderr)

    new = _run(env, team, "rlcat", "new", "team_run", "--from", PARENT)
    assert new.returncode == 0, new.stderr
    child = team / "recipes" / "team_run.yaml"
    _make_team_model(team)
    _uncomment(child, {"# model: qwen3_8b": f"model: {TEAM_MODEL}"})

    # every command finds the team's recipes and catalog without options, from any folder inside
    for cwd in (team, team / "recipes"):
        listed = _run(env, cwd, "rlcat", "list")
        assert listed.returncode == 0 and {"team_run", "my_first_recipe", PARENT} <= set(
            listed.stdout.split()
        )
        compiled = _run(env, cwd, "rlcat", "compile", "team_run")
        assert compiled.returncode == 0, compiled.stderr
        assert f"actor_rollout_ref.model.path={TEAM_MODEL_PATH}" in compiled.stdout
    shown = _run(env, team, "rlcat", "show", "team_run")
    assert shown.returncode == 0 and TEAM_MODEL in shown.stdout, shown.stderr
    explained = _run(env, team, "rlcat", "explain", "team_run", "actor_rollout_ref.model.path")
    assert explained.returncode == 0 and TEAM_MODEL_PATH in explained.stdout, explained.stderr
    clean = _run(env, team, "rlcat", "validate", "recipes", "catalog")
    assert clean.returncode == 0 and " 0 error(s), 0 warning(s)" in clean.stdout, clean.stdout

    lines = _break_the_token_budget(child)
    name = "recipes/team_run.yaml"
    for fmt in FORMATS:
        r = _run(env, team, "rlcat", "validate", "recipes", "catalog", "--format", fmt, "-o", f"report.{fmt}")
        assert r.returncode == 1, (fmt, r.stdout, r.stderr)
        report = (team / f"report.{fmt}").read_text(encoding="utf-8")
        _on_the_child(_rlc703(fmt, report), name, lines, report)
        _located_in(team, fmt, report)
    text = (team / "report.text").read_text(encoding="utf-8")
    assert PARENT in text, "the note names the parent the value comes from"
    # without paths, validate checks the project's catalog: the same finding
    whole = _run(env, team, "rlcat", "validate", "--format", "json")
    _on_the_child(_rlc703("json", whole.stdout), name, lines, whole.stdout)
    refused = _run(env, team, "rlcat", "compile", "team_run")
    assert refused.returncode == 1 and "recipes/team_run.yaml:" in refused.stderr, refused.stderr


def _rlc703(fmt: str, report: str) -> list[tuple[str, int]]:
    """(file, line) of every RLC703 finding of a report."""
    if fmt == "text":
        found = re.findall(r"^(\S+?):(\d+)(?::\d+)? RLC703 ", report, re.M)
        return [(file, int(line)) for file, line in found]
    if fmt == "json":
        data = json.loads(report)
        return [(d["file"], d["line"]) for d in data["diagnostics"] if d["code"] == "RLC703"]
    if fmt == "github":
        found = re.findall(r"^::error file=([^,]+),line=(\d+)[^:]*title=RLC703", report, re.M)
        return [(file, int(line)) for file, line in found]
    results = json.loads(report)["runs"][0]["results"]
    return [
        (loc["physicalLocation"]["artifactLocation"]["uri"], loc["physicalLocation"]["region"]["startLine"])
        for res in results
        if res["ruleId"] == "RLC703"
        for loc in res["locations"]
    ]


def _located_in(team: Path, fmt: str, report: str) -> None:
    """Annotations and SARIF locations name files of the repository, relative to its root."""
    if fmt == "github":
        files = re.findall(r"^::\w+ file=([^,]+),", report, re.M)
    elif fmt == "sarif":
        results = json.loads(report)["runs"][0]["results"]
        files = [
            loc["physicalLocation"]["artifactLocation"]["uri"] for res in results for loc in res["locations"]
        ]
    else:
        return
    assert files
    for file in files:
        assert not os.path.isabs(file) and (team / file).is_file(), (file, report)


def _workflow_runs(team: Path) -> list[dict[str, Any]]:
    workflow = yaml.safe_load((team / ".github" / "workflows" / "rlcat.yml").read_text(encoding="utf-8"))
    (job,) = workflow["jobs"].values()
    return [step for step in job["steps"] if "run" in step]


def test_generated_hook_and_workflow_work_as_written(wheels: list[Path], tmp_path: Path) -> None:
    import virtualenv  # pre-commit's: it makes the hook's environment

    # pre-commit installs a local hook's additional_dependencies with `pip install .` of an empty
    # placeholder package, built with setuptools: online pip fetches it from PyPI, here it comes
    # from the wheels virtualenv embeds
    embedded = Path(virtualenv.__file__).parent / "seed" / "wheels" / "embed"
    assert list(embedded.glob("setuptools-*.whl")), embedded
    ci = {**_pip_env(tmp_path, wheels), **_venv(tmp_path / "runner")}
    source = f"wheels:{wheels[1]}"  # the folder that holds rlcat's wheel
    # the workflow's install step, as generated, gives the fresh runner its rlcat
    install_step = next(s for s in _workflow_runs_of_template(source) if "pip install" in s["run"])
    assert f"--find-links {wheels[1]} rlcat=={VERSION}" in install_step["run"]
    installed = _sh(install_step["run"], tmp_path, ci)
    assert installed.returncode == 0, installed.stderr
    init = _run(ci, tmp_path, "rlcat", "init", "team", "--rlcat-source", source)
    assert init.returncode == 0, init.stderr
    team = tmp_path / "team"

    hook_env = {
        **_pip_env(tmp_path, [wheels[0], embedded]),  # rlcat's wheel only from the config's folder
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
        "VIRTUALENV_OVERRIDE_APP_DATA": str(tmp_path / "virtualenv-app-data"),
        "VIRTUALENV_NO_PERIODIC_UPDATE": "1",
    }
    # from the empty folder to the first commit: both hooks run and pass
    first_commit(team, hook_env)
    steps = _workflow_runs(team)
    assert steps[0]["name"] == install_step["name"]
    for step in steps:
        r = _sh(step["run"], team, ci)
        assert r.returncode == 0, (step["name"], r.stdout, r.stderr)
    assert json.loads((team / "rlcat.sarif").read_text(encoding="utf-8"))["runs"][0]["results"] == []
    (team / "rlcat.sarif").unlink()

    # the launch-script hook: a shell script that launches nothing passes, a bad launch fails
    scripts = team / "scripts"
    (scripts / "prepare_data.sh").write_text("#!/usr/bin/env bash\necho preparing\n", encoding="utf-8")
    git(team, "add", "-A")
    quiet = _pre_commit(team, hook_env)
    assert quiet.returncode == 0 and hook_result(quiet.stdout, "rlcat lint") == "Passed", quiet.stdout
    bad = scripts / "run_grpo.sh"
    bad.write_text((REPO / "tests/data/lint/plus_misuse.sh").read_text(encoding="utf-8"), encoding="utf-8")
    git(team, "add", "-A")
    linted = _pre_commit(team, hook_env)
    assert linted.returncode == 1, linted.stdout + linted.stderr
    assert hook_result(linted.stdout, "rlcat lint") == "Failed", linted.stdout
    assert hook_result(linted.stdout, "rlcat validate") == "Passed", linted.stdout
    assert "scripts/run_grpo.sh:25:5 RLC408 error: " in linted.stdout, linted.stdout
    bad.unlink()
    git(team, "add", "-A")
    # a commit of a bad recipe is refused, the first commit stays the only one
    recipe = team / "recipes" / "my_first_recipe.yaml"
    good = recipe.read_text(encoding="utf-8")
    bad_line = break_a_recipe(team)
    refused = commit(team, hook_env, "a bad recipe")
    output = refused.stdout + refused.stderr
    assert refused.returncode == 1 and hook_result(output, "rlcat validate") == "Failed", output
    assert f"recipes/my_first_recipe.yaml:{bad_line}:1 RLC101 error: unknown field" in output, output
    assert git(team, "rev-list", "--count", "HEAD") == "1"
    recipe.write_text(good, encoding="utf-8")
    git(team, "add", "-A")

    example = team / "recipes" / "my_first_recipe.yaml"
    lines = _break_the_token_budget(example)
    git(team, "add", "-A")
    failed = _pre_commit(team, hook_env)
    output = failed.stdout + failed.stderr
    assert failed.returncode == 1 and "Failed" in output, output
    _on_the_child(_rlc703("text", failed.stdout), "recipes/my_first_recipe.yaml", lines, output)
    # and in CI: the annotation lands on the child, and the SARIF report is still written
    for step in steps:
        r = _sh(step["run"], team, ci)
        if "--format github" in step["run"]:
            assert r.returncode == 1
            _on_the_child(_rlc703("github", r.stdout), "recipes/my_first_recipe.yaml", lines, r.stdout)
    assert (team / "rlcat.sarif").is_file()


def _workflow_runs_of_template(source: str) -> list[dict[str, Any]]:
    """The workflow's steps as this checkout's rlcat writes them for `source` (the wheel's template is
    this file)."""
    workflow = yaml.safe_load(team_files(VERSION, parse_rlcat_source(source))[WORKFLOW])
    (job,) = workflow["jobs"].values()
    return [step for step in job["steps"] if "run" in step]


def _pre_commit(root: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--all-files", "--color", "never"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )

"""The `rlcat-validate` and `rlcat-lint-scripts` pre-commit hooks, installed and run by the real
pre-commit in a throwaway repository, offline: pre-commit builds the hook's virtualenv with
`pip install .` from a bare mirror of this checkout at a tag (a copy committed in a throwaway
repository, then `git clone --bare`), and pip takes every distribution from the wheelhouse that
`rlcat dev fetch-verl` downloads (rlcat.dev.hook_repo). A team repository made by
`rlcat init --rlcat-source git+file://MIRROR@TAG` commits through both hooks."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from e2e.hook_commits import break_a_recipe, first_commit, hook_result
from rlcat import __version__ as VERSION
from rlcat.dev import wheelhouse
from rlcat.dev.hook_repo import bare_mirror, commit, git, offline_env, source_repo

from conftest import REPO, Result

HOOK_ID = "rlcat-validate"
LINT_HOOK_ID = "rlcat-lint-scripts"
LINT_DATA = REPO / "tests" / "data" / "lint"


def _recipes_repo(root: Path, rlcat_src: str, rev: str) -> int:
    """A user's recipes repository with one good and one bad recipe; returns the bad line's number."""
    (root / "recipes").mkdir(parents=True)
    seed = (REPO / "recipes" / "gsm8k_qwen3_8b_fsdp.yaml").read_text(encoding="utf-8")
    assert "\nname: gsm8k_qwen3_8b_fsdp\n" in seed
    (root / "recipes" / "good_recipe.yaml").write_text(
        seed.replace("\nname: gsm8k_qwen3_8b_fsdp\n", "\nname: good_recipe\n"), encoding="utf-8"
    )
    bad = seed.replace("\nname: gsm8k_qwen3_8b_fsdp\n", "\nname: bad_recipe\n")
    bad = bad.replace("\nmode: colocate\n", "\nmode: colocate\nrollout_mode: async\n")
    (root / "recipes" / "bad_recipe.yaml").write_text(bad, encoding="utf-8")
    bad_line = bad.splitlines().index("rollout_mode: async") + 1
    config = {
        "repos": [{"repo": rlcat_src, "rev": rev, "hooks": [{"id": HOOK_ID}]}],
    }
    (root / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    (root / "README.md").write_text("recipes\n", encoding="utf-8")
    git(root, "init", "-q")
    git(root, "add", "-A")
    return bad_line


def _pre_commit(root: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--color", "never", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )


# the hook tests on one worker: they share one mirror and tag, so pre-commit builds the hooks'
# environment once (as on a user's machine, where the two hooks of one repo share it)
pytestmark = pytest.mark.xdist_group("pre-commit")


@dataclass(frozen=True)
class HookSource:
    """rlcat's hooks repository (the file:// URL of a bare mirror of this checkout), its tag, and
    pre-commit's offline environment, whose home is shared by the hook tests."""

    repo: str
    rev: str
    env: dict[str, str]
    home: Path


@pytest.fixture(scope="module")
def hook_source(tmp_path_factory: pytest.TempPathFactory) -> HookSource:
    scratch = tmp_path_factory.mktemp("hooks")
    env = _offline_env(scratch)
    source_repo(scratch / "rlcat-src")
    tag = f"v{VERSION}"
    mirror = bare_mirror(scratch / "rlcat-src", scratch / "rlcat.git", tag)
    return HookSource(mirror, tag, env, scratch / "pre-commit-home")


def _offline_env(tmp_path: Path) -> dict[str, str]:
    """pre-commit's environment for an offline hook install from the wheelhouse (skip without it)."""
    wheels = wheelhouse.wheelhouse_dir()
    if not wheelhouse.is_complete(wheels):
        pytest.skip(
            f"the wheelhouse for the offline hook install is not fetched ({wheels}): "
            "run `rlcat dev fetch-verl` once, with network"
        )
    probe = subprocess.run(
        [sys.executable, "-m", "pre_commit", "--version"], capture_output=True, check=False
    )
    assert probe.returncode == 0, 'pre-commit is missing: pip install -e ".[test]"'
    # no bytecode compiled at the hook's install, as in test_team_repo._pip_env (the hook's benchmark,
    # bench/precommit_lint.py, installs as a user's pre-commit does, compiling)
    return offline_env(tmp_path) | {"PIP_COMPILE": "0"}


def _provided_hook(hook_id: str) -> dict[str, object]:
    """A hook of this repository's .pre-commit-hooks.yaml, by id."""
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    found: dict[str, object] = {hook["id"]: hook for hook in hooks}[hook_id]
    return found


def test_hook_flags_the_bad_recipe_offline(hook_source: HookSource, tmp_path: Path) -> None:
    env = hook_source.env
    project = tmp_path / "recipes-repo"
    bad_line = _recipes_repo(project, hook_source.repo, hook_source.rev)

    everything = _pre_commit(project, env, "--all-files")
    output = everything.stdout + everything.stderr
    assert "An unexpected error has occurred" not in output, output
    assert everything.returncode == 1, output
    assert f"- hook id: {HOOK_ID}" in output and "Failed" in output, output
    finding = f"recipes/bad_recipe.yaml:{bad_line}:1 RLC101 error: unknown field 'rollout_mode'"
    assert any(line.startswith(finding) for line in output.splitlines()), output
    assert "good_recipe" not in output, output
    assert "2 files checked" in output, output  # README.md and the config are not recipes

    good = _pre_commit(project, env, "--files", "recipes/good_recipe.yaml")
    output = good.stdout + good.stderr
    assert good.returncode == 0, output
    assert "rlcat validate" in output and "Passed" in output, output
    _built_once(hook_source, output)


def test_a_team_repository_commits_through_the_hooks_from_a_git_mirror(
    hook_source: HookSource, tmp_path: Path, rlcat: Callable[..., Result]
) -> None:
    """The git install route, from an empty folder: `rlcat init --rlcat-source git+file://MIRROR@TAG`,
    a launch script, `pre-commit install`, and the first `git commit` runs both hooks and passes;
    a commit of a bad recipe is refused."""
    team = tmp_path / "team"
    init = rlcat("init", str(team), "--rlcat-source", f"git+{hook_source.repo}@{hook_source.rev}")
    assert init.code == 0, init.err
    (repo,) = yaml.safe_load((team / ".pre-commit-config.yaml").read_text(encoding="utf-8"))["repos"]
    assert (repo["repo"], repo["rev"]) == (hook_source.repo, hook_source.rev)
    first_commit(team, hook_source.env)
    bad_line = break_a_recipe(team)
    refused = commit(team, hook_source.env, "a bad recipe")
    output = refused.stdout + refused.stderr
    assert refused.returncode == 1 and hook_result(output, "rlcat validate") == "Failed", output
    assert f"recipes/my_first_recipe.yaml:{bad_line}:1 RLC101 error: unknown field 'rollout_mode'" in output
    assert git(team, "rev-list", "--count", "HEAD") == "1", "the bad recipe is not committed"
    _built_once(hook_source, output)


def _built_once(hook_source: HookSource, output: str) -> None:
    """The hooks' environment was built once, from the wheelhouse (pip could reach nothing else),
    and the later runs of either hook reused it."""
    envs = list(hook_source.home.glob("repo*/py_env-*"))
    assert len(envs) == 1, envs
    assert "Installing environment" not in output, output


def _scripts_repo(root: Path, rlcat_src: str, rev: str) -> int:
    """A team's repository of launch scripts: a good one, a bad one (`+` on a key verl has), and a
    shell script that launches nothing; returns the bad override's line."""
    scripts = root / "scripts"
    scripts.mkdir(parents=True)
    for name, source in (("good.sh", "clean.sh"), ("bad.sh", "plus_misuse.sh"), ("setup.sh", "no_launch.sh")):
        (scripts / name).write_text((LINT_DATA / source).read_text(encoding="utf-8"), encoding="utf-8")
    bad_line = (scripts / "bad.sh").read_text(encoding="utf-8").splitlines().index(
        "    +trainer.total_epochs=1 \\"
    ) + 1
    config = {"repos": [{"repo": rlcat_src, "rev": rev, "hooks": [{"id": LINT_HOOK_ID}]}]}
    (root / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    (root / "README.md").write_text("launch scripts\n", encoding="utf-8")
    git(root, "init", "-q")
    git(root, "add", "-A")
    return bad_line


def test_lint_hook_flags_the_bad_script_offline(hook_source: HookSource, tmp_path: Path) -> None:
    env = hook_source.env
    project = tmp_path / "scripts-repo"
    bad_line = _scripts_repo(project, hook_source.repo, hook_source.rev)

    everything = _pre_commit(project, env, "--all-files")
    output = everything.stdout + everything.stderr
    assert "An unexpected error has occurred" not in output, output
    assert everything.returncode == 1, output
    assert f"- hook id: {LINT_HOOK_ID}" in output and "Failed" in output, output
    finding = f"scripts/bad.sh:{bad_line}:5 RLC408 error: '+trainer.total_epochs' adds a key"
    assert any(line.startswith(finding) for line in output.splitlines()), output
    # the script that launches nothing is a note, not a failure; README.md is not a script
    assert "scripts/setup.sh:1 RLC1104 info:" in output, output
    assert "good.sh" not in output and "README" not in output, output
    assert "3 files checked: 2 error(s), 0 warning(s)" in output, output

    good = _pre_commit(project, env, "--files", "scripts/good.sh", "scripts/setup.sh")
    output = good.stdout + good.stderr
    assert good.returncode == 0, output
    assert "rlcat lint (verl launch scripts)" in output and "Passed" in output, output
    _built_once(hook_source, output)


def test_lint_hook_runs_on_shell_scripts_only() -> None:
    hook = _provided_hook(LINT_HOOK_ID)
    files = re.compile(str(hook["files"]))
    for path in ("run.sh", "examples/grpo/run_qwen3_8b.sh"):
        assert files.search(path), path
    for path in ("run.sh.bak", "recipes/x.yaml", "run.bash", "README.md"):
        assert not files.search(path), path
    assert hook["entry"] == "rlcat lint --only-launches" and hook["language"] == "python"
    assert hook["types"] == ["shell"] and hook.get("pass_filenames", True)


def test_requirements_cover_the_build_and_the_runtime() -> None:
    reqs = wheelhouse.requirements()
    assert "hatchling>=1.25" in reqs
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert 'requires = ["hatchling>=1.25"]' in pyproject, "keep wheelhouse.BUILD_REQUIREMENTS in step"
    parsed = wheelhouse.dependencies_from_text(pyproject)
    assert parsed and {"pydantic", "PyYAML", "typer"} <= {r.split(">")[0].split("=")[0] for r in parsed}
    assert [r for r in reqs if r not in wheelhouse.BUILD_REQUIREMENTS] == parsed
    if sys.version_info >= (3, 11):
        import tomllib

        assert parsed == tomllib.loads(pyproject)["project"]["dependencies"]


def test_dependencies_parser_without_tomllib() -> None:
    text = (
        '[build-system]\nrequires = ["x"]\ndependencies = ["not-project"]\n'
        "[project]  # the package\n"
        'name = "a"\n'
        'dependencies = ["a[b]>=1", \'c; python_version < "3.11"\',  # a ] in a comment\n'
        '  "d",  # "e" is commented out\n'
        "]\n"
        '[tool.x]\ndependencies = ["z"]\n'
    )
    assert wheelhouse.dependencies_from_text(text) == ["a[b]>=1", 'c; python_version < "3.11"', "d"]


def test_hook_files_pattern_matches_recipes_and_catalog_entries_only() -> None:
    hook = _provided_hook(HOOK_ID)
    files = re.compile(hook["files"])
    shipped = [p.relative_to(REPO).as_posix() for d in ("recipes", "catalog") for p in (REPO / d).rglob("*")]
    assert [p for p in shipped if p.endswith(".yaml") and not files.search(p)] == []
    for path in ("rl/recipes/team/run.yml", "recipes/x.yml", "sub/catalog/models/m.yaml"):
        assert files.search(path), path
    for path in (
        ".pre-commit-config.yaml",
        ".github/workflows/rlcat.yml",
        "docs/examples/rlcat-validate.yml",
        "catalog/notes.yaml",
        "catalog/models.yaml",
        "myrecipes/x.yaml",
        "recipes/README.md",
        "schemas/recipe.schema.json",
    ):
        assert not files.search(path), path
    assert hook["entry"] == "rlcat validate" and hook["language"] == "python"
    assert hook.get("pass_filenames", True) and "yaml" in hook["types"]

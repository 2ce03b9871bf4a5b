"""A team repository's commits through rlcat's pre-commit hooks, as a user makes them (`pre-commit
install`, then `git commit`): shared by the install routes' tests (test_precommit.py: a git mirror;
test_team_repo.py: a wheel folder)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from rlcat.dev.hook_repo import commit, git

from conftest import REPO

LINT_DATA = REPO / "tests" / "data" / "lint"


def first_commit(team: Path, env: dict[str, str]) -> str:
    """A launch script beside the scaffold, `pre-commit install` and the first commit, which runs
    both hooks and passes; its output."""
    (team / "scripts").mkdir()
    (team / "scripts" / "run_grpo.sh").write_text((LINT_DATA / "clean.sh").read_text(encoding="utf-8"))
    git(team, "init", "-q")
    git(team, "add", "-A")
    installed = subprocess.run(
        [sys.executable, "-m", "pre_commit", "install"],
        cwd=team,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    first = commit(team, env, "a team repository")
    output = first.stdout + first.stderr
    assert first.returncode == 0, output
    assert hook_result(output, "rlcat validate") == "Passed", output
    assert hook_result(output, "rlcat lint (verl launch scripts)") == "Passed", output
    return output


def break_a_recipe(team: Path) -> int:
    """A field no recipe has, in the example recipe, staged; its line."""
    recipe = team / "recipes" / "my_first_recipe.yaml"
    text = recipe.read_text(encoding="utf-8").replace("\nsummary: ", "\nrollout_mode: async\nsummary: ", 1)
    recipe.write_text(text, encoding="utf-8")
    git(team, "add", "-A")
    return text.splitlines().index("rollout_mode: async") + 1


def hook_result(output: str, name: str) -> str | None:
    """What pre-commit said of the hook named `name` (`rlcat lint......Passed`): Passed, Failed,
    Skipped, or None when it did not run."""
    for line in output.splitlines():
        if line.startswith(name):
            return line.rstrip().rsplit(".", 1)[-1].split(")")[-1]
    return None

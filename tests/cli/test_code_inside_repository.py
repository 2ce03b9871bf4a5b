"""RLC903 warns about Python code verl imports at launch that the review of the repository does not
show, and is quiet about code of the repository being checked: the git work tree that holds the
recipe or script (inside.repository_of). Both sides, through `rlcat lint` and `rlcat validate`."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rlcat.inside import names_code_inside, repository_of

from conftest import Result

Run = Callable[..., Result]
LAUNCH = "#!/usr/bin/env bash\npython3 -m verl.trainer.main_ppo \\\n    data.train_batch_size=16 \\\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git work tree (made by git itself) with a reward module, a dataset class and a package."""
    root = tmp_path / "team"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "rewards").mkdir()
    (root / "rewards" / "math.py").write_text("def compute_score(*args): return 0.0\n")
    (root / "rewards" / "dataset.py").write_text("class Data: ...\n")
    (root / "my_models").mkdir()
    (root / "my_models" / "__init__.py").write_text("")
    (root / "my_models" / "patch.py").write_text("")
    (tmp_path / "elsewhere.py").write_text("")
    (root / "rewards" / "link_out.py").symlink_to(tmp_path / "elsewhere.py")
    return root


def _codes_at(rlcat: Run, script: Path) -> list[tuple[str, str | None]]:
    result = rlcat("lint", str(script), "--format", "json")
    data: dict[str, Any] = json.loads(result.out)
    return [(d["code"], d["key"]) for d in data["diagnostics"] if d["code"] == "RLC903"]


INSIDE = {
    "reward_file": "reward.custom_reward_function.path=rewards/math.py",
    "dataset_class": "data.custom_cls.path=./rewards/dataset.py",
    "module_file": "actor_rollout_ref.model.external_lib=my_models.patch",
    "package": "actor_rollout_ref.model.external_lib=my_models",
    "climbs_and_comes_back": "reward.custom_reward_function.path=rewards/../rewards/math.py",
}
OUTSIDE = {
    "absolute_path": "reward.custom_reward_function.path=/shared/tmp/reward.py",
    "climbs_out": "reward.custom_reward_function.path=../elsewhere.py",
    "not_in_the_repository": "reward.custom_reward_function.path=rewards/missing.py",
    "link_out_of_the_repository": "reward.custom_reward_function.path=rewards/link_out.py",
    "module_not_in_the_repository": "actor_rollout_ref.model.external_lib=evil_pkg.models",
    "a_folder_is_no_file": "data.custom_cls.path=rewards",
    "git_metadata": "data.custom_cls.path=.git/config",
}


@pytest.mark.parametrize("case", INSIDE, ids=list(INSIDE))
def test_code_of_the_repository_is_no_finding(rlcat: Run, repo: Path, case: str) -> None:
    script = repo / "scripts" / "run.sh"
    script.parent.mkdir()
    script.write_text(f"{LAUNCH}    {INSIDE[case]}\n")
    assert _codes_at(rlcat, script) == []


@pytest.mark.parametrize("case", OUTSIDE, ids=list(OUTSIDE))
def test_code_outside_the_repository_is_a_finding(rlcat: Run, repo: Path, case: str) -> None:
    script = repo / "run.sh"
    script.write_text(f"{LAUNCH}    {OUTSIDE[case]}\n")
    key = OUTSIDE[case].split("=", 1)[0]
    assert _codes_at(rlcat, script) == [("RLC903", key)]


def test_without_a_work_tree_nothing_is_reviewed(rlcat: Run, repo: Path, tmp_path: Path) -> None:
    """The same files and script in a folder no git work tree holds: every path is a finding."""
    plain = tmp_path / "plain"
    (plain / "rewards").mkdir(parents=True)
    (plain / "rewards" / "math.py").write_text("")
    script = plain / "run.sh"
    script.write_text(f"{LAUNCH}    {INSIDE['reward_file']}\n")
    assert repository_of(script) is None
    assert _codes_at(rlcat, script) == [("RLC903", "reward.custom_reward_function.path")]


RECIPE = """\
name: team_reward
extends: gsm8k_qwen3_8b_fsdp
summary: the team's reward module
overrides:
  reward.custom_reward_function.path: {path}
"""


@pytest.mark.parametrize(("path", "fires"), [("rewards/math.py", False), ("/shared/reward.py", True)])
def test_validate_judges_a_recipe_by_its_repository(rlcat: Run, repo: Path, path: str, fires: bool) -> None:
    recipe = repo / "recipes" / "team_reward.yaml"
    recipe.parent.mkdir()
    recipe.write_text(RECIPE.format(path=path))
    result = rlcat("validate", str(recipe), "--platform", "cuda", "--format", "json")
    codes = [d["code"] for d in json.loads(result.out)["diagnostics"]]
    assert ("RLC903" in codes) is fires, result.out


def test_the_repository_is_the_nearest_work_tree(repo: Path) -> None:
    nested = repo / "vendor" / "other"
    nested.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(nested)], check=True)
    (nested / "run.sh").write_text("")
    assert repository_of(nested / "run.sh") == nested.resolve()
    assert repository_of(repo / "rewards" / "math.py") == repo.resolve()
    assert repository_of(repo / "no_such_file.sh") is None
    assert not names_code_inside(None, "rewards/math.py")
    assert not names_code_inside(repo, "my_models/../../x", module=True)

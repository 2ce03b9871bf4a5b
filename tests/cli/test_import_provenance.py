"""What `rlcat import` does for the upstream examples of the catalog: `--provenance` written into the
recipe, GPU pools read back into typed resources when no one field can move alone, and a built-in
model entry kept for a local copy of its checkpoint (the recipe's model path carries the path)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from import_helpers import DATA, environment, import_reference

from conftest import Result

Rlcat = Callable[..., Result]

ORIGIN = (
    "verl-project/verl:examples/grpo_trainer/run_qwen3_8b_fsdp.sh@"
    + "1dda039b9c6311889a9c9a26040677e1254814f9"
)


def test_provenance_goes_into_the_recipe_and_its_header(rlcat: Rlcat, tmp_path: Path) -> None:
    script = DATA / "examples__grpo_trainer__run_qwen3_8b_fsdp.sh"
    env = [f"--env={k}={v}" for k, v in environment(script.stem).items()]
    result = rlcat("import", str(script), "-o", str(tmp_path), "--name", "run", "--provenance", ORIGIN, *env)
    assert "Traceback" not in result.err
    text = (tmp_path / "recipes" / "run.yaml").read_text()
    data = yaml.safe_load(text)
    assert data["provenance"] == {
        "repository": "verl-project/verl",
        "path": "examples/grpo_trainer/run_qwen3_8b_fsdp.sh",
        "commit": "1dda039b9c6311889a9c9a26040677e1254814f9",
    }
    assert text.splitlines()[0].endswith(
        "verl-project/verl:examples/grpo_trainer/run_qwen3_8b_fsdp.sh at " + ORIGIN[-40:]
    )
    assert data["summary"].endswith("upstream examples/grpo_trainer/run_qwen3_8b_fsdp.sh")
    assert str(DATA) not in text  # the local copy read is not named: the upstream file is


@pytest.mark.parametrize(
    "given",
    [
        "verl-project/verl:examples/run.sh",  # no commit
        "verl-project/verl:examples/run.sh@1dda039",  # a short commit
        "verl-project/verl:../etc/passwd@" + "0" * 40,  # a path out of the repository
        "not a repository:run.sh@" + "0" * 40,
    ],
)
def test_bad_provenance_is_a_usage_error(rlcat: Rlcat, tmp_path: Path, given: str) -> None:
    script = DATA / "examples__grpo_trainer__run_qwen3_8b_fsdp.sh"
    result = rlcat("import", str(script), "-o", str(tmp_path), "--provenance", given)
    assert result.code == 2
    assert "RLC105" in result.out + result.err and "OWNER/REPO:PATH@COMMIT" in result.out + result.err
    assert "Traceback" not in result.out + result.err
    assert not (tmp_path / "recipes").exists()


def test_fully_async_pools_and_a_local_checkpoint(tmp_path: Path) -> None:
    # trainer.nnodes=1, rollout.nnodes=1, n_gpus_per_node=8 for both: two nodes of 8 GPUs split 8 + 8,
    # though no one of nodes, trainer_gpus and rollout_gpus validates when it moves alone
    done = import_reference("verl__experimental__fully_async_policy__shell__dapo_7b_math_fsdp2_8_8", tmp_path)
    recipe = yaml.safe_load(next((tmp_path / "recipes").glob("*.yaml")).read_text())
    assert recipe["resources"] == {"nodes": 2, "trainer_gpus": 8, "rollout_gpus": 8}
    assert not [k for k in recipe.get("overrides", {}) if k.startswith(("trainer.n", "rollout.n"))]
    # the script loads $HOME/verl/models/Qwen2.5-Math-7B: the built-in qwen2_5_math_7b
    # (Qwen/Qwen2.5-Math-7B) stands, and the recipe's own model path carries the folder
    assert recipe["model"] == "qwen2_5_math_7b"
    assert recipe["actor"]["model_path"] == "$HOME/verl/models/Qwen2.5-Math-7B"
    assert not (tmp_path / "catalog" / "models").exists()
    assert done.report.ok

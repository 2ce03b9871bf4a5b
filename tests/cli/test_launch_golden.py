"""Golden files: the artifact of every launch target × seed recipe × platform, compared byte for
byte, and each read back by its reader (bash -n, JSON, YAML).

Rewrite them after an intended change with:
    RLCAT_UPDATE_GOLDEN=1 pytest tests/cli/test_launch_golden.py -n 0
The argv inside every artifact is the plan's, whose overrides tests/verl/test_compose_seeds.py
composes with real verl; tests/cli/test_launch_roundtrip.py shows that each reader delivers it.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from rlcat.catalog import Catalog

from conftest import SEED_RECIPES, SLURM_SITE, UPDATE_GOLDEN, Result

GOLDEN = Path(__file__).parent.parent / "golden_launch"
SUFFIXES = {
    "local": "sh",
    "ray-job": "json",
    "skypilot": "sky.yaml",
    "kuberay": "rayjob.yaml",
    "slurm": "sbatch",
}
# the slurm script per container runtime: tests/cli/test_launch_slurm_golden.py
CONTAINER_GOLDEN = GOLDEN / "slurm-containers"
PLATFORM_NAMES = sorted(Catalog.default().names("platform"))
CASES = [(r, p, t) for r in SEED_RECIPES for p in PLATFORM_NAMES for t in SUFFIXES]
# the profiles that name no image get one for the kuberay manifest (RLC1011 otherwise)
IMAGE = "registry.example/verl:golden"


def golden_path(recipe: str, platform: str, target: str) -> Path:
    return GOLDEN / recipe / f"{platform}.{SUFFIXES[target]}"


def _readable(target: str, text: str, tmp_path: Path) -> None:
    if target in ("local", "slurm"):
        script = tmp_path / "launch.sh"
        script.write_text(text)
        assert subprocess.run(["bash", "-n", str(script)], check=False).returncode == 0
    elif target == "ray-job":
        assert isinstance(json.loads(text)["entrypoint"], str)
    else:
        data = yaml.safe_load(text)
        if target == "skypilot":
            script = tmp_path / "run.sh"
            script.write_text(data["run"])
            assert subprocess.run(["bash", "-n", str(script)], check=False).returncode == 0


@pytest.mark.parametrize(("recipe", "platform", "target"), CASES, ids=["-".join(c) for c in CASES])
def test_launch_golden(
    rlcat: Callable[..., Result], tmp_path: Path, recipe: str, platform: str, target: str
) -> None:
    args = ["launch", recipe, "--platform", platform, "--target", target, "--ray-auth-mode", "token"]
    args += SLURM_SITE if target == "slurm" else ()
    result = rlcat(*args)
    if result.code != 0 and "RLC1011" in result.err:
        result = rlcat(*args, "--image", IMAGE)
    assert result.code == 0, result.err
    _readable(target, result.out, tmp_path)
    path = golden_path(recipe, platform, target)
    if UPDATE_GOLDEN:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(result.out, encoding="utf-8")
    assert path.is_file(), f"no golden file {path}; run RLCAT_UPDATE_GOLDEN=1 pytest {__file__}"
    assert result.out == path.read_text(encoding="utf-8")


def test_no_stale_launch_golden_files() -> None:
    expected = {golden_path(*case) for case in CASES}
    assert set(GOLDEN.rglob("*.*")) - expected - set(CONTAINER_GOLDEN.rglob("*")) == set()

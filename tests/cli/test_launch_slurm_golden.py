"""Golden files of the slurm script per container runtime (no runtime runs in CI, so these are
checked as text: byte for byte, and `bash -n`). The default runtime of every seed recipe and
platform is in tests/cli/test_launch_golden.py.

Rewrite them after an intended change with:
    RLCAT_UPDATE_GOLDEN=1 pytest tests/cli/test_launch_slurm_golden.py -n 0
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from rlcat.launch.slurm_container import CONTAINERS

from conftest import SLURM_SITE, UPDATE_GOLDEN, Result

GOLDEN = Path(__file__).parent.parent / "golden_launch" / "slurm-containers"
RECIPE = "ppo_qwen2_7b_gsm8k_2x8"
CASES = [(RECIPE, "rocm", container) for container in CONTAINERS] + [(RECIPE, "cuda", "pyxis")]
IMAGE = {"cuda": "nvcr.io/example/verl:golden"}


def golden_path(recipe: str, platform: str, container: str) -> Path:
    return GOLDEN / f"{recipe}.{platform}.{container}.sbatch"


@pytest.mark.parametrize(("recipe", "platform", "container"), CASES, ids=["-".join(c) for c in CASES])
def test_slurm_container_golden(
    rlcat: Callable[..., Result], tmp_path: Path, recipe: str, platform: str, container: str
) -> None:
    image = ("--image", IMAGE[platform]) if platform in IMAGE else ()
    result = rlcat(
        "launch", recipe, "--platform", platform, "--target", "slurm", "--ray-auth-mode", "disabled",
        "--container", container, "--network-interface", "ib0", "--mount", "/shared/data:/data", *SLURM_SITE,
        "--pass-env", "WANDB_API_KEY", "--setup", "module load rocm", "--sbatch-arg=--partition=gpu", *image,
    )  # fmt: skip
    assert result.code == 0, result.err
    script = tmp_path / "job.sbatch"
    script.write_text(result.out)
    assert subprocess.run(["bash", "-n", str(script)], check=False).returncode == 0
    path = golden_path(recipe, platform, container)
    if UPDATE_GOLDEN:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(result.out, encoding="utf-8")
    assert path.is_file(), f"no golden file {path}; run RLCAT_UPDATE_GOLDEN=1 pytest {__file__}"
    assert result.out == path.read_text(encoding="utf-8")


def test_no_stale_container_golden_files() -> None:
    assert set(GOLDEN.glob("*")) - {golden_path(*case) for case in CASES} == set()

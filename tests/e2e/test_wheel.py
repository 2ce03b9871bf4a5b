"""`pip install .` (not only editable) gives a working rlcat outside the checkout: the wheel carries
the catalog, the recipes and the schemas, and compiles the same output as the checkout."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

from conftest import REPO


def test_wheel_ships_data_and_compiles_outside_the_checkout(rlcat_wheel: Path, tmp_path: Path) -> None:
    wheel = rlcat_wheel
    names = set(zipfile.ZipFile(wheel).namelist())
    for required in (
        "rlcat/_data/recipes/geo3k_megatron_4_4.yaml",
        "rlcat/_data/catalog/platforms/rocm.yaml",
        "rlcat/_data/schemas/verl/0.9.0/manifest.json",
        "rlcat/_data/schemas/recipe.schema.json",
    ):
        assert required in names

    target = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(target)
    workdir = tmp_path / "elsewhere"
    workdir.mkdir()
    env = {**os.environ, "PYTHONPATH": str(target)}
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, rlcat.cli; sys.exit(rlcat.cli.main(sys.argv[1:]))",
            "compile",
            "geo3k_megatron_4_4",
            "--platform",
            "rocm",
        ],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    probe = subprocess.run(
        [sys.executable, "-c", "import rlcat; print(rlcat.__file__)"],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert probe.stdout.startswith(str(target)), "the test must run the wheel's copy, not the checkout"
    assert run.stdout == (REPO / "tests" / "golden" / "geo3k_megatron_4_4" / "rocm.txt").read_text()

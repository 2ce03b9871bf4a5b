"""The `shell` format is a runnable script: bash parses it, and running it hands verl exactly the
compiled overrides and environment (python3 is replaced by a recorder on PATH)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rlcat.compile.assemble import Request, compile_request
from rlcat.emit.formats import override_texts, to_shell

from conftest import PLATFORMS, SEED_RECIPES

BASH = shutil.which("bash")
pytestmark = pytest.mark.skipif(BASH is None, reason="bash is needed to run launch scripts")

RECORDER = f"""#!{sys.executable}
import json, os, sys
json.dump({{"argv": sys.argv[1:], "env": dict(os.environ)}}, open(os.environ["RECORD_TO"], "w"))
"""


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("recipe", SEED_RECIPES)
def test_script_passes_overrides_unchanged(tmp_path: Path, recipe: str, platform: str) -> None:
    compiled = compile_request(Request(recipe, platform))
    script = tmp_path / "launch.sh"
    script.write_text(to_shell(compiled))
    bindir = tmp_path / "bin"
    bindir.mkdir()
    fake = bindir / "python3"
    fake.write_text(RECORDER)
    fake.chmod(0o755)
    record = tmp_path / "record.json"
    env = {
        "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}",
        "RECORD_TO": str(record),
        "HOME": str(tmp_path),
    }

    assert subprocess.run([BASH, "-n", str(script)], check=False).returncode == 0
    run = subprocess.run(
        [BASH, str(script), "trainer.save_freq=3"], env=env, capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stderr
    got = json.loads(record.read_text())
    assert got["argv"] == [
        "-m",
        compiled.plan.entrypoint,
        f"--config-name={compiled.plan.config_name}",
        *override_texts(compiled),
        "trainer.save_freq=3",
    ]
    for name, value in compiled.env_vars.items():
        assert got["env"][name] == value

"""The benchmark scripts still run against the code as it is (a smoke run each, with the smallest
settings). Their figures are not judged here: budgets are checked by the scripts, on purpose, by
whoever measures (bench/README.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rlcat.dev import wheelhouse

from conftest import REPO

# (script, the smallest arguments that still exercise every step); ray_submit.py needs a Ray
# cluster and runs on the e2e one (test_launch_ray.py), test_tiers.py runs the suite itself
SMOKE_RUNS = [
    ("cold_compile.py", ["--repeat", "1"]),
    ("compile_all.py", ["--repeat", "1"]),
    ("matrix.py", ["--repeat", "1"]),
    ("validate_many.py", ["--files", "20", "--repeat", "1", "--no-process"]),
    ("docs_build.py", ["--repeat", "0"]),  # one build: the first round alone
    ("docs_results.py", ["--repeat", "0", "--results", "2"]),  # one build: the first round alone
    ("docs_charts.py", ["--repeat", "1", "--keys", "20"]),
    ("limits.py", ["--repeat", "0"]),  # each case once
    ("lint_scripts.py", ["--repeat", "1"]),
    ("runs_add.py", ["--lines", "2000", "--repeat", "1"]),
    ("precommit_lint.py", ["--repeat", "1", "--files", "2"]),
    ("script_reader.py", ["--repeat", "1", "--scale", "0.125"]),
    ("job_log.py", ["--repeat", "1", "--mb", "1", "--polls", "5"]),
]
# the offline install of the pre-commit hook takes its wheels from the wheelhouse, never the network
NEEDS_WHEELHOUSE = {"precommit_lint.py"}


@pytest.mark.parametrize(("script", "args"), SMOKE_RUNS, ids=[s for s, _ in SMOKE_RUNS])
def test_benchmark_runs(tmp_path: Path, script: str, args: list[str]) -> None:
    if script in NEEDS_WHEELHOUSE and not wheelhouse.is_complete(wheelhouse.wheelhouse_dir()):
        pytest.skip("needs the wheelhouse (`rlcat dev fetch-verl`); tests never download it")
    results = tmp_path / "results.json"
    run = subprocess.run(
        [sys.executable, str(REPO / "bench" / script), *args, "--json", str(results)],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    data = json.loads(results.read_text(encoding="utf-8"))
    assert "pass" in data, sorted(data)
    assert data["machine"], "every result says what it was measured on"

"""Generated files are fresh, the README's commands are the ones CI runs, and the code is lint-clean."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

from rlcat.dev import schemas
from rlcat.docsite.home import quick_start_commands

from conftest import REPO


def test_files_generated_from_the_models_are_fresh() -> None:
    stale = schemas.write(REPO, check=True)
    assert stale == [], f"{stale} stale: run `rlcat dev schemas`"


@pytest.mark.parametrize(
    ("folder", "schema"),
    [
        ("recipes", "recipe.schema.json"),
        ("catalog/models", "model.schema.json"),
        ("catalog/datasets", "dataset.schema.json"),
        ("catalog/platforms", "platform.schema.json"),
    ],
)
def test_shipped_yaml_validates_with_standard_jsonschema(folder: str, schema: str) -> None:
    validator = jsonschema.Draft202012Validator(json.loads((REPO / "schemas" / schema).read_text()))
    files = sorted((REPO / folder).rglob("*.yaml"))
    assert files
    for path in files:
        data = yaml.safe_load(path.read_text())
        errors = [e.message for e in validator.iter_errors(data)]
        assert errors == [], f"{path}: {errors}"


def test_readme_quick_start_is_two_commands_and_ci_runs_the_second() -> None:
    commands = quick_start_commands(REPO / "README.md")
    assert len(commands) == 2
    assert "rlcat compile geo3k_megatron_4_4 --platform rocm" in commands[0]
    ci = (REPO / ".ci" / "run").read_text().splitlines()
    assert commands[1] in ci, ".ci/run must run the README's test command verbatim"


def test_ruff_is_clean() -> None:
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    run = subprocess.run(  # no cache: a test writes nothing into the checkout
        [ruff, "check", "--no-cache", "compiler", "tests", "bench"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_mypy_is_clean(tmp_path: Path) -> None:
    run = subprocess.run(  # its cache in the test's folder, not the checkout's .mypy_cache
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "mypy-cache")],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr


def _lint_imports(config: Path, package_parent: Path) -> subprocess.CompletedProcess[str]:
    lint = shutil.which("lint-imports") or str(Path(sys.executable).parent / "lint-imports")
    env = {**os.environ, "PYTHONPATH": str(package_parent)}
    return subprocess.run(
        [lint, "--config", str(config), "--no-cache"],
        cwd=config.parent,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def test_import_contract_is_kept() -> None:
    run = _lint_imports(REPO / "pyproject.toml", REPO / "compiler")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "3 kept, 0 broken" in run.stdout


def test_every_folder_of_the_package_is_a_layer() -> None:
    """The contract is by folder: each folder and top-level module of the package is named in one
    layer, whole (a new folder nobody placed would be held to nothing)."""
    contracts = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    layers = next(c for c in contracts["contracts"] if c["type"] == "layers")["layers"]
    named = [name.strip() for layer in layers for name in layer.split("|")]
    assert all(name.count(".") == 1 for name in named), named  # folders, never modules inside them
    package = REPO / "compiler" / "rlcat"
    tops = {p.stem for p in package.glob("*.py") if p.name != "__init__.py"}
    tops |= {p.name for p in package.iterdir() if (p / "__init__.py").is_file()}
    assert sorted(named) == sorted(f"rlcat.{top}" for top in tops)


@pytest.mark.parametrize(
    ("module", "line", "contract"),
    [
        ("diagnostics.py", "import rlcat.cli\n", "flows one way"),
        ("read/document.py", "import rlcat.resolve\n", "flows one way"),
        ("syntax/hydra_value.py", "import rlcat.emit.formats\n", "flows one way"),
        ("read/document.py", "import rlcat.model.recipe\n", "flows one way"),
        ("docsite/md.py", "import rlcat.docsite.generate\n", "cycles inside a folder"),
        ("verl/index.py", "import hydra\n", "never imports Hydra"),
    ],
    ids=[
        "data-imports-the-cli",
        "read-imports-resolve",
        "syntax-imports-emit",
        "read-imports-model-beside-it",
        "docsite-cycle",
        "hydra-on-the-compile-path",
    ],
)
def test_import_contract_catches_a_breach(tmp_path: Path, module: str, line: str, contract: str) -> None:
    """The contract is not vacuous: one import added against it, in a copy of the package, breaks it."""
    shutil.copytree(REPO / "compiler" / "rlcat", tmp_path / "src" / "rlcat")
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    target = tmp_path / "src" / "rlcat" / module
    target.write_text(target.read_text(encoding="utf-8") + line, encoding="utf-8")
    run = _lint_imports(tmp_path / "pyproject.toml", tmp_path / "src")
    assert run.returncode == 1, run.stdout + run.stderr
    # "NAME KEPT", "NAME BROKEN", or either followed by "(2 ignored imports)"
    verdicts = [line for line in run.stdout.splitlines() if re.search(r" (KEPT|BROKEN)( \(.*\))?$", line)]
    broken = [v for v in verdicts if re.search(r" BROKEN( \(.*\))?$", v)]
    assert any(contract in v for v in broken), run.stdout

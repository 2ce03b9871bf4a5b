"""The verl oracle's environments: where they live, when one counts as built, and that a build reuses
a complete one and starts a broken one over. pip is replaced by a recorder: nothing is downloaded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlcat.dev import oracle_env


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(oracle_env.HOME_ENV, str(tmp_path / "oracle"))
    return tmp_path / "oracle"


@pytest.fixture
def steps(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The build's commands, recorded; `python -m venv DIR` makes DIR/bin/python as venv would."""
    ran: list[list[str]] = []

    def run(cmd: list[str], log: Path, env: dict[str, str] | None = None) -> str:
        ran.append(cmd)
        if cmd[1:3] == ["-m", "venv"]:
            (Path(cmd[3]) / "bin").mkdir(parents=True)
            (Path(cmd[3]) / "bin" / "python").touch()
        if "list" in cmd:
            return json.dumps(
                [{"name": "verl", "version": "0.9.1"}, {"name": "torch", "version": "2.13.0+cpu"}]
            )
        return ""

    monkeypatch.setattr(oracle_env, "_run", run)
    return ran


def test_home_is_outside_the_clone(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(oracle_env.HOME_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert oracle_env.env_dir("0.9.1") == tmp_path / "rlcat" / "verl-oracle" / "verl-0.9.1"
    monkeypatch.setenv(oracle_env.HOME_ENV, str(tmp_path / "elsewhere"))
    assert oracle_env.env_dir("0.9.1") == tmp_path / "elsewhere" / "verl-0.9.1"


def test_build_pins_torch_before_verl_and_writes_the_marker_last(home: Path, steps: list[list[str]]) -> None:
    built = oracle_env.build("0.9.1", python="python3")
    assert not built.reused
    installs = [cmd[cmd.index("-q") + 1 :] for cmd in steps if "install" in cmd]
    # torch first and pinned: verl's open `torch` range would otherwise take the CUDA build
    assert installs == [[oracle_env.TORCH_PIN, "numpy"], ["verl==0.9.1", *oracle_env.EXTRA_PACKAGES]]
    assert steps[0] == ["python3", "-m", "venv", str(home / "verl-0.9.1")]
    assert oracle_env.is_complete("0.9.1")
    assert built.installed == {"verl": "0.9.1", "torch": "2.13.0+cpu"}


def test_a_complete_environment_is_reused(home: Path, steps: list[list[str]]) -> None:
    oracle_env.build("0.9.1")
    steps.clear()
    again = oracle_env.build("0.9.1")
    assert again.reused and steps == []
    assert again.installed == {"verl": "0.9.1", "torch": "2.13.0+cpu"}


@pytest.mark.parametrize("damage", ["no_marker", "other_torch", "no_python", "garbled_marker"])
def test_a_broken_or_other_environment_is_built_again(
    home: Path, steps: list[list[str]], damage: str
) -> None:
    oracle_env.build("0.9.1")
    folder = oracle_env.env_dir("0.9.1")
    leftover = folder / "lib" / "half-installed"
    leftover.parent.mkdir(parents=True)
    leftover.touch()
    marker = folder / oracle_env.MARKER
    if damage == "no_marker":
        marker.unlink()
    elif damage == "other_torch":
        data = json.loads(marker.read_text())
        data["request"]["torch"] = "torch==2.9.1"
        marker.write_text(json.dumps(data))
    elif damage == "no_python":
        oracle_env.env_python("0.9.1").unlink()
    else:
        marker.write_text("{not json")
    assert not oracle_env.is_complete("0.9.1")
    steps.clear()
    rebuilt = oracle_env.build("0.9.1")
    assert not rebuilt.reused
    assert any("venv" in cmd for cmd in steps)
    assert not leftover.exists()  # started over from an empty folder
    assert oracle_env.is_complete("0.9.1")


def test_a_failed_step_leaves_no_marker(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def run(cmd: list[str], log: Path, env: dict[str, str] | None = None) -> str:
        if "verl==0.9.1" in cmd:
            raise RuntimeError("pip failed")
        if cmd[1:3] == ["-m", "venv"]:
            (Path(cmd[3]) / "bin").mkdir(parents=True)
            (Path(cmd[3]) / "bin" / "python").touch()
        return ""

    monkeypatch.setattr(oracle_env, "_run", run)
    with pytest.raises(RuntimeError, match="pip failed"):
        oracle_env.build("0.9.1")
    assert not (oracle_env.env_dir("0.9.1") / oracle_env.MARKER).exists()
    assert not oracle_env.is_complete("0.9.1")

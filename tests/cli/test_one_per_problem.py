"""One finding per problem, naming the platforms it affects, not one per platform: `rlcat validate`
compiles a recipe on each platform it targets, and a key no release has is one finding whichever
release each platform checks against, in every report format."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rlcat.diagnostics import Diagnostic, Severity, one_per_problem

from conftest import Result

Run = Callable[..., Result]
EVERY = ["cuda", "rocm", "npu", "rocm-7.0.2"]  # releases 0.9.1, 0.9.0, 0.9.1, 0.7.1
RECIPE = """\
name: on_four_platforms
summary: a key no release has, checked on four platforms
extends: gsm8k_qwen3_8b_fsdp
platforms: {rocm: {}, npu: {}, rocm-7.0.2: {}}
overrides:
  trainer.max_epochs: 2
"""


@pytest.fixture
def recipe(tmp_path: Path) -> Path:
    path = tmp_path / "on_four_platforms.yaml"
    path.write_text(RECIPE)
    return path


def _report(rlcat: Run, recipe: Path, fmt: str) -> str:
    result = rlcat("validate", str(recipe), "--format", fmt)
    assert result.code == 1 and "Traceback" not in result.out + result.err, result.out + result.err
    return result.out


def test_json_one_finding_names_its_platforms(rlcat: Run, recipe: Path) -> None:
    data: dict[str, Any] = json.loads(_report(rlcat, recipe, "json"))
    unknown = [d for d in data["diagnostics"] if d["code"] == "RLC401"]
    assert len(unknown) == 1, unknown
    (found,) = unknown
    assert found["platforms"] == EVERY and found["line"] == 6
    assert found["message"] == "verl 0.9.1/0.9.0/0.7.1 (ppo_trainer) has no key 'trainer.max_epochs'"
    assert "to add a key verl 0.9.1/0.9.0/0.7.1 (ppo_trainer) does not have" in found["hint"]
    # a finding of one platform only says so, and names it
    (support,) = [d for d in data["diagnostics"] if d["code"] == "RLC304"]
    assert support["platforms"] == ["rocm-7.0.2"] and support["message"].endswith("(on rocm-7.0.2)")


def test_text_and_github_one_line(rlcat: Run, recipe: Path) -> None:
    text = _report(rlcat, recipe, "text")
    assert sum(" RLC401 error: " in line for line in text.splitlines()) == 1, text
    github = _report(rlcat, recipe, "github")
    assert sum(line.startswith("::error ") and "title=RLC401" in line for line in github.splitlines()) == 1


def test_sarif_one_result_with_its_platforms(rlcat: Run, recipe: Path) -> None:
    run = json.loads(_report(rlcat, recipe, "sarif"))["runs"][0]
    (result,) = [r for r in run["results"] if r["ruleId"] == "RLC401"]
    assert result["properties"] == {"platforms": EVERY}


def _at_batch(message: str) -> Diagnostic:
    return Diagnostic("RLC703", message, Severity.ERROR, line=3, key="data.train_batch_size")


def test_findings_of_one_platform_stay_apart() -> None:
    """Two findings one platform makes at one place are two problems; so are findings whose words
    differ by more than a platform's own value."""
    a = _at_batch("train batch 12 is smaller than the mini batch 16")
    b = _at_batch("train batch 12 is not divisible by the minimal batch 8")
    c = _at_batch("train batch 12 is smaller than the mini batch 32")
    merged = one_per_problem([("cuda", a), ("cuda", b), ("rocm", c), ("rocm", b)], ["cuda", "rocm"])
    assert [(d.message, d.platforms) for d in merged] == [
        ("train batch 12 is smaller than the mini batch 16/32", ("cuda", "rocm")),
        ("train batch 12 is not divisible by the minimal batch 8", ("cuda", "rocm")),
    ]
    other = _at_batch("a wholly different sentence of the very same length here")  # 10 words too
    apart = one_per_problem([("cuda", a), ("rocm", other)], ["cuda", "rocm"])
    assert [d.platforms for d in apart] == [("cuda",), ("rocm",)]
    assert apart[0].message.endswith("(on cuda)")

"""Findings where a team can see them: a team's repository (a folder outside rlcat's checkout) holds
child recipes that extend built-in ones. A finding caused by an inherited value is reported on the
child, at the child's line that changes the outcome (else its `extends:` line), with the inherited
origin as a note, in every reporter; no location ever names a file outside what was validated."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rlcat.catalog import is_builtin_file, origin_note
from rlcat.diagnostics import diag
from rlcat.survey.validate_files import on_validated_file

from conftest import REPO, Result

Run = Callable[..., Result]
PARENT = (REPO / "recipes" / "gsm8k_qwen3_8b_fsdp.yaml").read_text().splitlines()
BUDGET_LINE = next(i for i, line in enumerate(PARENT, 1) if "max_token_len_per_gpu:" in line)
RESOURCES_LINE = next(i for i, line in enumerate(PARENT, 1) if line.startswith("resources:"))
INHERITED_BUDGET = f"inherited from gsm8k_qwen3_8b_fsdp, built-in, line {BUDGET_LINE}"

# line 6 sets the prompt length: the child's own setting that makes the parent's budget too small
LONG_PROMPTS = """\
name: long_prompts
extends: gsm8k_qwen3_8b_fsdp
summary: long prompts on the built-in GRPO recipe

batch:
  max_prompt_length: 30000
"""
FULLY_ASYNC = "name: async_child\nextends: gsm8k_qwen3_8b_fsdp\nsummary: x\nmode: fully_async\n"
CRITIC = "name: critic_child\nextends: gsm8k_qwen3_8b_fsdp\nsummary: x\n\ncritic:\n  optim: {lr: 1.0e-5}\n"


@pytest.fixture
def team(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A team repository outside rlcat's checkout, and the working folder (as in its CI)."""
    (tmp_path / "recipes").mkdir()
    for name, text in (
        ("long_prompts", LONG_PROMPTS),
        ("async_child", FULLY_ASYNC),
        ("critic_child", CRITIC),
    ):
        (tmp_path / "recipes" / f"{name}.yaml").write_text(text)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _validate(rlcat: Run, fmt: str, *paths: str) -> Result:
    r = rlcat("validate", *(paths or ("recipes",)), "--platform", "cuda", "--format", fmt)
    assert "Traceback" not in r.out + r.err
    assert r.code == 1, r.out + r.err
    return r


def test_text_names_the_child_and_the_inherited_line(rlcat: Run, team: Path) -> None:
    lines = _validate(rlcat, "text").out.splitlines()
    heads = [i for i, line in enumerate(lines) if re.match(r"\S+:\d+(:\d+)? RLC\d{3} ", line)]
    assert heads and all(not lines[i].startswith("recipes/gsm8k") for i in heads), lines
    budget = [i for i in heads if "RLC703" in lines[i] and "ppo_max_token_len_per_gpu]" in lines[i]]
    (at,) = budget
    assert lines[at].startswith("recipes/long_prompts.yaml:6:3 RLC703 error: ")
    assert lines[at + 1] == f"  note: {INHERITED_BUDGET}"
    assert lines[at + 2].startswith("  hint: ")
    assert "max_prompt_length: 30000" in lines[at + 3]  # the excerpt is the child's line


def test_mode_of_the_child_is_the_line_that_changes_the_outcome(rlcat: Run, team: Path) -> None:
    data = json.loads(_validate(rlcat, "json", "recipes/async_child.yaml").out)
    (found,) = [d for d in data["diagnostics"] if d["code"] == "RLC104"]
    assert (found["file"], found["line"], found["key"]) == ("recipes/async_child.yaml", 4, "resources")
    assert found["notes"] == [
        {
            "message": f"inherited from gsm8k_qwen3_8b_fsdp, built-in, line {RESOURCES_LINE}",
            "file": None,
            "line": None,
            "col": None,
        }
    ]


def test_critic_block_in_a_grpo_recipe_points_at_critic(rlcat: Run, team: Path) -> None:
    data = json.loads(_validate(rlcat, "json", "recipes/critic_child.yaml").out)
    (found,) = [d for d in data["diagnostics"] if d["code"] == "RLC103"]
    assert (found["file"], found["line"], found["key"]) == ("recipes/critic_child.yaml", 5, "critic")
    assert "only used by ppo" in found["message"] and found["notes"] == []


def test_json_locations_are_all_in_the_team_repository(rlcat: Run, team: Path) -> None:
    data = json.loads(_validate(rlcat, "json").out)
    assert data["version"] == 3
    files = {d["file"] for d in data["diagnostics"]}
    assert files == {"recipes/long_prompts.yaml", "recipes/async_child.yaml", "recipes/critic_child.yaml"}
    notes = [n for d in data["diagnostics"] for n in d["notes"]]
    assert {"message": INHERITED_BUDGET, "file": None, "line": None, "col": None} in notes


def test_github_annotations_land_on_the_child(rlcat: Run, team: Path) -> None:
    commands = [line for line in _validate(rlcat, "github").out.splitlines() if line.startswith("::")]
    assert commands
    named = [re.match(r"::(error|warning|notice) file=([^,]+),", c) for c in commands]
    assert all(
        m
        and m.group(2)
        in {"recipes/long_prompts.yaml", "recipes/async_child.yaml", "recipes/critic_child.yaml"}
        for m in named
    ), commands
    budget = [c for c in commands if "ppo_max_token_len_per_gpu]" in c]
    (command,) = budget
    assert command.startswith("::error file=recipes/long_prompts.yaml,line=6,col=3,title=RLC703::")
    assert f"%0A{INHERITED_BUDGET}%0Araise it to at least" in command


def test_sarif_results_are_located_on_the_child(rlcat: Run, team: Path) -> None:
    log: dict[str, Any] = json.loads(_validate(rlcat, "sarif").out)
    (run,) = log["runs"]
    uris = {
        loc["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"] for loc in r["locations"]
    }
    assert uris == {"recipes/long_prompts.yaml", "recipes/async_child.yaml", "recipes/critic_child.yaml"}
    assert all("relatedLocations" not in r for r in run["results"])  # built-in origins: words only
    (budget,) = [r for r in run["results"] if "ppo_max_token_len_per_gpu]" in r["message"]["text"]]
    assert f"({INHERITED_BUDGET})" in budget["message"]["text"]
    assert budget["locations"][0]["physicalLocation"]["region"] == {"startLine": 6, "startColumn": 3}


def test_a_parent_of_the_team_is_a_related_location(rlcat: Run, team: Path) -> None:
    """A parent in the team's own repository, not among the files validated: the finding is on the
    child, and the parent's line is a note with its file (SARIF: a related location)."""
    base = (
        (REPO / "recipes" / "gsm8k_qwen3_8b_fsdp.yaml")
        .read_text()
        .replace("name: gsm8k_qwen3_8b_fsdp", "name: team_base")
    )
    (team / "bases").mkdir()
    (team / "bases" / "team_base.yaml").write_text(base)
    (team / "recipes" / "long_prompts.yaml").write_text(
        LONG_PROMPTS.replace("gsm8k_qwen3_8b_fsdp", "team_base")
    )
    args = ("recipes/long_prompts.yaml", "--catalog", "bases")
    data = json.loads(_validate(rlcat, "json", *args).out)
    assert {d["file"] for d in data["diagnostics"]} == {"recipes/long_prompts.yaml"}
    note = next(n for d in data["diagnostics"] for n in d["notes"])
    assert note == {
        "message": f"inherited from team_base, bases/team_base.yaml, line {BUDGET_LINE}",
        "file": "bases/team_base.yaml",
        "line": BUDGET_LINE,
        "col": 3,
    }
    log = json.loads(_validate(rlcat, "sarif", *args).out)
    (related, *_) = log["runs"][0]["results"][0]["relatedLocations"]
    assert related["physicalLocation"]["artifactLocation"]["uri"] == "bases/team_base.yaml"
    assert related["message"]["text"] == note["message"]


def test_compile_reports_on_the_child_too(rlcat: Run, team: Path) -> None:
    r = rlcat("compile", "recipes/long_prompts.yaml", "--platform", "cuda")
    assert r.code == 1 and r.out == ""
    err = r.err.splitlines()
    at = next(i for i, line in enumerate(err) if "ppo_max_token_len_per_gpu]" in line)
    assert err[at].startswith("recipes/long_prompts.yaml:6:3 RLC703 error: ")
    assert err[at + 1] == f"  note: {INHERITED_BUDGET}"
    assert "gsm8k_qwen3_8b_fsdp.yaml" not in r.err


def test_a_finding_in_a_file_not_validated_moves_onto_the_validated_one(team: Path) -> None:
    """The last net: whatever a recipe's validation finds in a file outside the files validated (a
    built-in platform profile's tweak, say) is reported on the recipe, the file named in words."""
    path = team / "recipes" / "long_prompts.yaml"
    outside = diag("RLC402", "a type", file="catalog/platforms/rocm.yaml", line=12, col=5)
    inside = diag("RLC101", "unknown field", file="recipes/long_prompts.yaml", line=6, col=3)
    argument = diag("RLC105", "bad", argument="--override x=1")
    moved, kept, kept_argument = on_validated_file(
        [outside, inside, argument], path, {"recipes/long_prompts.yaml"}
    )
    assert (moved.file, moved.line, moved.col, moved.argument) == (
        "recipes/long_prompts.yaml",
        None,
        None,
        None,
    )
    assert [n.message for n in moved.notes] == ["from platform profile rocm, built-in, line 12"]
    assert (kept, kept_argument) == (inside, argument)


def test_origin_note_names_the_entry(team: Path) -> None:
    assert is_builtin_file("recipes/gsm8k_qwen3_8b_fsdp.yaml")  # not in the team's recipes/
    assert not is_builtin_file("recipes/long_prompts.yaml")
    assert not is_builtin_file(
        str(REPO / "tests" / "bad_input" / "missing_parent_chain" / "recipes" / "x.yaml")
    )
    assert origin_note("catalog/models/qwen3_8b.yaml", 4).message == "from model qwen3_8b, built-in, line 4"
    own = origin_note("recipes/long_prompts.yaml", 6, 3)
    assert (own.message, own.file, own.line, own.col) == (
        "inherited from long_prompts, recipes/long_prompts.yaml, line 6",
        "recipes/long_prompts.yaml",
        6,
        3,
    )

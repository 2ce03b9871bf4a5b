"""`--verl-native` with the real verl: validate, lint and compile hand what rlcat accepts to verl's
own start-up checks, and a refusal is RLC450 at the line that set the value, verl's words quoted.

Every command here borrows the session's verl 0.9.1 runner (conftest `verl_oracles`): the same runner
a user's `--verl-python` starts (rlcat.native.process), whose start-up (importing verl) is paid once
for the whole tier instead of once per command."""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from rlcat.cli import report
from rlcat.native.checks import NativeChecks

from conftest import REPO, Result, skip_without_oracle

pytestmark = [pytest.mark.oracle, pytest.mark.xdist_group("verl-oracle")]

Run = Callable[..., Result]
VERL_ONLY_SCRIPT = REPO / "tests" / "data" / "lint" / "verl_only.sh"
# a mistake rlcat's own checks let through and verl refuses: a loss aggregation mode spelt with an
# underscore (verl's ActorConfig.__post_init__ takes "token-mean", not "token_mean")
TYPO_RECIPE = """\
name: loss_typo
extends: gsm8k_qwen3_8b_fsdp
overrides:
  actor_rollout_ref.actor.loss_agg_mode: token_mean
"""


@pytest.fixture(scope="module")
def verl_0_9_1(verl_oracles: dict[str, Any]) -> Any:
    skip_without_oracle(verl_oracles, "0.9.1")
    return verl_oracles["0.9.1"]


@pytest.fixture
def borrowed(verl_0_9_1: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Commands run with `--verl-python` get the session's runner of that interpreter; yields it."""
    python = str(verl_0_9_1.python)
    monkeypatch.setattr(
        report,
        "NativeChecks",
        lambda given, say: NativeChecks(given, say, process=verl_0_9_1),
    )
    yield python


def _findings(result: Result) -> list[dict[str, Any]]:
    data: dict[str, Any] = json.loads(result.out)
    findings: list[dict[str, Any]] = data["diagnostics"]
    return findings


def test_a_plan_verl_accepts_compiles_as_without(rlcat: Run, borrowed: str) -> None:
    plain = rlcat("compile", "gsm8k_qwen3_8b_fsdp", "-p", "cuda")
    judged = rlcat("compile", "gsm8k_qwen3_8b_fsdp", "-p", "cuda", "--verl-python", borrowed)
    assert plain.code == judged.code == 0, judged.err
    assert judged.out == plain.out
    assert judged.err == plain.err


def test_a_mistake_only_verl_catches_is_at_the_recipe_line(rlcat: Run, borrowed: str, tmp_path: Path) -> None:
    recipe = tmp_path / "loss_typo.yaml"
    recipe.write_text(TYPO_RECIPE, encoding="utf-8")
    alone = rlcat("validate", str(recipe), "-p", "cuda", "--format", "json")
    assert alone.code == 0, f"rlcat refuses it by itself now: {alone.out}"
    judged = rlcat(
        "validate", str(recipe), "-p", "cuda", "--format", "json", "--verl-native", "--verl-python", borrowed
    )
    assert judged.code == 1, judged.out
    (finding,) = _findings(judged)
    assert finding["code"] == "RLC450" and finding["severity"] == "error"
    assert (finding["file"], finding["line"], finding["col"]) == (str(recipe), 4, 3)
    assert finding["key"] == "actor_rollout_ref.actor.loss_agg_mode"
    assert "verl 0.9.1 refuses it at start-up" in finding["message"]
    assert '"Invalid loss_agg_mode: token_mean"' in finding["message"]
    assert "verl/workers/config/actor.py" in finding["hint"]


def test_a_refused_value_the_recipe_inherits_is_on_its_extends_line(
    rlcat: Run, borrowed: str, tmp_path: Path
) -> None:
    """A team's child of a recipe that sets a value verl refuses gets the finding at its `extends:`
    line, where the value came from as a note, and `$PWD` paths resolve in the runner as in a launch
    from here."""
    (tmp_path / "loss_typo.yaml").write_text(TYPO_RECIPE, encoding="utf-8")
    child = tmp_path / "my_run.yaml"
    child.write_text("name: my_run\nextends: loss_typo\n", encoding="utf-8")
    judged = rlcat(
        "validate", str(child), "-p", "cuda", "--format", "json", "--catalog", str(tmp_path),
        "--verl-python", borrowed,
    )  # fmt: skip
    assert judged.code == 1, judged.out
    (finding,) = [f for f in _findings(judged) if f["severity"] == "error"]
    assert (finding["code"], finding["file"], finding["line"]) == ("RLC450", str(child), 2)
    assert finding["key"] == "actor_rollout_ref.actor.loss_agg_mode"
    assert [n["line"] for n in finding["notes"]] == [4]
    assert "inherited from loss_typo" in finding["notes"][0]["message"]


def test_compile_stops_where_verl_would_not_start(rlcat: Run, borrowed: str, tmp_path: Path) -> None:
    recipe = tmp_path / "loss_typo.yaml"
    recipe.write_text(TYPO_RECIPE, encoding="utf-8")
    result = rlcat("compile", str(recipe), "-p", "cuda", "--verl-python", borrowed)
    assert result.code == 1
    assert result.out == ""  # no plan to launch
    assert result.err.startswith(f"{recipe}:4:3 RLC450 error: verl 0.9.1 refuses it at start-up"), result.err


def test_lint_points_at_the_script_line(rlcat: Run, borrowed: str) -> None:
    alone = rlcat("lint", str(VERL_ONLY_SCRIPT), "--format", "json")
    assert alone.code == 0, f"rlcat refuses it by itself now: {alone.out}"
    judged = rlcat("lint", str(VERL_ONLY_SCRIPT), "--format", "json", "--verl-python", borrowed)
    assert judged.code == 1, judged.out
    (finding,) = _findings(judged)
    assert finding["code"] == "RLC450"
    assert (finding["file"], finding["line"], finding["col"]) == (str(VERL_ONLY_SCRIPT), 22, 5)
    assert finding["key"] == "actor_rollout_ref.actor.loss_agg_mode"
    assert '"Invalid loss_agg_mode: token_mean"' in finding["message"]
    # the same finding for GitHub: verl's text reaches it through the reporter's escaping
    github = rlcat("lint", str(VERL_ONLY_SCRIPT), "--format", "github", "--verl-python", borrowed)
    assert "::error file=" in github.out and ",line=22," in github.out and "RLC450" in github.out


def test_docs_example_is_what_lint_prints(rlcat: Run, borrowed: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/lint.md's --verl-native console block, run from the repository with verl 0.9.1's
    environment, prints exactly that."""
    monkeypatch.chdir(REPO)
    docs = (REPO / "docs" / "lint.md").read_text(encoding="utf-8")
    block = docs.split("## verl's own checks", 1)[1].split("```console\n", 1)[1].split("```\n", 1)[0]
    command, _, shown = block.partition("\n")
    args = shlex.split(command)[2:]
    # the page names the default place of the oracle's 0.9.1 environment; $RLCAT_ORACLE_HOME moves it
    args[args.index("--verl-python") + 1] = borrowed
    result = rlcat(*args)
    assert result.code == 1 and result.out == shown, result.out


def test_a_model_folder_here_is_read_as_it_is(rlcat: Run, borrowed: str, tmp_path: Path) -> None:
    """A model path that is a folder here is what verl reads (not the stand-in): its config.json,
    which verl refuses here, at the script's line that names the folder."""
    folder = tmp_path / "models" / "Qwen3-8B"
    folder.mkdir(parents=True)
    config = {"model_type": "qwen3", "architectures": ["Qwen3ForCausalLM", "Qwen3ForSequenceClassification"]}
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    script = tmp_path / "run.sh"
    text = (REPO / "tests" / "data" / "lint" / "clean.sh").read_text(encoding="utf-8")
    script.write_text(text.replace("${MODEL_PATH:-Qwen/Qwen3-8B}", str(folder)), encoding="utf-8")
    (finding,) = _findings(rlcat("lint", str(script), "--format", "json", "--verl-python", borrowed))
    assert finding["code"] == "RLC450"
    assert "Expect only one architecture" in finding["message"]
    assert (finding["line"], finding["key"]) == (14, "actor_rollout_ref.model.path")
    # with trust_remote_code the folder's Python would run: the stand-in is read instead
    trusting = tmp_path / "trusting.sh"
    trusting.write_text(
        script.read_text(encoding="utf-8").replace(
            "actor_rollout_ref.model.path=",
            "actor_rollout_ref.model.trust_remote_code=True \\\n    actor_rollout_ref.model.path=",
        ),
        encoding="utf-8",
    )
    assert _findings(rlcat("lint", str(trusting), "--format", "json", "--verl-python", borrowed)) == []
    # the same path where no such folder is: the catalog's Qwen3-8B stands in, and verl accepts it
    elsewhere = tmp_path / "elsewhere.sh"
    elsewhere.write_text(text.replace("${MODEL_PATH:-Qwen/Qwen3-8B}", "/nowhere/Qwen3-8B"), encoding="utf-8")
    assert _findings(rlcat("lint", str(elsewhere), "--format", "json", "--verl-python", borrowed)) == []

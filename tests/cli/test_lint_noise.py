"""`rlcat lint` says what a reader can act on: a value only running the script would tell (RLC1102)
is a finding where it hides something rlcat must judge, not on every path made from `$HOME`; and on
the 68 upstream reference scripts lint reports at most one warning per script on average."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO, Result

Run = Callable[..., Result]
UPSTREAM = REPO / "tests" / "data" / "upstream_scripts"


def _lint(rlcat: Run, tmp_path: Path, text: str, *args: str) -> dict[str, Any]:
    script = tmp_path / "run.sh"
    script.write_text("#!/usr/bin/env bash\n" + text)
    result = rlcat("lint", str(script), "--format", "json", *args)
    assert "Traceback" not in result.out + result.err, result.err
    data: dict[str, Any] = json.loads(result.out)
    return data


def _unknown_lines(data: dict[str, Any]) -> list[int]:
    return sorted(d["line"] for d in data["diagnostics"] if d["code"] == "RLC1102")


LAUNCH = "python3 -m verl.trainer.main_ppo \\\n"

# (override, whether an unknown value there is a finding): paths and names verl takes as any text
# are shown as written; a number, a flag, a value a guard reads and a group choice are judged.
CASES = {
    "path_from_home": ("data.train_files=$HOME/data/gsm8k/train.parquet", False),
    "paths_from_pwd_in_a_list": ("data.val_files=\"['$PWD/a.parquet', '$PWD/b.parquet']\"", False),
    "model_path_from_a_defaulted_variable": ("actor_rollout_ref.model.path=${MODEL:-$HOME/models/q}", False),
    "name_with_a_date": ("trainer.experiment_name=run_$(date +%Y%m%d)", False),
    "checkpoint_folder": ("trainer.default_local_dir=$HOME/ckpts/run", False),
    "a_number": ("trainer.n_gpus_per_node=$(nvidia-smi -L | wc -l)", True),
    "a_flag": ("actor_rollout_ref.actor.fsdp_config.param_offload=$(cat offload)", True),
    "a_value_a_guard_reads": ("reward.custom_reward_function.path=$HOME/reward.py", True),
    "a_group_choice": ("model_engine=$(cat engine)", True),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_an_unknown_value_is_a_finding_only_where_it_matters(rlcat: Run, tmp_path: Path, case: str) -> None:
    override, matters = CASES[case]
    data = _lint(rlcat, tmp_path, f"{LAUNCH}    data.train_batch_size=16 \\\n    {override}\n")
    assert _unknown_lines(data) == ([4] if matters else []), data["diagnostics"]
    if matters:
        (said,) = [d for d in data["diagnostics"] if d["code"] == "RLC1102"]
        assert said["severity"] == "warning" and said["key"] == override.split("=", 1)[0]
    # the value is not guessed at: no finding judges the text as written
    assert not [d for d in data["diagnostics"] if d["line"] == 4 and d["code"] != "RLC1102"], data


def test_a_launch_rlcat_does_not_check_says_so_once(rlcat: Run, tmp_path: Path) -> None:
    """No key index for the entry config (RLC1112): no override is judged, so an unknown one is no
    finding of its own."""
    data = _lint(
        rlcat,
        tmp_path,
        f"{LAUNCH}    --config-name=my_own_trainer \\\n    trainer.n_gpus_per_node=$(nproc)\n",
    )
    assert [d["code"] for d in data["diagnostics"]] == ["RLC1112"]


def test_a_variable_every_environment_has_is_one_word(rlcat: Run, tmp_path: Path) -> None:
    """An unquoted `$ARGS` holding `$HOME` splits at its known blanks; that `$HOME` is one word is no
    finding (bash would split it only at a blank in the caller's home folder); a `$(cmd)` still is."""
    home = _lint(rlcat, tmp_path, f'ARGS="data.train_files=$HOME/t.parquet x.y=2"\n{LAUNCH}    $ARGS\n')
    assert _unknown_lines(home) == []
    stamp = _lint(rlcat, tmp_path, f'ARGS="trainer.experiment_name=$(date) x.y=2"\n{LAUNCH}    $ARGS\n')
    assert _unknown_lines(stamp) == [4]  # at `$ARGS`; the name it gives is shown as written


def test_a_required_variable_is_one_finding_however_often_it_is_read(rlcat: Run, tmp_path: Path) -> None:
    """Under `set -u` bash stops at the first read of an unset variable (RLC1105): one finding there,
    the later reads as notes; another variable is another finding."""
    data = _lint(
        rlcat,
        tmp_path,
        "set -u\n"
        f"{LAUNCH}    data.train_files=$ROOT/t.parquet \\\n    data.val_files=$ROOT/v.parquet \\\n"
        "    trainer.default_local_dir=$ROOT/ckpt \\\n    trainer.project_name=$PROJECT\n",
    )
    required = [d for d in data["diagnostics"] if d["code"] == "RLC1105"]
    said = [(d["line"], d["message"].split()[0], [n["line"] for n in d["notes"]]) for d in required]
    assert said == [(4, "$ROOT", [5, 6]), (7, "$PROJECT", [])]


def test_the_reference_scripts_give_at_most_one_warning_each(rlcat: Run) -> None:
    """docs/lint.md has the figures: 55 warnings on 68 scripts (251 before RLC1102 looked at whether
    a value matters and RLC1105 said each unset variable once), none of them RLC1102 on a path made
    from `$HOME` or `$PWD`."""
    result = rlcat("lint", str(UPSTREAM), "--format", "json")
    data = json.loads(result.out)
    severities = Counter(d["severity"] for d in data["diagnostics"])
    assert severities["warning"] <= data["files"] == 68, severities
    unknown = [d["message"] for d in data["diagnostics"] if d["code"] == "RLC1102"]
    assert not [m for m in unknown if "$HOME" in m or "$PWD" in m], unknown

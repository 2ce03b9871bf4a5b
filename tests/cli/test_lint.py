"""`rlcat lint`: launch scripts checked without running them, each finding at its script line, in
every report format; bad input; and all 68 upstream reference scripts linted without a crash.

tests/data/lint/ holds small scripts, one problem each (clean.sh has none); upstream's geo3k script
(tests/data/upstream_scripts/) is the real cut line continuation. Each case names the text of the
override concerned, and the test finds its line and column in the script, so the scripts can be
edited without renumbering the cases.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from jsonschema import validators

from rlcat.diagnostics import CODES
from rlcat.scripts.parse import MAX_BYTES
from rlcat.survey.lint_scripts import SKIPPED_GUARDS

from conftest import REPO, Result

Run = Callable[..., Result]
DATA = REPO / "tests" / "data" / "lint"
UPSTREAM = REPO / "tests" / "data" / "upstream_scripts"
GEO3K = UPSTREAM / "verl__experimental__fully_async_policy__shell__geo3k_qwen25vl_7b_megatron_4_4.sh"
SARIF_SCHEMA = REPO / "tests" / "data" / "sarif" / "sarif-schema-2.1.0.json"
FORMATS = ("text", "json", "github", "sarif")

# (script, code, severity, the text that starts where the finding points; for the cut, the text that
# ends with the `\` it points at)
CASES: dict[str, tuple[Path, str, str, str | None]] = {
    "geo3k_blank_line_cuts_the_launch": (
        GEO3K,
        "RLC1101",
        "error",
        "actor_rollout_ref.rollout.name=$ENGINE \\",
    ),
    "plus_on_a_key_verl_has": (DATA / "plus_misuse.sh", "RLC408", "error", "+trainer.total_epochs=1"),
    "new_key_without_plus": (DATA / "plus_misuse.sh", "RLC401", "error", "trainer.max_epochs=2"),
    "same_key_twice": (DATA / "duplicate.sh", "RLC1113", "warning", "actor_rollout_ref.rollout.n=8"),
    "key_the_release_dropped": (
        DATA / "removed_key.sh",
        "RLC801",
        "error",
        "actor_rollout_ref.actor.megatron.grad_offload=True",
    ),
    "batch_arithmetic": (DATA / "batch_arithmetic.sh", "RLC703", "error", "data.train_batch_size=12"),
    "rollout_tp_does_not_split_the_heads": (
        DATA / "attention_heads.sh",
        "RLC602",
        "error",
        "actor_rollout_ref.rollout.tensor_model_parallel_size=3",
    ),
}


def position(script: Path, text: str) -> tuple[int, int]:
    """(line, column) of the first occurrence of `text` in the script, both 1-based."""
    for number, line in enumerate(script.read_text(encoding="utf-8").splitlines(), 1):
        if text in line:
            return number, line.index(text) + 1
    raise AssertionError(f"{text!r} is not in {script}")


def _json(result: Result) -> dict[str, Any]:
    assert "Traceback" not in result.out + result.err, result.err
    data: dict[str, Any] = json.loads(result.out)
    return data


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_finding_at_its_script_line_in_every_format(rlcat: Run, case: str, fmt: str) -> None:
    script, code, severity, text = CASES[case]
    line, col = position(script, text or "")
    r = rlcat("lint", str(script), "--format", fmt)
    assert "Traceback" not in r.out + r.err
    assert r.code == (1 if severity == "error" else 0), r.out
    file = str(script)
    # the cut is reported at the `\` that ends the command, every other finding at the override's
    # own line and column
    if code == "RLC1101":
        col += len(text or "") - 1
    where = (line, col)
    if fmt == "json":
        found = [
            (d["line"], d["col"]) for d in _json(r)["diagnostics"] if d["code"] == code and d["file"] == file
        ]
        assert where in found, r.out
        assert any(d["severity"] == severity for d in _json(r)["diagnostics"] if d["code"] == code)
    elif fmt == "text":
        place = f"{file}:{line}:{col}"
        assert any(row.startswith(f"{place} {code} {severity}: ") for row in r.out.splitlines()), r.out
    elif fmt == "github":
        level = {"error": "error", "warning": "warning"}[severity]
        place = f"file={file},line={line},col={col}"
        assert any(row.startswith(f"::{level} {place},title={code}::") for row in r.out.splitlines()), r.out
    else:
        results = json.loads(r.out)["runs"][0]["results"]
        regions = [
            loc["physicalLocation"]["region"]
            for res in results
            if res["ruleId"] == code
            for loc in res["locations"]
        ]
        expected = {"startLine": line, "startColumn": col}
        assert expected in regions, r.out


def test_geo3k_cut_says_which_overrides_never_reach_verl(rlcat: Run) -> None:
    data = _json(rlcat("lint", str(GEO3K), "--format", "json"))
    (cut,) = [d for d in data["diagnostics"] if d["code"] == "RLC1101"]
    assert "the 35 overrides from line 75 on never reach verl" in cut["message"]
    lost = [n for n in cut["notes"] if n["line"] is not None]
    assert (
        lost[0]["line"] == 75 and "actor_rollout_ref.rollout.gpu_memory_utilization=0.8" in lost[0]["message"]
    )
    assert cut["notes"][-1]["message"] == "and 27 more, to line 109"


def test_sarif_report_is_valid_sarif(rlcat: Run) -> None:
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    validator = validators.validator_for(schema)(schema)
    scripts = sorted({str(script) for script, *_ in CASES.values()})
    log = json.loads(rlcat("lint", *scripts, "--format", "sarif").out)
    assert not [e.message for e in validator.iter_errors(log)]
    rules = {rule["id"] for rule in log["runs"][0]["tool"]["driver"]["rules"]}
    assert {code for _, code, _, _ in CASES.values()} <= rules


def test_clean_script_passes(rlcat: Run) -> None:
    r = rlcat("lint", str(DATA / "clean.sh"))
    assert r.code == 0 and r.out.strip() == "1 file checked: 0 error(s), 0 warning(s)", r.out


def test_strict_fails_on_warnings(rlcat: Run) -> None:
    assert rlcat("lint", str(DATA / "duplicate.sh")).code == 0
    assert rlcat("lint", str(DATA / "duplicate.sh"), "--strict").code == 1


def test_release_choice(rlcat: Run) -> None:
    """--verl picks the release (0.9.0 still has grad_offload), --platform the platform's, and the
    default is the newest indexed one."""
    removed = str(DATA / "removed_key.sh")
    assert "RLC801" in rlcat("lint", removed).out
    assert "RLC801" not in rlcat("lint", removed, "--verl", "0.9.0").out
    assert "RLC801" in rlcat("lint", removed, "--platform", "cuda").out  # cuda runs 0.9.1
    assert "RLC801" not in rlcat("lint", removed, "--platform", "rocm").out  # rocm runs 0.9.0


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["--verl", "9.9.9"], "RLC404"),
        (["--verl", "0.9.1", "--platform", "cuda"], "RLC105"),
        (["--platform", "no-such-platform"], "RLC204"),
        (["--env", "NO_EQUALS_SIGN"], "RLC105"),
    ],
    ids=["unknown_release", "release_twice", "unknown_platform", "bad_env"],
)
def test_usage_errors_exit_2(rlcat: Run, args: list[str], code: str) -> None:
    r = rlcat("lint", str(DATA / "clean.sh"), *args)
    assert r.code == 2 and code in r.out + r.err, r.out + r.err
    assert "Traceback" not in r.out + r.err


def test_env_sets_what_the_callers_environment_would(rlcat: Run, tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    text = (DATA / "batch_arithmetic.sh").read_text(encoding="utf-8")
    script.write_text(text.replace("data.train_batch_size=12", "data.train_batch_size=${BATCH:-12}"))
    assert rlcat("lint", str(script)).code == 1
    assert rlcat("lint", str(script), "--env", "BATCH=64", "--env", "X=y").code == 1  # the mini batch still
    fixed = script.read_text().replace("ppo_mini_batch_size=12", "ppo_mini_batch_size=16")
    script.write_text(fixed)
    assert rlcat("lint", str(script)).code == 1
    assert rlcat("lint", str(script), "--env", "BATCH=64").code == 0


def _lint_text(rlcat: Run, tmp_path: Path, body: str, *args: str) -> dict[str, Any]:
    script = tmp_path / "run.sh"
    script.write_text("#!/usr/bin/env bash\npython3 -m verl.trainer.main_ppo \\\n" + body + "\n")
    return _json(rlcat("lint", str(script), "--format", "json", *args))


def _key_codes(data: dict[str, Any]) -> Counter[tuple[str, int | None]]:
    """The findings about keys, groups and values: not the guards' (a few overrides alone leave
    verl's batch settings unset, which RLC703 reports)."""
    return Counter((d["code"], d["line"]) for d in data["diagnostics"] if not d["code"].startswith("RLC7"))


def test_hydra_prefix_rules(rlcat: Run, tmp_path: Path) -> None:
    """As Hydra judges each override on verl's composed config (the slow test below asks Hydra)."""
    body = (
        "    +trainer.new_setting=1 \\\n"  # 3: adds a key verl lacks: fine
        "    +trainer.new_setting=2 \\\n"  # 4: adds it again: Hydra refuses
        "    actor_rollout_ref.rollout.engine_kwargs.vllm.swap_space=4 \\\n"  # 5: open dict, no +
        "    +actor_rollout_ref.rollout.engine_kwargs.vllm.seed=4 \\\n"  # 6: open dict with +: fine
        "    ++trainer.total_epochs=2 \\\n"  # 7: ++ on a key verl has: fine
        "    trainer.save_freq=often \\\n"  # 8: a str where verl holds an int
        "    ~trainer.val_before_train"  # 9: deletes a key verl has: fine
    )
    data = _lint_text(rlcat, tmp_path, body)
    assert _key_codes(data) == Counter({("RLC1113", 4): 1, ("RLC401", 5): 1, ("RLC402", 8): 1}), data
    assert all(d["severity"] == "error" for d in data["diagnostics"])


def test_a_value_verl_declares_by_a_union_type(rlcat: Run, tmp_path: Path) -> None:
    """RolloutCorrectionConfig.rollout_is_threshold is `str | float = 2.0`: "0.5_2.0" (lower_upper)
    is a value verl takes, though its default is a float; a list is not."""
    body = (
        "    algorithm.rollout_correction.rollout_is_threshold=0.5_2.0 \\\n"  # 3: str member
        "    algorithm.rollout_correction.rollout_is_threshold=3.0 \\\n"  # 4: float member
        "    algorithm.rollout_correction.rollout_is_threshold=[1,2]"  # 5: neither
    )
    data = _lint_text(rlcat, tmp_path, body, "--verl", "0.9.1")
    assert [(c, line) for (c, line) in _key_codes(data) if c == "RLC402"] == [("RLC402", 5)], data
    (finding,) = [d for d in data["diagnostics"] if d["code"] == "RLC402"]
    assert "is str|float in verl 0.9.1" in finding["message"]


def test_config_groups(rlcat: Run, tmp_path: Path) -> None:
    """A group choice selects the key index (model_engine=megatron from verl 0.9); an option the
    release lacks is an error at its line; a choice without an index is said, not guessed at."""
    body = "    model_engine=megatron \\\n    actor_rollout_ref.actor.megatron.tensor_model_parallel_size=2"
    assert _key_codes(_lint_text(rlcat, tmp_path, body)) == Counter()
    assert ("RLC401", 3) in _key_codes(_lint_text(rlcat, tmp_path, body, "--verl", "0.7.1"))
    torchtitan = _lint_text(rlcat, tmp_path, "    model_engine=torchtitan")
    assert [(d["code"], d["severity"]) for d in torchtitan["diagnostics"]] == [("RLC1112", "warning")]


@pytest.mark.parametrize(
    ("script", "platform", "hints"),
    [
        # written for 0.7.1, linted for 0.9.0 (rocm): a section moved, and two leaves renamed
        (
            "renamed_keys.sh",
            "rocm",
            {
                "critic.model.fsdp_config.fsdp_size": "critic.fsdp.fsdp_size",
                "critic.model.fsdp_config.forward_prefetch": "critic.fsdp.forward_prefetch",
                "actor_rollout_ref.rollout.skip_rollout": "skip.rollout.enable",
                "actor_rollout_ref.rollout.skip_dump_dir": "skip.rollout.dump_dir",
            },
        ),
        # written for 0.9.0, linted for 0.9.1 (cuda): router replay moved onto the Megatron engine
        (
            "renamed_router_replay.sh",
            "cuda",
            {
                f"actor_rollout_ref.{role}.router_replay.{leaf}": (
                    f"actor_rollout_ref.{role}.megatron.router_replay.{leaf}"
                )
                for role, leaf in (("actor", "mode"), ("actor", "record_file"), ("ref", "replay_file"))
            },
        ),
    ],
    ids=["0.7.1_to_0.9.0", "0.9.0_to_0.9.1"],
)
def test_a_renamed_key_gets_its_new_name_and_the_migration(
    rlcat: Run, script: str, platform: str, hints: dict[str, str]
) -> None:
    """RLC801 on a key the release renamed names the key it has now (schemas/verl/renames.json) and
    `rlcat import --migrate`, which rewrites it; the script is linted clean on the release it was
    written for."""
    r = rlcat("lint", str(DATA / script), "--platform", platform, "--format", "json")
    found = {d["key"]: d for d in _json(r)["diagnostics"]}
    assert set(found) == set(hints), found
    for key, new in hints.items():
        assert found[key]["code"] == "RLC801" and "under another name" in found[key]["message"]
        assert found[key]["hint"].startswith(f"set {new} instead: verl "), found[key]["hint"]
        assert "`rlcat import --migrate` rewrites it" in found[key]["hint"]
        assert found[key]["line"] == position(DATA / script, key + "=")[0]
    older = "0.7.1" if platform == "rocm" else "0.9.0"
    assert rlcat("lint", str(DATA / script), "--verl", older).code == 0


def test_platform_guard_reports_what_compile_would_fix(rlcat: Run, tmp_path: Path) -> None:
    """On ROCm, compile sets SGLang's attention backend (RLC501 fixes it); a script is not rewritten,
    so lint reports the guard at its own severity, with the fix as the hint."""
    data = _lint_text(rlcat, tmp_path, "    actor_rollout_ref.rollout.name=sglang", "--platform", "rocm")
    (found,) = [d for d in data["diagnostics"] if d["code"] == "RLC501"]
    assert found["severity"] == "error" and "(fixed)" not in found["message"]
    # the backend is not set at all: the finding is on the launch command
    assert found["line"] == 2 and "attention_backend=triton" in found["hint"]
    assert "RLC501" not in str(_lint_text(rlcat, tmp_path, "    actor_rollout_ref.rollout.name=sglang"))


def test_docs_example_is_what_lint_prints(rlcat: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/lint.md's console block: the command, run from the repository, prints exactly that."""
    monkeypatch.chdir(REPO)
    docs = (REPO / "docs" / "lint.md").read_text(encoding="utf-8")
    block = docs.split("```console\n", 1)[1].split("```\n", 1)[0]
    command, _, shown = block.partition("\n")
    args = command.removeprefix("$ rlcat ").split()
    r = rlcat(*args)
    assert r.code == 1 and r.out == shown, r.out


def test_skipped_guards_are_guards_and_documented() -> None:
    from rlcat.guards import REGISTRY

    docs = (REPO / "docs" / "lint.md").read_text(encoding="utf-8")
    for guard_id in SKIPPED_GUARDS:
        assert guard_id in REGISTRY and guard_id in docs


# --- bad input -------------------------------------------------------------------------------------


def _bad(rlcat: Run, script: Path, *args: str) -> tuple[int, list[dict[str, Any]]]:
    r = rlcat("lint", str(script), "--format", "json", *args)
    return r.code, _json(r)["diagnostics"]


def test_unparsable_bash_is_exit_2_at_its_line(rlcat: Run) -> None:
    """An `if` that never closes: at the end of the file, where bash stops too (`bash -n`: "line 5:
    syntax error: unexpected end of file"), naming what is missing."""
    code, found = _bad(rlcat, DATA / "unparsable.sh")
    assert code == 2
    assert [(d["line"], d["message"]) for d in found if d["code"] == "RLC050"] == [
        (5, "missing 'fi': bash would stop at this line")
    ]


def test_script_without_a_launch_is_exit_1(rlcat: Run) -> None:
    code, found = _bad(rlcat, DATA / "no_launch.sh")
    assert code == 1 and [(d["code"], d["line"], d["severity"]) for d in found] == [("RLC1104", 1, "error")]


def test_unknown_entrypoint_names_the_closest_trainer(rlcat: Run) -> None:
    code, found = _bad(rlcat, DATA / "recipe_trainer.sh")
    assert code == 1 and [(d["code"], d["line"]) for d in found] == [("RLC1111", 3)]
    assert "closest core verl trainer is verl.trainer.main_ppo" in found[0]["message"]


def test_only_launches_notes_other_scripts(rlcat: Run) -> None:
    r = rlcat(
        "lint", str(DATA / "no_launch.sh"), str(DATA / "recipe_trainer.sh"), "--only-launches", "-f", "json"
    )
    assert r.code == 0, r.out
    report = _json(r)
    # the same findings as without the option, each noted (info) instead of failing the lint
    assert [(d["code"], d["line"], d["severity"]) for d in report["diagnostics"]] == [
        ("RLC1104", 1, "info"),
        ("RLC1111", 3, "info"),
    ]
    assert report["summary"] == {"error": 0, "warning": 0, "info": 2}
    code, found = _bad(rlcat, DATA / "no_launch.sh", "--only-launches", "--strict")
    assert code == 0 and [(d["code"], d["severity"]) for d in found] == [("RLC1104", "info")]


def test_binary_file_is_exit_2(rlcat: Run, tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_bytes(b"#!/bin/bash\npython -m verl.trainer.main_ppo \\\n  a=1\x00\xff\n")
    code, found = _bad(rlcat, script)
    assert code == 2 and [(d["code"], d["line"]) for d in found] == [("RLC006", 3)]


def test_ten_megabyte_script_is_exit_2(rlcat: Run, tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    with script.open("w") as handle:
        handle.write("python -m verl.trainer.main_ppo trainer.nnodes=1\n")
        handle.write(("# " + "x" * 1000 + "\n") * 10_000)
    assert script.stat().st_size > 10 * 1000 * 1000 > MAX_BYTES
    code, found = _bad(rlcat, script)
    assert code == 2 and [(d["code"], d["line"]) for d in found] == [("RLC007", 1)]


def test_deep_nesting_is_a_diagnostic(rlcat: Run, tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("X=" + "$(echo " * 400 + "1" + ")" * 400 + "\npython -m verl.trainer.main_ppo a.b=$X\n")
    code, found = _bad(rlcat, script)
    assert code == 2 and any(d["code"] == "RLC007" and d["line"] for d in found), found


def test_missing_script_and_folder(rlcat: Run, tmp_path: Path) -> None:
    code, found = _bad(rlcat, tmp_path / "nope.sh")
    assert code == 2 and [d["code"] for d in found] == ["RLC001"]
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "notes.txt").write_text("not a script\n")
    r = rlcat("lint", str(tmp_path / "scripts"))
    assert r.code == 0 and "0 files checked" in r.out


def test_nothing_in_the_script_is_run(rlcat: Run, tmp_path: Path) -> None:
    ran = tmp_path / "ran"
    script = tmp_path / "run.sh"
    script.write_text(
        f"X=$(touch {ran}-dollar)\nY=`touch {ran}-backtick`\n"
        f"python -m verl.trainer.main_ppo trainer.experiment_name=$X$(touch {ran}-word) \\\n"
        f"  trainer.project_name=`touch {ran}-tick`\n"
    )
    r = rlcat("lint", str(script))
    assert r.code in (0, 1) and "Traceback" not in r.out + r.err
    assert not list(tmp_path.glob("ran*"))


# --- the 68 upstream reference scripts --------------------------------------------------------------


def test_every_reference_script_lints_without_a_crash(rlcat: Run) -> None:
    """One process, every script (the folder, recursively): a report, never a traceback; every code
    reported is a known one; the geo3k cut is among them."""
    r = rlcat("lint", str(UPSTREAM), "--format", "json")
    data = _json(r)
    assert r.code in (0, 1), r.out[-2000:]
    assert data["files"] == len(list(UPSTREAM.glob("*.sh"))) == 68
    codes = Counter(d["code"] for d in data["diagnostics"])
    assert set(codes) <= set(CODES) | {c for c in codes if re.fullmatch(r"RLC[5-9]\d\d", c)}
    assert codes["RLC1101"] == 1
    assert all(d["file"] and d["line"] for d in data["diagnostics"]), "every finding points at a line"


# --- Hydra agrees (slow: composes verl's real config tree) ------------------------------------------

HYDRA_CASES = {
    "plus_on_existing": ["+trainer.total_epochs=2"],
    "new_key_without_plus": ["trainer.max_epochs=2"],
    "plus_twice": ["+trainer.new_setting=1", "+trainer.new_setting=2"],
    "open_dict_without_plus": ["actor_rollout_ref.rollout.engine_kwargs.vllm.swap_space=4"],
    "open_dict_with_plus": ["+actor_rollout_ref.rollout.engine_kwargs.vllm.swap_space=4"],
    "plus_plus_existing": ["++trainer.total_epochs=2"],
    "existing": ["trainer.total_epochs=2"],
    "unknown_group_option": ["model_engine=nothing"],
}


@pytest.mark.slow
@pytest.mark.parametrize("case", HYDRA_CASES, ids=list(HYDRA_CASES))
def test_key_findings_agree_with_hydra(rlcat: Run, tmp_path: Path, case: str) -> None:
    """lint reports a key error exactly where Hydra's compose of verl 0.9.1's ppo_trainer fails."""
    from rlcat.dev.compose import compose
    from rlcat.dev.trees import require_tree

    try:
        require_tree("0.9.1")
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    overrides = HYDRA_CASES[case]
    try:
        compose("0.9.1", "ppo_trainer", overrides)
        hydra_refuses = False
    except Exception:  # Hydra's composition errors have several types
        hydra_refuses = True
    data = _lint_text(rlcat, tmp_path, " \\\n".join(f"    {o}" for o in overrides), "--verl", "0.9.1")
    key_codes = {"RLC401", "RLC408", "RLC1113"}
    lint_refuses = any(d["code"] in key_codes and d["severity"] == "error" for d in data["diagnostics"])
    assert lint_refuses == hydra_refuses, data


def test_test_data_scripts_are_executable_text() -> None:
    for script in DATA.glob("*.sh"):
        assert script.read_bytes().startswith(b"#!"), script
        assert os.access(script, os.R_OK)


# --- the command line: a Typer command like every other ----------------------------------------


def _params(name: str) -> dict[str, Any]:
    """A command's parameters by name, as the Typer tree builds them."""
    from rlcat.cli.app import command_tree

    return {str(p.name): p for p in command_tree().commands[name].params}


def test_help_lists_every_option_and_ends_with_examples(rlcat: Run) -> None:
    result = rlcat("lint", "--help")
    assert result.code == 0 and result.out.startswith("Usage: rlcat lint [OPTIONS] "), result.out
    for param in _params("lint").values():
        for name in [*param.opts, *param.secondary_opts]:
            if name.startswith("-"):
                assert name in result.out, name
    assert result.out.rstrip().endswith("rlcat lint run_qwen3_8b_grpo.sh --verl-native")


def test_the_report_options_are_validates(rlcat: Run) -> None:
    """--format, --strict, --output and --catalog are declared once (cli/common.py) for the commands
    that check files and report findings: lint's read as validate's."""
    lint, validate = _params("lint"), _params("validate")
    for name in ("fmt", "strict", "output", "catalog", "verl_native", "verl_python"):
        same = ("opts", "secondary_opts", "help", "default", "multiple", "is_flag")
        assert [getattr(lint[name], a, None) for a in same] == [
            getattr(validate[name], a, None) for a in same
        ]
    bad = rlcat("lint", str(DATA / "clean.sh"), "--format", "xml")
    assert bad.code == 2 and "'xml' is not one of 'text', 'json', 'github', 'sarif'" in bad.err, bad.err


@pytest.mark.parametrize(
    ("args", "says"),
    [
        ([], "Missing argument 'SCRIPT'."),
        (["run.sh", "--no-such-option"], "No such option: --no-such-option"),
        (["run.sh", "--format", "xml"], "Invalid value for '--format' / '-f'"),
        (["run.sh", "--plat", "rocm"], "No such option: --plat (Possible options: --platform)"),
    ],
    ids=["no_script", "unknown_option", "bad_format", "abbreviated_option"],
)
def test_usage_errors_read_as_every_commands(rlcat: Run, args: list[str], says: str) -> None:
    result = rlcat("lint", *args)
    assert result.code == 2 and result.out == "", result.out
    assert (
        result.err.startswith("Usage: rlcat lint [OPTIONS] ")
        and "Try 'rlcat lint --help' for help." in result.err
    )
    assert f"Error: {says}" in result.err, result.err


def test_a_usage_error_shows_the_argument_escaped(rlcat: Run) -> None:
    result = rlcat("lint", "run.sh", "--\x1b[31mred\x1b[0m")
    assert result.code == 2 and "\x1b" not in result.err, repr(result.err)
    assert "\\x1b[31mred" in result.err, result.err


def test_no_project_file_means_the_settings_default() -> None:
    from rlcat.model.project import ProjectSettings
    from rlcat.project import strict_setting

    assert strict_setting(None) is ProjectSettings().strict


def test_the_console_script_ends_with_its_report_whole(tmp_path: Path) -> None:
    """The console script, a process of its own: the report whole on a pipe and in the -o file alike,
    with the exit code of the findings."""
    import subprocess
    import sys

    console = Path(sys.executable).parent / "rlcat"
    command = [str(console)] if console.is_file() else [sys.executable, "-m", "rlcat"]

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*command, "lint", *args], capture_output=True, text=True, timeout=120, check=False
        )

    script = str(DATA / "plus_misuse.sh")
    piped = run(script, "--format", "json")
    assert piped.returncode == 1 and json.loads(piped.stdout)["diagnostics"], piped.stderr
    report = tmp_path / "report.sarif"
    to_file = run(script, "--format", "sarif", "-o", str(report))
    assert to_file.returncode == 1 and to_file.stdout == "", to_file.stderr
    assert json.loads(report.read_text(encoding="utf-8"))["runs"][0]["results"]
    clean = run(str(DATA / "clean.sh"))
    assert clean.returncode == 0 and "0 error(s)" in clean.stdout, clean.stdout + clean.stderr


def test_local_model_folder_config_json_gives_the_heads(rlcat: Run, tmp_path: Path) -> None:
    """A model path that is a folder here: its config.json's heads judge the script (a folder named
    after no catalog model), and without a config.json nothing does."""
    folder = tmp_path / "my-model"
    folder.mkdir()
    config = {"num_attention_heads": 28, "num_key_value_heads": 4, "max_position_embeddings": 32768}
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    script = tmp_path / "run.sh"
    text = (DATA / "attention_heads.sh").read_text(encoding="utf-8")
    script.write_text(
        text.replace("Qwen/Qwen3-8B", str(folder))
        .replace("tensor_model_parallel_size=3", "tensor_model_parallel_size=2")
        .replace("trainer.n_gpus_per_node=6", "trainer.n_gpus_per_node=8")
        .replace("data.train_batch_size=96", "data.train_batch_size=64")
        .replace("ppo_mini_batch_size=48", "ppo_mini_batch_size=16"),
        encoding="utf-8",
    )
    assert "RLC602" not in rlcat("lint", str(script)).out  # 28 heads split over 2 ranks
    script.write_text(script.read_text(encoding="utf-8").replace("size=2 ", "size=8 "), encoding="utf-8")
    found = rlcat("lint", str(script), "--format", "json")
    assert [d["message"] for d in _json(found)["diagnostics"] if d["code"] == "RLC602"] == [
        "rollout tensor parallel size 8 cannot split my-model: its 28 attention heads do not divide by 8 "
        "(vLLM and SGLang refuse the engine when it starts)"
    ]
    (folder / "config.json").unlink()
    assert "RLC602" not in rlcat("lint", str(script)).out  # nothing says how many heads it has


def test_launch_environment_is_judged(rlcat: Run, tmp_path: Path) -> None:
    """Variables the script exports are judged with its overrides: too few visible GPUs (RLC504),
    expandable segments under the CUDA name with the rollout's custom all-reduce on (RLC502)."""
    script = tmp_path / "run.sh"
    text = (DATA / "clean.sh").read_text(encoding="utf-8")
    env = "export CUDA_VISIBLE_DEVICES=0,1,2,3\nexport PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n"
    script.write_text(text.replace("python3 -m", env + "python3 -m", 1), encoding="utf-8")
    codes = Counter(d["code"] for d in _json(rlcat("lint", str(script), "--format", "json"))["diagnostics"])
    assert codes["RLC504"] == 1
    assert codes["RLC502"] == 1  # verl's default rollout tensor parallel size is 2

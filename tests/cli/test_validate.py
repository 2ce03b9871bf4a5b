"""`rlcat validate`: the bad-input corpus through validate, reporters, exit codes, inherited
positions, agreement with standard JSON Schema tools, and the shipped catalog staying clean."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from conftest import REPO, Result

Run = Callable[..., Result]
CORPUS = Path(__file__).parent.parent / "bad_input"
CASES: list[dict[str, Any]] = yaml.safe_load((CORPUS / "cases.yaml").read_text())
SCHEMA = json.loads((REPO / "schemas" / "recipe.schema.json").read_text())


def _json(result: Result) -> dict[str, Any]:
    assert "Traceback" not in result.out + result.err
    return json.loads(result.out)


def test_shipped_catalog_is_clean(rlcat: Run) -> None:
    r = rlcat("validate", "--format", "json")
    assert r.code == 0, r.out
    data = _json(r)
    assert data["summary"]["error"] == 0 and data["summary"]["warning"] == 0
    assert data["files"] == len(list((REPO / "recipes").rglob("*.yaml"))) + len(
        list((REPO / "catalog").rglob("*.yaml"))
    )


@pytest.mark.parametrize("case", CASES, ids=[c["file"] for c in CASES])
def test_corpus_case_through_validate(rlcat: Run, case: dict[str, Any]) -> None:
    args = ["validate", str(CORPUS / case["file"]), "--format", "json", "--platform", "cuda"]
    if case.get("catalog"):
        args += ["--catalog", str(CORPUS / case["catalog"])]
    r = rlcat(*args)
    assert r.code in (1, 2), r.out
    found = [d for d in _json(r)["diagnostics"] if d["code"] == case["code"]]
    assert found, f"{case['code']} not reported: {r.out}"
    validated = (CORPUS / case["file"]).resolve()
    assert all(Path(d["file"]).resolve() == validated for d in _json(r)["diagnostics"] if d["file"]), found
    # a finding in another file (a parent recipe, a model entry) is reported on the file validated,
    # with where it was as a note
    where = (CORPUS / case.get("at", case["file"])).resolve()
    places = [(d["file"], d["line"]) for d in found]
    places += [(n["file"], n["line"]) for d in found for n in d["notes"]]
    assert any(f and Path(f).resolve() == where and line == case["line"] for f, line in places), found


def test_missing_path_is_exit_2(rlcat: Run, tmp_path: Path) -> None:
    r = rlcat("validate", str(tmp_path / "nope.yaml"))
    assert r.code == 2 and "RLC001" in r.out


def test_folder_mixing_good_and_bad_files(rlcat: Run, tmp_path: Path) -> None:
    (tmp_path / "recipes").mkdir()
    good = (
        (REPO / "recipes" / "gsm8k_qwen3_8b_fsdp.yaml")
        .read_text()
        .replace("name: gsm8k_qwen3_8b_fsdp", "name: good")
    )
    (tmp_path / "recipes" / "good.yaml").write_text(good)
    (tmp_path / "recipes" / "bad.yaml").write_text(
        (CORPUS / "unknown_nested_field.yaml").read_text().replace("name: unknown_nested_field", "name: bad")
    )
    r = rlcat("validate", str(tmp_path), "--format", "json")
    data = _json(r)
    assert r.code == 1 and data["files"] == 2
    assert {Path(d["file"]).name for d in data["diagnostics"] if d["severity"] == "error"} == {"bad.yaml"}


def test_inherited_value_is_reported_on_the_child(rlcat: Run, tmp_path: Path) -> None:
    """A child that lengthens responses breaks the token budget its parent set: the finding is on
    the child's line that changes the outcome, and the parent's line where the budget is becomes a
    note (tests/cli/test_inherited_findings.py covers every reporter)."""
    child = tmp_path / "recipes" / "longer.yaml"
    child.parent.mkdir()
    child.write_text(
        "name: longer\nextends: gsm8k_qwen3_8b_fsdp\nsummary: longer answers\n"
        "batch: {max_response_length: 30000}\n"
    )
    r = rlcat("validate", str(child), "--format", "json", "--platform", "rocm")
    budget = [
        d for d in _json(r)["diagnostics"] if d["key"] == "actor_rollout_ref.actor.ppo_max_token_len_per_gpu"
    ]
    assert budget and budget[0]["code"] == "RLC703"
    assert Path(budget[0]["file"]).resolve() == child.resolve() and budget[0]["line"] == 4
    (note,) = budget[0]["notes"]
    parent_lines = (REPO / "recipes" / "gsm8k_qwen3_8b_fsdp.yaml").read_text().splitlines()
    line = int(note["message"].rsplit(" ", 1)[1])
    assert note["message"] == f"inherited from gsm8k_qwen3_8b_fsdp, built-in, line {line}"
    assert "max_token_len_per_gpu" in parent_lines[line - 1]
    assert note["file"] is None  # a built-in file is named in words, never as a location


def test_strict_fails_on_warnings(rlcat: Run, tmp_path: Path) -> None:
    recipe = tmp_path / "recipes" / "sglang_old.yaml"
    recipe.parent.mkdir()
    recipe.write_text(
        "name: sglang_old\nextends: geo3k_megatron_4_4\nsummary: sglang on the 7.0.2 image\nengine: sglang\n"
        "allow: {RLC303: SGLang installed into our copy of the image}\n"
    )
    loose = rlcat("validate", str(recipe), "--platform", "rocm-7.0.2")
    strict = rlcat("validate", str(recipe), "--platform", "rocm-7.0.2", "--strict")
    assert "RLC303 warning" in loose.out and "allowed by the recipe" in loose.out
    assert (loose.code, strict.code) == (0, 1)


def test_a_known_broken_cell_is_an_error_unless_accepted(rlcat: Run, tmp_path: Path) -> None:
    recipe = tmp_path / "recipes" / "sglang_old.yaml"
    recipe.parent.mkdir()
    recipe.write_text(
        "name: sglang_old\nextends: geo3k_megatron_4_4\nsummary: sglang on the 7.0.2 image\nengine: sglang\n"
    )
    report = rlcat("validate", str(recipe), "--platform", "rocm-7.0.2")
    assert "RLC303 error" in report.out and "--allow-known-broken" in report.out
    assert report.code == 1
    args = ["compile", "geo3k_megatron_4_4", "--platform", "rocm-7.0.2", "--engine", "sglang"]
    refused = rlcat(*args)
    assert refused.code == 1 and refused.out == ""
    accepted = rlcat(*args, "--allow-known-broken")
    assert accepted.code == 0 and "RLC303 warning" in accepted.err


def test_text_report_has_hint_and_caret(rlcat: Run) -> None:
    r = rlcat("validate", str(CORPUS / "unknown_nested_field.yaml"))
    lines = r.out.splitlines()
    head = next(i for i, line in enumerate(lines) if "RLC101" in line)
    assert lines[head + 1].startswith("  hint: did you mean")
    assert "mini_batch_sise" in lines[head + 2]
    caret_line = lines[head + 3]
    assert caret_line.rstrip().endswith("^")
    assert "\x1b[" not in r.out  # no colour when not a terminal


def test_github_format(rlcat: Run) -> None:
    r = rlcat("validate", str(CORPUS / "unknown_nested_field.yaml"), "--format", "github")
    command = r.out.splitlines()[0]
    match = re.fullmatch(r"::error file=([^,]+),line=(\d+),col=(\d+),title=(RLC\d+)::(.+)", command)
    assert match, command
    assert match.group(1).endswith("unknown_nested_field.yaml") and match.group(4) == "RLC101"


def test_sarif_format(rlcat: Run) -> None:
    r = rlcat("validate", str(CORPUS), "--format", "sarif", "--platform", "cuda")
    log = json.loads(r.out)
    assert log["version"] == "2.1.0" and log["$schema"].endswith("sarif-2.1.0.json")
    (run,) = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert run["tool"]["driver"]["name"] == "rlcat"
    assert run["results"]
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] in {"error", "warning", "note"} and result["message"]["text"]
        region = result["locations"][0]["physicalLocation"].get("region", {})
        assert region.get("startLine", 1) >= 1


def test_json_format_is_stable(rlcat: Run) -> None:
    data = _json(rlcat("validate", str(CORPUS / "bad_enum_engine.yaml"), "--format", "json"))
    assert set(data) == {"version", "tool", "files", "summary", "diagnostics"}
    assert data["version"] == 3
    assert set(data["diagnostics"][0]) == {
        "code",
        "severity",
        "message",
        "file",
        "line",
        "col",
        "key",
        "hint",
        "notes",
        "platforms",
    }


# Rules a JSON Schema cannot express: a name that must equal the file name, and rules that relate
# fields to each other (ppo needs a critic, fully_async needs a GPU split, what a platform block may set).
NOT_EXPRESSIBLE = {
    "name_mismatch.yaml",
    "ppo_without_critic.yaml",
    "ppo_without_critic_extends.yaml",
    "fully_async_no_trainer_gpus.yaml",
    "platform_block_bad_field.yaml",
}
SCHEMA_CASES = [
    c for c in CASES if c["code"] in {"RLC101", "RLC102", "RLC103", "RLC104"} and not c.get("catalog")
]


@pytest.mark.parametrize("case", SCHEMA_CASES, ids=[c["file"] for c in SCHEMA_CASES])
def test_standard_json_schema_agrees_with_rlcat(case: dict[str, Any]) -> None:
    """jsonschema, given only the exported schema, rejects what rlcat rejects (child recipes are
    checked against the schema's partial shape, which the schema selects itself)."""
    try:
        data = yaml.safe_load((CORPUS / case["file"]).read_text())
    except yaml.YAMLError:
        return  # standard YAML tools reject it too: they agree
    errors = list(jsonschema.Draft202012Validator(SCHEMA).iter_errors(data))
    if case["file"] in NOT_EXPRESSIBLE:
        return
    assert errors, f"jsonschema accepts what rlcat rejects with {case['code']}"


def test_standard_json_schema_accepts_every_shipped_recipe() -> None:
    for path in sorted((REPO / "recipes").rglob("*.yaml")):
        data = yaml.safe_load(path.read_text())
        assert list(jsonschema.Draft202012Validator(SCHEMA).iter_errors(data)) == [], path


def test_text_report_colours_only_for_a_terminal() -> None:
    from rlcat.diagnostics import diag
    from rlcat.emit.reporters import text

    finding = [
        diag("RLC101", "unknown field 'x'", file=str(CORPUS / "unknown_top_field.yaml"), line=5, col=1)
    ]
    coloured, plain = text(finding, 1, color=True), text(finding, 1, color=False)
    assert "\x1b[" in coloured and "\x1b[" not in plain
    strip = re.sub(r"\x1b\[[0-9;]*m", "", coloured)
    assert strip == plain

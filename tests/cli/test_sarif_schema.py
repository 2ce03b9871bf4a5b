"""`rlcat validate --format sarif` checked against the official OASIS SARIF 2.1.0 JSON Schema, vendored
in tests/data/sarif (no network): the clean shipped catalog, the bad-input corpus, a guard finding, and
broken logs that the same validator must reject. Each log is also compared with the json reporter's
findings for the same input, so a valid but empty or mismatched log does not pass."""

from __future__ import annotations

import copy
import json
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from jsonschema import validators
from jsonschema.protocols import Validator

from conftest import REPO, Result

Run = Callable[..., Result]
TESTS = Path(__file__).resolve().parent.parent
SCHEMA_PATH = TESTS / "data" / "sarif" / "sarif-schema-2.1.0.json"
CORPUS = TESTS / "bad_input"
URI_CHARS = re.compile(r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]+")
SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


@pytest.fixture(scope="module")
def sarif_validator() -> Validator:
    """The vendored schema's own validator class (draft-04), with format checking on."""
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    assert schema["title"] == "Static Analysis Results Format (SARIF) Version 2.1.0 JSON Schema"
    cls = validators.validator_for(schema)
    cls.check_schema(schema)
    format_checker = getattr(cls, "FORMAT_CHECKER", None)
    return cls(schema, format_checker=format_checker)


def _schema_errors(validator: Validator, log: dict[str, Any]) -> list[str]:
    errors = sorted(validator.iter_errors(log), key=lambda e: e.json_path)
    found = [f"{e.json_path}: {e.message} (schema rule: {e.validator})" for e in errors]
    return found + _uri_errors(log)


def _uri_errors(log: dict[str, Any]) -> list[str]:
    """The schema's `uri` formats are checked by jsonschema only when rfc3987 or rfc3986-validator is
    installed (neither is a test dependency), and draft-04 has no `uri-reference` format: so check
    here that every URI in the log uses only RFC 3986 characters, and that the absolute ones have a
    scheme and a host."""
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    absolute = [log.get("$schema"), driver.get("informationUri")]
    absolute += [rule.get("helpUri") for rule in driver.get("rules", [])]
    relative = [
        loc["physicalLocation"]["artifactLocation"]["uri"]
        for result in run.get("results", [])
        for loc in result.get("locations", []) + result.get("relatedLocations", [])
    ]
    bad = [u for u in absolute + relative if u is not None and not URI_CHARS.fullmatch(u)]
    bad += [u for u in absolute if u is not None and not (urlsplit(u).scheme and urlsplit(u).netloc)]
    return [f"not an RFC 3986 URI: {u!r}" for u in bad]


def _sarif_and_json(rlcat: Run, *args: str) -> tuple[int, dict[str, Any], dict[str, Any]]:
    """`rlcat validate ARGS` with the sarif and with the json reporter: exit code, SARIF log, json report."""
    sarif = rlcat("validate", *args, "--format", "sarif")
    report = rlcat("validate", *args, "--format", "json")
    assert "Traceback" not in sarif.out + sarif.err + report.out + report.err
    assert sarif.code == report.code, (sarif.err, report.err)
    return sarif.code, json.loads(sarif.out), json.loads(report.out)


def _assert_matches_json_report(log: dict[str, Any], report: dict[str, Any]) -> None:
    """The SARIF log says what the json reporter says: one result per finding, in the same order, with
    the same code, level, file, line and column; one rule per code that occurs, each result pointing
    at its rule by id and by index."""
    assert log["version"] == "2.1.0"
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "rlcat"
    rules = driver["rules"]
    rule_ids = [rule["id"] for rule in rules]
    assert len(rule_ids) == len(set(rule_ids)), rule_ids
    diagnostics = report["diagnostics"]
    assert set(rule_ids) == {d["code"] for d in diagnostics}
    results = run["results"]
    assert len(results) == len(diagnostics)
    for result, d in zip(results, diagnostics, strict=True):
        assert result["ruleId"] == d["code"]
        assert result["ruleId"] in rule_ids
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] == SARIF_LEVEL[d["severity"]]
        assert d["message"] in result["message"]["text"]
        if not d["file"]:
            assert "locations" not in result
            continue
        (location,) = result["locations"]
        physical = location["physicalLocation"]
        assert physical["artifactLocation"]["uri"] == Path(d["file"]).as_posix()
        region = physical.get("region", {})
        assert region.get("startLine") == (d["line"] or None)
        assert region.get("startColumn") == ((d["col"] or None) if d["line"] else None)


def test_shipped_catalog_log_is_valid(rlcat: Run, sarif_validator: Validator) -> None:
    """No errors or warnings in the shipped catalog; the info findings it has (if any) are notes."""
    code, log, report = _sarif_and_json(rlcat)
    assert code == 0
    assert _schema_errors(sarif_validator, log) == []
    assert report["summary"]["error"] == 0 and report["summary"]["warning"] == 0
    _assert_matches_json_report(log, report)
    assert all(r["level"] == "note" for r in log["runs"][0]["results"])


def test_bad_input_corpus_log_is_valid(rlcat: Run, sarif_validator: Validator) -> None:
    code, log, report = _sarif_and_json(rlcat, str(CORPUS), "--platform", "cuda")
    assert code in (1, 2)
    assert _schema_errors(sarif_validator, log) == []
    _assert_matches_json_report(log, report)
    # the corpus exercises the log's whole shape: many codes, files, lines and columns
    results = log["runs"][0]["results"]
    assert len({r["ruleId"] for r in results}) >= 10
    regions = [r["locations"][0]["physicalLocation"].get("region", {}) for r in results if "locations" in r]
    assert len({r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results}) >= 10
    assert any("startColumn" in region for region in regions)
    assert Counter(r["level"] for r in results)["error"] > 0


def test_guard_finding_log_is_valid(rlcat: Run, sarif_validator: Validator, tmp_path: Path) -> None:
    """A child recipe that lengthens responses breaks the token budget its parent set: guard RLC703
    fires, located on the child's line that lengthens them (the parent is built-in: named in the
    message, never a location), and its rule carries the guard's title and docs as help."""
    child = tmp_path / "recipes" / "longer.yaml"
    child.parent.mkdir()
    child.write_text(
        "name: longer\nextends: gsm8k_qwen3_8b_fsdp\nsummary: longer answers\n"
        "batch: {max_response_length: 30000}\n"
    )
    _, log, report = _sarif_and_json(rlcat, str(child), "--platform", "rocm")
    assert _schema_errors(sarif_validator, log) == []
    _assert_matches_json_report(log, report)
    run = log["runs"][0]
    budget = "[actor_rollout_ref.actor.ppo_max_token_len_per_gpu]"
    (guard,) = [r for r in run["results"] if r["ruleId"] == "RLC703" and budget in r["message"]["text"]]
    assert guard["level"] == "error"
    physical = guard["locations"][0]["physicalLocation"]
    assert Path(physical["artifactLocation"]["uri"]).resolve() == child.resolve()
    assert physical["region"]["startLine"] == 4
    assert "inherited from gsm8k_qwen3_8b_fsdp, built-in, line " in guard["message"]["text"]
    assert "relatedLocations" not in guard
    rule = run["tool"]["driver"]["rules"][guard["ruleIndex"]]
    assert rule["shortDescription"]["text"] not in ("", "RLC703")
    assert "**Why**" in rule["help"]["markdown"] and rule["help"]["text"]


def test_inherited_origin_in_the_team_repository_is_a_related_location(
    rlcat: Run, sarif_validator: Validator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a team's repository (outside rlcat's checkout), a child of the team's own parent recipe:
    the result is on the child, the parent's line is a related location, and the log stays valid."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "recipes").mkdir()
    parent = (REPO / "recipes" / "gsm8k_qwen3_8b_fsdp.yaml").read_text()
    (tmp_path / "recipes" / "base.yaml").write_text(parent.replace("name: gsm8k_qwen3_8b_fsdp", "name: base"))
    (tmp_path / "recipes" / "child.yaml").write_text(
        "name: child\nextends: base\nsummary: longer answers\nbatch: {max_response_length: 30000}\n"
    )
    _, log, report = _sarif_and_json(rlcat, "recipes/child.yaml", "--platform", "cuda")
    assert _schema_errors(sarif_validator, log) == []
    _assert_matches_json_report(log, report)
    results = log["runs"][0]["results"]
    assert results and all(
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "recipes/child.yaml"
        for r in results
    )
    related = [loc for r in results for loc in r.get("relatedLocations", [])]
    assert related and {loc["physicalLocation"]["artifactLocation"]["uri"] for loc in related} == {
        "recipes/base.yaml"
    }
    assert all(
        loc["message"]["text"].startswith("inherited from base, recipes/base.yaml, line ") for loc in related
    )


def test_no_link_to_a_site_that_does_not_exist(rlcat: Run, sarif_validator: Validator) -> None:
    """No docs site is published: the log carries each rule's help itself and links nowhere (the
    only absolute URI left is the schema's)."""
    _, log, _ = _sarif_and_json(rlcat, str(CORPUS), "--platform", "cuda")
    assert _schema_errors(sarif_validator, log) == []
    driver = log["runs"][0]["tool"]["driver"]
    assert "informationUri" not in driver
    for rule in driver["rules"]:
        assert "helpUri" not in rule, rule
        assert rule["help"]["text"] and rule["id"] in rule["help"]["markdown"]
    text = json.dumps(log)
    assert "readthedocs" not in text and "github.com/rlcat" not in text


def _level_fatal(log: dict[str, Any]) -> None:
    log["runs"][0]["results"][0]["level"] = "fatal"


def _no_version(log: dict[str, Any]) -> None:
    del log["version"]


def _line_zero(log: dict[str, Any]) -> None:
    log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0


def _message_without_text(log: dict[str, Any]) -> None:
    log["runs"][0]["results"][0]["message"] = {"markdown": "no text"}


def _unknown_result_property(log: dict[str, Any]) -> None:
    log["runs"][0]["results"][0]["severity"] = "error"


def _driver_without_name(log: dict[str, Any]) -> None:
    del log["runs"][0]["tool"]["driver"]["name"]


@pytest.mark.parametrize(
    ("mutate", "rule"),
    [
        (_level_fatal, "enum"),
        (_no_version, "required"),
        (_line_zero, "minimum"),
        (_message_without_text, "anyOf"),
        (_unknown_result_property, "additionalProperties"),
        (_driver_without_name, "required"),
    ],
    ids=lambda p: p.__name__.strip("_") if callable(p) else p,
)
def test_schema_rejects_a_broken_log(
    rlcat: Run, sarif_validator: Validator, mutate: Callable[[dict[str, Any]], None], rule: str
) -> None:
    """Negative control: the same validator does fail, on the schema rule the mutation breaks."""
    _, log, _ = _sarif_and_json(rlcat, str(CORPUS / "unknown_nested_field.yaml"))
    assert _schema_errors(sarif_validator, log) == []
    region = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]
    assert region["startLine"] >= 1
    broken = copy.deepcopy(log)
    mutate(broken)
    errors = list(sarif_validator.iter_errors(broken))
    assert errors, "the schema accepted a broken log"
    assert rule in {e.validator for e in errors}, [e.message for e in errors]

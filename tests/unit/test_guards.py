"""Guard cases as data: tests/guards/RLCnnn.yaml holds pass / fail / fix cases for guard RLCnnn.

Each case compiles a recipe (a seed, or inline YAML extending one) on a platform (a shipped
profile, or one written into a temporary user catalog) and says whether the guard must stay
`silent`, `fire` (a finding at the guard's severity; an error fails the compile with exit code 1),
or `fix` (the guard repairs the plan: the fix is in the output with the guard as its origin).
Select one guard with `pytest -k RLC501`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from rlcat.catalog import Catalog
from rlcat.compile.assemble import Compiled, Request, compile_request
from rlcat.diagnostics import ExitCode, RlcatError, Severity
from rlcat.guards import REGISTRY
from rlcat.guards.base import DOC_SECTIONS
from rlcat.model.plan import Layer

CASES_DIR = Path(__file__).parent.parent / "guards"


def _load() -> list[tuple[str, dict[str, Any]]]:
    cases = []
    for path in sorted(CASES_DIR.glob("RLC*.yaml")):
        data = yaml.safe_load(path.read_text())
        assert data["guard"] == path.stem
        for case in data["cases"]:
            cases.append((path.stem, case))
    return cases


CASES = _load()


def _compile(case: dict[str, Any], tmp_path: Path) -> Compiled | RlcatError:
    root = tmp_path / "user"
    (root / "recipes").mkdir(parents=True)
    for rel, text in case.get("catalog", {}).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    recipe = case["recipe"]
    if "recipe_yaml" in case:
        path = root / "recipes" / f"{yaml.safe_load(case['recipe_yaml'])['name']}.yaml"
        path.write_text(case["recipe_yaml"])
        recipe = str(path)
    request = Request(
        recipe,
        case["platform"],
        engine=case.get("engine"),
        sets=case.get("set", []),
        overrides=case.get("override", []),
    )
    try:
        return compile_request(request, Catalog.default([root]))
    except RlcatError as exc:
        return exc


@pytest.mark.parametrize(("guard", "case"), CASES, ids=[f"{g}::{c['name']}" for g, c in CASES])
def test_guard_case(guard: str, case: dict[str, Any], tmp_path: Path) -> None:
    result = _compile(case, tmp_path)
    diagnostics = result.diagnostics
    mine = [d for d in diagnostics if d.code == guard]
    others = [d for d in diagnostics if d.severity >= Severity.ERROR and d.code != guard]
    assert others == [], f"unrelated errors: {[d.render() for d in others]}"
    expect = case["expect"]
    if expect == "silent":
        assert mine == [], [d.render() for d in mine]
        assert isinstance(result, Compiled)
    elif expect == "fire":
        assert mine, f"{guard} did not fire"
        severity = REGISTRY[guard].severity
        assert all(d.severity == severity for d in mine)
        if severity >= Severity.ERROR:
            assert isinstance(result, RlcatError) and result.exit_code == ExitCode.FINDINGS
    else:
        assert expect == "fix"
        assert mine and all(d.severity == Severity.INFO for d in mine)
        assert isinstance(result, Compiled)
        plan = result.plan
        for key, value in case.get("fix", {}).items():
            final = plan.overrides[key].final
            assert final.value == value and final.origin.layer == Layer.GUARD
            assert any(o.key == key for o in result.overrides)
        for name, value in case.get("fix_env", {}).items():
            assert result.env_vars[name] == value
        for key in case.get("removed", []):
            assert plan.overrides[key].removed
            assert all(o.key != key for o in result.overrides)
    if isinstance(result, Compiled):
        for key in case.get("present", []):
            assert any(o.key == key for o in result.overrides)


def test_every_guard_has_docs_cases_and_sources() -> None:
    files = {p.stem for p in CASES_DIR.glob("RLC*.yaml")}
    assert files == set(REGISTRY), "every guard needs tests/guards/<id>.yaml, and every file a guard"
    for guard_id, cls in REGISTRY.items():
        docs = cls.docs()
        assert all(section in docs for section in DOC_SECTIONS), guard_id
        assert "```yaml" in docs.split("**Bad**", 1)[1], f"{guard_id}: the bad example needs a YAML block"
        assert cls.source, guard_id
        kinds = {c["expect"] for g, c in CASES if g == guard_id}
        names = {c["name"] for g, c in CASES if g == guard_id}
        assert "silent" in kinds and kinds & {"fire", "fix"}, f"{guard_id} needs pass and fail cases"
        assert {"docs_bad", "docs_good"} <= names, (
            f"{guard_id}: cases must mirror the docs' bad and good examples"
        )


def test_registry_refuses_duplicates_and_missing_metadata() -> None:
    from rlcat.guards.base import Guard, register

    class Duplicate(Guard):
        """Dup.\n\n**Why**: x\n\n**Bad**: x\n\n**Good**: x"""

        id = "RLC501"
        name = "another_name"
        title = "t"
        severity = Severity.ERROR
        source = ("s",)
        since = "0.1.0"

    with pytest.raises(TypeError, match="taken"):
        register(Duplicate)

    class NoDocs(Guard):
        id = "RLC599"
        name = "no_docs"
        title = "t"
        severity = Severity.ERROR
        source = ("s",)
        since = "0.1.0"

    with pytest.raises(TypeError, match="docs"):
        register(NoDocs)
    assert "RLC599" not in REGISTRY

    class Unsaid(Guard):
        """Unsaid.\n\n**Why**: x\n\n**Bad**: x\n\n**Good**: x"""

        id = "RLC598"
        name = "unsaid"
        title = "t"
        severity = Severity.ERROR
        source = ("s",)
        since = "0.1.0"

    # an error guard says what verl's start-up does with it, for the differential tier to hold it to
    with pytest.raises(TypeError, match="verl_startup"):
        register(Unsaid)
    Unsaid.verl_startup = "sometimes"
    with pytest.raises(TypeError, match="verl_startup"):
        register(Unsaid)
    assert "RLC598" not in REGISTRY


def test_silencing_an_error_level_guard_is_reported(tmp_path: Path) -> None:
    case = {
        "recipe": "gsm8k_qwen3_8b_fsdp",
        "platform": "cuda",
        "recipe_yaml": (
            "name: one_response\nextends: gsm8k_qwen3_8b_fsdp\nsummary: n = 1 on purpose\n"
            "batch: {responses_per_prompt: 1}\n"
            "allow: {RLC702: a smoke test that only checks the pipeline runs}\n"
        ),
    }
    result = _compile(case, tmp_path)
    assert isinstance(result, Compiled)
    (note,) = [d for d in result.diagnostics if d.code == "RLC702"]
    assert note.severity == Severity.WARNING and "silenced by the recipe" in note.message
    assert note.key == "allow.RLC702"

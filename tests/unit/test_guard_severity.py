"""Meta-test: every guard reports at the severity it is listed with (its class attribute, which the
guard pages, the guard index, the diagnostics page and `rlcat guards` all show), and at info level
only for a finding it repaired (the fix is in the plan, with the guard as its origin)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from test_guards import CASES, _compile

from rlcat.compile.assemble import Compiled
from rlcat.diagnostics import Severity
from rlcat.docsite.catalog_pages import diagnostics_page, guards_index
from rlcat.guards import REGISTRY
from rlcat.model.plan import Layer


def _fixed_by(result: Compiled, guard_id: str) -> bool:
    """Did the guard's fix reach the plan?"""
    tables = (result.plan.overrides, result.plan.env)
    return any(
        s.origin.layer == Layer.GUARD and s.origin.label.startswith(f"guard {guard_id} ")
        for table in tables
        for history in table.values()
        for s in history.entries
    )


def test_every_guard_reports_at_its_listed_severity(tmp_path: Path) -> None:
    unfixed: dict[str, set[Severity]] = defaultdict(set)
    for n, (guard_id, case) in enumerate(CASES):
        result = _compile(case, tmp_path / str(n))
        for d in (d for d in result.diagnostics if d.code == guard_id):
            if d.severity == Severity.INFO and REGISTRY[guard_id].severity != Severity.INFO:
                assert isinstance(result, Compiled) and _fixed_by(result, guard_id), (
                    f"{guard_id} {case['name']}: info without a fix: {d.render()}"
                )
            else:
                unfixed[guard_id].add(d.severity)
    for guard_id, cls in sorted(REGISTRY.items()):
        assert unfixed[guard_id] == {cls.severity}, (
            f"{guard_id} is listed as {cls.severity} but its unfixed findings are "
            f"{sorted(str(s) for s in unfixed[guard_id]) or 'never reported'}"
        )


def test_the_listings_show_the_guards_severity() -> None:
    index, codes = guards_index(), diagnostics_page()
    for guard_id, cls in REGISTRY.items():
        row = next(line for line in index.splitlines() if line.startswith(f"| [{guard_id}]"))
        assert row.split(" | ")[1] == str(cls.severity), row
        assert f"{str(cls.severity).capitalize()}. See [{guard_id}]" in codes

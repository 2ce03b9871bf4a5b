"""RLC703's cases fire for the verl assertion they were taken from, and verl_batch cites each
release's own source line. The cases themselves are data in tests/guards/RLC703.yaml; a case's
`message:` is a piece of the text of one of its findings (verl stops at the first; rlcat reports
every assertion the plan breaks)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.unit.test_guards import CASES_DIR, _compile

from rlcat.guards.config.verl_batch import LINES, cite

VERL_TREES = Path(__file__).parents[2] / ".verl"

CASES = [c for c in yaml.safe_load((CASES_DIR / "RLC703.yaml").read_text())["cases"] if "message" in c]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_case_fires_for_its_assertion(case: dict[str, Any], tmp_path: Path) -> None:
    result = _compile(case, tmp_path)
    mine = [d.message for d in result.diagnostics if d.code == "RLC703"]
    assert any(case["message"] in message for message in mine), mine


def test_a_later_release_cites_the_closest_older_row() -> None:
    assert cite("0.9.1", "minimal_batch") == "verl 0.9.1 verl/utils/config.py:124"
    assert cite("0.9.2", "minimal_batch") == "verl 0.9.1 verl/utils/config.py:124"
    assert cite("0.9.0", "minimal_batch") == "verl 0.9.0 verl/utils/config.py:110"
    # only 0.7.1 has the legacy workers: later releases fall back to its row
    assert cite("0.9.1", "legacy_mini_micro") == "verl 0.7.1 verl/workers/fsdp_workers.py:263"


@pytest.mark.skipif(not VERL_TREES.is_dir(), reason="verl trees not fetched (rlcat dev fetch-verl)")
@pytest.mark.parametrize("release", sorted(LINES))
def test_cited_lines_hold_the_assertion(release: str) -> None:
    """Each cited line is a raise, an assert, the multiplication or the assignment it names, in that
    release's wheel."""
    for check, where in LINES[release].items():
        path, line = where.rsplit(":", 1)
        text = (VERL_TREES / release / path).read_text().splitlines()[int(line) - 1]
        assert any(word in text for word in ("raise", "assert", "*", "if ", " = ")), (release, check, text)

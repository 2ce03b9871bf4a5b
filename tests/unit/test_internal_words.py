"""No internal words in what a user reads: the README and guides, every docs page, the help (the
generated command-line reference), the built-in recipes and catalog entries (summaries, comments,
results' sources). Each pattern below is a word this repository's own work used and a reader cannot
know: a numbered source document ("Seed 003's walkthrough"), a path into the repository's internal
material (`shared/seeds/004`), a build machine's folders. A result whose source title is in another
language gives its English title too."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from conftest import REPO

INTERNAL = {
    "a numbered source document": re.compile(r"\bseeds?\s*0\d\d\b|\bseed\s+(?:recipes?|results?)\b", re.I),
    "a path to the repository's internal material": re.compile(
        r"\bshared/(?:seeds|reference)\b|\bseeds/0\d\d"
    ),
    "a folder of the machine rlcat is developed on": re.compile(r"(?<![\w~])/work/|/root/venvs/"),
}


def _user_text() -> list[Path]:
    files = [REPO / "README.md", REPO / "SECURITY.md", REPO / "mkdocs.yml"]
    files += sorted((REPO / "docs").rglob("*.md"))
    files += sorted((REPO / "recipes").rglob("*.yaml")) + sorted((REPO / "catalog").rglob("*.yaml"))
    files += sorted((REPO / "compiler" / "rlcat" / "scaffold").rglob("*.py"))
    return files


@pytest.mark.parametrize("what", INTERNAL)
def test_no_internal_words_in_what_a_user_reads(what: str) -> None:
    found = [
        f"{path.relative_to(REPO)}:{number}: {line.strip()[:120]}"
        for path in _user_text()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if INTERNAL[what].search(line)
    ]
    assert found == [], f"{what} in text a user reads:\n" + "\n".join(found)


def test_the_patterns_find_what_they_are_for() -> None:
    for text in ("Seed 003's Slurm walkthrough", "as reported in `shared/seeds/004`", "the ten seed recipes"):
        assert any(pattern.search(text) for pattern in INTERNAL.values()), text
    for text in ("ByteDance-Seed/Seed-OSS-36B-Base", "~/verl/shared/data/dapo-math", "RLCAT_ORACLE_SEED"):
        assert not any(pattern.search(text) for pattern in INTERNAL.values()), text


def _foreign(text: str) -> bool:
    """Whether a title is in another language than English: it holds letters outside ASCII."""
    return any(ch.isalpha() and not ch.isascii() for ch in text)


def test_a_foreign_source_title_has_its_english_title() -> None:
    missing = []
    for path in sorted((REPO / "catalog" / "results").glob("*.yaml")):
        source = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("source") or {}
        if _foreign(source.get("title", "")) and not source.get("title_en"):
            missing.append(path.name)
    assert missing == [], f"give these results' sources a title_en: {missing}"

"""`rlcat docs build|serve --catalog DIR [--no-builtin]`: bad input stops before anything is written,
with a diagnostic at the file and line, and a build that fails leaves the site folder as it was.
(tests/e2e/test_team_docs.py builds and browses a team's site from an installed wheel.)"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from rlcat.diagnostics import Diagnostic, RlcatError
from rlcat.docsite import build

from conftest import Result

Run = Callable[..., Result]
PARENT = "gsm8k_qwen3_8b_fsdp"


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working folder outside the checkout, with no project file above it and no RLCAT_PATH."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RLCAT_PATH", raising=False)
    return tmp_path


def _team(folder: Path, recipe: str) -> Path:
    (folder / "team" / "recipes").mkdir(parents=True)
    (folder / "team" / "recipes" / "team_run.yaml").write_text(recipe, encoding="utf-8")
    return folder / "team"


def test_a_missing_catalog_folder_is_refused(rlcat: Run, elsewhere: Path) -> None:
    r = rlcat("docs", "build", "--catalog", "nowhere", "--out", "site")
    assert r.code == 2
    assert "RLC001" in r.err and "--catalog nowhere: no such folder" in r.err
    assert "Traceback" not in r.err
    assert not (elsewhere / "site").exists()


def test_a_broken_team_recipe_names_its_file_and_line(rlcat: Run, elsewhere: Path) -> None:
    team = _team(elsewhere, f"name: team_run\nextends: {PARENT}\nbatch:\n  train_batch_sise: 64\n")
    r = rlcat("docs", "build", "--catalog", str(team), "--out", "site")
    assert r.code == 2
    assert "team_run.yaml:4" in r.err and "RLC101" in r.err and "train_batch_sise" in r.err
    assert "Traceback" not in r.err
    assert not (elsewhere / "site").exists()
    assert [p.name for p in elsewhere.iterdir()] == ["team"]  # no staging folder left either


def test_a_result_naming_no_recipe_stops_the_build(rlcat: Run, elsewhere: Path) -> None:
    team = _team(elsewhere, f"name: team_run\nextends: {PARENT}\n")
    (team / "catalog" / "results").mkdir(parents=True)
    (team / "catalog" / "results" / "run1.yaml").write_text(
        "name: run1\nsummary: a run\nrecipe: team_rnu\nplatform: cuda\nhardware: {gpus: 8}\n"
        "mode: colocate\nkind: measured\nrun: {folder: r, metrics_file: r/m.jsonl, lines: 1}\n"
        "metrics:\n  - {metric: steps, value: 1, unit: steps}\n",
        encoding="utf-8",
    )
    r = rlcat("docs", "build", "--catalog", str(team), "--out", "site")
    assert r.code == 2
    assert "run1.yaml:3" in r.err and "RLC201" in r.err and "unknown recipe 'team_rnu'" in r.err
    assert "team_run" in r.err  # the close name, as a hint
    assert "Traceback" not in r.err
    assert not (elsewhere / "site").exists()


def test_no_builtin_needs_a_catalog_folder(rlcat: Run, elsewhere: Path) -> None:
    r = rlcat("docs", "build", "--no-builtin", "--out", "site")
    assert r.code == 2
    assert "RLC105" in r.err and "--no-builtin leaves no catalog folder" in r.err
    assert not (elsewhere / "site").exists()


def test_check_is_for_the_checkout_only(rlcat: Run, elsewhere: Path) -> None:
    team = _team(elsewhere, f"name: team_run\nextends: {PARENT}\n")
    r = rlcat("docs", "build", "--catalog", str(team), "--check")
    assert r.code == 2
    assert "RLC105" in r.err and "--check" in r.err


def test_serve_refuses_a_missing_catalog_before_serving(rlcat: Run, elsewhere: Path) -> None:
    r = rlcat("docs", "serve", "--catalog", "nowhere", "--port", "0", "--timeout", "0.1")
    assert r.code == 2
    assert "no such folder" in r.err and "serving" not in r.out


def test_a_site_folder_that_cannot_be_written_is_refused(rlcat: Run, elsewhere: Path) -> None:
    team = _team(elsewhere, f"name: team_run\nextends: {PARENT}\n")
    (elsewhere / "a-file").write_text("not a folder\n", encoding="utf-8")
    r = rlcat("docs", "build", "--catalog", str(team), "--out", "a-file/site")
    assert r.code == 2
    assert "RLC106" in r.err and "cannot write the site" in r.err and "a-file/site" in r.err
    assert "Traceback" not in r.err
    assert (elsewhere / "a-file").read_text(encoding="utf-8") == "not a folder\n"


def test_a_folder_of_other_files_is_never_replaced(rlcat: Run, elsewhere: Path) -> None:
    team = _team(elsewhere, f"name: team_run\nextends: {PARENT}\n")
    (elsewhere / "work").mkdir()
    (elsewhere / "work" / "notes.txt").write_text("mine\n", encoding="utf-8")
    r = rlcat("docs", "build", "--catalog", str(team), "--out", "work")
    assert r.code == 2
    assert "RLC106" in r.err and "not a built site" in r.err
    assert [p.name for p in (elsewhere / "work").iterdir()] == ["notes.txt"]
    (elsewhere / "a-file").write_text("x\n", encoding="utf-8")
    r = rlcat("docs", "build", "--catalog", str(team), "--out", "a-file")
    assert r.code == 2 and "not a folder" in r.err
    assert (elsewhere / "a-file").read_text(encoding="utf-8") == "x\n"


def test_a_failed_build_leaves_the_previous_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("the previous build\n", encoding="utf-8")

    def half_a_build(root: Path, out: Path) -> list[str]:
        (out / "index.html").write_text("half\n", encoding="utf-8")
        raise RlcatError([Diagnostic("RLC105", "the site does not build")])

    monkeypatch.setattr(build, "build_site", half_a_build)
    with pytest.raises(RlcatError):
        build.build_into(tmp_path / "docs-root", site)
    assert (site / "index.html").read_text(encoding="utf-8") == "the previous build\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_a_build_replaces_the_previous_site_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("old\n", encoding="utf-8")
    (site / "gone.html").write_text("a page no longer built\n", encoding="utf-8")

    def a_build(root: Path, out: Path) -> list[str]:
        (out / "index.html").write_text("new\n", encoding="utf-8")
        return []

    monkeypatch.setattr(build, "build_site", a_build)
    build.build_into(tmp_path / "docs-root", site)
    assert sorted(p.name for p in site.iterdir()) == ["index.html"]
    assert (site / "index.html").read_text(encoding="utf-8") == "new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]

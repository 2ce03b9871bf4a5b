"""Inside the project, inside the folder (rlcat.inside): a project file, a link in a repository or
in an -o folder, or a link beside the scripts `rlcat lint` checks moves no write and no read
outside the folder it belongs to. Each case is what a pull request can change; each refusal is a
diagnostic (file, line and key where there is one) with its exit code, never a traceback."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import Result

Run = Callable[..., Result]
PARENT = "gsm8k_qwen3_8b_fsdp"
SECRET = "AKIAOUTSIDE1234SECRET"


def _tree(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*")}


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A team repository (recipes/, catalog/) beside a folder `outside` that must stay empty."""
    monkeypatch.delenv("RLCAT_PATH", raising=False)
    team = tmp_path / "a" / "team"
    (team / "recipes").mkdir(parents=True)
    (team / "catalog").mkdir()
    (tmp_path / "outside").mkdir()
    monkeypatch.chdir(team)
    return team


def _run_dir(rlcat: Run, where: Path) -> Path:
    """A run folder as `compile --run-dir` leaves it, with one validation line of metrics."""
    r = rlcat("compile", PARENT, "--platform", "rocm", "--run-dir", str(where), "--format", "shell")
    assert r.code == 0, r.err
    record = {"step": 1, "data": {"val-core/openai/gsm8k/reward/mean@1": 0.5, "timing_s/step": 10.0}}
    (where / "metrics.jsonl").write_text(json.dumps(record) + "\n")
    return where


# --- the project file names folders inside the project only --------------------------------------

# (rlcat.toml, its line that is refused, the key)
OUTSIDE_SETTINGS = {
    "schemas-absolute": ('strict = false\nschemas = "{outside}"\n', 2, "schemas"),
    "schemas-dotdot": ('schemas = "../../outside"\n', 1, "schemas"),
    "catalog-absolute": ('catalog = ["{outside}"]\n', 1, "catalog[0]"),
    "catalog-dotdot": ('\ncatalog = [".", "../../outside"]\n', 2, "catalog[1]"),
    "catalog-link-out": ('catalog = ["vendored"]\n', 1, "catalog[0]"),
    "schemas-through-link": ('schemas = "vendored/schemas"\n', 1, "schemas"),
}


@pytest.mark.parametrize("case", OUTSIDE_SETTINGS, ids=list(OUTSIDE_SETTINGS))
def test_a_project_file_naming_a_folder_outside_the_project_is_refused_where_it_says_so(
    rlcat: Run, repo: Path, case: str
) -> None:
    outside = repo.parent.parent / "outside"
    text, line, key = OUTSIDE_SETTINGS[case]
    run_dir = _run_dir(rlcat, repo / "runs" / "one")  # before the project file: it refuses them all
    (repo / "rlcat.toml").write_text(text.format(outside=outside))
    (repo / "vendored").symlink_to(outside, target_is_directory=True)
    commands = [
        ("schemas", "export"),
        ("new", "team_run", "--from", PARENT),
        ("runs", "add", str(run_dir)),
        ("config",),
        ("validate", "recipes"),
    ]
    for args in commands:
        r = rlcat(*args)
        assert r.code == 2 and "Traceback" not in r.err, (args, r.err)
        first = r.err.splitlines()[0]
        assert first.startswith(f"{repo / 'rlcat.toml'}:{line} RLC011 error: "), (args, first)
        assert f"[{key}]" in first, first
    assert _tree(outside) == set()


@pytest.mark.parametrize("name", ["rlcat.toml", "pyproject.toml"])
def test_a_project_file_linked_from_outside_the_project_is_refused(rlcat: Run, repo: Path, name: str) -> None:
    outside = repo.parent.parent / "outside"
    (outside / name).write_text(
        f'[tool.rlcat]\nschemas = "{SECRET}"\n' if name == "pyproject.toml" else f'schemas = "{SECRET}"\n'
    )
    (repo / name).symlink_to(outside / name)
    for args in (("config",), ("schemas", "export"), ("validate", "recipes")):
        r = rlcat(*args)
        assert r.code == 2 and "Traceback" not in r.err, (args, r.err)
        assert r.err.startswith(f"{repo / name} RLC011 error: "), r.err
        assert SECRET not in r.out + r.err
    assert not (repo / SECRET).exists()


def test_a_linked_pyproject_without_rlcats_table_is_passed_by(rlcat: Run, repo: Path) -> None:
    outside = repo.parent.parent / "outside"
    (outside / "pyproject.toml").write_text('[project]\nname = "dotfiles"\n')
    (repo / "pyproject.toml").symlink_to(outside / "pyproject.toml")
    r = rlcat("config")
    assert r.code == 0, r.err


UNUSABLE_PATHS = {
    "nul": ('schemas = "a\\u0000b"\n', "RLC011", "NUL character"),
    "deep": ('schemas = "' + "a/" * 2000 + '"\n', "RLC011", "more than 64 folders deep"),
    "name-too-long": ('schemas = "' + "x" * 300 + '"\n', "RLC106", "File name too long"),
}


@pytest.mark.parametrize("case", UNUSABLE_PATHS, ids=list(UNUSABLE_PATHS))
def test_a_path_no_file_system_takes_is_a_diagnostic(rlcat: Run, repo: Path, case: str) -> None:
    text, code, message = UNUSABLE_PATHS[case]
    (repo / "rlcat.toml").write_text(text)
    r = rlcat("schemas", "export")
    assert r.code == 2 and "Traceback" not in r.err and "internal error" not in r.err, r.err
    assert f" {code} error: " in r.err and message in r.err, r.err


def test_a_project_file_inside_the_project_still_reads(rlcat: Run, repo: Path) -> None:
    (repo / "rlcat.toml").write_text('catalog = ["sub/../."]\nschemas = "editor/./schemas"\n')
    r = rlcat("schemas", "export")
    assert r.code == 0, r.err
    assert (repo / "editor" / "schemas" / "recipe.schema.json").is_file()
    assert rlcat("new", "team_run", "--from", PARENT).code == 0
    assert (repo / "recipes" / "team_run.yaml").is_file()


# --- every writer: no link below the folder it writes in -----------------------------------------


def test_new_never_writes_through_a_link_in_the_project(rlcat: Run, repo: Path) -> None:
    outside = repo.parent.parent / "outside"
    (repo / "rlcat.toml").write_text("strict = false\n")
    (repo / "recipes").rmdir()
    (repo / "recipes").symlink_to(outside, target_is_directory=True)
    r = rlcat("new", "team_run", "--from", PARENT)
    assert r.code == 2 and "Traceback" not in r.err
    # the catalog's walk sees the link first (a link out of the catalog, RLC011); the writer would
    # refuse it too (RLC106)
    assert re.match(r"recipes RLC(011|106) error: ", r.err), r.err
    assert _tree(outside) == set()


def test_runs_add_never_writes_through_a_link_in_the_catalog(rlcat: Run, repo: Path) -> None:
    outside = repo.parent.parent / "outside"
    (repo / "rlcat.toml").write_text("strict = false\n")
    run_dir = _run_dir(rlcat, repo / "runs" / "one")
    (repo / "catalog" / "results").symlink_to(outside, target_is_directory=True)
    for catalog in ([], ["--catalog", str(repo)]):
        r = rlcat("runs", "add", str(run_dir), *catalog)
        assert r.code == 2 and "Traceback" not in r.err, r.err
        # the catalog's walk sees the link first (RLC011); the writer would refuse it too (RLC106)
        assert re.match(r"catalog/results RLC(011|106) error: ", r.err), r.err
    assert _tree(outside) == set()


def test_schemas_export_never_writes_through_a_link(rlcat: Run, repo: Path) -> None:
    outside = repo.parent.parent / "outside"
    (repo / "schemas").symlink_to(outside, target_is_directory=True)
    r = rlcat("schemas", "export")  # no project file: ./schemas
    assert r.code == 2 and "Traceback" not in r.err, r.err
    assert r.err.startswith("schemas RLC106 error: a folder goes here, and this is a symbolic link"), r.err
    (repo / "rlcat.toml").write_text("strict = false\n")  # the project's default `schemas`
    r = rlcat("schemas", "export")
    assert r.code == 2 and "Traceback" not in r.err, r.err
    assert r.err.startswith(f"{repo / 'rlcat.toml'}:1 RLC011 error: "), r.err
    assert "[schemas]" in r.err.splitlines()[0]
    assert _tree(outside) == set()


# --- runs add reads inside the run folder ---------------------------------------------------------


def test_runs_add_reads_no_metrics_file_outside_the_run_folder(rlcat: Run, repo: Path) -> None:
    """A job writes its run folder; whoever records it must not record (or quote) their own files."""
    outside = repo.parent.parent / "outside"
    (outside / "creds.jsonl").write_text(
        json.dumps({"step": 1, "data": {f"val-core/{SECRET}/reward/mean@1": 0.5}}) + f"\nkey = {SECRET}\n"
    )
    run_dir = _run_dir(rlcat, repo / "runs" / "one")
    (run_dir / "metrics.jsonl").unlink()
    (run_dir / "metrics.jsonl").symlink_to(outside / "creds.jsonl")
    r = rlcat("runs", "add", str(run_dir), "--catalog", str(repo))
    assert r.code == 2 and "Traceback" not in r.err, r.err
    assert "metrics.jsonl RLC011 error: " in r.err and SECRET not in r.out + r.err, r.err
    assert not (repo / "catalog" / "results").exists()


def test_runs_add_compares_no_overrides_file_outside_the_run_folder(rlcat: Run, repo: Path) -> None:
    outside = repo.parent.parent / "outside"
    (outside / "overrides.yaml").write_text(f"- trainer.{SECRET}=1\n")
    run_dir = _run_dir(rlcat, repo / "runs" / "one")
    (run_dir / ".hydra").mkdir()
    (run_dir / ".hydra" / "overrides.yaml").symlink_to(outside / "overrides.yaml")
    r = rlcat("runs", "add", str(run_dir), "--catalog", str(repo))
    assert r.code == 0, r.err
    assert ".hydra/overrides.yaml RLC011 warning: " in r.err and SECRET not in r.out + r.err, r.err


IMPORTED = (
    "--name", "hostile", "--",
    "python3", "-m", "verl.trainer.main_ppo", "actor_rollout_ref.model.path=/models/foo-7b",
    "data.train_files=/data/x/train.parquet", "data.val_files=/data/x/test.parquet",
    "data.train_batch_size=256",
)  # fmt: skip
IMPORT_LINKS = {
    "recipes": "recipes",
    "catalog": "catalog",
    "catalog-models": "catalog/models",
    "catalog-datasets": "catalog/datasets",
}


@pytest.mark.parametrize("force", [[], ["--force"]], ids=["", "force"])
@pytest.mark.parametrize("linked", IMPORT_LINKS, ids=list(IMPORT_LINKS))
def test_import_never_writes_through_a_link_in_its_output_folder(
    rlcat: Run, tmp_path: Path, linked: str, force: list[str]
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    out = tmp_path / "out"
    link = out / IMPORT_LINKS[linked]
    link.parent.mkdir(parents=True)
    link.symlink_to(outside, target_is_directory=True)
    r = rlcat("import", "-o", str(out), *force, *IMPORTED)
    assert r.code == 2 and "Traceback" not in r.err, r.out + r.err
    assert f"{link} RLC106 error: a folder goes here, and this is a symbolic link" in r.err, r.err
    assert _tree(outside) == set()
    assert not (out / "recipes" / "hostile.yaml").exists() or linked == "recipes"  # nothing written


def test_import_writes_as_before_where_no_link_is_in_the_way(rlcat: Run, tmp_path: Path) -> None:
    r = rlcat("import", "-o", str(tmp_path / "out"), *IMPORTED)
    assert r.code in (0, 1) and "Traceback" not in r.err, r.err
    assert _tree(tmp_path / "out") >= {
        "recipes/hostile.yaml",
        "catalog/models/foo_7b.yaml",
        "catalog/datasets/x.yaml",
    }


# --- lint reads inside the folder it checks ------------------------------------------------------


def _scripts(tmp_path: Path) -> Path:
    """scripts/ with one script of its own, a link to it (inside: linted), and links out: to a
    script elsewhere holding a secret, and to a folder of such scripts."""
    secret = tmp_path / "home"
    secret.mkdir()
    (secret / "creds.sh").write_text(
        f"python3 -m verl.trainer.main_ppo trainer.{SECRET}=1 data.train_batch_size={SECRET}\n"
    )
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    (scripts / "run.sh").write_text("python3 -m verl.trainer.main_ppo data.train_batch_size=8\n")
    (scripts / "alias.sh").symlink_to("run.sh")
    (scripts / "leak.sh").symlink_to(secret / "creds.sh")
    (scripts / "more").symlink_to(secret, target_is_directory=True)
    return scripts


@pytest.mark.parametrize("fmt", ["text", "json", "github", "sarif"])
def test_lint_follows_no_link_out_of_the_folder_it_checks(rlcat: Run, tmp_path: Path, fmt: str) -> None:
    scripts = _scripts(tmp_path)
    r = rlcat("lint", str(scripts), "--format", fmt)
    assert r.code == 1 and "Traceback" not in r.err, r.out + r.err
    assert SECRET not in r.out + r.err
    assert "RLC011" in r.out + r.err and "leak.sh" in r.out + r.err
    named = rlcat("lint", str(scripts / "leak.sh"), "--format", fmt)  # given by name: the same rule
    assert named.code == 1 and SECRET not in named.out + named.err and "RLC011" in named.out + named.err


def test_lint_reads_links_that_stay_inside(rlcat: Run, tmp_path: Path) -> None:
    scripts = _scripts(tmp_path)
    for name in ("leak.sh", "more"):
        (scripts / name).unlink()
    r = rlcat("lint", str(scripts), "--format", "json")
    data = json.loads(r.out)
    assert data["files"] == 2 and not [d for d in data["diagnostics"] if d["code"] == "RLC011"], r.out
    assert re.search(r"\b2 files\b", rlcat("lint", str(scripts)).out)


def test_a_config_name_names_no_file_but_the_releases_key_indexes(tmp_path: Path) -> None:
    """`--config-name` is a name: an absolute path or `../` to a planted index (no keys: nothing
    would be flagged) or to /dev/zero is no config name (RLC1115, at the script's line), and no key
    index is read for it."""
    (tmp_path / "evil.json").write_text('{"keys": {}, "open": [], "groups": {}}')
    (tmp_path / "zero.json").symlink_to("/dev/zero")
    climb = "../" * 40 + str(tmp_path).lstrip("/")
    for config in (tmp_path / "evil", f"{climb}/evil", f"{climb}/zero"):
        script = tmp_path / "run.sh"
        script.write_text(f"python3 -m verl.trainer.main_ppo --config-name={config} bogus.key=1\n")
        done = subprocess.run(
            [sys.executable, "-m", "rlcat", "lint", str(script), "--format", "json"],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
        [finding] = json.loads(done.stdout)["diagnostics"]
        assert (finding["code"], finding["line"]) == ("RLC1115", 1), finding


def test_validate_and_lint_refuse_a_link_out_with_one_rule(
    rlcat: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same walk (catalog.collect_files): the same RLC011 wording for a YAML and a script link."""
    scripts = _scripts(tmp_path)
    (scripts / "leak.yaml").symlink_to(tmp_path / "home" / "creds.sh")
    monkeypatch.chdir(tmp_path)
    linted = json.loads(rlcat("lint", "scripts", "--format", "json").out)["diagnostics"]
    validated = json.loads(rlcat("validate", "scripts", "--format", "json").out)["diagnostics"]
    lint_links = {d["message"] for d in linted if d["code"] == "RLC011"}
    validate_links = {d["message"] for d in validated if d["code"] == "RLC011"}
    assert {m.replace("leak.sh", "leak.yaml") for m in lint_links if "leak.sh" in m} == {
        m for m in validate_links if "leak.yaml" in m
    }


def test_no_excerpt_of_a_file_reached_through_a_link_out_of_its_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A finding at a line of `checked/run.sh`, a link to a file beside the checked folder (inside
    the working folder): the readers refuse such a link, and the reporter quotes nothing of it."""
    from rlcat.diagnostics import diag
    from rlcat.emit.reporters import text

    monkeypatch.chdir(tmp_path)
    (tmp_path / "checked").mkdir()
    (tmp_path / "secret.sh").write_text(f"# 1\nexport TOKEN={SECRET}\n", encoding="utf-8")
    (tmp_path / "checked" / "run.sh").symlink_to("../secret.sh")
    (tmp_path / "checked" / "own.sh").write_text("# 1\necho own line\n", encoding="utf-8")
    found = [diag("RLC050", "x", file=f"checked/{name}.sh", line=2) for name in ("run", "own")]
    shown = text(found, 2, color=False)
    assert SECRET not in shown
    assert "    2 | echo own line" in shown  # a file of the folder is quoted as before


def test_import_refuses_a_script_linked_from_outside_its_folder(
    rlcat: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`rlcat import` reads the file named, never one a link leads to outside its folder: the rule
    `rlcat lint` follows (RLC011, exit 2, nothing of the file shown)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "checked").mkdir()
    (tmp_path / "secret.sh").write_text(
        f"python3 -m verl.trainer.main_ppo data.train_batch_size={SECRET} bad==\n", encoding="utf-8"
    )
    (tmp_path / "checked" / "run.sh").symlink_to("../secret.sh")
    r = rlcat("import", "checked/run.sh", "-o", "out")
    assert r.code == 2
    assert "RLC011" in r.err and "checked/run.sh is a link to ../secret.sh" in r.err
    assert SECRET not in r.out + r.err
    assert not (tmp_path / "out").exists()


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="no /proc on this system")
@pytest.mark.parametrize(
    "args",
    [
        ["list", "--catalog", "/proc"],
        ["compile", PARENT, "--catalog", "/proc/self"],
        ["validate", "/proc/1"],
        ["validate", "/sys/kernel"],
    ],
    ids=["list-proc", "compile-proc-self", "validate-proc-1", "validate-sys"],
)
def test_a_folder_of_the_kernel_is_no_catalog(rlcat: Run, args: list[str]) -> None:
    """`--catalog /proc` walked every process's links and crashed (exit 3) on one that vanished or
    could not be read; a folder in /proc or /sys is refused before any walk: RLC012, exit 2."""
    r = rlcat(*args)
    assert r.code == 2, r.err
    assert " RLC012 error: " in r.out + r.err and "not a folder of files; not read" in r.out + r.err
    assert "internal error" not in r.err and "Traceback" not in r.err
    assert len((r.out + r.err).splitlines()) <= 4  # one finding, not one per process


def test_a_link_that_cannot_be_read_is_described_not_a_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    """A link gone, or unreadable, between the look and the message (a process of /proc that ended)."""
    import os

    from rlcat.inside import link_target

    def gone(path: object) -> str:
        raise FileNotFoundError(2, "No such file or directory")

    monkeypatch.setattr(os, "readlink", gone)
    assert link_target("/somewhere/link") == "a target that cannot be read"

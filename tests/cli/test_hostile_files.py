"""Hostile files in a pull request's catalog or recipe folder: links out of the folder, link loops,
unreadable files and folders, FIFOs and devices, a platform that names its own key index, entries
that replace built-in ones, hidden folders, duplicate names, and kinds taken from where a file sits.

rlcat must never read what a link out points at (a secret in a `.env`, `/proc/self/environ`), never
hang on a FIFO, never crash, and say what is wrong with a diagnostic that names the file.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from rlcat.catalog import Catalog, builtin_root, kind_at
from rlcat.diagnostics import ExitCode, RlcatError
from rlcat.verl import index as verl_index

from conftest import REPO, Result

Run = Callable[..., Result]
SECRET = "hunter2-do-not-print-me"
SEED = "gsm8k_qwen3_8b_fsdp"  # a recipe that compiles on cuda
# As root, permission bits do not stop reads; without these capabilities they do again.
DROP_READ_OVERRIDE = [
    "setpriv",
    "--inh-caps=-dac_override,-dac_read_search",
    "--bounding-set=-dac_override,-dac_read_search",
]


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Run from tmp (diagnostics name files relative to it), with no user catalog from the environment."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RLCAT_PATH", raising=False)


def make_repo(root: Path) -> Path:
    """A recipe repository with one good recipe, `mine`, and an empty folder of each catalog kind."""
    for folder in ("recipes", "catalog/models", "catalog/datasets", "catalog/platforms"):
        (root / folder).mkdir(parents=True)
    text = (REPO / "recipes" / f"{SEED}.yaml").read_text(encoding="utf-8")
    (root / "recipes" / "mine.yaml").write_text(text.replace(f"name: {SEED}", "name: mine"), encoding="utf-8")
    return root


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo")


@pytest.fixture
def secret_file(tmp_path: Path) -> Path:
    """A `.env` outside the repository, whose secret must never reach any output."""
    outside = tmp_path / "outside"
    outside.mkdir()
    env = outside / ".env"
    env.write_text(f"API_TOKEN={SECRET}\n", encoding="utf-8")
    (outside / "stolen.yaml").write_text(f"name: stolen\nsummary: {SECRET}\n", encoding="utf-8")
    return env


def commands(repo: Path) -> dict[str, list[str]]:
    """The three commands that read a catalog, each pointed at the repository."""
    return {
        "validate": ["validate", str(repo)],
        "compile": ["compile", "mine", "--catalog", str(repo)],
        "list": ["list", "--catalog", str(repo)],
    }


# validate reports findings (exit 1); compile and list refuse the catalog (exit 2)
EXPECTED_EXIT = {"validate": ExitCode.FINDINGS, "compile": ExitCode.INPUT, "list": ExitCode.INPUT}


def assert_no_crash(result: Result) -> None:
    for stream in (result.out, result.err):
        assert "Traceback" not in stream and "internal error" not in stream, stream
    assert result.code != ExitCode.INTERNAL


def findings(result: Result) -> str:
    """Everything a command said: validate reports on stdout, the other commands on stderr."""
    return result.out + result.err


# --- links out of the folder -----------------------------------------------------------------------


@dataclass(frozen=True)
class LinkOut:
    link: str  # where the link sits in the repository
    target: str  # "file": the secret .env; "folder": the folder holding it


LINKS_OUT = {
    "recipe-link-to-dotenv": LinkOut("recipes/evil.yaml", "file"),
    "model-link-to-dotenv": LinkOut("catalog/models/evil.yaml", "file"),
    "nested-dataset-yml-link-to-dotenv": LinkOut("catalog/datasets/nested/evil.yml", "file"),
    "recipe-folder-link-out": LinkOut("recipes/leak", "folder"),
    "whole-platform-folder-is-a-link-out": LinkOut("catalog/platforms", "folder"),
}


@pytest.mark.parametrize("command", ["validate", "compile", "list"])
@pytest.mark.parametrize("case", LINKS_OUT.values(), ids=LINKS_OUT.keys())
def test_link_out_of_the_repository_is_reported_and_never_read(
    rlcat: Run, repo: Path, secret_file: Path, case: LinkOut, command: str
) -> None:
    link = repo / case.link
    link.parent.mkdir(parents=True, exist_ok=True)
    if link.is_dir():
        link.rmdir()
    link.symlink_to(secret_file if case.target == "file" else secret_file.parent)
    result = rlcat(*commands(repo)[command])
    assert_no_crash(result)
    assert SECRET not in result.out + result.err
    assert result.code == EXPECTED_EXIT[command], findings(result)
    reported = [line for line in findings(result).splitlines() if " RLC011 " in line]
    assert reported, findings(result)
    assert any(line.startswith(f"repo/{case.link} ") for line in reported), reported
    assert any(str(secret_file if case.target == "file" else secret_file.parent) in line for line in reported)


def test_a_directly_named_link_out_is_reported_and_never_read(
    rlcat: Run, repo: Path, secret_file: Path
) -> None:
    """`rlcat validate $(git diff --name-only)` names the link itself."""
    link = repo / "recipes" / "evil.yaml"
    link.symlink_to(secret_file)
    result = rlcat("validate", str(link), "--format", "json")
    assert_no_crash(result)
    assert SECRET not in result.out + result.err
    (finding,) = json.loads(result.out)["diagnostics"]
    assert (finding["code"], finding["file"]) == ("RLC011", "repo/recipes/evil.yaml")


def test_link_to_proc_self_environ_never_prints_the_environment(repo: Path, tmp_path: Path) -> None:
    """A real process: /proc/self/environ holds the environment rlcat was started with."""
    (repo / "recipes" / "env.yaml").symlink_to("/proc/self/environ")
    (repo / "catalog" / "models" / "env.yaml").symlink_to("/proc/self/environ")
    environment = {**os.environ, "RLCAT_TEST_TOKEN": SECRET}
    environment.pop("RLCAT_PATH", None)
    for command, argv in commands(repo).items():
        proc = subprocess.run(
            [sys.executable, "-m", "rlcat", *argv],
            cwd=tmp_path,
            env=environment,
            capture_output=True,
            text=True,
            check=False,
        )
        said = proc.stdout + proc.stderr
        assert SECRET not in said, command
        assert "Traceback" not in said, said
        assert proc.returncode == EXPECTED_EXIT[command], said
        assert "repo/recipes/env.yaml RLC011 error: " in said and "/proc/self/environ" in said, said


def test_links_inside_the_repository_are_followed(rlcat: Run, repo: Path) -> None:
    """Not every link is hostile: one into a folder of the same repository is followed, and two ways
    into one folder give its entries once (no loop, no duplicate)."""
    library = repo / "library"
    library.mkdir()
    (repo / "recipes" / "mine.yaml").rename(library / "mine.yaml")
    (repo / "recipes" / "shared").symlink_to("../library")
    (repo / "recipes" / "again").symlink_to("../library")
    listed = rlcat("list", "--catalog", str(repo), "--format", "json")
    assert listed.code == 0, listed.err
    assert "mine" in {row["name"] for row in json.loads(listed.out)}
    validated = rlcat("validate", str(repo / "recipes"), "--format", "json", "--platform", "cuda")
    report = json.loads(validated.out)
    assert [d["code"] for d in report["diagnostics"] if d["severity"] == "error"] == []
    assert report["files"] == 1


# --- link loops ----------------------------------------------------------------------------------

LOOPS = {
    "folder-links-to-itself": [("recipes/loop", ".")],
    "folder-links-to-its-parent": [("recipes/sub/up", "..")],
    "model-folder-links-to-the-root": [("catalog/models/root", "../..")],
    "two-file-links-point-at-each-other": [("recipes/a.yaml", "b.yaml"), ("recipes/b.yaml", "a.yaml")],
    "file-link-to-itself": [("catalog/datasets/self.yaml", "self.yaml")],
}


@pytest.mark.parametrize("command", ["validate", "compile", "list"])
@pytest.mark.parametrize("links", LOOPS.values(), ids=LOOPS.keys())
def test_link_loop_is_reported_never_followed(
    rlcat: Run, repo: Path, links: list[tuple[str, str]], command: str
) -> None:
    for where, target in links:
        (repo / where).parent.mkdir(parents=True, exist_ok=True)
        (repo / where).symlink_to(target)
    result = rlcat(*commands(repo)[command])
    assert_no_crash(result)
    assert result.code == EXPECTED_EXIT[command], findings(result)
    loop_lines = [line for line in findings(result).splitlines() if " RLC011 error: link loop" in line]
    assert {line.split(" ")[0] for line in loop_lines} == {f"repo/{where}" for where, _ in links}


# --- FIFOs and devices ---------------------------------------------------------------------------


class WatchedFifo:
    """A FIFO with a writer waiting for a reader: if rlcat opened it, the writer gets through (and
    rlcat reads to the end instead of hanging), so `opened` says whether anyone did."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(path)
        self.path = path
        self.opened_by_rlcat = False
        self._releasing = False
        self._writer = threading.Thread(target=self._write)
        self._writer.start()

    def _write(self) -> None:
        with open(self.path, "wb") as fifo:  # blocks until a reader opens the FIFO
            self.opened_by_rlcat = not self._releasing
            fifo.write(b"name: from_a_fifo\n")

    def release(self) -> None:
        """Open the read end ourselves so the writer finishes."""
        self._releasing = True
        reader = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
        try:
            self._writer.join()
        finally:
            os.close(reader)


@pytest.fixture
def watch_fifo() -> Iterator[Callable[[Path], WatchedFifo]]:
    made: list[WatchedFifo] = []

    def make(path: Path) -> WatchedFifo:
        made.append(WatchedFifo(path))
        return made[-1]

    yield make
    for fifo in made:
        fifo.release()


FIFOS = {
    "fifo-as-recipe": "recipes/pipe.yaml",
    "fifo-as-model": "catalog/models/pipe.yaml",
    "fifo-as-nested-platform": "catalog/platforms/more/pipe.yml",
}


@pytest.mark.parametrize("command", ["validate", "compile", "list"])
@pytest.mark.parametrize("where", FIFOS.values(), ids=FIFOS.keys())
def test_fifo_where_an_entry_is_expected_is_never_opened(
    rlcat: Run, repo: Path, watch_fifo: Callable[[Path], WatchedFifo], where: str, command: str
) -> None:
    fifo = watch_fifo(repo / where)
    result = rlcat(*commands(repo)[command])
    assert not fifo.opened_by_rlcat
    assert_no_crash(result)
    assert result.code == ExitCode.INPUT, findings(result)  # not a regular file: nothing read
    assert f"repo/{where} RLC012 error: " in findings(result), findings(result)
    assert "named pipe" in findings(result)


def test_fifo_named_on_the_command_line_is_never_opened(
    rlcat: Run, repo: Path, watch_fifo: Callable[[Path], WatchedFifo]
) -> None:
    fifo = watch_fifo(repo / "recipes" / "pipe.yaml")
    result = rlcat("validate", str(fifo.path), "--format", "json")
    assert not fifo.opened_by_rlcat
    assert [d["code"] for d in json.loads(result.out)["diagnostics"]] == ["RLC012"]


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero on this system")
def test_dev_zero_is_not_a_recipe(rlcat: Run, repo: Path) -> None:
    """Named directly it is a device (RLC012); linked from a catalog it is a link out (RLC011).
    Either way it is never read, which would never end."""
    direct = rlcat("validate", "/dev/zero", "--format", "json")
    (finding,) = json.loads(direct.out)["diagnostics"]
    assert (finding["code"], finding["file"]) == ("RLC012", "/dev/zero")
    assert "character device" in finding["message"]
    (repo / "recipes" / "zero.yaml").symlink_to("/dev/zero")
    for command, argv in commands(repo).items():
        result = rlcat(*argv)
        assert_no_crash(result)
        assert result.code == EXPECTED_EXIT[command]
        assert "repo/recipes/zero.yaml RLC011 error: " in findings(result)


# --- unreadable files and folders ----------------------------------------------------------------


Runner = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def make_unreadable() -> Iterator[Callable[[Path], Runner]]:
    """Make a path unreadable and return a runner of rlcat for which it really is (as root, through
    setpriv without the capabilities that override permission bits); skip when that is impossible.
    The modes are given back afterwards, so that tmp can be removed by a user who is not root."""
    locked: list[tuple[Path, int]] = []
    prefix = DROP_READ_OVERRIDE if os.geteuid() == 0 and shutil.which("setpriv") else []
    cwd = Path.cwd()

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        environment = {k: v for k, v in os.environ.items() if k != "RLCAT_PATH"}
        return subprocess.run(
            [*prefix, sys.executable, "-m", "rlcat", *argv],
            cwd=cwd,
            env=environment,
            capture_output=True,
            text=True,
            check=False,
        )

    def make(path: Path) -> Runner:
        locked.append((path, stat.S_IMODE(path.stat().st_mode)))
        path.chmod(0)
        probe_code = "import os, sys; sys.exit(0 if os.access(sys.argv[1], os.R_OK) else 1)"
        if (
            subprocess.run([*prefix, sys.executable, "-c", probe_code, str(path)], check=False).returncode
            == 0
        ):
            pytest.skip(
                "running as root, and setpriv could not drop CAP_DAC_OVERRIDE: "
                "permission bits do not stop reads"
            )
        return run

    yield make
    for path, mode in locked:
        path.chmod(mode)


UNREADABLE = {
    "unreadable-recipe-file": "recipes/locked.yaml",
    "unreadable-model-file": "catalog/models/locked.yaml",
    "unreadable-recipe-folder": "recipes/locked",
    "unreadable-dataset-folder": "catalog/datasets/private",
}


@pytest.mark.parametrize("where", UNREADABLE.values(), ids=UNREADABLE.keys())
def test_unreadable_file_or_folder_is_reported(
    repo: Path, make_unreadable: Callable[[Path], Runner], where: str
) -> None:
    path = repo / where
    if path.suffix:
        path.write_text("name: locked\n", encoding="utf-8")
    else:
        path.mkdir()
        (path / "inside.yaml").write_text("name: inside\n", encoding="utf-8")
    run = make_unreadable(path)
    for command, argv in commands(repo).items():
        proc = run(*argv)
        said = proc.stdout + proc.stderr
        assert "Traceback" not in said and "internal error" not in said, said
        assert proc.returncode == ExitCode.INPUT, f"{command}: {said}"
        assert f"repo/{where} RLC001 error: cannot read" in said, f"{command}: {said}"


def test_file_inside_an_unreadable_folder_named_directly(
    repo: Path, make_unreadable: Callable[[Path], Runner]
) -> None:
    """It crashed: finding the catalog root of the file stat'ed it."""
    folder = repo / "recipes" / "locked"
    folder.mkdir()
    (folder / "x.yaml").write_text("name: x\n", encoding="utf-8")
    run = make_unreadable(folder)
    proc = run("validate", "repo/recipes/locked/x.yaml", "--format", "json")
    assert proc.returncode == ExitCode.INPUT, proc.stderr
    (finding,) = json.loads(proc.stdout)["diagnostics"]
    assert (finding["code"], finding["file"]) == ("RLC001", "repo/recipes/locked/x.yaml")


# --- a platform's key index ----------------------------------------------------------------------


def write_platform(repo: Path, name: str, verl_index_value: str) -> Path:
    text = (REPO / "catalog" / "platforms" / "cuda.yaml").read_text(encoding="utf-8")
    lines = [
        f"name: {name}" if line.startswith("name:") else line
        for line in text.splitlines()
        if not line.startswith("verl_index:")
    ]
    path = repo / "catalog" / "platforms" / f"{name}.yaml"
    path.write_text("\n".join([*lines, f"verl_index: {verl_index_value}", ""]), encoding="utf-8")
    return path


def plant_permissive_index(folder: Path) -> None:
    """A key index that would accept any key, as an attacker would plant it."""
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text('{"format": 1, "entries": []}', encoding="utf-8")
    (folder / "ppo_trainer.json").write_text(
        json.dumps({"keys": {}, "open": ["trainer", "actor_rollout_ref"], "groups": {}}), encoding="utf-8"
    )


PLANTED = {
    "dotdot-path": "../../../tmp/evil",
    "relative-to-the-planted-index": "<relative>",
    "absolute-path": "<absolute>",
    "release-with-a-suffix": "0.9.1/../../planted",
}


@pytest.mark.parametrize("value", PLANTED.values(), ids=PLANTED.keys())
def test_verl_index_must_name_a_release_not_a_path(
    rlcat: Run, repo: Path, tmp_path: Path, value: str
) -> None:
    planted = tmp_path / "planted"
    plant_permissive_index(planted)
    shipped = builtin_root() / "schemas" / "verl"
    value = {"<relative>": os.path.relpath(planted, shipped), "<absolute>": str(planted)}.get(value, value)
    profile = write_platform(repo, "evil", value)
    compiled = rlcat(
        "compile", "mine", "--platform", "evil", "--catalog", str(repo), "--override", "trainer.no_such_key=1"
    )
    assert_no_crash(compiled)
    assert compiled.code == ExitCode.INPUT and compiled.out == ""
    assert f"repo/catalog/platforms/{profile.name}:" in compiled.err
    assert " RLC103 error: " in compiled.err and "[verl_index]" in compiled.err
    validated = json.loads(rlcat("validate", str(profile), "--format", "json").out)
    assert [(d["code"], d["key"]) for d in validated["diagnostics"]] == [("RLC103", "verl_index")]


def test_verl_index_of_a_release_without_an_index(rlcat: Run, repo: Path) -> None:
    profile = write_platform(repo, "future", "9.9.9")
    have = ", ".join(verl_index.available_versions())
    validated = json.loads(rlcat("validate", str(profile), "--format", "json").out)
    (finding,) = validated["diagnostics"]
    line = profile.read_text(encoding="utf-8").splitlines().index("verl_index: 9.9.9") + 1
    assert (finding["code"], finding["key"], finding["line"]) == ("RLC404", "verl_index", line)
    assert f"(have: {have})" in finding["message"]
    compiled = rlcat("compile", "mine", "--platform", "future", "--catalog", str(repo))
    assert compiled.code == ExitCode.INPUT
    assert f"RLC404 error: no key index for verl 9.9.9 (have: {have})" in compiled.err


@pytest.mark.parametrize("version", ["../0.9.1", "0.9.1/..", "/etc", "", ".", "0.9.1/../0.9.0"])
def test_index_dir_refuses_anything_but_a_shipped_release(version: str) -> None:
    with pytest.raises(RlcatError) as refused:
        verl_index.index_dir(version)
    (finding,) = refused.value.diagnostics
    assert finding.code == "RLC404" and "have: " in finding.message


@pytest.fixture
def index_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A copy of the shipped key index of the release cuda runs, in place of the shipped one."""
    schemas = tmp_path / "schemas"
    shutil.copytree(REPO / "schemas" / "verl" / "0.9.1", schemas / "verl" / "0.9.1")
    cached = (verl_index.available_versions, verl_index.manifest, verl_index.load_index)
    for function in cached:
        function.cache_clear()
    monkeypatch.setattr(verl_index, "schemas_dir", lambda: schemas)
    yield schemas / "verl"
    for function in cached:
        function.cache_clear()


def test_a_link_planted_among_the_shipped_indexes_is_not_a_release(index_copy: Path, tmp_path: Path) -> None:
    plant_permissive_index(tmp_path / "planted")
    (index_copy / "9.9.9").symlink_to(tmp_path / "planted")
    assert verl_index.available_versions() == ("0.9.1",)
    with pytest.raises(RlcatError) as refused:
        verl_index.index_dir("9.9.9")
    assert refused.value.diagnostics[0].code == "RLC404"


DAMAGED = {
    "not-json": "{not json",
    "not-utf8": b"\xff\xfe{}",
    "top-level-list": "[]",
    "keys-not-an-object": '{"keys": [], "open": [], "groups": {}}',
    "key-entry-not-a-pair": '{"keys": {"trainer.x": 1}, "open": [], "groups": {}}',
    "groups-not-lists": '{"keys": {}, "open": [], "groups": {"actor": "dp"}}',
    "open-not-a-list-of-keys": '{"keys": {}, "open": [1, 2], "groups": {}}',
}


@pytest.mark.parametrize("content", DAMAGED.values(), ids=DAMAGED.keys())
def test_damaged_key_index_is_a_diagnostic(rlcat: Run, index_copy: Path, content: str | bytes) -> None:
    target = index_copy / "0.9.1" / "ppo_trainer.json"
    if isinstance(content, bytes):
        target.write_bytes(content)
    else:
        target.write_text(content, encoding="utf-8")
    result = rlcat("compile", SEED, "--platform", "cuda")
    assert_no_crash(result)
    assert result.code == ExitCode.INPUT and result.out == ""
    assert "RLC404 error: the key index of verl 0.9.1 is damaged: ppo_trainer.json" in result.err


# --- trust between catalogs ----------------------------------------------------------------------

SHADOWS = {
    "model": "catalog/models/qwen3_8b.yaml",
    "dataset": "catalog/datasets/gsm8k.yaml",
    "recipe": f"recipes/{SEED}.yaml",
    "platform": "catalog/platforms/cuda.yaml",
    "platform-as-yml": "catalog/platforms/cuda.yml",
}


def edited_copy(builtin: Path, target: Path) -> None:
    """A built-in entry as a pull request might change it (an identical copy replaces nothing)."""
    target.write_text(
        builtin.read_text(encoding="utf-8") + "# edited in the pull request\n", encoding="utf-8"
    )


@pytest.mark.parametrize("where", SHADOWS.values(), ids=SHADOWS.keys())
def test_entry_that_replaces_a_built_in_one_is_a_warning_naming_both(
    rlcat: Run, repo: Path, where: str
) -> None:
    builtin = builtin_root() / where.replace(".yml", ".yaml")
    edited_copy(builtin, repo / where)
    loose = rlcat("validate", str(repo), "--format", "json", "--platform", "cuda")
    assert loose.code == ExitCode.OK, loose.out
    (warning,) = [d for d in json.loads(loose.out)["diagnostics"] if d["code"] == "RLC206"]
    assert warning["severity"] == "warning"
    assert warning["file"] == f"repo/{where}"
    assert str(builtin) in warning["message"]
    strict = rlcat("validate", str(repo), "--platform", "cuda", "--strict")
    assert strict.code == ExitCode.FINDINGS
    assert f"repo/{where} RLC206 warning: " in strict.out


@pytest.mark.parametrize("where", SHADOWS.values(), ids=SHADOWS.keys())
def test_an_identical_copy_of_a_built_in_entry_replaces_nothing(rlcat: Run, repo: Path, where: str) -> None:
    """A recipes repository that vendors rlcat's own entries unchanged gets no warning."""
    shutil.copy(builtin_root() / where.replace(".yml", ".yaml"), repo / where)
    result = rlcat("validate", str(repo), "--format", "json", "--platform", "cuda", "--strict")
    assert result.code == ExitCode.OK, result.out
    assert "RLC206" not in result.out


def test_replaced_built_ins_for_what_a_compile_used(repo: Path) -> None:
    """What the pipeline asks to print the warning on stderr: only for the files a compile used."""
    edited_copy(builtin_root() / "catalog/models/qwen3_8b.yaml", repo / "catalog/models/qwen3_8b.yaml")
    edited_copy(builtin_root() / "catalog/platforms/rocm.yaml", repo / "catalog/platforms/rocm.yaml")
    catalog = Catalog.default([repo])
    model_file = catalog.find("model", "qwen3_8b")
    assert model_file == repo / "catalog/models/qwen3_8b.yaml"
    (warning,) = catalog.replaced_builtins([model_file, "recipes/other.yaml", None])
    assert (warning.code, warning.file) == ("RLC206", "repo/catalog/models/qwen3_8b.yaml")
    (platform_warning,) = catalog.replaced_builtins(["repo/catalog/platforms/rocm.yaml"])
    assert platform_warning.file == "repo/catalog/platforms/rocm.yaml"
    assert catalog.replaced_builtins([builtin_root() / "catalog/models/qwen3_8b.yaml"]) == []


def test_the_built_in_catalog_replaces_nothing_when_it_is_also_a_user_folder() -> None:
    catalog = Catalog.default([builtin_root(), builtin_root() / "recipes"])
    used = [catalog.find("recipe", SEED), catalog.find("model", "qwen3_8b")]
    assert catalog.replaced_builtins(used) == []


HIDDEN = {
    "github-folder": ".github/recipes/sneaky.yaml",
    "dot-folder-in-recipes": "recipes/.x/sneaky.yaml",
    "dot-file-in-recipes": "recipes/.sneaky.yaml",
    "dot-folder-in-models": "catalog/models/.x/sneaky.yaml",
}


@pytest.mark.parametrize("where", HIDDEN.values(), ids=HIDDEN.keys())
def test_hidden_files_and_folders_are_ignored_by_lookups_and_validate_alike(
    rlcat: Run, repo: Path, where: str
) -> None:
    hidden = repo / where
    hidden.parent.mkdir(parents=True, exist_ok=True)
    hidden.write_text("this: [is not, an entry\n", encoding="utf-8")
    validated = json.loads(rlcat("validate", str(repo), "--format", "json", "--platform", "cuda").out)
    assert validated["files"] == 1 and validated["diagnostics"] == []
    catalog = Catalog.default([repo])
    assert all("sneaky" not in catalog.names(kind) for kind in ("recipe", "model"))


def test_hidden_shadow_of_a_built_in_model_is_not_used(repo: Path) -> None:
    (repo / "catalog/models/.x").mkdir()
    (repo / "catalog/models/.x/qwen3_8b.yaml").write_text("name: qwen3_8b\n", encoding="utf-8")
    assert (
        Catalog.default([repo]).find("model", "qwen3_8b") == builtin_root() / "catalog/models/qwen3_8b.yaml"
    )


def test_a_folder_of_recipes_skips_hidden_folders_and_catalog_kinds(rlcat: Run, tmp_path: Path) -> None:
    """A user folder without recipes/ holds recipes directly: its .github workflows are not recipes,
    nor are its catalog/models entries (a model is a model wherever the walk starts)."""
    folder = tmp_path / "mine"
    (folder / ".github" / "workflows").mkdir(parents=True)
    (folder / ".github" / "workflows" / "ci.yaml").write_text("on: push\n", encoding="utf-8")
    (folder / "catalog" / "models").mkdir(parents=True)
    (folder / "catalog" / "datasets").mkdir(parents=True)
    for kind in ("models", "datasets"):  # one name in two kinds is no duplicate
        (folder / "catalog" / kind / "same.yaml").write_text("name: same\n", encoding="utf-8")
    (folder / "run.yaml").write_text(
        (REPO / "recipes" / f"{SEED}.yaml").read_text(encoding="utf-8").replace(f"name: {SEED}", "name: run"),
        encoding="utf-8",
    )
    result = rlcat("list", "--catalog", str(folder), "--format", "json")
    assert result.code == 0, result.err
    names = {row["name"] for row in json.loads(result.out)}
    assert "run" in names and not names & {"ci", "same"}


DUPLICATES = {
    "yaml-and-yml": ("recipes/twin.yaml", "recipes/twin.yml"),
    "nested-folder": ("recipes/twin.yaml", "recipes/nested/twin.yaml"),
    "model-yml-in-a-sub-folder": ("catalog/models/twin.yaml", "catalog/models/sub/twin.yml"),
    "two-platforms": ("catalog/platforms/a/twin.yaml", "catalog/platforms/b/twin.yaml"),
}


@pytest.mark.parametrize(("first", "second"), DUPLICATES.values(), ids=DUPLICATES.keys())
def test_two_entries_with_one_name_in_one_folder_are_an_error_naming_both(
    rlcat: Run, repo: Path, first: str, second: str
) -> None:
    for where in (first, second):
        (repo / where).parent.mkdir(parents=True, exist_ok=True)
        (repo / where).write_text("name: twin\n", encoding="utf-8")
    validated = rlcat("validate", str(repo), "--format", "json")
    assert validated.code == ExitCode.FINDINGS
    (duplicate,) = [d for d in json.loads(validated.out)["diagnostics"] if d["code"] == "RLC207"]
    assert f"repo/{first}" in duplicate["message"] and f"repo/{second}" in duplicate["message"]
    compiled = rlcat("compile", "mine", "--catalog", str(repo))
    assert compiled.code == ExitCode.INPUT
    assert " RLC207 error: " in compiled.err and f"repo/{second}" in compiled.err


@pytest.mark.parametrize("named", ["twin.yaml", "twin.yml"])
def test_compile_and_validate_refuse_a_yml_beside_a_yaml_outside_any_catalog(
    rlcat: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, named: str
) -> None:
    """A folder of recipe files that is no catalog (no recipes/ or catalog/ in it): `x.yml` beside
    `x.yaml` is one name twice, and `rlcat compile PATH` and `rlcat validate` say so alike (RLC207),
    whichever of the two is named; neither picks one."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine").mkdir()
    parent = f"name: twin\nextends: {SEED}\nsummary: "
    (tmp_path / "mine" / "twin.yaml").write_text(parent + "the yaml one\n", encoding="utf-8")
    (tmp_path / "mine" / "twin.yml").write_text(parent + "the yml one\n", encoding="utf-8")
    expected = "mine/twin.yml RLC207 error: two recipes named 'twin' in one catalog folder: mine/twin.yaml"
    for args in (["validate", "mine"], ["validate", f"mine/{named}"], ["compile", f"mine/{named}"]):
        r = rlcat(*args)
        assert r.code == (ExitCode.FINDINGS if args[0] == "validate" else ExitCode.INPUT), (args, r.err)
        assert expected in r.out + r.err, args
        assert "the yml one" not in r.out and "the yaml one" not in r.out


def test_one_name_in_two_user_folders_is_the_search_order_not_a_duplicate(rlcat: Run, tmp_path: Path) -> None:
    first, second = make_repo(tmp_path / "first"), make_repo(tmp_path / "second")
    result = rlcat("compile", "mine", "--catalog", str(first), "--catalog", str(second))
    assert result.code == ExitCode.OK, result.err
    assert Catalog.default([first, second]).find("recipe", "mine") == first / "recipes" / "mine.yaml"


# --- the kind of an entry comes from where it sits -----------------------------------------------


def test_linked_model_entry_is_validated_as_a_model(rlcat: Run, repo: Path) -> None:
    """It was validated as a recipe: its kind was read from where the link led."""
    shared = repo / "shared"
    shared.mkdir()
    model = (REPO / "catalog/models/qwen3_8b.yaml").read_text(encoding="utf-8")
    (shared / "linked_model.yaml").write_text(
        model.replace("name: qwen3_8b", "name: linked_model"), encoding="utf-8"
    )
    (repo / "catalog/models/linked_model.yaml").symlink_to("../../shared/linked_model.yaml")
    result = rlcat("validate", str(repo / "catalog"), "--format", "json")
    assert result.code == ExitCode.OK, result.out
    assert json.loads(result.out)["files"] == 1
    assert Catalog.default([repo]).find("model", "linked_model") == repo / "catalog/models/linked_model.yaml"


def test_recipe_linking_to_a_model_file_is_validated_as_a_recipe(rlcat: Run, repo: Path) -> None:
    model = (REPO / "catalog/models/qwen3_8b.yaml").read_text(encoding="utf-8")
    (repo / "catalog/models/model_b.yaml").write_text(model.replace("name: qwen3_8b", "name: model_b"))
    (repo / "recipes" / "model_b.yaml").symlink_to("../catalog/models/model_b.yaml")
    as_model = rlcat("validate", str(repo / "catalog/models/model_b.yaml"), "--format", "json")
    assert as_model.code == ExitCode.OK, as_model.out
    as_recipe = rlcat("validate", str(repo / "recipes" / "model_b.yaml"), "--format", "json")
    codes = {d["code"] for d in json.loads(as_recipe.out)["diagnostics"]}
    assert {"RLC101", "RLC104"} & codes, codes  # a model's fields are not a recipe's


KINDS = {
    "model": ("catalog/models/x.yaml", "model"),
    "nested-dataset": ("catalog/datasets/a/b/x.yml", "dataset"),
    "platform": ("catalog/platforms/x.yaml", "platform"),
    "recipe": ("recipes/x.yaml", "recipe"),
    "top-level-file": ("x.yaml", "recipe"),
    "nearest-folder-wins": ("recipes/catalog/models/x.yaml", "model"),
    "catalog-without-a-kind": ("catalog/x.yaml", "recipe"),
}


@pytest.mark.parametrize(("where", "kind"), KINDS.values(), ids=KINDS.keys())
def test_kind_comes_from_the_folders_as_given(where: str, kind: str, tmp_path: Path) -> None:
    assert kind_at(Path(where).parts) == kind
    root = make_repo(tmp_path / "root")
    assert Catalog.default([root]).kind_of(root / where) == kind

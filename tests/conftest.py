"""Shared fixtures: the CLI in-process, the seed catalog, golden-file updating, verl trees."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings
from hypothesis.configuration import set_hypothesis_home_dir

from rlcat import __version__ as VERSION
from rlcat.catalog import Catalog
from rlcat.cli import main
from rlcat.dev.trees import VERL_VERSIONS, require_tree

# Property tests keep no example database: a run must not depend on what an earlier run on this
# machine found (a failure prints its example). Hypothesis's other caches go to a temporary folder of
# the run's own (made before any test is collected, removed at the end), never into the checkout.
settings.register_profile("rlcat", database=None)
settings.load_profile("rlcat")
_HYPOTHESIS_HOME = tempfile.mkdtemp(prefix="rlcat-hypothesis-")
set_hypothesis_home_dir(_HYPOTHESIS_HOME)


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(_HYPOTHESIS_HOME, ignore_errors=True)


REPO = Path(__file__).resolve().parent.parent
_CHECKOUT_BEFORE = pytest.StashKey[set[bytes] | None]()  # git status when the run began


def _checkout_status() -> set[bytes] | None:
    """The checkout's changed and untracked files as `git status` lists them; None outside git."""
    listed = subprocess.run(
        ["git", "-C", str(REPO), "status", "--porcelain=v1", "-z", "--untracked-files=all"],
        capture_output=True,
        check=False,
    )
    return set(listed.stdout.split(b"\0")) - {b""} if listed.returncode == 0 else None


def pytest_sessionstart(session: pytest.Session) -> None:
    if not hasattr(session.config, "workerinput"):  # the run's controller, once
        session.config.stash[_CHECKOUT_BEFORE] = _checkout_status()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """No test writes into the checkout (a stand-in's checkpoints under a Ray driver started in it
    did once, and were committed): a file the run changed or left fails the run, by name. Golden
    updates (RLCAT_UPDATE_GOLDEN) write there on purpose."""
    if hasattr(session.config, "workerinput") or os.environ.get("RLCAT_UPDATE_GOLDEN"):
        return
    before, after = session.config.stash.get(_CHECKOUT_BEFORE, None), _checkout_status()
    if before is None or after is None or after <= before:
        return
    written = sorted(entry.decode(errors="replace") for entry in after - before)
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line("tests wrote into the checkout: " + ", ".join(written), red=True)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED


# the hand-written recipes (goldens and the heavy compose tests iterate them) and the upstream
# examples imported from verl's own scripts (recipes/upstream/, tested lightly)
SEED_RECIPES = sorted(p.stem for p in (REPO / "recipes").glob("*.yaml"))
UPSTREAM_RECIPES = sorted(p.stem for p in (REPO / "recipes" / "upstream").glob("*.yaml"))
ENGINES = ("vllm", "sglang")
PLATFORMS = tuple(sorted(p.stem for p in (REPO / "catalog" / "platforms").rglob("*.yaml")))
# Golden files are rewritten, not compared, when this is set:
#   RLCAT_UPDATE_GOLDEN=1 pytest tests/cli/test_golden.py
# `rlcat launch --target slurm` with a container: the seed recipes' data folders mounted, their
# checkpoints accepted inside the container (RLC1014)
SLURM_SITE = ("--mount", "~/data:~/data", "--mount", "~/verl:~/verl", "--allow-outputs-in-container")
UPDATE_GOLDEN = bool(os.environ.get("RLCAT_UPDATE_GOLDEN"))


@dataclass
class Result:
    code: int
    out: str
    err: str


# Tiers: tests/unit and tests/cli are the inner loop (`pytest -m "not slow"`), less their cases
# marked slow (fuzzing, big inputs, the help examples that build a site or measure schema coverage);
# tests/verl composes with real verl trees, tests/e2e builds wheels, sites and hook environments, and
# tests/oracle runs verl's own start-up checks (`rlcat dev verl-oracle`'s environments), so all are
# slow. The inner loop needs no fetched verl tree, no network and no service.
SLOW_TIERS = ("verl", "e2e", "oracle")

# Help examples that a test of their own runs, word for word, and checks more closely than "exit 0":
# tests/cli/test_cli.py leaves them to that test, so the costly ones (seconds of compiles or Hydra
# composes each) run once per suite, not twice.
EXAMPLES_RUN_BY_THEIR_TEST = {
    "rlcat dev schema-coverage --top 40": "tests/cli/test_schema_coverage.py::test_coverage_report",
    "rlcat dev verl-index --check": "tests/verl/test_index_fresh.py::test_index_is_fresh",
    # it builds an environment of gigabytes when there is none: run only where one is built
    "rlcat dev verl-oracle --release 0.9.1": (
        "tests/oracle/test_runner.py::test_build_command_reuses_the_environment"
    ),
    # the two build the shipped site in copies of the checkout: the same site, byte for byte
    "rlcat docs build --out public": "tests/e2e/test_docs_site.py::test_two_builds_are_identical",
    # a team's site from the installed wheel, at the top of the team's repository
    "rlcat docs build --catalog . --out site": (
        "tests/e2e/test_team_docs.py::test_the_installed_rlcat_builds_the_team_site"
    ),
    "rlcat docs serve --port 0 --timeout 1": (
        "tests/e2e/test_docs_site.py::test_the_serve_example_builds_then_serves"
    ),
}


def docs_checkout(monkeypatch: pytest.MonkeyPatch, root: Path) -> Path:
    """A copy of what the docs are made of at `root`, as the checkout `rlcat docs` writes to (so a
    test never regenerates the real checkout's docs/)."""
    import rlcat.cli.docs

    for folder in ("catalog", "recipes", "schemas", "docs"):
        shutil.copytree(REPO / folder, root / folder)
    for name in ("pyproject.toml", "mkdocs.yml", "README.md"):
        shutil.copy(REPO / name, root / name)
    monkeypatch.setattr(rlcat.cli.docs, "repo_root", lambda: root)
    return root


def example_of(test: str) -> list[str]:
    """The arguments (after `rlcat`) of the help example that `test` runs."""
    (example,) = [e for e, runner in EXAMPLES_RUN_BY_THEIR_TEST.items() if runner.endswith(f"::{test}")]
    return shlex.split(example)[1:]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.relative_to(REPO / "tests").parts[0] in SLOW_TIERS:
            item.add_marker(pytest.mark.slow)


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """The real Ray and Slurm clusters share one xdist worker (`--dist loadgroup`). A pytest/xdist pair
    that drops the group would let them overlap and fail at random: stop before anything runs."""
    if not getattr(session.config.option, "loadgroup", False):
        return
    for item in session.items:
        if item.get_closest_marker("xdist_group") and "@" not in item.nodeid:
            raise pytest.UsageError(
                f"pytest-xdist ignored the xdist_group of {item.nodeid}: "
                "install a pytest that the project's test extra allows"
            )


@pytest.fixture
def rlcat(capsys: pytest.CaptureFixture[str]) -> Callable[..., Result]:
    """Run `rlcat ARGS...` in-process as the console script does; returns exit code, stdout and stderr."""

    def run(*args: str) -> Result:
        capsys.readouterr()
        code = main(list(args))
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return run


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    return Catalog.default()


# --- real verl release trees (tests/verl; never fetched from here) ---

IndexLoader = Callable[[str, str], dict[str, Any]]


@pytest.fixture(scope="session")
def verl_trees() -> dict[str, Path]:
    """tests/verl: the fetched tree of every known release; fail (not skip) with the fetch command.

    Failing rather than skipping keeps a missing tree from silently turning the index freshness
    check green; deselect with ``-m "not compose"`` where no trees are available.
    """
    try:
        return {version: require_tree(version) for version in VERL_VERSIONS}
    except FileNotFoundError as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture(scope="session")
def index_dir() -> Path:
    """Return the committed key index folder (``schemas/verl``)."""
    return REPO / "schemas" / "verl"


@pytest.fixture(scope="session")
def load_index(index_dir: Path) -> IndexLoader:
    """Return a reader for one committed index file: ``load_index(version, file_name)``."""

    def load(version: str, file_name: str) -> dict[str, Any]:
        data = json.loads((index_dir / version / file_name).read_text(encoding="utf-8"))
        assert isinstance(data, dict)
        return data

    return load


# --- verl's own start-up checks (tests/oracle; the environments are never built from here) ---

# The seed of tests/oracle's perturbations: which plans each class of mistake is applied to.
ORACLE_SEED = int(os.environ.get("RLCAT_ORACLE_SEED", "21"))


def pytest_report_header() -> str:
    return f"verl oracle perturbations: seed {ORACLE_SEED} (set RLCAT_ORACLE_SEED to change it)"


@pytest.fixture(scope="session")
def verl_oracles() -> Iterator[dict[str, Any]]:
    """The verl oracle (rlcat.dev.verl_oracle.Oracle) of every release whose environment `rlcat dev
    verl-oracle` built, one runner process each for the whole session; a release without one is
    absent (its tests skip and say how to build it)."""
    from rlcat.dev.oracle_env import is_complete
    from rlcat.dev.verl_oracle import Oracle

    with contextlib.ExitStack() as stack:
        yield {v: stack.enter_context(Oracle(v)) for v in VERL_VERSIONS if is_complete(v)}


@pytest.fixture(scope="session")
def catalog_site() -> Any:
    """Every built-in recipe compiled on every platform, engine, mode and backend, as the docs are
    (rlcat.docsite.data.Site): the plans the differential tier judges."""
    from rlcat.catalog import builtin_root
    from rlcat.docsite.data import load_site

    return load_site(builtin_root())


def compile_cell(cell: Any, overrides: Sequence[str]) -> tuple[Any, list[Any]]:
    """rlcat's compile of a catalog cell (rlcat.docsite.data.Cell) with `overrides` on its command
    line (`--override`), as a user would: the plan (None when rlcat refuses it) and its errors."""
    from rlcat.compile.assemble import Request, compile_request
    from rlcat.diagnostics import RlcatError, Severity

    request = Request(
        cell.recipe,
        cell.platform,
        engine=cell.engine,
        mode=cell.mode,
        backend=cell.backend,
        allow_known_broken=True,
    )
    request.overrides = list(overrides)
    try:
        compiled = compile_request(request)
    except RlcatError as exc:
        return None, [d for d in exc.diagnostics if d.severity == Severity.ERROR]
    return compiled, [d for d in compiled.diagnostics if d.severity == Severity.ERROR]


def skip_without_oracle(oracles: dict[str, Any], version: str) -> None:
    if version not in oracles:
        from rlcat.dev.oracle_env import BUILD_COMMAND, env_dir

        pytest.skip(
            f"no verl {version} oracle environment at {env_dir(version)}: "
            f"build it once with `{BUILD_COMMAND} --release {version}` (tests never download)"
        )


# --- what a run builds once and every xdist worker shares ---


def built_once(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]) -> Path:
    """The folder `name`, filled by `build(folder)` once per test run, whichever worker asks first.

    Each pytest-xdist worker has its own session (a session fixture runs once per worker), but all
    of them share the run's temporary folder: the first to take the lock builds, the others wait and
    reuse. Without xdist the folder is the session's own. A build that failed is started over, from
    an empty folder, by the next one that asks."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    folder = shared / f"once-{name}"
    with (shared / f"once-{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / ".built").is_file():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            build(folder)
            (folder / ".built").touch()
    return folder


@pytest.fixture(scope="session")
def rlcat_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """rlcat's wheel, as `pip wheel .` builds it from the checkout (once per run)."""

    def build(dist: Path) -> None:
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "wheel",
                "--no-deps",
                "--no-build-isolation",
                "-q",
                "-w",
                str(dist),
                str(REPO),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        assert run.returncode == 0, run.stderr

    (wheel,) = built_once(tmp_path_factory, "wheel", build).glob("rlcat-*.whl")
    assert wheel.name.startswith(f"rlcat-{VERSION}-")
    return wheel


@pytest.fixture(scope="session")
def reference_imports(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Any]:
    """`import_reference` of tests/cli/import_helpers.py, run once per reference script in a worker:
    the round-trip test and the Hydra proofs (tests/verl/test_import_whole.py, test_import_compose.py)
    import the same 67 scripts, and run on one xdist worker (xdist_group "reference-imports") to
    share them."""
    from cli.import_helpers import import_reference

    done: dict[str, Any] = {}

    def get(name: str) -> Any:
        if name not in done:
            done[name] = import_reference(name, tmp_path_factory.mktemp(f"import-{name}"))
        return done[name]

    return get

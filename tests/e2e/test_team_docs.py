"""A team's docs site from an installed rlcat: `pip install rlcat[docs]` from rlcat's wheel into a
fresh virtualenv (offline, from the wheelhouses `rlcat dev fetch-verl` fills), a team catalog in a
folder outside the checkout (a recipe extending a built-in one, a model, a platform profile and a
measured result with a series), `rlcat docs build --catalog team --out site`, the site served on
127.0.0.1 and read in headless Chromium: the pages load, every internal link of the pages visited
answers 200, the team's recipe page lists its result and draws its series, the figures are SVG
that is not empty, the support matrix grid's colours are the statuses of the compiled catalog, and
the team's text shows as text. One build, one browser session. `--no-builtin` is built in-process on a catalog
that needs nothing built-in.

The browser part needs what tests/e2e/test_docs_site.py needs (and skips, or fails with
RLCAT_REQUIRE_BROWSER=1, the same way)."""

from __future__ import annotations

import _thread
import contextlib
import html
import io
import json
import re
import signal
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import test_docs_site as docs_site
import yaml
from test_team_repo import _pip_env, _run, _venv, wheels  # noqa: F401 - `wheels` is a fixture

from rlcat import __version__ as VERSION
from rlcat.catalog import Catalog, builtin_root
from rlcat.cli import main
from rlcat.cli.docs import Rebuilder
from rlcat.dev import wheelhouse
from rlcat.docsite.data import Cell, load_site
from rlcat.docsite.figures.matrix_grid import STATUS_COLOURS, cell_gid

from conftest import REPO, Result, example_of

# every test on one xdist worker: its module fixtures (the install, the build, Chromium) run once
pytestmark = pytest.mark.xdist_group("team-docs")

browser = docs_site.browser  # one way to start Chromium

PARENT = "gsm8k_qwen3_8b_fsdp"
RECIPE = "team_gsm8k"
MODEL = "team_qwen3_8b"
PLATFORM = "team-h100"
RESULT = "team_gsm8k-team-h100-run1"
# a summary from a pull request: it must show as text, and the script in it must not run
SUMMARY = "The team's <b>GSM8K</b> run & <script>window.__pwned = 1</script>"
SERIES_KEY = "val-core/openai/gsm8k/reward/mean@1"
SERIES = {"steps": [0, 10, 20, 30], "values": [0.81, 0.86, 0.9, 0.93]}


def _write(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")


def _entry(kind_dir: str, name: str) -> dict[str, Any]:
    data = yaml.safe_load((REPO / kind_dir / f"{name}.yaml").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def _make_team(team: Path) -> None:
    _write(
        team / "recipes" / f"{RECIPE}.yaml",
        {"name": RECIPE, "extends": PARENT, "summary": SUMMARY, "model": MODEL},
    )
    model = {**_entry("catalog/models", "qwen3_8b"), "name": MODEL, "hf_id": "team-org/Qwen3-8B-tuned"}
    _write(team / "catalog" / "models" / f"{MODEL}.yaml", model)
    platform = {**_entry("catalog/platforms", "cuda"), "name": PLATFORM, "summary": "The team's H100 nodes"}
    _write(team / "catalog" / "platforms" / f"{PLATFORM}.yaml", platform)
    result = {
        "name": RESULT,
        "summary": "A measured run of the team's recipe",
        "recipe": RECIPE,
        "platform": PLATFORM,
        "hardware": {"gpu": "H100", "gpus": 8},
        "mode": "colocate",
        "kind": "measured",
        "run": {"folder": "runs/run1", "metrics_file": "runs/run1/metrics.jsonl", "lines": 4},
        "metrics": [{"metric": "val_score_max", "value": 0.93, "unit": "fraction", "at_step": 30}],
        "series": [{"key": SERIES_KEY, "unit": "fraction", **SERIES}],
    }
    _write(team / "catalog" / "results" / f"{RESULT}.yaml", result)


@dataclass
class TeamSite:
    site: Path
    team: Path
    build: Any


@pytest.fixture(scope="module")
def team_site(wheels: list[Path], tmp_path_factory: pytest.TempPathFactory) -> TeamSite:  # noqa: F811
    docs_house = wheelhouse.docs_wheelhouse_dir()
    if not wheelhouse.is_complete(docs_house, wheelhouse.docs_requirements()):
        pytest.skip(f"the docs wheelhouse is not fetched ({docs_house}): run `rlcat dev fetch-verl` once")
    tmp = tmp_path_factory.mktemp("team-docs")
    env = {**_pip_env(tmp, [*wheels, docs_house]), **_venv(tmp / "venv")}
    install = _run(env, tmp, "python", "-m", "pip", "install", "-q", f"rlcat[docs]=={VERSION}")
    assert install.returncode == 0, install.stderr
    team = tmp / "team"  # the team's repository: its catalog at the top, the site built beside it
    _make_team(team)
    probe = _run(env, team, "python", "-c", "import rlcat; print(rlcat.__file__)")
    assert probe.stdout.startswith(str(tmp / "venv")), "the wheel's copy runs, not the checkout's"
    # the help example, word for word, as a team runs it at the top of its repository
    build = _run(env, team, "rlcat", *example_of("test_the_installed_rlcat_builds_the_team_site"))
    assert build.returncode == 0, build.stdout + build.stderr
    return TeamSite(team / "site", team, build)


def test_the_installed_rlcat_builds_the_team_site(team_site: TeamSite) -> None:
    assert "built " in team_site.build.stdout and team_site.build.stderr == ""
    site = team_site.site
    assert (site / "recipes" / f"{RECIPE}.html").is_file()
    assert (site / "recipes" / f"{PARENT}.html").is_file()  # on top of the built-in catalog
    assert (site / "platforms" / f"{PLATFORM}.html").is_file()
    assert (site / "models" / f"{MODEL}.html").is_file()
    assert sorted(p.name for p in site.parent.iterdir()) == ["catalog", "recipes", "site"]  # nothing else


@pytest.fixture(scope="module")
def base_url(team_site: TeamSite) -> Iterator[str]:
    with docs_site.served(team_site.site) as url:
        yield url


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code


_LINKS = """
return Array.from(document.querySelectorAll('a'), a => a.getAttribute('href') || a.getAttribute('xlink:href'))
  .filter(h => h).map(h => new URL(h, document.baseURI).href);
"""
_FIGURES = """
return Array.from(document.querySelectorAll('.rlc-figure svg'), s => {
  const r = s.getBoundingClientRect();
  return {width: r.width, height: r.height, shapes: s.querySelectorAll('path, rect, line, polyline').length,
          text: s.textContent};
});
"""
_CELLS = """
return Array.from(document.querySelectorAll('[id^="rlc-cell--"]'), g => {
  const shape = g.querySelector('path, rect');
  return {id: g.id, fill: shape ? getComputedStyle(shape).fill : ''};
});
"""


def _rgb(hex_colour: str) -> str:
    red, green, blue = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgb({red}, {green}, {blue})"


def _worst(statuses: list[str]) -> str:
    order = ("does-not-compile", "known-broken", "untested", "supported")
    return min(statuses, key=order.index)


def _recipe_status(cell: Cell) -> str:
    """A compiled cell's status as the grid shows it, from the data: the compile, the guards' findings
    and the platform's word."""
    if cell.compiled is None:  # not even with --allow-known-broken
        return "does-not-compile"
    if cell.known_issue:
        return "known-broken"
    return "supported" if cell.status == "supported" else "untested"


def _profile_status(word: str) -> str:
    return word if word in ("supported", "known-broken") else "untested"


def _expected_grid(team: Path) -> dict[str, str]:
    """Each grid cell's status, from the catalog: per platform × mode × engine × backend the worst
    of its algorithms, each the worst of its recipes' compiles there, or the profile's own word where
    no recipe of that algorithm covers the engine."""
    site = load_site(team, Catalog([team, builtin_root()]))
    algorithms = {name: site.recipe(name).algorithm for name in site.recipes}
    covered = {(c.mode, c.backend) for c in site.cells}
    expected: dict[str, str] = {}
    for profile in site.platforms.values():
        listed = {(s.mode, s.engine, s.backend): s.status for s in profile.support}
        keys = {(c.mode, c.engine, c.backend) for c in site.cells} | set(listed)
        for mode, engine, backend in keys:
            statuses = []
            for algorithm in sorted(
                {algorithms[c.recipe] for c in site.cells if (c.mode, c.backend) == (mode, backend)}
            ):
                cells = [
                    c
                    for c in site.cells
                    if (c.platform, c.mode, c.engine, c.backend) == (profile.name, mode, engine, backend)
                    and algorithms[c.recipe] == algorithm
                ]
                if cells:
                    statuses.append(_worst([_recipe_status(c) for c in cells]))
                elif (mode, engine, backend) in listed:
                    statuses.append(_profile_status(listed[(mode, engine, backend)]))
            if (mode, backend) not in covered and (mode, engine, backend) in listed:
                statuses.append(_profile_status(listed[(mode, engine, backend)]))
            if statuses:
                expected[cell_gid(profile.name, mode, engine, backend)] = _worst(statuses)
    return expected


def test_team_site_in_a_browser(browser: Any, base_url: str, team_site: TeamSite) -> None:
    visited = ["index.html", f"recipes/{RECIPE}.html", "matrix.html", f"platforms/{PLATFORM}.html"]
    links: set[str] = set()
    figures: dict[str, list[dict[str, Any]]] = {}
    for path in visited:
        browser.get(base_url + path)
        assert browser.find_element("css selector", "article h1").text, path
        links |= set(browser.execute_script(_LINKS))
        figures[path] = browser.execute_script(_FIGURES)
        assert browser.execute_script("return window.__pwned") is None, path
        if path == f"recipes/{RECIPE}.html":
            article = browser.find_element("css selector", "article").text
            assert SUMMARY in article  # the team's text, as text
            assert RESULT in article  # the recipe page lists its result
            result_links = [h for h in browser.execute_script(_LINKS) if RESULT in h]
            assert result_links, "the recipe page links to its result"
        if path == "matrix.html":
            cells = browser.execute_script(_CELLS)
    # the result's own page, reached from the recipe page, gives its numbers
    result_page = next(h for h in sorted(links) if RESULT in h).split("#")[0]
    browser.get(result_page)
    article = browser.find_element("css selector", "article").text
    assert RESULT in article and "0.93" in article  # its numbers, as the data file gives them
    links |= set(browser.execute_script(_LINKS))
    docs_site._screenshot(browser, "docs-team-result.png")

    internal = sorted({h.split("#")[0] for h in links if h.startswith(base_url)})
    assert len(internal) >= 50
    assert [(h, s) for h in internal if (s := _status(h)) != 200] == []

    for path in (f"recipes/{RECIPE}.html", "matrix.html"):
        assert figures[path], f"no figure on {path}"
        for svg in figures[path]:
            assert svg["width"] > 50 and svg["height"] > 50 and svg["shapes"] > 0, (path, svg)
    # the recipe page draws its run's series, titled by verl's metric key (labels stay text)
    assert any(SERIES_KEY in svg["text"] for svg in figures[f"recipes/{RECIPE}.html"])

    expected = _expected_grid(team_site.team)
    shown = {cell["id"]: cell["fill"] for cell in cells}
    assert set(shown) == set(expected)
    assert any(cell_id.startswith(f"rlc-cell--{PLATFORM}--") for cell_id in shown)
    assert {i: f for i, f in shown.items() if f != _rgb(STATUS_COLOURS[expected[i]])} == {}
    assert len(set(expected.values())) >= 2, "the catalog has cells of more than one status"


TEAM_NAME = "Tým RL recipes"  # the project's own name, not ASCII, not rlcat's
TEAM_INSTALL = "pip install --find-links wheels rlcat"
TEAM_RESULT = "team_only-rocm-run1"


@dataclass
class NoBuiltinSite:
    root: Path
    site: Path
    pages: set[str]
    code: int
    out: str

    def text(self, page: str) -> str:
        return (self.site / page).read_text(encoding="utf-8")

    def words(self, page: str) -> str:
        """The page's text as a reader sees it (code blocks are split into highlighted spans)."""
        return html.unescape(re.sub(r"<[^>]+>", "", self.text(page)))


@pytest.fixture(scope="module")
def no_builtin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NoBuiltinSite]:
    """One in-process build of a team's site without the built-in recipes and results: a project
    file naming the site and its install line (platforms = ["rocm"]), a team recipe extending a
    built-in one, a team result of it. Every test of `--no-builtin` reads this one build."""
    root = tmp_path_factory.mktemp("no-builtin")
    team = root / "team"
    (team / "rlcat.toml").parent.mkdir(parents=True)
    (team / "rlcat.toml").write_text(
        'platforms = ["rocm"]\n\n[site]\n'
        f'name = "{TEAM_NAME}"\ndescription = "The recipes our cluster runs"\ninstall = "{TEAM_INSTALL}"\n',
        encoding="utf-8",
    )
    _write(team / "recipes" / "team_only.yaml", {"name": "team_only", "extends": PARENT, "summary": "Ours"})
    result = {
        "name": TEAM_RESULT,
        "summary": "A measured run of the team's recipe",
        "recipe": "team_only",
        "platform": "rocm",
        "hardware": {"gpu": "MI300X", "gpus": 8},
        "mode": "colocate",
        "kind": "measured",
        "run": {"folder": "runs/run1", "metrics_file": "runs/run1/metrics.jsonl", "lines": 4},
        "metrics": [{"metric": "val_score_max", "value": 0.93, "unit": "fraction", "at_step": 30}],
    }
    _write(team / "catalog" / "results" / f"{TEAM_RESULT}.yaml", result)
    out = io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(team)
        patch.delenv("RLCAT_PATH", raising=False)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            code = main(["docs", "build", "--catalog", ".", "--no-builtin", "--out", str(root / "site")])
    site = root / "site"
    pages = {p.relative_to(site).as_posix() for p in site.rglob("*.html")} if site.is_dir() else set()
    yield NoBuiltinSite(root, site, pages, code, out.getvalue())


def test_no_builtin_leaves_out_built_in_recipes_and_results_only(no_builtin: NoBuiltinSite) -> None:
    assert no_builtin.code == 0, no_builtin.out
    pages = no_builtin.pages
    assert {p for p in pages if p.startswith(("recipes/", "results/"))} == {
        "recipes/index.html",
        "recipes/team_only.html",
        "results/index.html",
        f"results/{TEAM_RESULT}.html",
    }
    # the built-in platforms, models and datasets stay: the team's recipe runs on them
    assert {"platforms/rocm.html", "platforms/cuda.html", "models/qwen3_8b.html"} <= pages
    assert "datasets/gsm8k_math.html" in pages
    home = no_builtin.text("index.html")
    assert "team_only" in home and f"recipes/{PARENT}.html" not in home


def test_no_builtin_site_is_named_and_installed_as_the_project_says(no_builtin: NoBuiltinSite) -> None:
    home = no_builtin.text("index.html")
    assert f"<title>{TEAM_NAME}</title>" in home
    assert "The recipes our cluster runs" in home
    assert TEAM_INSTALL in no_builtin.words("index.html")
    for page in ("index.html", "recipes/team_only.html", "recipes/index.html"):
        text = no_builtin.words(page)
        assert "pip install rlcat" not in text and "<title>rlcat" not in no_builtin.text(page), page
        assert "pypi.org/project/rlcat" not in text, page


def test_no_builtin_site_marks_the_team_recipes(no_builtin: NoBuiltinSite) -> None:
    page = no_builtin.text("recipes/team_only.html")
    assert f"from: {TEAM_NAME}'s catalog" in no_builtin.words("recipes/team_only.html")
    assert f"<strong>{TEAM_NAME}</strong>" in page
    # the built-in parent is named, without a link to a page the site does not have
    assert f"<code>{PARENT}</code> (built-in)" in page
    assert f'href="{PARENT}.html' not in page
    index = no_builtin.text("recipes/index.html")
    assert f"<strong>{TEAM_NAME}</strong>" in index


def _html_stamps(site: Path) -> dict[str, int]:
    return {p.relative_to(site).as_posix(): p.stat().st_mtime_ns for p in site.rglob("*.html")}


def test_serve_rebuilds_only_what_changed(
    rlcat: Callable[..., Result], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`rlcat docs serve` builds the team's site, serves it on loopback and, when a recipe is
    edited, builds again only the pages whose text changed; Ctrl-C stops it (exit 130). The edit and
    the Ctrl-C come from a thread watching the served folder."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RLCAT_PATH", raising=False)
    team, site = tmp_path / "team", tmp_path / "site"
    recipe = team / "recipes" / "team_only.yaml"
    _write(recipe, {"name": "team_only", "extends": PARENT, "summary": "Before the edit"})
    seen: dict[str, dict[str, int]] = {}
    # the Ctrl-C must come after the rebuild has finished and said so, not while its pages are
    # being written: the real step, which also tells the watcher when one look rebuilt something
    stepped = threading.Event()
    real_step = Rebuilder.step

    def step(self: Rebuilder) -> str | None:
        done = real_step(self)
        if done is not None:
            stepped.set()
        return done

    monkeypatch.setattr(Rebuilder, "step", step)

    def wait_for(condition: Callable[[], bool]) -> None:
        deadline = time.monotonic() + 300
        while not condition():
            assert time.monotonic() < deadline, "the served site never changed"
            time.sleep(0.1)

    def edit_then_stop() -> None:
        page = site / "recipes" / "team_only.html"
        try:
            wait_for(lambda: page.is_file() and (site / "search" / "search_index.json").is_file())
            seen["before"] = _html_stamps(site)
            _write(recipe, {"name": "team_only", "extends": PARENT, "summary": "After the edit"})
            wait_for(stepped.is_set)
            seen["after"] = _html_stamps(site)
        finally:
            _thread.interrupt_main()  # Ctrl-C

    # Ctrl-C is simulated as SIGINT, which a pytest-xdist worker ignores: Python's own handler for
    # this test, and a --timeout that ends the serve (exit 0, failing the test) should it never come
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    watcher = threading.Thread(target=edit_then_stop, daemon=True)
    watcher.start()
    try:
        served = rlcat(
            "docs", "serve", "--catalog", "team", "--no-builtin", "--out", "site", "--port", "0",
            "--poll", "0.2", "--timeout", "900",
        )  # fmt: skip
    finally:
        signal.signal(signal.SIGINT, previous)
    watcher.join()
    assert served.code == 130, served.err
    assert "at http://127.0.0.1:" in served.out and "rebuilt " in served.out, served.out
    before, after = seen["before"], seen["after"]
    rebuilt = {page for page in before if after.get(page) != before[page]}
    assert "recipes/team_only.html" in rebuilt
    assert "After the edit" in (site / "recipes" / "team_only.html").read_text(encoding="utf-8")
    assert "platforms/cuda.html" not in rebuilt and "guards/index.html" not in rebuilt
    assert len(rebuilt) <= 3 < len(before), rebuilt
    assert set(after) == set(before)
    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    found = {doc["location"].partition("#")[0] for doc in index["docs"]}
    assert {"recipes/team_only.html", "platforms/cuda.html", "index.html"} <= found  # the whole site

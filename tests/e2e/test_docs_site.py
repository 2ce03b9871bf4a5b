"""The built docs site: reproducible, fast enough, self-contained, and working in a real browser.

The site is built twice, by the help examples `rlcat docs serve --port 0 --timeout 1` and `rlcat docs
build --out public`, each in its own copy of the checkout (the two builds must be byte-identical),
then served from a local HTTP server thread and browsed in headless Chromium through Selenium: the
support matrix, a recipe page's ROCm overrides, search, the numbers of every result page, every link
of every page. Screenshots of the home, matrix and a recipe page go to the run's temporary folder
(`screenshots*`), or to the folder RLCAT_SCREENSHOTS names.

The browser tests need Debian's chromium and chromium-driver and the `selenium` package (installed
by the CI setup step, never by the tests: they run without network). Without them the browser tests
are skipped, unless RLCAT_REQUIRE_BROWSER=1 (CI sets it), which turns the skip into a failure.
"""

from __future__ import annotations

import contextlib
import html.parser
import io
import json
import os
import posixpath
import re
import shutil
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml

from rlcat.cli import main
from rlcat.docsite.build import server
from rlcat.guards import REGISTRY

from conftest import REPO, docs_checkout, example_of

# every test on one xdist worker: its module fixtures (the two builds of the site, Chromium) run once
pytestmark = pytest.mark.xdist_group("docs-site")

CHROMIUM = os.environ.get("RLCAT_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("RLCAT_CHROMEDRIVER", "/usr/bin/chromedriver")
# Without these, headless Chromium tries to reach Google (the test network is closed).
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1400,1000",
)


# --- building -------------------------------------------------------------------------------------


class Built:
    def __init__(self, first: Path, second: Path, served: str) -> None:
        self.site, self.second, self.served = first, second, served


def _run_example(args: list[str], checkout: Path) -> tuple[Path, str]:
    """Run a help example's `args` in-process, in a copy of the checkout at `checkout` (it
    regenerates the pages there, then builds): the site it built and what it printed."""
    printed = io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(docs_checkout(patch, checkout))
        with contextlib.redirect_stdout(printed):
            assert main(args) == 0, f"`rlcat {' '.join(args)}` failed"
    out = args[args.index("--out") + 1] if "--out" in args else "site"
    return checkout / out, printed.getvalue()


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """The site as the help examples `rlcat docs serve --port 0 --timeout 1` (it builds into the
    checkout's site/, then serves it for a second) and `rlcat docs build --out public` build it,
    each in its own copy of the checkout: the two must be the same site."""
    base = tmp_path_factory.mktemp("docs-site")
    served, printed = _run_example(example_of("test_the_serve_example_builds_then_serves"), base / "serve")
    second, _ = _run_example(example_of("test_two_builds_are_identical"), base / "build")
    return Built(served, second, printed)


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_the_serve_example_builds_then_serves(built: Built) -> None:
    assert re.search(
        rf"^serving {re.escape(str(built.site))} at http://127\.0\.0\.1:\d+/ \(for 1 s\)", built.served, re.M
    ), built.served
    assert (built.site / "index.html").is_file()


def test_two_builds_are_identical(built: Built) -> None:
    a, b = _files(built.site), _files(built.second)
    assert list(a) == list(b)
    assert [name for name in a if a[name] != b[name]] == []
    assert "search/search_index.json" in a
    assert "sitemap.xml" not in a and "sitemap.xml.gz" not in a


class _Page(html.parser.HTMLParser):
    """The ids, links, links of the primary nav and loaded resources of one HTML page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.nav: list[str] = []
        self.loads: list[str] = []
        self._navs: list[bool] = []  # per open <nav>: is it the primary nav

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "nav":
            self._navs.append("md-nav--primary" in a.get("class", "").split() or any(self._navs))
        if tag == "a" and "href" in a:
            self.links.append(a["href"])
            if any(self._navs) and "md-nav__link" in a.get("class", "").split():
                self.nav.append(a["href"])
        if tag in ("script", "img", "iframe", "source") and a.get("src"):
            self.loads.append(a["src"])
        if tag == "link" and a.get("href"):
            self.loads.append(a["href"])

    def handle_endtag(self, tag: str) -> None:
        if tag == "nav" and self._navs:
            self._navs.pop()


def _parse(site: Path) -> dict[str, _Page]:
    pages = {}
    for path in sorted(site.rglob("*.html")):
        parser = _Page()
        parser.feed(path.read_text(encoding="utf-8"))
        pages[path.relative_to(site).as_posix()] = parser
    return pages


def _external(url: str) -> bool:
    return urllib.parse.urlsplit(url).scheme in ("http", "https", "mailto") or url.startswith("//")


def _target(site: Path, name: str, href: str) -> tuple[str, str]:
    """The file (relative to the site) and fragment a link of page `name` leads to."""
    path, _, fragment = urllib.parse.unquote(href).partition("#")
    # 404.html links from the site root ("/..."): with no site_url, MkDocs cannot know the page's
    # depth; `rlcat docs serve` and the tests serve the site at the root
    here = "" if path.startswith("/") else posixpath.dirname(name)
    target = posixpath.normpath(posixpath.join(here, path.lstrip("/"))) if path else name
    if target.endswith("/") or (site / target).is_dir():
        target = posixpath.join(target, "index.html")
    return target, fragment


def _internal(href: str) -> bool:
    return not (_external(href) or href.startswith(("data:", "javascript:")))


def test_every_internal_link_and_anchor_resolves_in_the_files(built: Built) -> None:
    pages = _parse(built.site)
    broken = []
    for name, page in pages.items():
        for href in filter(_internal, page.links + page.loads):
            target, fragment = _target(built.site, name, href)
            if not (built.site / target).is_file():
                broken.append(f"{name}: {href} (no file {target})")
            elif fragment and target in pages and fragment not in pages[target].ids:
                broken.append(f"{name}: {href} (no id {fragment!r} on {target})")
    assert broken == []
    assert len(pages) >= 40


def test_every_page_is_reachable_from_home_and_in_the_nav(built: Built) -> None:
    """Following links from the home page reaches every page, and every page is in the nav (the
    nav is pruned: each page holds its own section's part, so the nav is the union over pages)."""
    pages = _parse(built.site)
    wanted = set(pages) - {"404.html"}
    nav: set[str] = set()
    queue, seen = ["index.html"], {"index.html"}
    while queue:
        name = queue.pop(0)
        page = pages[name]
        nav |= {_target(built.site, name, href)[0] for href in filter(_internal, page.nav)}
        for href in filter(_internal, page.links):
            target, _ = _target(built.site, name, href)
            if target.endswith(".html") and target not in seen:
                seen.add(target)
                queue.append(target)
    assert seen >= wanted, f"not reachable by links: {sorted(wanted - seen)}"
    assert wanted <= nav, f"pages missing from the nav: {sorted(wanted - nav)}"
    assert sorted(seen - set(pages)) == [], "links to pages that do not exist"


def test_pages_load_nothing_from_other_hosts(built: Built) -> None:
    loads = sorted({(n, u) for n, p in _parse(built.site).items() for u in p.loads if _external(u)})
    assert loads == []
    css = [p for p in built.site.rglob("*.css") if "@import" in p.read_text() or "fonts.g" in p.read_text()]
    assert css == []


# --- serving and browsing -------------------------------------------------------------------------


@contextmanager
def served(folder: Path) -> Iterator[str]:
    """`folder` served on 127.0.0.1 by rlcat's own server, for as long as the block runs; its URL."""
    httpd = server(folder, 0)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


@pytest.fixture(scope="module")
def base_url(built: Built) -> Iterator[str]:
    with served(built.site) as url:
        yield url


@pytest.fixture(scope="module")
def pages_url(built: Built, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The site with its search index emptied, for the tests that load page after page: on every
    page load Material builds the index in a web worker, most of the load's time for an index of a
    megabyte. The pages are the built ones; the search test uses the site as built."""
    site = tmp_path_factory.mktemp("pages") / "site"
    shutil.copytree(built.site, site)
    index = site / "search" / "search_index.json"
    data = json.loads(index.read_text(encoding="utf-8"))
    assert data["docs"], "the built site has no search index to empty"
    index.write_text(json.dumps({**data, "docs": []}), encoding="utf-8")
    with served(site) as url:
        yield url


def test_local_server_serves_the_site(base_url: str) -> None:
    with urllib.request.urlopen(base_url + "index.html", timeout=10) as response:
        assert response.status == 200
        assert "Quick start" in response.read().decode()


def _browser_missing() -> str | None:
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "the selenium package"
    for path in (CHROMIUM, CHROMEDRIVER):
        if not Path(path).is_file():
            return path
    return None


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    missing = _browser_missing()
    if missing:
        message = f"the browser tests need {missing} (CI installs chromium, chromium-driver and selenium)"
        if os.environ.get("RLCAT_REQUIRE_BROWSER"):
            pytest.fail(message)
        pytest.skip(message)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="rlcat-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # an explicit driver path: Selenium Manager (which downloads drivers) never runs
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    folder = os.environ.get("RLCAT_SCREENSHOTS")
    driver.rlcat_screenshots = Path(folder) if folder else tmp_path_factory.mktemp("screenshots")
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def _wait(condition: Any, timeout: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.1)


def _screenshot(driver: Any, name: str) -> Path:
    folder: Path = driver.rlcat_screenshots  # set by the browser fixture
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    assert driver.save_screenshot(str(path)), path
    return path


def _severe_console_messages(driver: Any) -> list[str]:
    return [e["message"] for e in driver.get_log("browser") if e.get("level") == "SEVERE"]


def test_home_page(browser: Any, base_url: str) -> None:
    from rlcat.docsite.home import quick_start_commands

    browser.get(base_url + "index.html")
    assert browser.title.startswith("rlcat")
    code = [c.text for c in browser.find_elements("css selector", "article pre code")]
    for command in quick_start_commands(REPO / "README.md"):
        assert command in code
    tabs = [t.text for t in browser.find_elements("css selector", ".md-tabs__link")]
    assert tabs[:5] == ["Home", "Support matrix", "Recipes", "Results", "Platforms"]
    _screenshot(browser, "docs-home.png")
    assert _severe_console_messages(browser) == []


def test_support_matrix_renders_with_linked_cells(browser: Any, base_url: str) -> None:
    browser.get(base_url + "matrix.html")
    tables = browser.find_elements("css selector", "article table")
    assert len(tables) >= 6  # the overview and one table per platform
    overview_icons = tables[0].find_elements("css selector", "tbody td a .twemoji, tbody td a svg")
    assert len(overview_icons) >= 40
    # every status cell of the per-platform tables links to the recipe, guard or profile behind it
    checked = 0
    for table in tables[1:]:
        for row in table.find_elements("css selector", "tbody tr"):
            for cell in row.find_elements("css selector", "td")[3:]:
                if cell.text.strip() == "—":
                    continue
                hrefs = [a.get_attribute("href") for a in cell.find_elements("css selector", "a")]
                assert hrefs, f"cell without a link: {cell.text!r}"
                assert all(h.startswith(base_url) for h in hrefs)
                checked += 1
    assert checked >= 20
    _screenshot(browser, "docs-matrix.png")
    # a cell leads to its recipe, at that platform's section
    rocm = browser.find_element("xpath", "//h2[@id='rocm']/following-sibling::div[1]//table")
    browser.execute_script("arguments[0].scrollIntoView()", rocm)
    rocm.find_element("xpath", ".//a[normalize-space()='geo3k_megatron_4_4']").click()
    assert _wait(lambda: browser.current_url.endswith("recipes/geo3k_megatron_4_4.html#rocm"))
    assert browser.find_element("css selector", "h1").text == "geo3k_megatron_4_4"


def _rocm_tabs(browser: Any) -> Any:
    return browser.find_element(
        "xpath", "//h2[@id='rocm']/following-sibling::div[contains(@class,'tabbed-set')][1]"
    )


def _visible_code(block: Any, text: str) -> bool:
    return any(c.is_displayed() for c in block.find_elements("xpath", f".//code[contains(., '{text}')]"))


def test_recipe_page_shows_rocm_changes_of_both_engines(browser: Any, base_url: str) -> None:
    browser.get(base_url + "recipes/geo3k_megatron_4_4.html")
    _screenshot(browser, "docs-recipe-geo3k.png")
    browser.get(base_url + "recipes/geo3k_megatron_4_4.html#rocm")
    tabs = _rocm_tabs(browser)
    # each rocm compile as its changes against the cuda vLLM plan (shown whole in the cuda section)
    micro = "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu"
    triton = "actor_rollout_ref.rollout.engine_kwargs.sglang.attention_backend"
    assert _visible_code(tabs, micro)  # vLLM, the recipe's engine, is the open tab
    assert not _visible_code(tabs, triton)
    labels = tabs.find_elements("css selector", ".tabbed-labels > label")
    assert [label.text for label in labels] == ["vLLM", "SGLang"]
    labels[1].click()
    assert _wait(lambda: _visible_code(tabs, triton))
    assert _visible_code(tabs, micro)
    rows = [r.text for r in tabs.find_elements("css selector", ".tabbed-block:nth-child(2) tr")]
    assert any(triton in r and "sglang-attention-triton" in r for r in rows), "the origin is shown"
    browser.execute_script(
        "arguments[0].scrollIntoView({block: 'center'})",
        tabs.find_element("xpath", f".//code[contains(., '{triton}')]"),
    )
    _screenshot(browser, "docs-recipe-geo3k-rocm-sglang.png")
    # the CUDA → ROCm difference, above: its SGLang tab opened with the one below (linked tabs)
    diff = browser.find_element(
        "xpath", "//h2[@id='cuda-to-rocm']/following-sibling::div[contains(@class,'tabbed-set')][1]"
    )
    assert _visible_code(diff, "actor_rollout_ref.rollout.engine_kwargs.sglang.attention_backend")
    assert _visible_code(diff, "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu")
    # Material keeps the chosen tab across page loads: reopen the page at the difference section
    browser.get(base_url + "recipes/geo3k_megatron_4_4.html#cuda-to-rocm")
    diff = browser.find_element(
        "xpath", "//h2[@id='cuda-to-rocm']/following-sibling::div[contains(@class,'tabbed-set')][1]"
    )
    assert _wait(
        lambda: _visible_code(diff, "actor_rollout_ref.rollout.engine_kwargs.sglang.attention_backend")
    )
    _screenshot(browser, "docs-recipe-geo3k-cuda-to-rocm.png")


# The width a page gets at the window size of CHROMIUM_FLAGS (1400 px): Material's default grid left
# about 690 px, squeezing the recipes table to a word per line and cutting guard examples.
MIN_COLUMN = 1000
_LAYOUT = """
const column = document.querySelector('.md-content__inner').getBoundingClientRect();
const boxes = Array.from(document.querySelectorAll(arguments[0]), e => {
  const r = e.getBoundingClientRect();
  let scroller = null;  // the element or an ancestor inside the column that scrolls sideways
  for (let n = e; n && n !== document.body; n = n.parentElement) {
    if (['auto', 'scroll'].includes(getComputedStyle(n).overflowX)) { scroller = n; break; }
  }
  return {text: e.textContent.slice(0, 60), scroll: e.scrollWidth, client: e.clientWidth,
          left: r.left, right: r.right, scrolls: scroller !== null,
          scrollerRight: scroller ? scroller.getBoundingClientRect().right : null};
});
return {window: window.innerWidth, column: column.width, left: column.left, right: column.right,
        boxes: boxes};
"""


def _layout(browser: Any, url: str, selector: str) -> dict[str, Any]:
    browser.get(url)
    return dict(browser.execute_script(_LAYOUT, selector))


def _cut(layout: dict[str, Any]) -> list[str]:
    """Boxes whose content is wider than they show with no way to scroll to it, or that reach past the
    content column."""
    bad = []
    for box in layout["boxes"]:
        overflows = box["scroll"] > box["client"]
        if (overflows and not box["scrolls"]) or box["right"] > layout["right"] + 1:
            bad.append(f"{box['text']!r}: {box}")
        elif box["scrolls"] and box["scrollerRight"] > layout["right"] + 1:
            bad.append(f"{box['text']!r}: its scroll box reaches past the column: {box}")
    return bad


def test_pages_use_the_width_and_tables_and_examples_fit(browser: Any, pages_url: str) -> None:
    recipes = _layout(browser, pages_url + "recipes/index.html", "article table")
    assert recipes["window"] >= 1380, recipes["window"]  # the 1400 px window, less its scroll bar
    assert recipes["column"] >= MIN_COLUMN, f"content column {recipes['column']:.0f} px at 1400 px"
    # the recipes written for rlcat, then the upstream examples
    assert len(recipes["boxes"]) == 2, recipes["boxes"]
    for table in recipes["boxes"]:
        assert table["scroll"] <= table["client"], f"a recipes table is cut: {table}"
    assert _cut(recipes) == []
    _screenshot(browser, "docs-recipes-wide.png")
    # every guard page: the column is as wide, and each example (and table) fits or scrolls inside it
    for guard_id in sorted(REGISTRY):
        page = _layout(browser, pages_url + f"guards/{guard_id}.html", "article pre > code, article table")
        assert page["column"] >= MIN_COLUMN, (guard_id, page["column"])
        assert any(box["text"] for box in page["boxes"]), f"{guard_id}: no example found"
        assert _cut(page) == [], guard_id
    # the examples of RLC703's page fit without scrolling at this width
    examples = _layout(browser, pages_url + "guards/RLC703.html", "article pre > code")
    assert [b for b in examples["boxes"] if b["scroll"] > b["client"]] == []
    _screenshot(browser, "docs-guard-RLC703-wide.png")


def test_search_for_triton_finds_the_sglang_guard(browser: Any, base_url: str) -> None:
    from selenium.webdriver.common.keys import Keys

    browser.get(base_url + "index.html")
    box = browser.find_element("css selector", "input.md-search__input")
    assert _wait(box.is_displayed, 5)
    box.click()
    box.send_keys("triton")

    def results() -> list[str]:
        # read in one script: the list re-renders as the search worker answers (a link found in one
        # call can be gone by the next)
        hrefs: list[str] = browser.execute_script(
            "return Array.from(document.querySelectorAll("
            "'.md-search-result__list a.md-search-result__link'), a => a.href)"
        )
        return hrefs

    # the index loads in a web worker; a query typed before it is ready is typed again
    found: list[str] = []
    for _ in range(6):
        found = _wait(lambda: [h for h in results() if "guards/RLC501.html" in h], 5)
        if found:
            break
        box.send_keys(" ")
        box.send_keys(Keys.BACKSPACE)
    meta = browser.find_elements("css selector", ".md-search-result__meta")
    assert found, f"search results: {results()}; {[m.text for m in meta]}"
    assert "guards/RLC501.html" in results()[0], "the guard's page ranks first (search boost)"
    _screenshot(browser, "docs-search-triton.png")


def _one_of_each_kind(site: Path) -> list[str]:
    """The home page and the first page of each folder and of the top level: pages of one kind
    share their template, scripts and styles (the files' own tests above cover every page)."""
    kinds: dict[str, str] = {}
    for path in sorted(site.rglob("*.html")):
        name = path.relative_to(site).as_posix()
        if name != "404.html":
            kinds.setdefault(posixpath.dirname(name), name)
    return sorted({"index.html", *kinds.values()})


def test_pages_of_every_kind_work_in_the_browser(browser: Any, pages_url: str, built: Built) -> None:
    """In Chromium, a page of each kind: no error in the console, every link that stays on the site
    leads to a page and anchor the browser finds, and nothing loads from anywhere but the local
    server (what the page's scripts fetch included)."""
    visit = _one_of_each_kind(built.site)
    assert len(visit) >= 8, visit
    ids: dict[str, set[str]] = {}
    wanted: list[tuple[str, str, str]] = []  # (from page, to page, fragment)
    resources: set[str] = set()
    for name in visit:
        browser.get(pages_url + name)
        found = browser.execute_script(
            "return {ids: Array.from(document.querySelectorAll('[id]'), e => e.id),"
            " links: Array.from(document.querySelectorAll('a[href]'), e => e.href),"
            " loads: Array.from(document.querySelectorAll('link[href]'), e => e.href)"
            ".concat(Array.from(document.querySelectorAll('script[src], img[src]'), e => e.src)),"
            " resources: performance.getEntriesByType('resource').map(e => e.name)}"
        )
        ids[name] = set(found["ids"])
        resources |= set(found["resources"]) | set(found["loads"])
        assert _severe_console_messages(browser) == [], name
        for url in found["links"]:
            if not url.startswith(pages_url):
                continue
            path, _, fragment = url[len(pages_url) :].partition("#")
            path = urllib.parse.unquote(path) or "index.html"
            if path.endswith(".html"):
                wanted.append((name, path, urllib.parse.unquote(fragment)))
            else:
                resources.add(url)
    files = _parse(built.site)
    missing = sorted({f"{src} -> {dst}" for src, dst, _ in wanted if dst not in files})
    assert missing == []
    # the anchors of the pages visited, as the browser sees them (scripts may add ids); the others'
    # anchors as the files hold them
    broken = [
        f"{src} -> {dst}#{frag}"
        for src, dst, frag in wanted
        if frag and frag not in ids.get(dst, files[dst].ids if dst in files else set())
    ]
    assert broken == []
    outside = sorted(u for u in resources if not u.startswith(pages_url))
    assert outside == []
    for url in sorted(resources):
        with urllib.request.urlopen(url.split("#")[0], timeout=10) as response:
            assert response.status == 200, url


def _metric_rows(browser: Any) -> list[list[str]]:
    """The rows of the page's table whose first header is `metric`, as the browser shows them."""
    for table in browser.find_elements("css selector", "article table"):
        headers = [th.text.strip() for th in table.find_elements("css selector", "thead th")]
        if headers[:1] == ["metric"]:
            return [
                [td.text.strip() for td in tr.find_elements("css selector", "td")]
                for tr in table.find_elements("css selector", "tbody tr")
            ]
    return []


def test_result_pages_show_the_numbers_of_their_data_files(browser: Any, pages_url: str) -> None:
    files = sorted((REPO / "catalog" / "results").glob("*.yaml"))
    assert files
    by_recipe: dict[str, list[str]] = {}
    for path in files:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        browser.get(pages_url + f"results/{data['name']}.html")
        shown = [
            (row[0], float(row[1]), None if row[2] == "—" else float(row[2]), row[3])
            for row in _metric_rows(browser)
        ]
        expected = [(m["metric"], float(m["value"]), m.get("high"), m["unit"]) for m in data["metrics"]]
        assert shown == expected, path.name
        by_recipe.setdefault(data["recipe"], []).append(data["name"])
    # the results index shows every result, and each recipe's page lists its own
    browser.get(pages_url + "results/index.html")
    listed = browser.find_element("css selector", "article").text
    assert all(name in listed for names in by_recipe.values() for name in names)
    for recipe, names in by_recipe.items():
        browser.get(pages_url + f"recipes/{recipe}.html#results")
        text = browser.find_element("css selector", "article").text
        assert all(name in text for name in names), recipe

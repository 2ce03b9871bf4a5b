"""The docs site built from a hostile catalog: every catalog value shows as text, and none of it runs.

A copy of the checkout (catalog/, recipes/, schemas/, docs/, mkdocs.yml, README.md) gets a platform
profile, a model, a dataset and a recipe whose text fields carry payloads: HTML that runs script
(`<img onerror>`, `</code><script>`, `<iframe srcdoc>`, `<svg onload>`), links to `javascript:`,
`data:`, `vbscript:` and `//host` in Markdown and in HTML (the scheme hidden by case, whitespace
and character references), attribute lists that add `on...` handlers, emoji shortcodes (icons from
a CDN), backticks and pipes that would break code spans and tables, and text that opens a block
(list, admonition, content tab, fence) at the start of a line. Every payload that could run tries
to set `window.__pwned`, change `document.title` or open an alert.

The generator writes the pages and MkDocs builds them. The Markdown and the HTML are read for
anything live, the HTML must show each payload as text, and headless Chromium loads every page a
payload reaches (and runs a search for them) and finds that nothing ran.

Hidden characters (bidi controls, escape sequences, zero-width characters, Python-Markdown's own
placeholder markers) are put into the loaded catalog, not the files: the loader may refuse them
(RLC009), and the pages must show them escaped whatever reaches them.

The browser tests need what tests/e2e/test_docs_site.py needs (Chromium, chromedriver, selenium) and
start Chromium the same way; without them they skip, unless RLCAT_REQUIRE_BROWSER=1.
"""

from __future__ import annotations

import dataclasses
import html.parser
import re
import shlex
import shutil
import unicodedata
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import test_docs_site as docs_site
import yaml

from rlcat.cli.app import command_tree
from rlcat.docsite.build import build_site
from rlcat.docsite.data import Site, load_site
from rlcat.docsite.generate import generate
from rlcat.docsite.md import safe_target
from rlcat.docsite.results import FILTER_SCRIPT

from conftest import REPO

# every test on one xdist worker: its module fixtures (the hostile site, Chromium) run once
pytestmark = pytest.mark.xdist_group("docs-hostile")

# the same Chromium as the site's browser tests: one way to start it
browser = docs_site.browser

MARK = "__pwned"
PAYLOADS = {
    "img-onerror": "<img src=x onerror=\"window.__pwned='img'\">",
    "img-onerror-title": "<img src=x onerror=\"document.title='pwned'\">",
    "img-onerror-alert": "<img src=x onerror=alert(1)>",
    "code-breakout": "</code><script>window.__pwned='script'</script>",
    "iframe": "<iframe srcdoc=\"<script>parent.__pwned='iframe'</script>\"></iframe>",
    "svg-onload": "<svg onload=\"window.__pwned='svg'\">",
    "html-link": "<a href=\"javascript:window.__pwned='a'\">a</a>",
    "autolink": "<javascript:alert(1)>",
    "markdown-link": "[click](javascript:window.__pwned='link')",
    "markdown-link-case": "[click](JaVaScRiPt:window.__pwned='case')",
    "markdown-link-entity": "[click](java&#115;cript:window.__pwned='entity')",
    "markdown-link-data": "[click](data:text/html,<script>alert(1)</script>)",
    "markdown-link-vbscript": "[click](vbscript:msgbox(1))",
    "markdown-link-protocol-relative": "[click](//evil.example/x)",
    "markdown-image": "![x](x\" onerror=\"window.__pwned='mdimg')",
    "markdown-image-attr": "![x](x){ onerror=\"window.__pwned='imgattr'\" }",
    "attr-list": "*x*{ onmouseover=\"window.__pwned='em'\" }",
    "entities": "&#60;script&#62;window.__pwned='entity'&#60;/script&#62;",
    "emoji": ":smile: :material-alert:",
    "backticks-pipes": "a`b``c | d || e ``` f",
}
ALL = " ".join(PAYLOADS.values())
# an attribute list at the end of a table cell gives the cell attributes
CELL_END = "end {onclick=\"window.__pwned='td'\"}"
# what opens a block when it starts a line: each line-start field gets one
BLOCK_STARTS = ("- ", "1. ", "!!! danger ", '=== "tab" ', "??? note ", ": ", "~~~ ", "+ ")
# bidi controls, an escape sequence, zero-width and line-separator characters, NUL, DEL, and
# Python-Markdown's placeholder for the first stashed piece of raw HTML
HIDDEN = " \u202e\u2066gnp.exe\u2069 \x1b[31mred \u200bzero \u2028 \x00 \x7f \x02wzxhzdk:0\x03"
HIDDEN_SHOWN = ("\\u202e", "\\u2066", "\\x1b", "\\u200b", "\\x00", "\\x7f", "\\x02wzxhzdk:0\\x03")
HIDDEN_CATEGORIES = {"Cc", "Cf", "Zl", "Zp", "Cs"}
ALLOWED_RAW_TAGS = {"code", "wbr", "br"}
# The generator's own raw HTML blocks: inlined figures (SVG) and the results table with its filters
# and their fixed script. Inside them only these tags; values there are escaped text.
GENERATED_BLOCK = re.compile(
    r'<figure class="rlc-figure"(?: data-rlc-figure="[0-9a-f]{32}-[0-9a-f]{16}")? markdown="0">.*?</figure>|'
    r'<div[^>]*markdown="0">.*?</div>|' + re.escape(FILTER_SCRIPT.strip()),
    re.S,
)
GENERATED_BLOCK_TAGS = {
    *("figure", "figcaption", "svg", "defs", "clippath", "g", "path", "rect", "text", "use", "a"),
    *("div", "label", "select", "option", "table", "thead", "tbody", "tr", "th", "td"),
}
SAFE_SCHEMES = {"", "http", "https"}
CANARY = "canary.html"  # a page whose payload runs, beside the built ones (see hostile_url)

# the pages a payload reaches, and the payloads each must show as text
EVIL_PAGES = {
    "platforms/evil.html": [ALL, CELL_END],
    "models/evil_model.html": [ALL],
    "datasets/evil_data.html": [ALL],
    "recipes/evil_recipe.html": [ALL],
    "recipes/gsm8k_qwen3_8b_fsdp.html": [PAYLOADS["img-onerror"]],  # the evil platform's env
    "recipes/index.html": [ALL],
    "models/index.html": [PAYLOADS["img-onerror"]],
    "datasets/index.html": [ALL],
    "platforms/index.html": [ALL],
    "matrix.html": [ALL],
}


# --- the hostile checkout -------------------------------------------------------------------------


def _entry(kind: str, name: str) -> dict[str, Any]:
    data = yaml.safe_load((REPO / kind / f"{name}.yaml").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def _write_yaml(path: Path, data: dict[str, Any], comment: str = "") -> None:
    path.write_text(comment + yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")


# The part of the shipped catalog the evil entries are made from and shown beside: one recipe (whose
# page shows the evil platform's env), its model, its dataset and a platform. The whole catalog would
# only make the site (and its build) eight times larger.
SHIPPED = (
    "recipes/gsm8k_qwen3_8b_fsdp.yaml",
    "catalog/models/qwen3_8b.yaml",
    "catalog/datasets/gsm8k.yaml",
    "catalog/datasets/gsm8k_math.yaml",
    "catalog/platforms/cuda.yaml",
)


def _hostile_checkout(root: Path) -> None:
    """A checkout with part of the shipped catalog plus an `evil` platform, model, dataset and recipe
    full of payloads."""
    for name in SHIPPED:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / name, root / name)
    shutil.copytree(REPO / "schemas", root / "schemas")
    for name in ("mkdocs.yml", "README.md"):
        shutil.copy(REPO / name, root / name)

    platform = _entry("catalog/platforms", "cuda")
    platform.update(
        name="evil",
        summary=BLOCK_STARTS[0] + ALL,
        software={"x|y`z": ALL, PAYLOADS["img-onerror"]: PAYLOADS["code-breakout"]},
        gpus=[PAYLOADS["svg-onload"], "a|b"],
        image="img`x " + PAYLOADS["code-breakout"],
        # options, as a profile's docker_run must hold (a bare word is refused), quoted as words
        docker_run=[
            "--label " + shlex.quote(PAYLOADS["code-breakout"]),
            "--env " + shlex.quote("X=" + PAYLOADS["img-onerror"]),
        ],
        env=[
            {
                "name": "EVIL_IMG",
                "value": PAYLOADS["img-onerror"],
                "reason": BLOCK_STARTS[2] + ALL,
                "source": PAYLOADS["markdown-link"],
            },
            {
                "name": "EVIL_MARKDOWN",
                "value": " ".join(
                    PAYLOADS[k]
                    for k in ("code-breakout", "markdown-link", "markdown-image", "attr-list", "emoji")
                )
                + " [y](z){ onclick=\"window.__pwned='code'\" } _a_ x=_b_ __c__",
                "reason": CELL_END,
                "source": PAYLOADS["iframe"],
            },
            {
                "name": "EVIL_TICKS",
                "value": PAYLOADS["backticks-pipes"] + " " + PAYLOADS["img-onerror-alert"],
                "reason": BLOCK_STARTS[3] + PAYLOADS["emoji"],
                "source": PAYLOADS["entities"],
            },
        ],
        tweaks=[
            {
                "id": "evil_tweak",
                "when": {"engine": ["vllm"]},
                "env": {"EVIL_TWEAK": PAYLOADS["svg-onload"] + PAYLOADS["attr-list"]},
                "reason": BLOCK_STARTS[4] + ALL,
                "source": PAYLOADS["html-link"],
            }
        ],
        sources=[ALL, PAYLOADS["markdown-link"], BLOCK_STARTS[7] + "x"],
    )
    for cell in platform["support"]:
        cell.update(note=CELL_END, source=PAYLOADS["iframe"])
    _write_yaml(root / "catalog" / "platforms" / "evil.yaml", platform)

    model = _entry("catalog/models", "qwen3_8b")
    model.update(
        name="evil_model",
        hf_id=PAYLOADS["img-onerror"] + PAYLOADS["backticks-pipes"],
        family=PAYLOADS["code-breakout"],
        size="8B" + PAYLOADS["svg-onload"],
        notes=BLOCK_STARTS[3] + ALL,
    )
    _write_yaml(root / "catalog" / "models" / "evil_model.yaml", model)

    dataset = _entry("catalog/datasets", "gsm8k")
    dataset.update(
        name="evil_data",
        summary=BLOCK_STARTS[1] + ALL,
        notes=BLOCK_STARTS[6] + ALL,
        reward=BLOCK_STARTS[5] + PAYLOADS["html-link"] + PAYLOADS["entities"],
        preprocessing="echo '```'\n```\n" + PAYLOADS["code-breakout"] + "\n    ```\n" + PAYLOADS["iframe"],
        train_files=["~/d/" + PAYLOADS["backticks-pipes"] + PAYLOADS["img-onerror"] + ".parquet"],
        prompt_key=PAYLOADS["backticks-pipes"],
    )
    _write_yaml(root / "catalog" / "datasets" / "evil_data.yaml", dataset)

    recipe = _entry("recipes", "gsm8k_qwen3_8b_fsdp")
    recipe.update(
        name="evil_recipe",
        summary="<iframe src=\"javascript:parent.__pwned='recipe'\"></iframe> " + ALL,
        model="evil_model",
        dataset="evil_data",
        allow={"RLC701": BLOCK_STARTS[2] + ALL},
    )
    recipe["trainer"] = {**recipe["trainer"], "project": PAYLOADS["img-onerror"], "experiment": "x|y`z"}
    # the plan shown whole (cuda) writes its environment in raw HTML: a value full of payloads
    recipe["env"] = {"EVIL_RECIPE_ENV": PAYLOADS["img-onerror"] + " " + PAYLOADS["backticks-pipes"]}
    # the recipe file itself is shown in a fence: a fence and raw HTML in its comments
    comment = "# ```\n# " + PAYLOADS["code-breakout"] + "\n# ````` " + PAYLOADS["iframe"] + "\n"
    _write_yaml(root / "recipes" / "evil_recipe.yaml", recipe, comment)


def _with_hidden_characters(site: Site) -> Site:
    """The loaded catalog with hidden characters in the evil entries (see the module docstring)."""
    evil = site.platforms["evil"]
    site.platforms["evil"] = evil.model_copy(
        update={
            "summary": evil.summary + HIDDEN,
            "env": [e.model_copy(update={"value": e.value + HIDDEN}) for e in evil.env],
            "software": {**evil.software, "hidden" + HIDDEN: HIDDEN},
        }
    )
    model = site.models["evil_model"]
    site.models["evil_model"] = model.model_copy(
        update={"hf_id": model.hf_id + HIDDEN, "notes": model.notes + HIDDEN}
    )
    dataset = site.datasets["evil_data"]
    site.datasets["evil_data"] = dataset.model_copy(
        update={"summary": dataset.summary + HIDDEN, "preprocessing": dataset.preprocessing + HIDDEN}
    )
    resolved = site.recipes["evil_recipe"]
    site.recipes["evil_recipe"] = dataclasses.replace(
        resolved,
        recipe=resolved.recipe.model_copy(update={"summary": resolved.recipe.summary + HIDDEN}),
        model=site.models["evil_model"],
        dataset=site.datasets["evil_data"],
    )
    # the page shows the recipe file as it is on disk, read after the catalog was loaded (through the
    # one reader, which refuses a NUL in any text file, as it refuses one when the catalog is loaded)
    recipe_file = site.root / "recipes" / "evil_recipe.yaml"
    with recipe_file.open("a", encoding="utf-8") as stream:
        stream.write("# hidden:" + HIDDEN.replace("\u2028", " ").replace("\x00", " ") + "\n")
    return site


@dataclasses.dataclass
class Hostile:
    root: Path  # the checkout
    site: Path  # the built site
    pages: dict[str, str]  # the generated Markdown: docs/... path → text


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Hostile:
    root = tmp_path_factory.mktemp("hostile-checkout")
    _hostile_checkout(root)
    site = _with_hidden_characters(load_site(root))
    files = generate(root, command_tree(), site)
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8", newline="\n")
    out = tmp_path_factory.mktemp("hostile-site")
    assert build_site(root, out) == []  # strict: no broken link, anchor or page
    pages = {p: t for p, t in files.items() if p.endswith(".md")}
    return Hostile(root, out, pages)


# --- the Markdown ---------------------------------------------------------------------------------


def _outside_code(markdown: str) -> str:
    """The Markdown without its fenced blocks and code spans (where `<` and `[` are only text)."""
    lines, kept, fence_len = markdown.split("\n"), [], 0
    for line in lines:
        opening = re.match(r"^\s*(`{3,})", line)
        if fence_len:
            if opening and len(opening.group(1)) >= fence_len and not line.strip().strip("`"):
                fence_len = 0
            continue
        if opening:
            fence_len = len(opening.group(1))
            continue
        kept.append(line)
    text = "\n".join(kept)
    return re.sub(r"(?<![\\`])(`+)(?!`).+?(?<!`)\1(?!`)", " ", text)


def _raw_tags(markdown: str) -> set[str]:
    return {m.lower() for m in re.findall(r"<\s*/?\s*([A-Za-z][\w-]*)", _outside_code(markdown))}


def _link_targets(markdown: str) -> list[str]:
    return re.findall(r"(?<!\\)\]\(\s*([^\s)\"]*)", _outside_code(markdown))


def test_the_hostile_entries_reach_the_pages(hostile: Hostile) -> None:
    assert {
        "docs/platforms/evil.md",
        "docs/models/evil_model.md",
        "docs/datasets/evil_data.md",
        "docs/recipes/evil_recipe.md",
    } <= set(hostile.pages)
    # the evil platform's environment reaches every recipe page, as changes against the cuda plan:
    # the name in raw HTML, the value in a code span
    shipped = hostile.pages["docs/recipes/gsm8k_qwen3_8b_fsdp.md"]
    value = "`<img src=x onerror=\"window.__pwned='img'\">`"
    assert f"| added | <code>EVIL_<wbr>IMG</code> | — | {value} |" in shipped
    # the whole cuda plan of the evil recipe writes its environment's values in raw HTML, escaped
    evil = hostile.pages["docs/recipes/evil_recipe.md"]
    assert "<code>EVIL_<wbr>RECIPE_<wbr>ENV</code> | <code>&lt;img src=x onerror=" in evil


def test_markdown_holds_no_raw_html_from_the_values(hostile: Hostile) -> None:
    # the home page holds the README's own Markdown, written by hand
    pages = {path: text for path, text in hostile.pages.items() if path != "docs/index.md"}
    found = {
        path: _raw_tags(GENERATED_BLOCK.sub(" ", text)) - ALLOWED_RAW_TAGS for path, text in pages.items()
    }
    assert {path: tags for path, tags in found.items() if tags} == {}
    inside = {
        (path, tag)
        for path, text in pages.items()
        for block in GENERATED_BLOCK.findall(text)
        if block != FILTER_SCRIPT.strip()  # the fixed script, matched whole
        for tag in _raw_tags(block) - ALLOWED_RAW_TAGS - GENERATED_BLOCK_TAGS
    }
    assert inside == set()


def test_markdown_links_go_only_to_the_site_or_to_http(hostile: Hostile) -> None:
    bad = [
        (path, target)
        for path, text in hostile.pages.items()
        for target in _link_targets(text)
        if safe_target(target) != target
    ]
    assert bad == []
    assert _link_targets(hostile.pages["docs/platforms/evil.md"]), "the page has its own links"


def test_markdown_holds_no_hidden_characters(hostile: Hostile) -> None:
    hidden = {
        path: sorted(
            {f"U+{ord(c):04X}" for c in text if c != "\n" and unicodedata.category(c) in HIDDEN_CATEGORIES}
        )
        for path, text in hostile.pages.items()
    }
    assert {path: chars for path, chars in hidden.items() if chars} == {}


def test_fences_hold_the_value_whole(hostile: Hostile) -> None:
    """A value holding a fence gets a longer one, so the block ends where the value does."""
    dataset = hostile.pages["docs/datasets/evil_data.md"]
    assert re.search(r"^```` bash\n", dataset, flags=re.M)
    source = (hostile.site / "datasets" / "evil_data.html").read_text(encoding="utf-8")
    block = source.split('id="preprocessing"', 1)[1].split("</pre>", 1)[0]
    shown = _text(block.split("<pre>", 1)[1])
    lines = shown.split("\n")
    assert lines[:4] == ["echo '```'", "```", PAYLOADS["code-breakout"], "    ```"]
    assert lines[4].startswith(PAYLOADS["iframe"])


# --- the built HTML -------------------------------------------------------------------------------


class _Page(html.parser.HTMLParser):
    """What a built page could run or load, and its text as a reader sees it."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.handlers: list[str] = []
        self.frames: list[str] = []
        self.inline_scripts: list[str] = []
        self.links: list[str] = []
        self.images: list[str] = []
        self.emoji: list[str] = []
        self.text: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        self.handlers += [f"<{tag} {k}>" for k in a if k.startswith("on")]
        if tag in ("iframe", "frame", "object", "embed"):
            self.frames.append(tag)
        if tag == "a" and "href" in a:
            self.links.append(a["href"])
        if tag == "img":
            self.images.append(a.get("src", ""))
            if "twemoji" in a.get("class", "") or "emojione" in a.get("class", ""):
                self.emoji.append(a.get("title", ""))
        self._in_script = tag == "script" and "src" not in a

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.inline_scripts.append(data)
        else:
            self.text.append(data)


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def _scheme(href: str) -> str:
    """The scheme a browser reads: tabs and newlines dropped, leading spaces and controls stripped."""
    cleaned = re.sub(r"[\t\n\r]", "", href).lstrip("".join(map(chr, range(0x21))))
    if cleaned.startswith(("//", "\\\\", "/\\")):
        return "//"
    return urllib.parse.urlsplit(cleaned).scheme.lower()


def _built_pages(hostile: Hostile) -> dict[str, _Page]:
    built = [p for p in sorted(hostile.site.rglob("*.html")) if p.name != CANARY]
    return {p.relative_to(hostile.site).as_posix(): _parse(p) for p in built}


def test_html_has_no_handler_frame_inline_script_or_image_from_the_values(hostile: Hostile) -> None:
    pages = _built_pages(hostile)
    assert set(EVIL_PAGES) <= set(pages)
    for name, page in pages.items():
        assert page.handlers == [], name
        assert page.frames == [], name
        assert [s for s in page.inline_scripts if MARK in s or "alert(" in s] == [], name
    for name in EVIL_PAGES:
        assert pages[name].images == [], name  # no payload image, and no emoji from a CDN
        assert pages[name].emoji == [], name


def test_html_links_are_http_or_the_site(hostile: Hostile) -> None:
    bad = {
        name: sorted({href for href in page.links if _scheme(href) not in SAFE_SCHEMES})
        for name, page in _built_pages(hostile).items()
    }
    assert {name: hrefs for name, hrefs in bad.items() if hrefs} == {}


@pytest.mark.parametrize("page", sorted(EVIL_PAGES))
def test_html_shows_every_payload_as_text(hostile: Hostile, page: str) -> None:
    text = " ".join("".join(_parse(hostile.site / page).text).split())
    for expected in EVIL_PAGES[page]:
        assert " ".join(expected.split()) in text


def test_html_shows_hidden_characters_escaped(hostile: Hostile) -> None:
    for page in ("platforms/evil.html", "models/evil_model.html", "datasets/evil_data.html"):
        source = (hostile.site / page).read_text(encoding="utf-8")
        assert {c for c in HIDDEN if unicodedata.category(c) in HIDDEN_CATEGORIES and c in source} == set()
        text = "".join(_parse(hostile.site / page).text)
        for shown in HIDDEN_SHOWN:
            assert shown in text, (page, shown)
    recipe = "".join(_parse(hostile.site / "recipes/evil_recipe.html").text)
    assert "# hidden: \\u202e\\u2066gnp.exe\\u2069" in recipe


def test_tables_keep_each_value_in_its_cell(hostile: Hostile) -> None:
    """Pipes and backticks in a value neither split its cell nor end its code span."""
    source = (hostile.site / "platforms" / "evil.html").read_text(encoding="utf-8")
    env = source.split('id="environment"', 1)[1].split("</table>", 1)[0]
    rows = re.findall(r"<tr>(.*?)</tr>", env, flags=re.S)[1:]
    cells = [[_text(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row, flags=re.S)] for row in rows]
    assert [row[0] for row in cells] == ["EVIL_IMG", "EVIL_MARKDOWN", "EVIL_TICKS"]
    assert cells[2][1].startswith(PAYLOADS["backticks-pipes"] + " " + PAYLOADS["img-onerror-alert"])
    assert cells[1][2] == CELL_END


def _text(fragment: str) -> str:
    page = _Page()
    page.feed(fragment)
    return "".join(page.text).strip()


# --- in Chromium ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def hostile_url(hostile: Hostile) -> Iterator[str]:
    # a page that runs the payloads for real: the check below must see it (the canary)
    (hostile.site / CANARY).write_text(
        "<!doctype html><title>canary</title><p>"
        + PAYLOADS["img-onerror"]
        + '<a id="js" href="javascript:void(0)">x</a></p>',
        encoding="utf-8",
    )
    with docs_site.served(hostile.site) as url:
        yield url


# After the page has loaded (images failed, frames loaded), hover over and focus every element of
# the page, then report what ran and what could run.
_INSPECT = """
for (const element of document.querySelectorAll('body *')) {
  for (const type of ['mouseover', 'mouseenter', 'focus']) {
    element.dispatchEvent(new Event(type, {bubbles: true}));
  }
}
return {
  pwned: window.__pwned === undefined ? null : String(window.__pwned),
  title: document.title,
  handlers: Array.from(document.querySelectorAll('*')).flatMap(
    e => Array.from(e.attributes).filter(a => a.name.startsWith('on')).map(a => e.tagName + ' ' + a.name)),
  frames: document.querySelectorAll('iframe, frame, object, embed').length,
  links: Array.from(document.querySelectorAll('a[href]'), a => a.protocol)
    .filter(p => p !== 'http:' && p !== 'https:'),
};
"""


def _alert_open(driver: Any) -> bool:
    from selenium.common.exceptions import NoAlertPresentException

    try:
        driver.switch_to.alert.dismiss()
    except NoAlertPresentException:
        return False
    return True


def _what_ran(driver: Any, url: str) -> dict[str, Any]:
    driver.get_log("browser")  # what earlier pages logged
    driver.get(url)
    assert docs_site._wait(lambda: driver.execute_script("return document.readyState") == "complete")
    found: dict[str, Any] = driver.execute_script(_INSPECT)
    found["alert"] = _alert_open(driver)
    return found


NOTHING_RAN = {"pwned": None, "handlers": [], "frames": 0, "links": [], "alert": False}


def test_the_browser_check_sees_a_payload_that_runs(browser: Any, hostile_url: str) -> None:
    found = _what_ran(browser, hostile_url + CANARY)
    assert found["pwned"] == "img"
    assert found["handlers"] == ["IMG onerror"]
    assert found["links"] == ["javascript:"]


@pytest.mark.parametrize("page", sorted(EVIL_PAGES))
def test_no_payload_runs_in_the_browser(browser: Any, hostile_url: str, page: str) -> None:
    found = _what_ran(browser, hostile_url + page)
    assert {k: v for k, v in found.items() if k != "title"} == NOTHING_RAN
    assert "pwned" not in found["title"]
    assert docs_site._severe_console_messages(browser) == [], page


def test_searching_for_the_payloads_runs_none(browser: Any, hostile_url: str) -> None:
    """Search results show the indexed text of the pages, payloads included."""
    from selenium.webdriver.common.keys import Keys

    browser.get(hostile_url + "index.html")
    box = browser.find_element("css selector", "input.md-search__input")
    assert docs_site._wait(box.is_displayed, 5)
    box.click()
    box.send_keys("onerror")

    def results() -> list[str]:
        # read in one script: the list re-renders as the search worker answers, and an element found
        # in one call can be gone by the next (StaleElementReferenceException)
        found: list[str] = browser.execute_script(
            "return Array.from(document.querySelectorAll("
            "'.md-search-result__list .md-search-result__item'), item => item.innerText)"
        )
        return found

    # the index loads in a web worker; a query typed before it is ready is typed again
    for _ in range(6):
        if docs_site._wait(lambda: any("onerror" in text for text in results()), 5):
            break
        box.send_keys(" ")
        box.send_keys(Keys.BACKSPACE)
    assert any("onerror" in text for text in results()), f"search results: {results()}"
    found: dict[str, Any] = browser.execute_script(_INSPECT)
    assert found["pwned"] is None and found["handlers"] == [] and found["frames"] == 0
    assert "pwned" not in found["title"]
    assert not _alert_open(browser)

"""Results, placement diagrams and the matrix grid on the generated pages: the numbers equal the
result files, runs of a recipe are overlaid with its reported figures marked, one diagram per
distinct placement, grid cells coloured as the matrix judges them and linking to pages that exist,
and hostile text in a result file reaches the pages only as text.

One site is generated (not built) from a copy of the catalog with two measured runs and a hostile
result added; MkDocs' Markdown reads a figure to show that it passes through unchanged.
"""

from __future__ import annotations

import html
import html.parser
import posixpath
import re
import shutil
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import markdown
import pytest
import yaml

from rlcat.cli.app import command_tree
from rlcat.docsite.data import Site, load_site
from rlcat.docsite.figures.matrix_grid import STATUS_COLOURS, cell_gid
from rlcat.docsite.generate import generate
from rlcat.docsite.matrix import grid_cells, grid_md, grid_status, matrix_cell
from rlcat.docsite.placements import layouts
from rlcat.docsite.results import FILTER_SCRIPT

from conftest import REPO

# every test on one xdist worker: its module fixture (a generation of every page) runs once
pytestmark = pytest.mark.xdist_group("docs-results")

SVG = "{http://www.w3.org/2000/svg}"
XLINK = "{http://www.w3.org/1999/xlink}href"
RECIPE = "gsm8k_qwen3_8b_fsdp"
VAL_KEY = "val-core/openai/gsm8k/reward/mean@1"
PAYLOAD = '"><script>alert("rlc")</script><img src=x onerror=alert(1)> $x$ `|` *b*'
EVIL_URL = 'https://example.com/a"><script>alert(1)</script>'


def _measured(name: str, values: list[float], step_times: list[float]) -> dict[str, Any]:
    steps = list(range(1, len(values) + 1))
    return {
        "name": name,
        "summary": f"a run of {RECIPE}",
        "recipe": RECIPE,
        "platform": "cuda",
        "hardware": {"gpu": "H100", "gpus": 8, "nodes": 1},
        "verl_version": "0.9.1",
        "mode": "colocate",
        "kind": "measured",
        "run": {"folder": f"/runs/{name}", "metrics_file": f"/runs/{name}/metrics.jsonl", "lines": 5},
        "metrics": [
            {"metric": "val_score_max", "value": max(values), "unit": "fraction", "key": VAL_KEY},
            {"metric": "step_time_median", "value": sorted(step_times)[1], "unit": "s"},
        ],
        "series": [
            {"key": VAL_KEY, "unit": "fraction", "dataset": "openai/gsm8k", "steps": steps, "values": values},
            {"key": "timing_s/step", "unit": "s", "steps": steps, "values": step_times},
        ],
    }


HOSTILE_RESULT = {
    "name": "hostile-result",
    "summary": PAYLOAD,
    "recipe": RECIPE,
    "platform": "cuda",
    "hardware": {"gpu": PAYLOAD[:300]},
    "verl_version": PAYLOAD[:300],
    "mode": "colocate",
    "kind": "reported",
    "source": {"title": PAYLOAD[:300], "url": EVIL_URL, "publisher": PAYLOAD[:300], "quote": PAYLOAD},
    "metrics": [{"metric": "val_score_max", "value": 0.5, "unit": "fraction", "note": PAYLOAD}],
    "notes": PAYLOAD,
}
RUNS = {
    "run-a": _measured("run-a", [0.8, 0.86, 0.9], [60.0, 58.5, 59.0]),
    "run-b": _measured("run-b", [0.79, 0.88, 0.93, 0.94], [61.0, 57.0, 56.5, 56.0]),
}


@dataclass
class Generated:
    site: Site
    files: dict[str, str]  # docs-relative path → Markdown

    def page(self, path: str) -> str:
        return self.files[path]


@pytest.fixture(scope="module")
def gen(tmp_path_factory: pytest.TempPathFactory) -> Generated:
    root = tmp_path_factory.mktemp("results-site")
    for folder in ("catalog", "recipes"):
        shutil.copytree(REPO / folder, root / folder)
    shutil.copytree(REPO / "docs", root / "docs")
    shutil.copy(REPO / "README.md", root / "README.md")
    for data in [*RUNS.values(), HOSTILE_RESULT]:
        text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
        (root / "catalog" / "results" / f"{data['name']}.yaml").write_text(text, encoding="utf-8")
    site = load_site(root)
    files = generate(root, command_tree(), site)
    return Generated(site, {p.removeprefix("docs/"): t for p, t in files.items() if p.startswith("docs/")})


def _svgs(markdown_text: str) -> list[ET.Element]:
    return [ET.fromstring(m) for m in re.findall(r"<svg\b.*?</svg>", markdown_text, flags=re.S)]


def _texts(svg: ET.Element) -> list[str]:
    return ["".join(t.itertext()) for t in svg.iter(SVG + "text")]


def _table_rows(markdown_text: str, first_header: str) -> list[list[str]]:
    """The rows of the pipe table whose first header is `first_header`, cells with escapes undone."""
    lines = markdown_text.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {first_header} |"))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        cells = re.split(r"(?<!\\)\|", line.strip())[1:-1]
        rows.append([html.unescape(re.sub(r"\\(.)", r"\1", c.strip())) for c in cells])
    return rows


# --- numbers --------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", sorted((REPO / "catalog" / "results").glob("*.yaml")), ids=lambda p: p.stem)
def test_result_page_numbers_equal_the_data_file(gen: Generated, path: Path) -> None:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    rows = _table_rows(gen.page(f"results/{data['name']}.md"), "metric")
    shown = [(r[0].strip("`"), float(r[1]), None if r[2] == "—" else float(r[2]), r[3]) for r in rows]
    expected = [(m["metric"], float(m["value"]), m.get("high"), m["unit"]) for m in data["metrics"]]
    assert shown == expected


class _ResultsTable(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[dict[str, str]] = []
        self.cells: list[list[str]] = []
        self.options: dict[str, list[str]] = {}
        self._select = ""
        self._in_cell = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "tr" and "data-platform" in a:
            self.rows.append(a)
            self.cells.append([])
        elif tag == "td":
            self._in_cell = True
            self.cells[-1].append("")
        elif tag == "select":
            self._select = a["data-rlc-filter"]
            self.options[self._select] = []
        elif tag == "option" and a["value"]:
            self.options[self._select].append(a["value"])

    def handle_endtag(self, tag: str) -> None:
        if tag == "td":
            self._in_cell = False

    def handle_data(self, data: str) -> None:
        if self._in_cell:
            self.cells[-1][-1] += data


def test_results_index_lists_every_result_with_its_filters(gen: Generated) -> None:
    parsed = _ResultsTable()
    parsed.feed(gen.page("results/index.md"))
    results = gen.site.results
    assert [c[0] for c in parsed.cells] == [r.name for r in results]
    for row, cells, result in zip(parsed.rows, parsed.cells, results, strict=True):
        recipe = gen.site.recipe(result.recipe)
        assert row["data-platform"] == result.platform == cells[4]
        assert row["data-model"] == recipe.model == cells[3]
        assert row["data-algorithm"] == recipe.algorithm.upper() == cells[2]
    assert parsed.options == {
        "platform": sorted({r["data-platform"] for r in parsed.rows}),
        "algorithm": sorted({r["data-algorithm"] for r in parsed.rows}),
        "model": sorted({r["data-model"] for r in parsed.rows}),
    }
    by_name = {c[0]: c for c in parsed.cells}
    # the headline numbers of the seeds, as the data files give them
    assert by_name["dapo_math_fsdp2_16_16-mi300-amd"][8:10] == ["0.34", "≈219 s"]
    assert by_name["dapo_math_fsdp2_colocate_32-mi300-amd"][9] == "≈394 s"
    assert by_name["qwen3_5_35b_megatron_async-mi350-amd"][10] == "≈310 tok/s/GPU"
    assert by_name["gsm8k_qwen3_8b_fsdp-sglang-amd"][8] == "≈0.955–0.956 gsm8k, ≈0.835–0.839 math"
    assert by_name["run-b"][8:10] == ["0.94", "56.5 s"]
    # the page's only script is the fixed filter
    assert re.findall(r"<script\b.*?</script>", gen.page("results/index.md"), flags=re.S) == [
        FILTER_SCRIPT.strip()
    ]


# --- series ---------------------------------------------------------------------------------------


def test_recipe_page_lists_its_results_and_overlays_its_runs(gen: Generated) -> None:
    text = gen.page(f"recipes/{RECIPE}.md")
    results = text.split("## Results {#results}", 1)[1].split("\n## ", 1)[0]
    names = [re.match(r"\[`([^`]+)`\]", row[0]).group(1) for row in _table_rows(results, "result")]  # type: ignore[union-attr]
    assert names == sorted(["gsm8k_qwen3_8b_fsdp-sglang-amd", "hostile-result", "run-a", "run-b"])
    charts = {next(t for t in _texts(svg) if t in (VAL_KEY, "timing_s/step")): svg for svg in _svgs(results)}
    assert set(charts) == {VAL_KEY, "timing_s/step"}
    val = _texts(charts[VAL_KEY])
    assert {"run-a", "run-b"} <= set(val)
    # reported gsm8k figures drawn on the gsm8k series (not the MATH ones); measured scalars are not
    seed = yaml.safe_load((REPO / "catalog/results/gsm8k_qwen3_8b_fsdp-sglang-amd.yaml").read_text())
    # the source's English title, cut at 40 characters
    title = seed["source"].get("title_en") or seed["source"]["title"]
    label = f"{seed['name']} ({title[:39]}…)"
    assert {f"{label}: 0.82", f"{label}: 0.955–0.956"} <= set(val)
    assert not any(": 0.37" in t or ": 0.835" in t for t in val)
    lines = [p for p in charts[VAL_KEY].iter(SVG + "path") if "stroke: #0072b2" in (p.get("style") or "")]
    assert lines, "run-a's line is drawn"
    assert {"run-a", "run-b"} <= set(_texts(charts["timing_s/step"]))


def test_placement_draws_one_figure_per_distinct_layout(gen: Generated) -> None:
    for name in ("dapo_math_fsdp2_16_16", "qwen3_5_35b_megatron", RECIPE):
        found = layouts(gen.site, name)
        section = (
            gen.page(f"recipes/{name}.md").split("## GPU placement {#placement}", 1)[1].split("\n## ", 1)[0]
        )
        captions = re.findall(r"<figcaption>GPU placement of [^<]+ on ([^<:]+): [^<]+</figcaption>", section)
        assert [c.split(", ") for c in captions] == [platforms for _, platforms in found]
        assert len(_svgs(section)) == len(found)
        compiling = [
            p for p in gen.site.platforms if gen.site.cell(name, p, gen.site.recipe(name).engine).compiles
        ]
        assert sorted(p for _, ps in found for p in ps) == sorted(compiling)


# --- the matrix grid ------------------------------------------------------------------------------


def test_matrix_grid_cells_have_the_colour_of_their_status(gen: Generated) -> None:
    (svg,) = _svgs(gen.page("matrix.md").split("## Overview", 1)[0])
    drawn = {g.get("id"): g for g in svg.iter(SVG + "g") if (g.get("id") or "").startswith("rlc-cell--")}
    site = gen.site
    expected: dict[str, str] = {}
    from rlcat.docsite.matrix import _rows

    for platform in site.platforms.values():
        for algorithm, backend, mode in _rows(site):
            for engine in ("vllm", "sglang"):
                status = grid_status(matrix_cell(site, platform, (algorithm, backend, mode), engine))
                if status is None:
                    continue
                gid = cell_gid(platform.name, mode, engine, backend)
                rank = ["does-not-compile", "known-broken", "untested", "supported"]
                if gid not in expected or rank.index(status) < rank.index(expected[gid]):
                    expected[gid] = status
    assert set(drawn) == set(expected)
    for gid, group in drawn.items():
        (path,) = group.iter(SVG + "path")
        assert f"fill: {STATUS_COLOURS[expected[gid]]}" in (path.get("style") or ""), gid
    assert {"supported", "untested", "known-broken"} <= set(expected.values())


def _anchors(markdown_text: str) -> set[str]:
    headings = re.findall(r"\{#([\w-]+)[ }]", markdown_text)  # {#id} or {#id attr...}
    return set(headings) | set(re.findall(r'id="([^"]+)"', markdown_text))


def test_every_figure_link_resolves_from_its_page(gen: Generated) -> None:
    checked = 0
    for path, text in gen.files.items():
        for svg in _svgs(text):
            for a in svg.iter(SVG + "a"):
                href = a.get(XLINK) or ""
                target, _, fragment = href.partition("#")
                assert target.endswith(".html"), (path, href)
                resolved = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
                page = resolved.removesuffix(".html") + ".md"
                assert page in gen.files, (path, href)
                assert not fragment or fragment in _anchors(gen.files[page]), (path, href)
                checked += 1
    cells, _ = grid_cells(gen.site)
    assert checked >= len(cells) > 0


def test_grid_is_deterministic(gen: Generated) -> None:
    assert grid_md(gen.site) == grid_md(gen.site)


def test_markdown_passes_a_figure_through_unchanged(gen: Generated) -> None:
    config = yaml.safe_load(re.sub(r"!!python/name:\S+", "null", (REPO / "mkdocs.yml").read_text()))
    extensions = [e if isinstance(e, str) else next(iter(e)) for e in config["markdown_extensions"]]
    extensions = [
        e
        for e in extensions
        if e in ("md_in_html", "attr_list", "tables", "abbr", "def_list", "pymdownx.superfences")
    ]
    assert "md_in_html" in extensions
    section = (
        gen.page(f"recipes/{RECIPE}.md").split("## GPU placement {#placement}", 1)[1].split("\n## ", 1)[0]
    )
    out = markdown.markdown(section, extensions=extensions)
    for svg in re.findall(r"<svg\b.*?</svg>", section, flags=re.S):
        assert svg in out


# --- hostile text ---------------------------------------------------------------------------------


def test_hostile_result_text_reaches_the_pages_only_as_text(gen: Generated) -> None:
    for path in ("results/hostile-result.md", "results/index.md", f"recipes/{RECIPE}.md"):
        text = gen.page(path)
        assert "<script>alert" not in text and "<img" not in text and '"><script' not in text, path
    page = gen.page("results/hostile-result.md")
    # the URL's quotes and brackets are percent-encoded: it cannot end the attribute or open a tag
    assert "https://example.com/a%22%3E%3Cscript%3Ealert%281%29%3C/script%3E" in page
    index = gen.page("results/index.md")
    assert "https://example.com/a%22%3E%3Cscript%3Ealert%281%29%3C/script%3E" in index
    parsed = _ResultsTable()
    parsed.feed(index)
    (row,) = [c for c in parsed.cells if c[0] == "hostile-result"]
    assert row[7] == PAYLOAD[:300]  # the hardware cell shows the payload as text

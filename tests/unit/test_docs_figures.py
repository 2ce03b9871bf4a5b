"""The docs' figures (rlcat.docsite.figures): data in, SVG text out, the same bytes every time, every
cell, line and label where the data puts it, and nothing in a name able to become markup."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rlcat.catalog import Catalog
from rlcat.compile.assemble import Request, compile_request
from rlcat.docsite import results as docs_results
from rlcat.docsite.data import Site
from rlcat.docsite.figures import forget_drawings
from rlcat.docsite.figures.drawn import Drawn
from rlcat.docsite.figures.matrix_grid import STATUS_COLOURS, GridCell, cell_gid, matrix_grid_svg
from rlcat.docsite.figures.placement import ROLE_COLOURS, Layout, layout_of, placement_svg
from rlcat.docsite.figures.series import Curve, Mark, series_svg
from rlcat.docsite.md import figure
from rlcat.model.results import Result as ResultEntry

from conftest import REPO

SVG = "{http://www.w3.org/2000/svg}"
XLINK = "{http://www.w3.org/1999/xlink}href"
HOSTILE = 'ev"il<script>alert(1)</script>$x$'


def _texts(svg: str) -> list[str]:
    return ["".join(t.itertext()) for t in ET.fromstring(svg).iter(SVG + "text")]


def _fills(element: ET.Element) -> list[str]:
    return re.findall(r"fill: (#[0-9a-f]{6})", ET.tostring(element, encoding="unicode"))


def _ids(svg: str) -> set[str]:
    return {e.get("id", "") for e in ET.fromstring(svg).iter() if e.get("id")}


# --- the matrix grid ------------------------------------------------------------------------------

COLUMNS = [("colocate", "vllm", "fsdp"), ("fully_async", "sglang", "megatron")]
GRID = [
    GridCell("cuda", "colocate", "vllm", "fsdp", "supported", "recipes/a.html#cuda"),
    GridCell("cuda", "fully_async", "sglang", "megatron", "untested", "platforms/cuda.html#support"),
    GridCell("rocm", "colocate", "vllm", "fsdp", "known-broken", "recipes/a.html#rocm"),
    GridCell(HOSTILE, "colocate", "vllm", "fsdp", "does-not-compile", "javascript:alert(1)"),
]


@pytest.fixture(scope="module")
def grid() -> str:
    return matrix_grid_svg(GRID, ["cuda", "rocm", HOSTILE], COLUMNS, labels={"vllm": "vLLM"})


def test_grid_cells_carry_their_status_colour_and_evidence(grid: str) -> None:
    root = ET.fromstring(grid)
    groups = {g.get("id"): g for g in root.iter(SVG + "g") if (g.get("id") or "").startswith("rlc-cell--")}
    assert set(groups) == {cell_gid(c.platform, c.mode, c.engine, c.backend) for c in GRID}
    for cell in GRID:
        group = groups[cell_gid(cell.platform, cell.mode, cell.engine, cell.backend)]
        assert _fills(group) == [STATUS_COLOURS[cell.status]]
        links = [a.get(XLINK) for a in group.iter(SVG + "a")]
        # an evidence link the site would not show as a link is left out, not written
        assert links == ([] if cell.href.startswith("javascript") else [cell.href])
    # the cell nothing is known about is drawn, but is no status cell
    assert "rlc-cell--rocm--fully_async--sglang--megatron" not in groups


def test_grid_gids_are_slugged_and_unambiguous() -> None:
    assert (
        cell_gid("rocm-7.14", "fully_async", "vllm", "fsdp2")
        == "rlc-cell--rocm-7.14--fully_async--vllm--fsdp2"
    )
    assert cell_gid(HOSTILE, "m", "e", "b") == "rlc-cell--ev-il-script-alert-1-script-x--m--e--b"
    assert cell_gid("a--b", "m", "e", "b") == "rlc-cell--a-b--m--e--b"  # `--` only between the parts


def test_grid_shows_hostile_names_as_text(grid: str) -> None:
    assert HOSTILE in _texts(grid)
    assert "<script" not in grid and 'ev"il&lt;script&gt;' in grid
    assert "javascript" not in grid
    assert "vLLM\nfsdp" not in grid  # column labels are one text per line
    assert {"colocate", "vLLM", "fsdp", "✓ supported", "✗ does not compile"} <= {
        line for text in _texts(grid) for line in text.split("\n")
    }


def test_grid_is_deterministic(grid: str) -> None:
    assert matrix_grid_svg(GRID, ["cuda", "rocm", HOSTILE], COLUMNS, labels={"vllm": "vLLM"}) == grid


# --- metric series --------------------------------------------------------------------------------

CURVES = [Curve("run-a", (1, 2, 3), (0.31, 0.42, 0.55)), Curve("_" + HOSTILE, (1, 2), (0.2, 0.6))]
MARKS = [Mark("amd-result (AMD blog)", 0.34), Mark(HOSTILE, 0.835, 0.839)]


def test_series_overlays_every_run_and_marks_every_reported_figure() -> None:
    svg = series_svg(CURVES, MARKS, title="validation score", ylabel="score", name="v")
    texts = _texts(svg)
    # a label starting with "_" is shown (matplotlib hides such labels unless given explicitly)
    assert {"run-a", "_" + HOSTILE, "amd-result (AMD blog): 0.34", f"{HOSTILE}: 0.835–0.839"} <= set(texts)
    assert {"validation score", "score", "step"} <= set(texts)
    assert "<script" not in svg
    colours = re.findall(r"stroke: (#[0-9a-f]{6})", svg)
    assert {"#0072b2", "#e69f00"} <= set(colours)


def test_series_is_deterministic_and_its_ids_are_scoped() -> None:
    one = series_svg(CURVES, MARKS, title="t", ylabel="y", name="chart one")
    forget_drawings()  # drawn again, not taken from the cache of drawings
    assert one == series_svg(CURVES, MARKS, title="t", ylabel="y", name="chart one")
    two = series_svg(CURVES[:1], [], title="t", ylabel="y", name="chart two")
    assert _ids(one) and not _ids(one) & _ids(two)
    assert all(i.startswith("rlcfig-chart-one-") for i in _ids(one))
    refs = set(re.findall(r"url\(#([^)]+)\)", one)) | set(re.findall(r'xlink:href="#([^"]+)"', one))
    assert refs and refs <= _ids(one)
    assert not one.startswith("<?xml") and "<style" not in one and "<metadata" not in one


# --- GPU placement --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def layouts(catalog: Catalog) -> dict[str, Layout]:
    return {
        name: layout_of(compile_request(Request(name, "cuda"), catalog))
        for name in ("dapo_math_fsdp2_16_16", "qwen3_5_35b_megatron", "geo3k_megatron_4_4")
    }


def test_layout_reads_the_pools_and_groups_of_the_plan(layouts: dict[str, Layout]) -> None:
    split = layouts["dapo_math_fsdp2_16_16"]  # fully async: 16 + 16 on 4 nodes of 8
    trainer, rollout = split.pools
    assert (split.nodes, split.gpus_per_node, split.shared) == (4, 8, False)
    assert {n for n, _ in trainer.gpus} == {0, 1} and {n for n, _ in rollout.gpus} == {2, 3}
    assert (rollout.group, rollout.group_label) == (4, "TP 4")
    assert trainer.group_label == "SP 4 (FSDP)"
    colocated = layouts["qwen3_5_35b_megatron"]
    assert colocated.shared and colocated.pools[0].gpus == colocated.pools[1].gpus
    assert [p.group_label for p in colocated.pools] == ["TP 2", "TP 8"]
    one_node = layouts["geo3k_megatron_4_4"]  # 4 + 4 on one node: the rollout after the trainer
    assert [p.gpus for p in one_node.pools] == [
        tuple((0, g) for g in range(4)),
        tuple((0, g) for g in range(4, 8)),
    ]


def test_placement_fills_each_role_where_it_runs(layouts: dict[str, Layout]) -> None:
    for name, layout in layouts.items():
        svg = placement_svg(layout, name=name)
        fills = re.findall(r"fill: (#[0-9a-f]{6})", svg)
        for pool in layout.pools:
            # one strip per GPU of the pool, and one swatch in the legend
            assert fills.count(ROLE_COLOURS[pool.role]) == len(pool.gpus) + 1, (name, pool.role)
        # every model-parallel group outlined, and the outline in the legend
        outlines = len(re.findall(r"fill: none; stroke: #212121", svg))
        assert outlines == sum(-(-len(p.gpus) // p.group) for p in layout.pools) + 1, name
        forget_drawings()  # drawn again, not taken from the cache of drawings
        assert svg == placement_svg(layout, name=name)


def test_placement_holds_only_what_the_layout_says(layouts: dict[str, Layout]) -> None:
    layout = layouts["geo3k_megatron_4_4"]
    svg = placement_svg(layout, name=HOSTILE)
    texts = _texts(svg)
    assert [t for t in texts if t.startswith(("trainer", "rollout"))] == [p.caption for p in layout.pools]
    assert {f"GPU {g}" for g in range(8)} | {"node 0", "model-parallel group"} <= set(texts)
    # a hostile figure name only scopes the ids, slugged
    assert all(i.startswith("rlcfig-ev-il-script") for i in _ids(svg))
    assert "<script" not in svg


# --- figures drawn before -------------------------------------------------------------------------

DRAWN: list[tuple[int, str]] = []


def _square(side: int, *, name: str) -> str:
    DRAWN.append((side, name))
    return f'<svg xmlns="http://www.w3.org/2000/svg" id="{name}"><rect width="{side}"/></svg>\n'


def _page_with(tmp_path: Path, *figures: tuple[str, str]) -> Path:
    docs = tmp_path / "docs"
    (docs / "recipes").mkdir(parents=True, exist_ok=True)
    text = "# a page\n\n" + "\n".join(figure(svg, "a caption", key) for svg, key in figures)
    (docs / "recipes" / "a.md").write_text(text, encoding="utf-8")
    return docs


def test_a_figure_on_a_page_is_taken_not_drawn_again(tmp_path: Path) -> None:
    DRAWN.clear()
    svg, key = Drawn(None).figure(_square, 3, name="sq")
    assert DRAWN == [(3, "sq")] and svg == _square(3, name="sq").strip()
    DRAWN.clear()
    docs = _page_with(tmp_path, (svg, key))
    again = Drawn(docs)
    assert again.figure(_square, 3, name="sq") == (svg, key)
    assert DRAWN == []  # read from the page, the same bytes and key
    # another input, or another name (the ids), is another drawing
    assert again.figure(_square, 4, name="sq")[1] != key
    assert again.figure(_square, 3, name="other")[1] != key
    assert DRAWN == [(4, "sq"), (3, "other")]


def test_a_figure_edited_by_hand_is_drawn_again(tmp_path: Path) -> None:
    svg, key = Drawn(None).figure(_square, 5, name="sq")
    docs = _page_with(tmp_path, (svg.replace('width="5"', 'width="50"'), key))
    DRAWN.clear()
    assert Drawn(docs).figure(_square, 5, name="sq") == (svg, key)
    assert DRAWN == [(5, "sq")]


def test_the_shipped_pages_hold_their_figures_drawn_as_the_code_draws_them(catalog: Catalog) -> None:
    """The placement diagram on a committed page is the one the code draws from its layout now."""
    layout = layout_of(compile_request(Request("geo3k_megatron_4_4", "cuda"), catalog))
    drawn = Drawn(REPO / "docs")
    forget_drawings()
    svg, key = drawn.figure(placement_svg, layout, name="placement-0")
    assert f'data-rlc-figure="{key}"' in (REPO / "docs" / "recipes" / "geo3k_megatron_4_4.md").read_text()
    assert placement_svg.cache_info().currsize == 0  # taken from the page
    assert svg == placement_svg(layout, name="placement-0").strip()  # as a new drawing makes it


# --- the docs draw a bounded number of charts per page ---------------------------------------------


class _Recorder:
    """Stands in for the site's Drawn: keeps what each chart was given instead of drawing it."""

    def __init__(self) -> None:
        self.charts: list[tuple[tuple[Any, ...], dict[str, Any]]] = []

    def figure(self, draw: Callable[..., str], *args: Any, **kwargs: Any) -> tuple[str, str]:
        self.charts.append((args, kwargs))
        return "<svg></svg>", f"{len(self.charts):x}"


def _result(i: int, keys: int, points: int) -> ResultEntry:
    """A reported result of the gsm8k recipe with `keys` series of `points` points each."""
    series = [
        {"key": f"val-core/d{k}/reward/mean@1", "unit": "fraction", "steps": list(range(points)),
         "values": [0.5] * points}
        for k in range(keys)
    ]  # fmt: skip
    return ResultEntry.model_validate(
        {
            "name": f"r{i}",
            "summary": "many series",
            "recipe": "gsm8k_qwen3_8b_fsdp",
            "platform": "cuda",
            "hardware": {"gpu": "H100", "gpus": 8},
            "mode": "colocate",
            "kind": "reported",
            "source": {"title": "a source"},
            "series": series,
        }
    )


def test_a_recipe_page_draws_a_bounded_number_of_charts(tmp_path: Path) -> None:
    """Five results of 200 series each drew 1,001 figures on one page (14.7 MB, 117 s)."""
    results = [_result(i, 200, 50) for i in range(4)] + [_result(9, 2, 5000)] * 12
    site = Site(tmp_path, {}, {}, {}, {}, results=results)
    site.drawn = _Recorder()  # type: ignore[assignment]
    text = docs_results.charts_md(site, "gsm8k_qwen3_8b_fsdp", "series")
    charts = site.drawn.charts  # type: ignore[attr-defined]
    assert len(charts) == docs_results.MAX_CHARTS_PER_PAGE
    for (curves, _marks), _ in charts:
        assert len(curves) <= docs_results.MAX_CURVES_PER_CHART
        assert all(len(c.steps) <= docs_results.MAX_POINTS_PER_CURVE for c in curves)
        assert all(c.steps[-1] == max(c.steps) for c in curves)  # the last point kept
    assert f"**{200 - docs_results.MAX_CHARTS_PER_PAGE} more metric(s) not drawn**" in text
    keys = sorted(f"val-core/d{k}/reward/mean@1" for k in range(200))
    assert f"`{keys[docs_results.MAX_CHARTS_PER_PAGE]}`" in text  # listed, not drawn
    assert f"and {200 - docs_results.MAX_CHARTS_PER_PAGE - docs_results.MAX_LISTED_KEYS} more." in text
    assert "more run(s) not drawn" in text

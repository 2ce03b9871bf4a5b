"""The docs build hands Material's search plugin each page without its excluded tail (the plans of a
recipe page) and with its SVG figures reduced to their text: the index and the page that MkDocs
writes are the ones the plugin alone gives."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from rlcat.docsite.build import excluded_tail, search_reads_less, searchable

# A recipe page as Markdown renders it: searchable sections, then a section per platform marked
# data-search-exclude (inside them, tabs with tables and code the index must not see).
RECIPE = (
    '<h1 id="r">r</h1>\n<p>GRPO on <code>gsm8k</code>.</p>\n'
    '<h2 id="platforms">On every platform</h2>\n<table><tr><td>cuda</td></tr></table>\n'
    '<h2 id="placement">GPU placement</h2>\n<p>Where it runs:</p>\n'
    '<figure class="rlc-figure">\n<svg xmlns="http://www.w3.org/2000/svg" width="10pt">\n <g id="a">\n'
    '  <path d="M 0 0 L 1 1" style="fill: #3f51b5"/>\n  <g><text style="font-size: 7px">GPU 0</text>\n'
    '  </g>\n  <a xlink:href="../platforms/cuda.html"><path d="M 1 1"/></a>\n'
    "  <text>node &lt;0&gt; &amp; TP 2</text>\n </g>\n</svg>\n<figcaption>placement</figcaption>\n</figure>\n"
    '<h2 id="recipe-file">Recipe file</h2>\n<pre><code>name: r\n</code></pre>\n'
    '<h2 data-search-exclude id="cuda">cuda</h2>\n<div class="tabbed-set"><p>cuda plan '
    "<code>data.train_files=x</code></p></div>\n"
    '<h2 data-search-exclude id="rocm">rocm</h2>\n<p data-search-boost="2">rocm plan</p>\n'
    "<h4>no id: opens no section</h4>\n<p>still rocm</p>\n"
)


def _page(content: str) -> Any:
    return SimpleNamespace(
        content=content,
        meta={},
        toc=[],
        url="recipes/r.html",
        title="r",
        file=SimpleNamespace(src_uri="recipes/r.md"),
    )


def _plugins(tmp_path: Path, *, cut: bool) -> Any:
    """The plugins of a site with Material's search, with or without the build's own."""
    pytest.importorskip("material")
    from mkdocs.config import load_config

    (tmp_path / "docs").mkdir(exist_ok=True)
    yml = tmp_path / "mkdocs.yml"
    yml.write_text("site_name: t\ntheme:\n  name: material\nplugins:\n  - search\n", encoding="utf-8")
    config = load_config(str(yml))
    if cut:
        config.plugins["rlcat/search-reads-less"] = search_reads_less()
    config.plugins.on_config(config)
    return config


def _index(config: Any, content: str) -> tuple[list[dict[str, Any]], str]:
    page = _page(content)
    config.plugins.on_page_context({}, page=page, config=config, nav=None)
    return config.plugins["material/search"].search_index.entries, page.content


def test_the_index_and_the_page_are_the_plugin_s_own(tmp_path: Path) -> None:
    plain, plain_page = _index(_plugins(tmp_path, cut=False), RECIPE)
    entries, page = _index(_plugins(tmp_path, cut=True), RECIPE)
    assert entries == plain
    assert page == plain_page
    # the excluded tail is back on the page, with the attributes the plugin strips stripped
    assert "cuda plan" in page and "rocm plan" in page and "data-search-boost" not in page
    assert [e["location"] for e in entries] == [
        "recipes/r.html",
        "recipes/r.html#platforms",
        "recipes/r.html#placement",
        "recipes/r.html#recipe-file",
    ]
    assert not any("plan" in e["text"] for e in entries)
    # a figure's text is found, as the plugin alone indexes it; its shapes never reach the plugin
    assert "GPU 0 node &lt;0&gt; &amp; TP 2 placement" in entries[2]["text"]
    assert "<path" not in searchable(RECIPE) and "GPU 0</text>" in searchable(RECIPE)


def test_the_tail_starts_at_the_first_excluded_heading() -> None:
    assert excluded_tail(RECIPE) == RECIPE.index('<h2 data-search-exclude id="cuda">')
    assert excluded_tail('<h1 id="a">a</h1><p>x</p>') is None


def test_a_searchable_section_after_an_excluded_one_keeps_the_page_whole(tmp_path: Path) -> None:
    mixed = RECIPE + '<h2 id="notes">Notes</h2>\n<p>found by search</p>\n'
    assert excluded_tail(mixed) is None
    plain, _ = _index(_plugins(tmp_path, cut=False), mixed)
    entries, page = _index(_plugins(tmp_path, cut=True), mixed)
    assert entries == plain and "found by search" in entries[-1]["text"]
    assert page.endswith("<p>found by search</p>\n")

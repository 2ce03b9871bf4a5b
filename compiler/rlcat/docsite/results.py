"""Results on the site: a page listing every result (filterable by platform, algorithm and model), a
page per result, and the section of a recipe page that lists its results and charts their series.

The numbers are written as `rlcat results` writes them (`rlcat.runs.render`). The table of all
results is raw HTML, because its rows carry the data-* attributes a small inline script filters on
(no script or style from elsewhere); every value in it goes through `md.html_text`.
"""

from __future__ import annotations

from rlcat.docsite.data import Site
from rlcat.docsite.figures.series import CURVE_COLOURS, Curve, Mark, series_svg
from rlcat.docsite.links import ALGORITHM_LABELS, MODE_LABELS, html_url, page, rel
from rlcat.docsite.md import code, esc, figure, html_link, html_text, link, name_md, table
from rlcat.docsite.md import facts as md_facts
from rlcat.model.results import Result, Scalar, Series
from rlcat.runs.render import hardware_text, metric_text, number, scalar_text, validation_text

INDEX = "results/index.md"
GUIDE = "results.md"  # written by hand: the result file, recording runs
SOURCE_LABEL_CHARS = 40
# which series a reported scalar is drawn on: validation scores on validation keys, the others on
# the verl key they summarise
_SCALAR_KEYS = {"step_time_median": "timing_s/step", "throughput": "perf/throughput"}
_YLABELS = {
    "fraction": "score",
    "s": "seconds",
    "tokens/s/GPU": "tokens/s/GPU",
    "steps": "steps",
    "ratio": "×",
}
# What one recipe page draws, whatever its results hold (a result may carry 200 series, a team a
# hundred runs of one recipe): the rest is listed under the charts, not drawn (docs/results.md).
MAX_CHARTS_PER_PAGE = 12  # metric keys charted; validation scores first, then step time, throughput
MAX_CURVES_PER_CHART = len(CURVE_COLOURS)  # runs overlaid on one chart, one colour each
MAX_POINTS_PER_CURVE = 500  # a longer series is drawn from evenly spaced points, its last one kept
# the columns of the table of all results (`_html_row` writes a row)
INDEX_COLUMNS: tuple[str, ...] = ("result", "recipe", "algorithm", "model", "platform", "kind", "mode")
INDEX_COLUMNS += ("hardware", "validation", "step time", "throughput", "source")
FILTERS = (("platform", "platforms"), ("algorithm", "algorithms"), ("model", "models"))

FILTER_SCRIPT = """\
<script>
(function () {
  var table = document.getElementById("rlc-results");
  var selects = document.querySelectorAll("select[data-rlc-filter]");
  function apply() {
    table.querySelectorAll("tbody tr").forEach(function (row) {
      var shown = Array.prototype.every.call(selects, function (select) {
        return !select.value || row.getAttribute("data-" + select.dataset.rlcFilter) === select.value;
      });
      row.style.display = shown ? "" : "none";
    });
  }
  selects.forEach(function (select) { select.addEventListener("change", apply); });
})();
</script>
"""


def _guide_sentence(site: Site, here: str) -> str:
    """A pointer to the hand-written guide, where the site has it (a checkout's docs/; a site of
    catalog folders has only generated pages)."""
    if not (site.root / "docs" / GUIDE).is_file():
        return ""
    return f" How a result is written and a run recorded: {link('Results and runs', rel(here, GUIDE))}."


def recipe_results(site: Site, recipe: str) -> list[Result]:
    return [r for r in site.results if r.recipe == recipe]


def _source_label(result: Result) -> str:
    if result.source is None:
        return "measured"
    label = result.source.publisher or result.source.english_title
    return label if len(label) <= SOURCE_LABEL_CHARS else label[: SOURCE_LABEL_CHARS - 1] + "…"


def source_md(result: Result) -> str:
    """The source as a link (to its URL where it has one), or the run folder of a measured result."""
    if result.source is not None:
        title = esc(_source_label(result))
        return link(title, result.source.url) if result.source.url else title
    return "run " + code(result.run.folder) if result.run else "—"


def _draws_on(scalar: Scalar, series: Series) -> bool:
    if scalar.key is not None:
        return scalar.key == series.key
    if scalar.metric in _SCALAR_KEYS:
        return _SCALAR_KEYS[scalar.metric] == series.key
    if not series.key.startswith("val") or scalar.unit != series.unit or scalar.metric == "steps":
        return False
    wanted = scalar.dataset
    return (
        wanted is None
        or series.dataset == wanted
        or f"/{wanted}/" in f"/{series.dataset or ''}/{series.key}/"
    )


def charts_md(site: Site, recipe: str, prefix: str) -> str:
    """One chart per metric key the recipe's runs have series of: the runs' series overlaid, every
    reported figure of that metric drawn across it. Empty when no result has a series.

    Bounded per page: at most MAX_CHARTS_PER_PAGE charts (validation keys first, then the step time
    and the throughput, then the rest by name), MAX_CURVES_PER_CHART runs on one chart and
    MAX_POINTS_PER_CURVE points of a run; what is left out is said under the charts."""
    results = recipe_results(site, recipe)
    keys = sorted({s.key for r in results for s in r.series}, key=_chart_order)
    out = []
    for i, key in enumerate(keys[:MAX_CHARTS_PER_PAGE]):
        series = [(r, s) for r in results for s in r.series if s.key == key]
        curves = [
            Curve(r.name, *_thinned(s.steps, s.values, MAX_POINTS_PER_CURVE))
            for r, s in series[:MAX_CURVES_PER_CHART]
        ]
        first = series[0][1]
        marks = [
            Mark(f"{r.name} ({_source_label(r)})", scalar.value, scalar.high)
            for r in results
            if r.kind == "reported"
            for scalar in r.metrics
            if _draws_on(scalar, first)
        ][:MAX_CURVES_PER_CHART]
        svg, drawing = site.drawn.figure(
            series_svg,
            curves,
            marks,
            title=key,
            ylabel=_YLABELS.get(first.unit, first.unit),
            name=f"{prefix}-{i}",
        )
        caption = f"{key} per step: {len(curves)} run(s) of {recipe}" + (
            f", {len(marks)} reported figure(s)" if marks else ""
        )
        if len(series) > len(curves):
            caption += f"; {len(series) - len(curves)} more run(s) not drawn (see the table above)"
        out.append(figure(svg, caption, drawing))
    if len(keys) > MAX_CHARTS_PER_PAGE:
        rest = keys[MAX_CHARTS_PER_PAGE:]
        out.append(
            f"**{len(rest)} more metric(s) not drawn** (a page draws at most {MAX_CHARTS_PER_PAGE} "
            "charts; each result's page lists its series): "
            + ", ".join(code(k) for k in rest[:MAX_LISTED_KEYS])
            + (f" and {len(rest) - MAX_LISTED_KEYS} more" if len(rest) > MAX_LISTED_KEYS else "")
            + ".\n"
        )
    return "\n".join(out)


MAX_LISTED_KEYS = 50  # keys named in the note of what is not drawn; the rest counted


def _chart_order(key: str) -> tuple[int, str]:
    """Validation scores first, then the step time and the throughput, then the rest by name."""
    if key.startswith("val"):
        return 0, key
    if key in _SCALAR_KEYS.values():
        return 1, key
    return 2, key


def _thinned(steps: list[int], values: list[float], cap: int) -> tuple[tuple[int, ...], tuple[float, ...]]:
    """At most `cap` points, evenly spaced, the first and the last always kept."""
    if len(steps) <= cap:
        return tuple(steps), tuple(values)
    stride = -(-(len(steps) - 1) // (cap - 1))  # ceiling: (cap - 1) strides reach the last point
    kept = [*range(0, len(steps) - 1, stride), len(steps) - 1]
    return tuple(steps[i] for i in kept), tuple(values[i] for i in kept)


def _headline(result: Result) -> str:
    parts = []
    if (validation := validation_text(result)) != "-":
        parts.append(f"validation {validation}")
    for metric, label in (("step_time_median", "step"), ("throughput", "throughput")):
        if (text := metric_text(result, metric)) != "-":
            parts.append(f"{label} {text}")
    return "; ".join(parts) or "—"


def recipe_results_md(site: Site, recipe: str, here: str) -> str:
    """A recipe page's "Results" section: its results, then the charts of their series."""
    results = recipe_results(site, recipe)
    if not results:
        return (
            "No results yet. Record a run with `rlcat runs add DIR`, or add a reported figure as a "
            f"result file.{_guide_sentence(site, here)}\n"
        )
    rows = [
        [
            link(code(r.name), rel(here, page("result", r.name))),
            r.kind,
            esc(r.platform),
            esc(hardware_text(r)),
            esc(r.verl_version or "—"),
            esc(_headline(r)),
            source_md(r),
        ]
        for r in results
    ]
    out = [table(["result", "kind", "platform", "hardware", "verl", "figures", "source"], rows)]
    charts = charts_md(site, recipe, "series")
    if charts:
        out.append(charts)
    return "\n".join(out)


def _recipe_facts(site: Site, result: Result) -> tuple[str, str]:
    """(algorithm, model) of the result's recipe, as the filters and the table show them."""
    if result.recipe not in site.recipes:
        return "—", "—"
    r = site.recipe(result.recipe)
    return ALGORITHM_LABELS.get(r.algorithm, r.algorithm), r.model


def _html_row(site: Site, result: Result) -> str:
    algorithm, model = _recipe_facts(site, result)
    attrs = {"platform": result.platform, "algorithm": algorithm, "model": model}
    data = " ".join(f'data-{k}="{html_text(v)}"' for k, v in attrs.items())
    here = INDEX
    recipe = (
        html_link(f"<code>{html_text(result.recipe)}</code>", html_url(here, page("recipe", result.recipe)))
        if result.recipe in site.recipes
        else html_text(result.recipe)
    )
    source = result.source
    if source is not None:
        origin = html_text(_source_label(result))
        origin = html_link(origin, source.url) if source.url else origin
    else:
        origin = "measured"
    cells = [
        html_link(f"<code>{html_text(result.name)}</code>", html_url(here, page("result", result.name))),
        recipe,
        html_text(algorithm),
        html_text(model),
        html_text(result.platform),
        result.kind,
        html_text(MODE_LABELS.get(result.mode, result.mode)),
        html_text(hardware_text(result)),
        html_text(validation_text(result)),
        html_text(metric_text(result, "step_time_median")),
        html_text(metric_text(result, "throughput")),
        origin,
    ]
    return f"<tr {data}>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"


def _filters(site: Site) -> str:
    choices: dict[str, set[str]] = {key: set() for key, _ in FILTERS}
    for result in site.results:
        algorithm, model = _recipe_facts(site, result)
        choices["platform"].add(result.platform)
        choices["algorithm"].add(algorithm)
        choices["model"].add(model)
    out = []
    for key, plural in FILTERS:
        options = [f'<option value="">all {plural}</option>']
        options += [f'<option value="{html_text(v)}">{html_text(v)}</option>' for v in sorted(choices[key])]
        out.append(f'<label>{key} <select data-rlc-filter="{key}">{"".join(options)}</select></label>')
    return '<div class="rlc-filters" markdown="0">\n' + "\n".join(out) + "\n</div>\n"


def results_index(site: Site) -> str:
    head = "<thead><tr>" + "".join(f"<th>{h}</th>" for h in INDEX_COLUMNS) + "</tr></thead>"
    body = "\n".join(_html_row(site, r) for r in site.results)
    intro = (
        "# Results\n\n"
        f"What the catalog's recipes gave: {len(site.results)} results, figures reported with their "
        "source and runs measured by `rlcat runs add`. Choose a platform, an algorithm or a model to "
        "narrow the table; each result has a page with its numbers and charts, and each recipe page "
        f"lists its own.{_guide_sentence(site, INDEX)}\n"
    )
    if not site.results:
        return intro + "\nNo results yet.\n"
    table_html = (
        f'<div markdown="0">\n<table id="rlc-results">\n{head}\n<tbody>\n{body}\n</tbody>\n</table>\n</div>\n'
    )
    return "\n".join([intro, _filters(site), table_html, FILTER_SCRIPT])


def result_page(site: Site, result: Result) -> str:
    here = page("result", result.name)
    recipe_link = (
        link(code(result.recipe), rel(here, page("recipe", result.recipe)))
        if result.recipe in site.recipes
        else code(result.recipe)
    )
    platform_link = (
        link(esc(result.platform), rel(here, page("platform", result.platform)))
        if result.platform in site.platforms
        else esc(result.platform)
    )
    facts = [
        ("recipe", recipe_link),
        ("platform", platform_link),
        ("kind", result.kind),
        ("hardware", esc(hardware_text(result))),
        ("mode", MODE_LABELS.get(result.mode, result.mode)),
    ]
    optional = [
        ("engine", result.engine),
        ("backend", result.backend),
        ("verl", result.verl_version),
        ("date", result.date),
    ]
    facts += [(label, esc(value)) for label, value in optional if value]
    if result.fingerprint:
        facts.append(("plan fingerprint", code(result.fingerprint)))
    if result.baseline is not None:
        b = result.baseline
        facts.append(
            (
                "baseline",
                link(code(b.result), rel(here, page("result", b.result)))
                + esc(f": {'≈' if b.approximate else ''}{b.ratio:g}× on {b.metric}"),
            )
        )
    out = [f"# {name_md(result.name)}\n", esc(result.summary) + "\n", md_facts(facts)]
    out.append("## Figures {#figures}\n")
    rows = [
        [
            code(s.metric),
            esc(f"{s.value:.6g}"),
            esc(f"{s.high:.6g}") if s.high is not None else "—",
            esc(s.unit),
            "≈" if s.approximate else "",
            esc(s.dataset or "—"),
            code(s.key) if s.key else "—",
            str(s.at_step) if s.at_step is not None else "—",
            esc(scalar_text(s)),
        ]
        for s in result.metrics
    ]
    if rows:
        out.append(
            table(
                ["metric", "value", "up to", "unit", "about", "dataset", "verl key", "at step", "shown as"],
                rows,
            )
        )
    if result.series:
        rows = [
            [
                code(s.key),
                esc(s.unit),
                str(len(s.steps)),
                f"{s.steps[0]}–{s.steps[-1]}",
                esc(number(s.values[-1], s.unit)),
                esc(s.note or "—"),
            ]
            for s in result.series
        ]
        out.append("**Series**\n\n" + table(["key", "unit", "points", "steps", "last", "note"], rows))
        if result.recipe in site.recipes:
            # drawn once, on the recipe's page: a team's hundred runs of one recipe would otherwise
            # carry the same charts a hundred times
            charts = rel(here, page("recipe", result.recipe) + "#results")
            out.append(
                "Charts of these series, with every run of the recipe overlaid: "
                f"{link('on its page', charts)}.\n"
            )
    out.append("## Source {#source}\n")
    if result.source is not None:
        s = result.source
        items = [("title", link(esc(s.title), s.url) if s.url else esc(s.title))]
        if s.title_en:
            items.append(("in English", esc(s.title_en)))
        for label, value in (
            ("publisher", s.publisher),
            ("date", s.date),
            ("cites", s.cites),
            ("where", s.figure),
        ):
            if value:
                items.append((label, esc(value)))
        out.append(md_facts(items))
        if s.quote:
            out.append("> " + esc(s.quote) + "\n")
    elif result.run is not None:
        run = result.run
        out.append(
            md_facts(
                [
                    ("run folder", code(run.folder)),
                    ("metrics file", code(run.metrics_file) + f", {run.lines} lines read"),
                    ("still running when read", "yes" if run.live else "no"),
                    ("Hydra overrides read", "yes" if run.hydra else "no"),
                ]
            )
        )
    if result.notes:
        out.append("## Notes {#notes}\n\n" + esc(result.notes) + "\n")
    return "\n".join(out)

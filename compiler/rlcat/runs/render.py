"""Results and runs for people (tables, one result as a page, a comparison) and for programs (JSON).

Every cell goes through emit.tables.render_table (each cell `printable`) and every JSON through
diagnostics.json_text: a result file's text reaches a terminal or a CI log escaped.
"""

from __future__ import annotations

from pathlib import Path

from rlcat.catalog import display_path
from rlcat.diagnostics import json_text, printable
from rlcat.emit.tables import render_diff, render_table
from rlcat.model.results import Result, Scalar
from rlcat.runs.results import Comparison, comparison_data, result_data
from rlcat.syntax.bash import shell_word

_UNIT_SHOWN = {"fraction": "", "s": " s", "tokens/s/GPU": " tok/s/GPU", "steps": " steps", "ratio": "×"}


def number(value: float | None, unit: str = "") -> str:
    """A metric as people read it: 4 significant digits, the unit after it."""
    if value is None:
        return "-"
    shown = f"{value:.0f}" if unit == "steps" else f"{value:.4g}"
    return shown + _UNIT_SHOWN.get(unit, "")


def scalar_text(s: Scalar) -> str:
    text = ("≈" if s.approximate else "") + number(s.value, s.unit)
    if s.high is not None:
        text = text.removesuffix(_UNIT_SHOWN[s.unit]) + "–" + number(s.high, s.unit)
    return text


def metric_text(result: Result, metric: str) -> str:
    """The scalars of one metric, joined (a result may score several validation sets)."""
    found = [s for s in result.metrics if s.metric == metric]
    return ", ".join(scalar_text(s) + (f" {s.dataset}" if s.dataset else "") for s in found) or "-"


def validation_text(result: Result) -> str:
    """The best validation score, else the last one (a source may give only where training ended)."""
    best = metric_text(result, "val_score_max")
    return best if best != "-" else metric_text(result, "val_score_final")


def hardware_text(result: Result) -> str:
    hw = result.hardware
    if hw.gpus is None:
        return hw.gpu or "-"
    return f"{hw.gpus}× {hw.gpu}" if hw.gpu else f"{hw.gpus} GPUs"


def _origin(result: Result) -> str:
    if result.source is not None:
        return result.source.url or result.source.english_title
    return result.run.folder if result.run is not None else "-"


# What each metric is, in words (the `runs add` summary).
METRIC_LABELS = {
    "val_score_initial": "validation score before training",
    "val_score_max": "best validation score",
    "val_score_final": "last validation score",
    "step_time_median": "median step time",
    "throughput": "median throughput",
    "steps": "training steps",
}
_SUMMARY_METRICS = ("val_score_max", "val_score_final", "step_time_median", "throughput", "steps")


def recorded_summary(result: Result, path: Path) -> str:
    """What `runs add` says it recorded: one labelled line per figure (each validation set on its
    own), as people read the numbers (rounded; the file holds them as measured), and how the plan
    was compiled."""
    lines = [f"recorded {result.name} in {display_path(path)}:"]
    rows = [
        [METRIC_LABELS[s.metric], scalar_text(s), _of(s)]
        for metric in _SUMMARY_METRICS
        for s in result.metrics
        if s.metric == metric
    ]
    text = "".join(printable(line) + "\n" for line in lines)
    text += "".join(f"  {line}\n" for line in render_table(["figure", "value", "of"], rows).splitlines())
    return text + "".join(printable(line) + "\n" for line in _compiled_with(result))


def _of(s: Scalar) -> str:
    """Which validation set or verl key a figure is of, and at which step."""
    step = "" if s.at_step is None else f"at step {s.at_step}"
    return ", ".join(part for part in (s.dataset or s.key or "", step) if part)


def _compiled_with(result: Result) -> list[str]:
    """The command line that compiled a measured run's plan, where the result records it."""
    if result.run is None or not result.run.command:
        return []
    return ["compiled with: " + " ".join(shell_word(word) for word in result.run.command)]


def render_results(results: list[tuple[Result, Path]], fmt: str) -> str:
    """`rlcat results`: one row per result."""
    if fmt == "json":
        return json_text([result_data(r, p) for r, p in results])
    columns = [
        "name",
        "recipe",
        "platform",
        "kind",
        "mode",
        "hardware",
        "validation",
        "step time",
        "throughput",
    ]
    rows = [
        [
            r.name,
            r.recipe,
            r.platform,
            r.kind,
            r.mode,
            hardware_text(r),
            validation_text(r),
            metric_text(r, "step_time_median"),
            metric_text(r, "throughput"),
        ]
        for r, _ in results
    ]
    return render_table(columns, rows) if rows else "(no results)\n"


def render_runs(results: list[tuple[Result, Path]], fmt: str) -> str:
    """`rlcat runs list`: the measured results."""
    if fmt == "json":
        return json_text([result_data(r, p) for r, p in results])
    rows = [
        [
            r.name,
            r.recipe,
            r.platform,
            r.date or "-",
            metric_text(r, "steps"),
            validation_text(r),
            metric_text(r, "step_time_median"),
            (r.fingerprint or "-")[:19],
        ]
        for r, _ in results
    ]
    columns = ["name", "recipe", "platform", "date", "steps", "validation", "step time", "fingerprint"]
    return render_table(columns, rows) if rows else "(no runs recorded: rlcat runs add DIR)\n"


def render_result(result: Result, path: Path | None, fmt: str) -> str:
    """`rlcat runs show`: one result, its fields and its scalars."""
    if fmt == "json":
        return json_text(result_data(result, path))
    head = [
        f"{result.name}: {result.summary}",
        f"recipe {result.recipe} on {result.platform} ({result.mode}), {hardware_text(result)}",
        f"kind {result.kind}: {_origin(result)}",
    ]
    if path is not None:
        head.append(f"file {display_path(path)}")
    if result.fingerprint:
        head.append(f"plan fingerprint {result.fingerprint}")
    head += _compiled_with(result)
    if result.run is not None and result.run.live:
        head.append("read while the run was still writing")
    rows = [
        [s.metric, s.key or s.dataset or "", scalar_text(s), "" if s.at_step is None else str(s.at_step)]
        for s in result.metrics
    ]
    series = [
        f"series {s.key}: {len(s.steps)} points, steps {s.steps[0]}–{s.steps[-1]}" for s in result.series
    ]
    text = "".join(printable(line) + "\n" for line in head) + "\n"
    text += render_table(["metric", "of", "value", "at step"], rows)
    return text + "".join(printable(line) + "\n" for line in series)


def render_comparison(c: Comparison, fmt: str) -> str:
    """`rlcat runs compare`: the plan diff, as `rlcat diff` shows it, then the metrics side by side."""
    if fmt == "json":
        return json_text(comparison_data(c))
    same = c.a.result.fingerprint is not None and c.a.result.fingerprint == c.b.result.fingerprint
    if c.plan is None:
        plan = "plan: not compared (a run's plan.json is not there)\n"
    elif same:
        plan = f"plan: the same (fingerprint {c.a.result.fingerprint})\n"
    else:
        plan = "plan:\n" + render_diff(c.plan, c.a.label, c.b.label, "text")
    rows = [
        [m.metric, m.key, number(m.a, m.unit), number(m.b, m.unit), _signed(m.difference, m.unit)]
        for m in c.metrics
    ]
    metrics = render_table(["metric", "of", "a", "b", "b - a"], rows)
    return plan + "\nmetrics:\n" + metrics


def _signed(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    return ("+" if value > 0 else "") + number(value, unit)

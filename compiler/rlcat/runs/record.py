"""A run folder read as a measured result, and the result written into a catalog.

A run folder is what `rlcat compile --run-dir DIR` prepared and verl filled: plan.json, the metrics
file of verl's file logger, and, when the run's Hydra output went there, `.hydra/` (verl's launch
writes `overrides.yaml`, the overrides it was started with).
"""

from __future__ import annotations

import datetime
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from rlcat.catalog import KIND_DIRS, display_path
from rlcat.diagnostics import Diagnostic, RlcatError, Severity, diag, printable
from rlcat.emit.formats import override_key
from rlcat.files import read_text
from rlcat.inside import link_out, write_files
from rlcat.model.axes import NAME_PATTERN
from rlcat.model.results import Result
from rlcat.model.validate import validate
from rlcat.read.document import parse_yaml
from rlcat.read.values import parse_value
from rlcat.resolve.entries import validate_document
from rlcat.runs.metrics import STEP_TIME_KEY, THROUGHPUT_KEY, MetricsSummary, Tracked, read_metrics
from rlcat.runs.plan_file import PLAN_FILE, RecordedPlan, read_plan_file
from rlcat.syntax.yaml_text import yaml_document

SCHEMA_LINE = "# yaml-language-server: $schema=../../schemas/result.schema.json"
MAX_VAL_KEYS = 8  # validation keys that become scalars and series


@dataclass
class RunReading:
    """A run folder read: its plan, its metrics, the result they make, and what was wrong."""

    plan: RecordedPlan
    metrics: MetricsSummary
    result: Result
    diagnostics: list[Diagnostic] = field(default_factory=list)


def read_run(run_dir: Path, *, name: str | None = None, gpu: str | None = None) -> RunReading:
    """Read the run in `run_dir` into a measured result (not written anywhere). Raises RlcatError
    when the folder has no plan, or its metrics file holds no record yet (RLC1209)."""
    plan = read_plan_file(run_dir)
    metrics_name = plan.data.get("metrics_file")
    metrics_name = metrics_name if isinstance(metrics_name, str) and "/" not in metrics_name else None
    metrics_path = run_dir / (metrics_name or "metrics.jsonl")
    if not os.path.lexists(metrics_path):
        raise RlcatError(
            [
                diag(
                    "RLC1209",
                    f"no metrics file {display_path(metrics_path)} yet",
                    file=display_path(metrics_path),
                    hint="the run writes it once it has logged a step (trainer.logger has `file`)",
                )
            ]
        )
    # a run folder is the job's: a link out of it would record (and quote) a file of whoever records
    outside = link_out(metrics_path, os.path.realpath(run_dir), display_path(metrics_path))
    if outside is not None:
        raise RlcatError([outside])
    metrics = read_metrics(metrics_path)
    found = [*plan.diagnostics, *metrics.diagnostics, *_hydra_overrides(run_dir, plan)]
    if metrics.records == 0:
        raise RlcatError(
            [
                *found,
                diag(
                    "RLC1209",
                    "no metrics record in the file: nothing to record",
                    file=metrics.path,
                    hint="record the run once it has logged a step",
                ),
            ]
        )
    data = _result_data(run_dir, plan, metrics, metrics_path, name, gpu)
    # what the run holds is checked as any result file is: a bad value is a finding, never a crash
    result = validate(Result, data, lambda _: {"file": display_path(run_dir / PLAN_FILE)})
    return RunReading(plan, metrics, result, found)


def _result_data(  # noqa: PLR0917 - one reading's parts
    run_dir: Path,
    plan: RecordedPlan,
    metrics: MetricsSummary,
    metrics_path: Path,
    name: str | None,
    gpu: str | None,
) -> dict[str, Any]:
    d = plan.data
    hardware: dict[str, Any] = {"gpus": d["gpus"]}
    if isinstance(d.get("nodes"), int) and not isinstance(d.get("nodes"), bool) and d["nodes"] > 0:
        hardware["nodes"] = d["nodes"]
    if gpu:
        hardware["gpu"] = gpu
    data: dict[str, Any] = {
        "name": name or default_name(d["recipe"], d["platform"], run_dir),
        "summary": f"{d['recipe']} on {d['platform']}: {metrics.train_steps} steps measured",
        "recipe": d["recipe"],
        "fingerprint": plan.fingerprint,
        "platform": d["platform"],
        "hardware": hardware,
        "verl_version": d["verl_version"],
        "mode": d["mode"],
        "date": _date(metrics_path),
        "kind": "measured",
        "run": {
            # absolute until it is written: then relative to the catalog it goes to (write_result)
            "folder": os.path.abspath(run_dir),
            "metrics_file": metrics_path.name,
            "lines": metrics.lines,
            "live": metrics.live,
            "hydra": os.path.isdir(run_dir / ".hydra"),
            "sets": plan.arguments("--set"),
            "overrides": plan.arguments("--override"),
            "command": plan.command,
        },
        "metrics": _scalars(metrics),
        "series": _series(metrics),
    }
    for axis in ("engine", "backend"):
        if isinstance(d.get(axis), str):
            data[axis] = d[axis]
    return data


def default_name(recipe: str, platform: str, run_dir: Path) -> str:
    """`RECIPE-PLATFORM-FOLDER`, made an entry name (lower case, other characters as `-`)."""
    folder = re.sub(r"[^a-z0-9_.\-]+", "-", os.path.basename(os.path.abspath(run_dir)).lower()).strip("-.")
    name = re.sub(r"[^a-z0-9_.\-]+", "-", f"{recipe}-{platform}-{folder or 'run'}".lower())[:100]
    return name if re.match(NAME_PATTERN, name) else f"run-{name}"[:100]


def _date(path: Path) -> str:
    """The day the metrics file was last written (UTC): when the run ran, as the file says."""
    mtime = os.stat(path).st_mtime
    return datetime.datetime.fromtimestamp(mtime, tz=datetime.timezone.utc).date().isoformat()


def _dataset(key: str) -> str | None:
    """The data source in a validation key: `val-core/openai/gsm8k/reward/mean@1` → openai/gsm8k."""
    parts = key.split("/")
    if len(parts) < 4:
        return None
    return "/".join(parts[1:-2])[:300] or None


def _scalars(metrics: MetricsSummary) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for key in metrics.val_keys()[:MAX_VAL_KEYS]:
        tracked = metrics.tracked[key]
        where = {"key": key, **({"dataset": ds} if (ds := _dataset(key)) else {})}
        for metric, point in (
            ("val_score_initial", tracked.first),
            ("val_score_max", tracked.best),
            ("val_score_final", tracked.final),
        ):
            if point is not None:
                out.append(
                    {"metric": metric, "value": point[1], "unit": "fraction", "at_step": point[0], **where}
                )
    for metric, key, unit in (
        ("step_time_median", STEP_TIME_KEY, "s"),
        ("throughput", THROUGHPUT_KEY, "tokens/s/GPU"),
    ):
        median = metrics.tracked[key].median()
        if median is not None:
            out.append({"metric": metric, "value": median, "unit": unit, "key": key})
    out.append({"metric": "steps", "value": float(metrics.train_steps), "unit": "steps"})
    return out


def _series(metrics: MetricsSummary) -> list[dict[str, Any]]:
    chosen: list[tuple[Tracked, str]] = [
        (metrics.tracked[k], "fraction") for k in metrics.val_keys()[:MAX_VAL_KEYS]
    ]
    chosen += [(metrics.tracked[STEP_TIME_KEY], "s"), (metrics.tracked[THROUGHPUT_KEY], "tokens/s/GPU")]
    out = []
    for tracked, unit in chosen:
        steps, values = tracked.series.points()
        if not steps:
            continue
        entry: dict[str, Any] = {"key": tracked.key, "unit": unit, "steps": steps, "values": values}
        if tracked.key.startswith("val") and (ds := _dataset(tracked.key)):
            entry["dataset"] = ds
        if tracked.series.thinned:
            entry["note"] = f"every {tracked.series.stride}th of {tracked.series.seen} points, and the last"
        out.append(entry)
    return out


def _hydra_overrides(run_dir: Path, plan: RecordedPlan) -> list[Diagnostic]:
    """RLC1207 when `.hydra/overrides.yaml` (what verl was started with) differs from the plan: the
    run was launched with more, fewer or other overrides than rlcat compiled."""
    path = run_dir / ".hydra" / "overrides.yaml"
    if not path.is_file():
        return []
    shown = display_path(path)
    outside = link_out(path, os.path.realpath(run_dir), shown)
    if outside is not None:
        return [replace(outside, severity=Severity.WARNING)]
    try:  # a YAML list Hydra wrote, read with the catalog's loader and its limits
        launched = parse_value(read_text(path, shown), shown)
    except RlcatError as exc:
        return [replace(d, severity=Severity.WARNING) for d in exc.diagnostics]
    except yaml.YAMLError:
        launched = None
    if not isinstance(launched, list) or not all(isinstance(t, str) for t in launched):
        return [diag("RLC1207", "not a list of overrides; not compared with the plan", file=shown)]
    planned = {override_key(t): t for t in plan.override_texts}
    started = {override_key(t): t for t in launched}
    differ = sorted(k for k in planned.keys() | started.keys() if planned.get(k) != started.get(k))
    if not differ:
        return []
    shown_keys = ", ".join(printable(k) for k in differ[:10]) + (" ..." if len(differ) > 10 else "")
    return [
        diag(
            "RLC1207",
            f"the run was started with other overrides than its plan: {shown_keys}",
            file=shown,
            hint="its metrics are recorded against the plan's fingerprint all the same; compile the "
            "run again with those settings to record it under the plan it really ran",
        )
    ]


# --- writing into a catalog ---------------------------------------------------------------------


# What `runs add` suggests when the run holds text no YAML file can show as it is.
_UNSHOWABLE_HINT = (
    "the run folder's plan.json (or --gpu) holds it: correct it there, or compile the run again with "
    "`rlcat compile RECIPE --run-dir DIR`, then run `rlcat runs add` again"
)


def result_text(result: Result, source: str | None = None) -> str:
    """The result as a YAML entry file, with the schema line editors read; text YAML cannot show is
    refused naming `source` (the run's plan.json) and the result's key."""
    data = result.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    data = {"name": data.pop("name"), **data}
    return SCHEMA_LINE + "\n" + yaml_document(data, file=source, hint=_UNSHOWABLE_HINT)


def write_result(
    result: Result, root: Path, catalog: str = ".", *, force: bool = False, source: str | None = None
) -> Path:
    """Write the result into CATALOG/catalog/results/NAME.yaml below the folder `root`, whole or not
    at all, following no link below `root` (inside.write_files); a file already there is replaced
    only with `force` (RLC1206). What is written is read back with the catalog's own loader and
    must give the same result (a text no reader would read the same way is never left in a
    catalog). `source` names the run's plan.json in a refusal."""
    rel = Path(catalog, KIND_DIRS["result"], f"{result.name}.yaml").as_posix()
    path = root / rel
    if result.run is not None:  # a results file travels with its catalog, not with this checkout
        run = result.run.model_copy(update={"folder": stored_folder(result.run.folder, root / catalog)})
        result = result.model_copy(update={"run": run})
    shown = display_path(path)
    if os.path.lexists(path) and not force:
        raise RlcatError(
            [
                diag(
                    "RLC1206",
                    f"result {result.name} is already in the catalog; not overwritten",
                    file=shown,
                    hint="pass --force to replace it, or --name to record the run under another name",
                )
            ]
        )
    text = result_text(result, source)
    _check_round_trip(text, result, shown)
    write_files(root, {rel: text}, overwrite=True)
    return path


def stored_folder(folder: str, catalog: Path) -> str:
    """A run folder as a results file stores it: relative to the catalog folder the file is in, so
    the catalog and its runs can move together (absolute when there is no relative path, as from
    one Windows drive to another)."""
    try:
        relative = os.path.relpath(os.path.abspath(folder), os.path.abspath(catalog))
    except ValueError:
        return Path(os.path.abspath(folder)).as_posix()
    return Path(relative).as_posix()


def _check_round_trip(text: str, result: Result, shown: str) -> None:
    if validate_document(Result, parse_yaml(text, shown)) != result:
        raise RlcatError(
            [diag("RLC106", "the result would not read back as written; not written", file=shown)]
        )

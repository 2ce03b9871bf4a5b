"""Every result in the catalog search path, read and validated, and the two runs `runs compare` puts
side by side."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlcat.catalog import KIND_DIRS, Catalog, display_path
from rlcat.diagnostics import Diagnostic, Note, RlcatError, Severity, diag, did_you_mean
from rlcat.emit.formats import UNFINGERPRINTED_ENV, UNFINGERPRINTED_KEYS
from rlcat.emit.tables import render_diff
from rlcat.model.results import Result, Run, Scalar
from rlcat.read.document import load_yaml
from rlcat.resolve.entries import check_name, validate_document
from rlcat.runs.plan_file import RecordedPlan, read_plan_file
from rlcat.runs.record import read_run
from rlcat.survey.recipes import Change, diff


@dataclass
class Found:
    """The results that read, each with its file, and the findings of those that did not."""

    results: list[tuple[Result, Path]] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)


def load_results(
    catalog: Catalog,
    *,
    recipe: str | None = None,
    platform: str | None = None,
    kind: str | None = None,
) -> Found:
    """Every result of the catalog (the first folder holding a name wins), in name order, that
    matches the filters. A file that does not read or validate is a finding and is left out."""
    found = Found()
    for _, path in sorted(catalog.names("result").items()):
        try:
            doc = load_yaml(path, display_path(path))
            result = validate_document(Result, doc)
            check_name(doc, path, "result", result.name)
        except RlcatError as exc:
            found.diagnostics += exc.diagnostics
            continue
        if recipe is not None and result.recipe != recipe:
            continue
        if platform is not None and result.platform != platform:
            continue
        if kind is not None and result.kind != kind:
            continue
        found.results.append((result, path))
    return found


def result_data(result: Result, path: Path | None = None) -> dict[str, Any]:
    """A result as JSON data: every field (recipe, platform, kind, source, metrics, ...), and its file."""
    data: dict[str, Any] = result.model_dump(mode="json", by_alias=True)
    if path is not None:
        data["file"] = display_path(path)
    return data


def find_result(catalog: Catalog, name: str) -> tuple[Result, Path]:
    """A result by name (RLC202 with close names when there is none)."""
    path = catalog.find("result", name)
    doc = load_yaml(path, display_path(path))
    result = validate_document(Result, doc)
    check_name(doc, path, "result", result.name)
    return result, path


# --- comparing two runs -------------------------------------------------------------------------


def _no_such_run(ref: str, catalog: Catalog) -> Diagnostic:
    """Neither a run folder nor a result: which of either it may have meant (a recorded result is
    named RECIPE-PLATFORM-FOLDER, so `r1` may be `runs/r1` or `..-rocm-r1`)."""
    results = sorted(catalog.names("result"))
    meant = [f"the run folder {folder}" for folder in (f"runs/{ref}",) if os.path.isdir(folder)]
    meant += [f"the result {name}" for name in results if name.endswith(f"-{ref}")]
    meant += [
        f"the result {name}" for name in did_you_mean(ref, results) if f"the result {name}" not in meant
    ]
    where = ", ".join(display_path(r / KIND_DIRS["result"]) for r in catalog.roots)
    hint = (
        "did you mean " + " or ".join(meant[:3]) + "?"
        if meant
        else f"give a run folder (runs/NAME, made by rlcat compile --run-dir) or a result recorded by "
        f"rlcat runs add (rlcat runs list); results are looked up in: {where}"
    )
    return diag("RLC202", f"'{ref}' is neither a run folder nor a recorded result", argument=ref, hint=hint)


def run_folder(run: Run, path: Path, catalog: Catalog) -> Path:
    """The run folder of a measured result read from `path`: relative to the catalog folder holding
    the file (rlcat runs add writes it so); an older result's absolute path stays as it is."""
    root = catalog.root_of(path)
    folder = Path(run.folder)
    return folder if root is None or folder.is_absolute() else root / folder


@dataclass
class Side:
    """One side of a comparison: how it was named, its result, and its plan when the folder is there."""

    label: str
    result: Result
    plan: RecordedPlan | None
    diagnostics: list[Diagnostic] = field(default_factory=list)


def side(ref: str, catalog: Catalog) -> Side:
    """A run folder (read now, not recorded), or the name of a measured result (its plan read from
    the folder it was recorded from)."""
    if os.path.isdir(ref):
        reading = read_run(Path(ref))
        return Side(ref, reading.result, reading.plan, reading.diagnostics)
    if ref not in catalog.names("result"):
        raise RlcatError([_no_such_run(ref, catalog)])
    result, path = find_result(catalog, ref)
    if result.run is None:
        raise RlcatError(
            [
                diag(
                    "RLC1201",
                    f"{result.name} is a reported result: it has no run and no plan to compare",
                    file=display_path(path),
                    hint="compare run folders or measured results (rlcat runs list)",
                )
            ]
        )
    try:
        return Side(ref, result, read_plan_file(run_folder(result.run, path, catalog)))
    except RlcatError as exc:
        gone = diag(
            "RLC1201",
            f"the plan of {result.name} is not readable where it was recorded; its metrics are compared "
            "without it",
            severity=Severity.WARNING,
            notes=tuple(Note(d.message, d.file, d.line) for d in exc.diagnostics[:1]),
            file=display_path(path),
            key="run.folder",
        )
        return Side(ref, result, None, [gone])


@dataclass
class MetricChange:
    metric: str
    key: str
    unit: str
    a: float | None
    b: float | None

    @property
    def difference(self) -> float | None:
        return None if self.a is None or self.b is None else self.b - self.a


def _scalar_id(s: Scalar) -> tuple[str, str]:
    return s.metric, s.key or s.dataset or ""


def metric_changes(a: Result, b: Result) -> list[MetricChange]:
    """The scalars of both results matched by metric and key, in a's order then b's."""
    left = {_scalar_id(s): s for s in a.metrics}
    right = {_scalar_id(s): s for s in b.metrics}
    out = []
    for ident in [*left, *(i for i in right if i not in left)]:
        sa, sb = left.get(ident), right.get(ident)
        unit = (sa or sb).unit  # type: ignore[union-attr]
        out.append(MetricChange(ident[0], ident[1], unit, sa.value if sa else None, sb.value if sb else None))
    return out


@dataclass
class Comparison:
    a: Side
    b: Side
    plan: list[Change] | None  # None when a side's plan is not there
    metrics: list[MetricChange]


def compare(ref_a: str, ref_b: str, catalog: Catalog) -> Comparison:
    a, b = side(ref_a, catalog), side(ref_b, catalog)
    plan = None
    if a.plan is not None and b.plan is not None:
        # where each run logs its metrics differs from run to run and says nothing about what it
        # trained: left out, as the fingerprint leaves it out
        ignored = UNFINGERPRINTED_KEYS | UNFINGERPRINTED_ENV
        plan = [c for c in diff(a.plan, b.plan) if c.key not in ignored]
    return Comparison(a, b, plan, metric_changes(a.result, b.result))


def comparison_data(c: Comparison) -> dict[str, Any]:
    """The comparison as JSON data; the plan's changes exactly as `rlcat diff --format json` has them."""
    plan = (
        json.loads(render_diff(c.plan, c.a.label, c.b.label, "json"))["changes"]
        if c.plan is not None
        else None
    )
    return {
        "a": {"ref": c.a.label, "result": c.a.result.name, "fingerprint": c.a.result.fingerprint},
        "b": {"ref": c.b.label, "result": c.b.result.name, "fingerprint": c.b.result.fingerprint},
        "same_plan": c.a.result.fingerprint is not None and c.a.result.fingerprint == c.b.result.fingerprint,
        "plan": plan,
        "metrics": [{**m.__dict__, "difference": m.difference} for m in c.metrics],
    }

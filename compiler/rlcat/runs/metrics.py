"""Read the metrics file verl's `file` logger writes, streaming, in bounded memory.

verl's FileLogger (verl/utils/tracking.py:529-548 in 0.9.1) writes one line per `log(data, step)`:
`orjson.dumps({"step": step, "data": data}) + b"\\n"`, unbuffered, so a live run's last line may be
half-written. The trainer logs its training metrics once per step (`timing_s/step`,
`perf/throughput`, ...) and its validation metrics (`val-core/<data source>/<var>/<metric>`) on
lines of their own, so one step may have two lines. orjson writes NaN and infinity as null.

Nothing in the file is trusted: a line that is not such a record, or is longer than MAX_LINE_BYTES,
is a diagnostic with its line number and is skipped; keys that are not verl metric names are
ignored; at most MAX_TRACKED_KEYS validation keys are followed and every series is thinned to at
most MAX_SERIES_POINTS points, so a file of any size is read in bounded memory.
"""

from __future__ import annotations

import json
import math
import re
import statistics
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from rlcat.catalog import display_path
from rlcat.diagnostics import Diagnostic, diag
from rlcat.files import open_regular
from rlcat.model.results import MAX_SERIES_POINTS

# verl logs a few kB a step: a million steps stay under a gigabyte
MAX_METRICS_BYTES = 1024 * 1024 * 1024
MAX_LINE_BYTES = 4 * 1024 * 1024  # verl's lines are a few kB; one of megabytes is not a log record
MAX_REPORTED = 20  # bad lines reported one by one; the rest are counted
MAX_TRACKED_KEYS = 64  # validation keys followed (a file may name millions)
MAX_SAMPLES = 2_000_000  # step times and throughputs kept for the medians (16 MB each at most)
SERIES_POINTS = 1000  # points kept per series, well under the schema's MAX_SERIES_POINTS
STEP_TIME_KEY = "timing_s/step"
THROUGHPUT_KEY = "perf/throughput"
VAL_PREFIXES = ("val-core/", "val/")
# matched whole (fullmatch): a `$` would let a key end in a newline, which no result may hold
_METRIC_KEY = re.compile(r"[A-Za-z0-9_@./:\-]{1,300}")
assert SERIES_POINTS <= MAX_SERIES_POINTS


@dataclass
class Sampler:
    """The points of one series in step order, thinned to at most `cap` by keeping every other
    point whenever it fills (so the kept points stay evenly spread); the last point is always kept."""

    cap: int = SERIES_POINTS
    stride: int = 1
    seen: int = 0
    steps: list[int] = field(default_factory=list)
    values: list[float] = field(default_factory=list)
    last: tuple[int, float] | None = None
    out_of_order: int = 0

    def add(self, step: int, value: float) -> None:
        if self.last is not None and step <= self.last[0]:
            if step == self.last[0]:  # logged twice at one step: the later value stands
                self.last = (step, value)
                if self.steps and self.steps[-1] == step:
                    self.values[-1] = value
            else:
                self.out_of_order += 1
            return
        self.last = (step, value)
        if self.seen % self.stride == 0:
            if len(self.steps) >= self.cap:
                self.steps, self.values = self.steps[::2], self.values[::2]
                self.stride *= 2
            if self.seen % self.stride == 0:
                self.steps.append(step)
                self.values.append(value)
        self.seen += 1

    @property
    def thinned(self) -> bool:
        return self.stride > 1

    def points(self) -> tuple[list[int], list[float]]:
        """The kept points, with the last one seen at the end."""
        steps, values = list(self.steps), list(self.values)
        if self.last is not None and (not steps or steps[-1] != self.last[0]):
            if len(steps) >= self.cap:
                steps, values = steps[:-1], values[:-1]
            steps.append(self.last[0])
            values.append(self.last[1])
        return steps, values


@dataclass
class Tracked:
    """One metric key followed through the file: its first, best and last value, and its series."""

    key: str
    first: tuple[int, float] | None = None
    best: tuple[int, float] | None = None
    series: Sampler = field(default_factory=Sampler)
    samples: array[float] | None = None  # every value, for a median (step time, throughput)
    capped: bool = False

    def add(self, step: int, value: float) -> None:
        if self.first is None:
            self.first = (step, value)
        if self.best is None or value > self.best[1]:
            self.best = (step, value)
        self.series.add(step, value)
        if self.samples is not None:
            if len(self.samples) < MAX_SAMPLES:
                self.samples.append(value)
            else:
                self.capped = True

    @property
    def final(self) -> tuple[int, float] | None:
        return self.series.last

    def median(self) -> float | None:
        return statistics.median(self.samples) if self.samples else None


@dataclass
class MetricsSummary:
    """What a metrics file says: the metrics followed, the steps, and what was wrong in it."""

    path: str
    lines: int = 0  # lines read (records and skipped lines)
    records: int = 0
    train_steps: int = 0  # lines with a step time: one per training step
    last_step: int | None = None
    live: bool = False  # the last line was half-written: the run is still going (or was cut)
    tracked: dict[str, Tracked] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    refused_keys: set[str] = field(default_factory=set)  # validation keys that are not metric names

    def val_keys(self) -> list[str]:
        """The validation keys to report: verl's core ones (`val-core/...`, the mean where there is
        one), else the older `val/...` keys."""
        for prefix in VAL_PREFIXES:
            keys = [k for k in self.tracked if k.startswith(prefix)]
            means = [k for k in keys if "/mean@" in k]
            if means or keys:
                return sorted(means or keys)
        return []


class _Bad(Exception):
    """A line that is not a file-logger record; the message says why."""


def read_metrics(path: Path) -> MetricsSummary:
    """Summarise the metrics file at `path` (see the module docstring). Raises RlcatError only when
    the file cannot be opened (rlcat.files.open_regular: RLC001, RLC012 not a regular file, RLC007
    larger than MAX_METRICS_BYTES); everything wrong inside it is a diagnostic of the summary."""
    shown = display_path(path)
    summary = MetricsSummary(shown)
    summary.tracked[STEP_TIME_KEY] = Tracked(STEP_TIME_KEY, samples=array("d"))
    summary.tracked[THROUGHPUT_KEY] = Tracked(THROUGHPUT_KEY, samples=array("d"))
    bad = 0
    # a regular file of at most MAX_METRICS_BYTES, read no further even while a live run writes it
    stream, _ = open_regular(path, shown, limit=MAX_METRICS_BYTES, hint=_TOO_LARGE_HINT)
    with stream:
        for number, line, complete, too_long in _lines(stream):
            summary.lines = number
            if too_long:
                bad += 1
                if bad <= MAX_REPORTED:
                    summary.diagnostics.append(
                        diag(
                            "RLC1204",
                            f"line {number} is longer than {MAX_LINE_BYTES} bytes; skipped",
                            file=shown,
                            line=number,
                        )
                    )
                continue
            if not line.strip():
                continue
            try:
                step, data = _record(line)
            except _Bad as exc:
                if not complete:  # a live run's last line, half-written: no finding
                    summary.live = True
                    summary.diagnostics.append(
                        diag(
                            "RLC1203",
                            f"line {number} is half-written (the run is still writing, or was cut "
                            "short); skipped",
                            file=shown,
                            line=number,
                        )
                    )
                    continue
                bad += 1
                if bad <= MAX_REPORTED:
                    summary.diagnostics.append(
                        diag(
                            "RLC1202",
                            f"line {number}: {exc}; skipped",
                            file=shown,
                            line=number,
                            hint='verl\'s file logger writes {"step": N, "data": {"metric": value, ...}} '
                            "per line",
                        )
                    )
                continue
            summary.records += 1
            _take(summary, step, data, line, number)
    if bad > MAX_REPORTED:
        summary.diagnostics.append(
            diag(
                "RLC1202",
                f"{bad - MAX_REPORTED} more bad lines skipped (the first {MAX_REPORTED} are shown)",
                file=shown,
            )
        )
    summary.diagnostics += _caps(summary, shown)
    return summary


def _lines(stream: BinaryIO) -> Iterator[tuple[int, bytes, bool, bool]]:
    """(line number, line, whether it ended with a newline, whether it was too long), reading at most
    MAX_LINE_BYTES of a line: the rest of a longer one is read past, never kept."""
    number = 0
    while True:
        line = stream.readline(MAX_LINE_BYTES + 1)
        if not line:
            return
        number += 1
        if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
            while line and not line.endswith(b"\n"):
                line = stream.readline(MAX_LINE_BYTES)
            yield number, b"", True, True
            continue
        complete = line.endswith(b"\n")
        yield number, line, complete, False


_TOO_LARGE_HINT = "is this verl's metrics file? record the run from the file its file logger wrote"


_CONSTANT = re.compile(rb"-?(NaN|Infinity)")


def _record(line: bytes) -> tuple[int, dict[str, Any]]:
    # orjson, not the json module: a run's file has a record per step and verl logs a hundred
    # metrics in each, and orjson reads a 100,000-line file about 3x faster (bench/runs_add.py).
    # It refuses NaN and infinity (verl's logger writes null), text that is not UTF-8, and nesting
    # deeper than 1024 levels, each with an error this turns into words.
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise _Bad(_not_json(line, exc)) from None
    if not isinstance(record, dict) or set(record) != {"step", "data"}:
        raise _Bad('not a {"step": ..., "data": {...}} record')
    step, data = record["step"], record["data"]
    if isinstance(step, bool) or not isinstance(step, int) or step < 0 or step > 10**12:
        raise _Bad(f"step {_short(step)} is not a step number")
    if not isinstance(data, dict):
        raise _Bad("data is not a mapping of metrics")
    return step, data


def _not_json(line: bytes, exc: orjson.JSONDecodeError) -> str:
    if "depth limit" in exc.msg:
        return "nested too deeply"
    if "UTF-8" in exc.msg:
        return "not UTF-8 text"
    constant = _CONSTANT.match(line, exc.pos)
    if constant:
        return f"{constant.group(1).decode()} is not a number JSON allows (verl's logger writes null)"
    return f"not JSON ({exc.msg} at column {exc.colno})"


def _short(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


_FOLLOWED = (STEP_TIME_KEY, THROUGHPUT_KEY)
_VAL_MARK = re.compile(b"|".join(re.escape(b'"' + prefix.encode()) for prefix in VAL_PREFIXES))


def _take(summary: MetricsSummary, step: int, data: dict[str, Any], line: bytes, number: int) -> None:
    """Follow the metrics of one record. Only the step time, the throughput and validation keys
    are read (verl logs a hundred metrics a step): the line's bytes say whether it holds any
    validation key before its keys are walked."""
    if summary.last_step is None or step > summary.last_step:
        summary.last_step = step
    for key in _FOLLOWED:
        value = data.get(key)
        if value is not None and _number(value):
            summary.tracked[key].add(step, float(value))
            if key == STEP_TIME_KEY:
                summary.train_steps += 1
    if not _VAL_MARK.search(line):
        return
    for key, value in data.items():
        if not key.startswith(VAL_PREFIXES) or not _number(value):
            continue
        tracked = summary.tracked.get(key)
        if tracked is None:
            if not _METRIC_KEY.fullmatch(key):
                _refuse_key(summary, key, number)
                continue
            if len(summary.tracked) >= MAX_TRACKED_KEYS + len(_FOLLOWED):
                continue
            tracked = summary.tracked[key] = Tracked(key)
        tracked.add(step, float(value))


def _refuse_key(summary: MetricsSummary, key: str, number: int) -> None:
    """RLC1202 for a validation key that is not a verl metric name (a newline, a space, a quote):
    no result may hold it, so it is left out, named (escaped, shortened) with its line."""
    if key in summary.refused_keys or len(summary.refused_keys) >= MAX_REPORTED:
        return
    summary.refused_keys.add(key)
    shown = key if len(key) <= 80 else key[:77] + "..."
    summary.diagnostics.append(
        diag(
            "RLC1202",
            "a validation key that is not a verl metric name; not recorded",
            file=summary.path,
            line=number,
            key=shown,
            hint="metric names are letters, digits and _ @ . / : - (at most 300 of them)",
        )
    )


def _number(value: Any) -> bool:
    """A finite number (null, which is how verl's logger writes NaN, text and lists are not)."""
    # exact types: bool is an int subclass, and this runs for every metric of every step
    return (type(value) is float or type(value) is int) and math.isfinite(value)


def _caps(summary: MetricsSummary, shown: str) -> list[Diagnostic]:
    """Notes for what the summary left out: thinned series, capped samples, steps out of order."""
    notes = []
    for tracked in summary.tracked.values():
        if tracked.series.thinned:
            notes.append(
                diag(
                    "RLC1205",
                    f"{tracked.key}: {tracked.series.seen} points thinned to every "
                    f"{tracked.series.stride}th for the result's series",
                    file=shown,
                )
            )
        if tracked.capped:
            notes.append(
                diag("RLC1205", f"{tracked.key}: the median is of the first {MAX_SAMPLES} values", file=shown)
            )
        if tracked.series.out_of_order:
            notes.append(
                diag(
                    "RLC1202",
                    f"{tracked.key}: {tracked.series.out_of_order} values logged at an earlier step than "
                    "one before them (a restarted run?) left out of the series",
                    file=shown,
                )
            )
    if sum(1 for k in summary.tracked if k.startswith(VAL_PREFIXES)) >= MAX_TRACKED_KEYS:
        notes.append(
            diag("RLC1205", f"only the first {MAX_TRACKED_KEYS} validation keys are followed", file=shown)
        )
    return notes

"""Small helpers shared by the benchmark scripts in bench/ (not a test suite, not part of rlcat).

Every benchmark measures its commands interleaved (A B C A B C ...) so that machine noise (other
processes, frequency scaling, page-cache effects) hits all of them alike, then reports medians and
ratios against a reference measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def cpu_of_children() -> float:
    """CPU seconds (user + system) of every finished child process so far, their own children
    included: on a shared machine a command's CPU time moves less with the load than its wall time,
    and for a single-threaded process it is the wall time a quiet machine would show."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def median_ms(samples: Sequence[float]) -> float:
    """Median of samples given in seconds, in milliseconds."""
    return statistics.median(samples) * 1000.0


def median_ratio(measured: Sequence[float], reference: Sequence[float]) -> float:
    """Median over rounds of measured / reference, each round's pair timed back to back: a burst of
    load on a shared machine stretches both of a round alike, where a ratio of two medians would
    take them from different rounds."""
    return statistics.median(m / r for m, r in zip(measured, reference, strict=True))


def spread_ms(samples: Sequence[float]) -> tuple[float, float]:
    """(min, max) of samples given in seconds, in milliseconds."""
    return min(samples) * 1000.0, max(samples) * 1000.0


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain fixed-width text table (first column left-aligned, the others right-aligned)."""
    cells = [[str(h) for h in headers]] + [[_fmt(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]

    def line(r: list[str]) -> str:
        pairs = enumerate(zip(r, widths, strict=True))
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in pairs)

    out = [line(cells[0]), "  ".join("-" * w for w in widths)]
    out += [line(r) for r in cells[1:]]
    return "\n".join(out)


def samples_table(samples: dict[str, list[float]], reference: str = "python") -> str:
    """Every command's median, fastest and slowest round, and its ratio to `reference` (the median
    of the rounds' own ratios), from samples in seconds."""
    rows = [
        [name, median_ms(values), *spread_ms(values), median_ratio(values, samples[reference])]
        for name, values in samples.items()
    ]
    return table(["command", "median ms", "min ms", "max ms", f"x {reference} (per round)"], rows)


def cpu_summary(cpu: dict[str, list[float]]) -> str:
    """One line: each command's median CPU time (cpu_of_children per run, in seconds)."""
    medians = ", ".join(f"{name} {median_ms(values):.0f}" for name, values in cpu.items())
    return f"CPU time (user + system, every process of the command), median ms: {medians}"


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.2f}" if abs(value) < 100 else f"{value:.1f}"
    return str(value)


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    return {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "python": sys.version.split()[0],
        "executable": sys.executable,
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "loadavg_1m": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
    }


def write_json(path: str | None, data: dict[str, Any]) -> None:
    if not path:
        return
    Path(path).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {path}")


def bench_arguments(doc: str | None, repeat: int, rounds: str = "measured rounds") -> argparse.ArgumentParser:
    """The options every benchmark takes (--repeat, --json, --check); a script adds its own."""
    p = argparse.ArgumentParser(description=(doc or "").split("\n\n")[0])
    p.add_argument("--repeat", type=int, default=repeat, help=f"{rounds} (default {repeat})")
    p.add_argument("--json", dest="json_path", metavar="FILE", help="write machine-readable results here")
    p.add_argument("--check", action="store_true", help="exit 1 when a budget fails (default: always 0)")
    return p

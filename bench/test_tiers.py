"""Wall time of the test tiers: the inner loop (`pytest -m "not slow"`), the whole suite, and the
differential tier (`tests/oracle`, verl's own start-up checks; `--oracle-only`).

Run:  python bench/test_tiers.py [--repeat N] [--fast-only | --oracle-only] [--json FILE] [--check]

Each round runs, in fresh processes from the checkout, `python -c pass` (the reference), the fast
tier and the whole suite, interleaved; pytest runs as configured in pyproject.toml (pytest-xdist
across every core). The fast tier runs as on a fresh clone: RLCAT_VERL_TREES names an empty folder,
so no fetched verl tree is found (the whole suite uses the fetched ones, as `.ci/run` does).
Reported: medians, the CPU time of each command (its own and its children's), the load average
before each round, and the ratio of the whole suite to the fast tier. A round whose pytest fails is
reported and fails the check: a budget of a failing suite means nothing.

Budgets (issue 19): the fast tier <= 60 s, the whole suite <= 8 min on the 2-core development
machine; (issue 21) the differential tier <= 3 min with `-n 0`, its environments built beforehand
(`rlcat dev verl-oracle`; their build is not counted). The exit code is 0 unless --check is given
and a budget fails.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _benchlib import REPO, bench_arguments, machine, median_ms, spread_ms, table, verdict, write_json

BUDGET_FAST_S = 60.0
BUDGET_FULL_S = 480.0
BUDGET_ORACLE_S = 180.0


def main(argv: list[str] | None = None) -> int:
    p = bench_arguments(__doc__, repeat=3, rounds="measured rounds")
    p.add_argument(
        "--fast-only",
        action="store_true",
        help="measure the fast tier alone (a round of the whole suite takes minutes; .ci/run times it)",
    )
    p.add_argument(
        "--oracle-only",
        action="store_true",
        help="measure the differential tier alone (tests/oracle, one process; needs `rlcat dev verl-oracle`)",
    )
    args = p.parse_args(argv)

    pytest = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    commands = {
        "python": [sys.executable, "-c", "pass"],
        "fast tier": [*pytest, "-m", "not slow"],
        "whole suite": pytest,
    }
    if args.fast_only:
        del commands["whole suite"]
    if args.oracle_only:
        del commands["fast tier"], commands["whole suite"]
        commands["oracle tier"] = [*pytest, "-n", "0", "tests/oracle"]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    samples: dict[str, list[float]] = {name: [] for name in commands}
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    loads: list[float] = []
    failures: list[str] = []
    with tempfile.TemporaryDirectory(prefix="rlcat-no-trees-") as no_trees:
        envs = dict.fromkeys(commands, env)
        envs["fast tier"] = {**env, "RLCAT_VERL_TREES": no_trees}  # a fresh clone: nothing fetched
        for _ in range(args.repeat):
            loads.append(os.getloadavg()[0])
            for name, command in commands.items():
                before = _children_cpu()
                start = time.perf_counter()
                run = subprocess.run(
                    command, cwd=REPO, env=envs[name], capture_output=True, text=True, check=False
                )
                samples[name].append(time.perf_counter() - start)
                cpu[name].append(_children_cpu() - before)
                if run.returncode:
                    failures.append(f"{name}: exit {run.returncode}\n{run.stdout[-2000:]}")

    med = {name: median_ms(v) / 1000 for name, v in samples.items()}
    med_cpu = {name: median_ms(v) / 1000 for name, v in cpu.items()}
    rows = []
    for name, v in samples.items():
        lo, hi = spread_ms(v)
        rows.append([name, med[name], lo / 1000, hi / 1000, med_cpu[name]])
    load = ", ".join(f"{x:.2f}" for x in loads)
    print(f"{args.repeat} interleaved rounds, cores: {os.cpu_count()}, load average before each: {load}\n")
    print(table(["command", "median s", "min s", "max s", "CPU s"], rows))
    checks = {}
    if "fast tier" in med:
        checks[f"fast tier <= {BUDGET_FAST_S:.0f} s"] = med["fast tier"] <= BUDGET_FAST_S
    if "oracle tier" in med:
        checks[f"oracle tier <= {BUDGET_ORACLE_S:.0f} s"] = med["oracle tier"] <= BUDGET_ORACLE_S
    if "whole suite" in med:
        checks[f"whole suite <= {BUDGET_FULL_S:.0f} s"] = med["whole suite"] <= BUDGET_FULL_S
        print(f"\nwhole suite / fast tier: {med['whole suite'] / med['fast tier']:.1f}x")
    checks["every run passed"] = not failures
    for name, ok in checks.items():
        print(f"{name}: {verdict(ok)}")
    for failure in failures:
        print(f"\nFAILED {failure}")
    ok = all(checks.values())
    write_json(
        args.json_path,
        {
            "benchmark": "test_tiers",
            "machine": machine(),
            "repeat": args.repeat,
            "median_s": med,
            "samples_s": samples,
            "cpu_median_s": med_cpu,
            "load_average_before": loads,
            "checks": checks,
            "pass": ok,
        },
    )
    return 1 if args.check and not ok else 0


def _children_cpu() -> float:
    """User and system CPU seconds of every finished child process so far (pytest and its workers)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


if __name__ == "__main__":
    sys.exit(main())

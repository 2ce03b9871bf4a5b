"""`rlcat lint` of verl launch scripts: all 68 reference scripts in one process, and one script cold.

Run:  python bench/lint_scripts.py [--repeat N] [--json FILE] [--check] [--script NAME] [--baseline TREE]

Five commands, each a fresh process, measured interleaved (A B C D A B C D ...) after one discarded
warm-up round, wall time around subprocess.run (process spawn included in all alike):

  python      sys.executable -c pass                           (interpreter start-up, the reference)
  cli import  sys.executable -c "import rlcat.cli"             (the floor every rlcat command pays)
  lint one    rlcat lint SCRIPT                                (one reference script, cold)
  lint all    rlcat lint tests/data/upstream_scripts           (all 68 reference scripts, one process)
  typer floor sys.executable -c "import typer.main, typer._adapters"  (the CLI framework alone: Typer
              and the pydantic it loads to coerce parameters; reported, not budgeted)

With --baseline TREE (another rlcat source tree, e.g. `git archive REV | tar -x -C TREE`), its
`cli import`, `lint one` and `lint all` run in the same rounds (`python -m rlcat` with TREE/compiler
first on the path, in TREE): a before/after comparison that a loaded machine stretches alike.

Beside the wall times, each command's CPU time (user + system) is reported: on a shared machine it
moves less with the load. And, in this process after one warm-up call, the lint of all 68 alone
(rlcat.survey.lint_scripts.lint_paths: reading, key checks and guards; no start-up, no report),
median of the same rounds.

Budgets (docs/lint.md): `lint all` <= 1 s and `lint one` <= 400 ms (medians). The ratio of `lint one`
to `python` (the median over the rounds of each round's pair, both timed in the same round) is
reported beside it: it carries over between machines better than the milliseconds do. `cli import`
and `typer floor` are reported, not budgeted: they say how much of `lint one` is the command line
every command loads. Exit 0 unless --check is given and a budget fails. The findings per code over
the 68 scripts go into the JSON results.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _benchlib import (
    REPO,
    bench_arguments,
    cpu_of_children,
    cpu_summary,
    machine,
    median_ms,
    median_ratio,
    samples_table,
    table,
    verdict,
    write_json,
)

SCRIPTS = REPO / "tests" / "data" / "upstream_scripts"
DEFAULT_SCRIPT = "examples__grpo_trainer__run_qwen3_8b_fsdp.sh"
BUDGET_ALL_MS = 1000.0
BUDGET_ONE_MS = 400.0


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = bench_arguments(__doc__, repeat=15)
    p.add_argument(
        "--script", default=DEFAULT_SCRIPT, help=f"the script of `lint one` (default {DEFAULT_SCRIPT})"
    )
    p.add_argument("--baseline", type=Path, metavar="TREE", help="an rlcat source tree to compare with")
    return p.parse_args(argv)


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a checkout writes its bytecode in the warm-up round
    return env


def rlcat_command() -> list[str]:
    """The console script next to sys.executable (what users run), else python -m rlcat."""
    script = Path(sys.executable).parent / "rlcat"
    if not script.is_file():
        found = shutil.which("rlcat")
        script = Path(found) if found else script
    return [str(script)] if script.is_file() else [sys.executable, "-m", "rlcat"]


def run_once(cmd: list[str], env: dict[str, str], cwd: Path = REPO) -> tuple[float, float]:
    """The wall and the CPU seconds of one run of `cmd`."""
    cpu_before = cpu_of_children()
    t0 = time.perf_counter()
    r = subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=cwd)
    elapsed = time.perf_counter() - t0
    if r.returncode not in (0, 1):  # 1: the scripts have findings, which is what lint is for
        sys.exit(f"command failed (exit {r.returncode}): {' '.join(cmd)}\n{r.stderr.decode()[-3000:]}")
    return elapsed, cpu_of_children() - cpu_before


def in_process_lint() -> float:
    from rlcat.survey.lint_scripts import lint_paths, newest_release

    t0 = time.perf_counter()
    lint_paths([SCRIPTS], newest_release())
    return time.perf_counter() - t0


def findings_per_code(rlcat: list[str]) -> dict[str, int]:
    r = subprocess.run(
        [*rlcat, "lint", str(SCRIPTS), "--format", "json"],
        check=False,
        capture_output=True,
        text=True,
        env=child_env(),
        cwd=REPO,
    )
    data = json.loads(r.stdout)
    return dict(sorted(Counter(d["code"] for d in data["diagnostics"]).items()))


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    rlcat = rlcat_command()
    scripts = sorted(SCRIPTS.glob("*.sh"))
    one = SCRIPTS / args.script
    if not one.is_file():
        sys.exit(f"no reference script {one}")
    commands = {
        "python": [sys.executable, "-c", "pass"],
        "cli import": [sys.executable, "-c", "import rlcat.cli"],
        "lint one": [*rlcat, "lint", str(one)],
        "lint all": [*rlcat, "lint", str(SCRIPTS)],
        "typer floor": [sys.executable, "-c", "import typer.main, typer._adapters"],
    }
    places = dict.fromkeys(commands, (REPO, child_env()))
    if args.baseline:
        tree = args.baseline.resolve()
        baseline_env = {**child_env(), "PYTHONPATH": str(tree / "compiler")}
        baseline = [sys.executable, "-m", "rlcat"]
        commands["baseline cli import"] = [sys.executable, "-c", "import rlcat.cli"]
        commands["baseline lint one"] = [*baseline, "lint", str(one)]
        commands["baseline lint all"] = [*baseline, "lint", str(SCRIPTS)]
        places |= dict.fromkeys(
            ["baseline cli import", "baseline lint one", "baseline lint all"], (tree, baseline_env)
        )
    print(f"rlcat runs as: {' '.join(rlcat)}; {len(scripts)} reference scripts; one: {one.name}")

    samples: dict[str, list[float]] = {name: [] for name in [*commands, "lint all, in process"]}
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    in_process_lint()  # warm-up: imports, the key indexes and the parser's first use
    t_start = time.perf_counter()
    for round_no in range(args.repeat + 1):  # round 0 is the discarded warm-up
        for name, cmd in commands.items():
            cwd, env = places[name]
            elapsed, used = run_once(cmd, env, cwd)
            if round_no:
                samples[name].append(elapsed)
                cpu[name].append(used)
        if round_no:
            samples["lint all, in process"].append(in_process_lint())
    wall = time.perf_counter() - t_start

    med = {name: median_ms(values) for name, values in samples.items()}
    one_vs_python = median_ratio(samples["lint one"], samples["python"])
    checks = {
        f"lint all <= {BUDGET_ALL_MS:.0f} ms": med["lint all"] <= BUDGET_ALL_MS,
        f"lint one <= {BUDGET_ONE_MS:.0f} ms": med["lint one"] <= BUDGET_ONE_MS,
    }
    print(f"\n{args.repeat} interleaved rounds (+1 warm-up), {wall:.1f} s\n")
    print(samples_table(samples))
    print("\n" + cpu_summary(cpu) + "\n")
    budget_rows = [
        ["lint all (one process)", f"{med['lint all']:.0f} ms", f"<= {BUDGET_ALL_MS:.0f} ms"],
        ["lint one (a fresh process)", f"{med['lint one']:.0f} ms", f"<= {BUDGET_ONE_MS:.0f} ms"],
    ]
    rows = [[*row, verdict(ok)] for row, ok in zip(budget_rows, checks.values(), strict=True)]
    for name in ("lint one", "cli import", "typer floor"):
        ratio = median_ratio(samples[name], samples["python"])
        rows.append([f"{name} / python", f"{ratio:.1f}x", "(reported)", "-"])
    print(table(["budget", "value", "limit", "verdict"], rows))
    codes = findings_per_code(rlcat)
    print("\nfindings over the 68 scripts: " + ", ".join(f"{code} {n}" for code, n in codes.items()))
    ok = all(checks.values())
    print("\nbudgets: " + ("all PASS" if ok else "FAIL: " + "; ".join(k for k, v in checks.items() if not v)))
    results: dict[str, Any] = {
        "benchmark": "lint_scripts",
        "machine": machine(),
        "argv": sys.argv,
        "rlcat_command": rlcat,
        "scripts": len(scripts),
        "one_script": one.name,
        "repeat": args.repeat,
        "wall_s": wall,
        "median_ms": med,
        "samples_ms": {name: [s * 1000 for s in values] for name, values in samples.items()},
        "cpu_median_ms": {name: median_ms(values) for name, values in cpu.items()},
        "lint_one_vs_python": one_vs_python,
        "budgets": {"lint_all_ms": BUDGET_ALL_MS, "lint_one_ms": BUDGET_ONE_MS},
        "checks": checks,
        "findings_per_code": codes,
        "pass": ok,
    }
    write_json(args.json_path, results)
    return 1 if args.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())

"""`rlcat runs add` of a run whose metrics file has 100,000 lines.

Run:  python bench/runs_add.py [--lines N] [--repeat N] [--json FILE] [--check]

The script makes one run folder the way a user does: `rlcat compile gsm8k_qwen3_8b_fsdp --platform
rocm --run-dir RUN` (the plan, and verl's `file` logger pointed at RUN/metrics.jsonl), then writes N
metrics lines (100,000 by default) in the format of verl's FileLogger, one `{"step": N, "data":
{...}}` object per line: each training step with the timing, throughput and loss keys verl's
trainer logs (27 metrics), and a validation line every 10 steps. Then, interleaved:

  python     sys.executable -c pass                                      (interpreter start-up)
  runs add   rlcat runs add RUN --catalog CATALOG --name bench --force   (a fresh process)

`runs add` reads the plan and every line, computes the scalars (best and last validation, median
step time, throughput, steps) and the series, and writes CATALOG/catalog/results/bench.yaml; --force lets
each round replace the previous round's file. Before timing, one round checks that the result says
N steps were read.

Budget (docs/results.md): `runs add` of a 100,000-line metrics file <= 2 s. Exit 0 unless --check
is given and the budget fails.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _benchlib import bench_arguments, machine, median_ms, spread_ms, table, verdict, write_json

BUDGET_MS = 2000.0
VALIDATION_EVERY = 10
TRAINING_KEYS = [
    "actor/entropy",
    "actor/pg_loss",
    "actor/pg_clipfrac",
    "actor/ppo_kl",
    "actor/grad_norm",
    "actor/lr",
    "critic/score/mean",
    "critic/score/max",
    "critic/score/min",
    "critic/rewards/mean",
    "critic/advantages/mean",
    "critic/returns/mean",
    "response_length/mean",
    "response_length/max",
    "response_length/clip_ratio",
    "prompt_length/mean",
    "timing_s/gen",
    "timing_s/old_log_prob",
    "timing_s/update_actor",
    "timing_s/step",
    "timing_per_token_ms/gen",
    "perf/total_num_tokens",
    "perf/time_per_step",
    "perf/throughput",
    "perf/max_memory_allocated_gb",
    "training/global_step",
    "training/epoch",
]


def metrics_lines(count: int) -> str:
    """`count` lines as verl's FileLogger writes them (json objects, compact separators)."""
    lines = []
    step = 0
    while len(lines) < count:
        step += 1
        wobble = 0.001 * (step % 997)
        data: dict[str, Any] = {key: round(wobble + i, 6) for i, key in enumerate(TRAINING_KEYS)}
        data["timing_s/step"] = 200.0 + step % 7
        data["training/global_step"] = step
        lines.append(json.dumps({"step": step, "data": data}, separators=(",", ":")))
        if step % VALIDATION_EVERY == 0 and len(lines) < count:
            score = {"val-core/openai/gsm8k/reward/mean@1": 0.3 + (step % 500) / 1000}
            lines.append(json.dumps({"step": step, "data": score}, separators=(",", ":")))
    return "\n".join(lines) + "\n"


def rlcat_command() -> list[str]:
    script = Path(sys.executable).with_name("rlcat")
    return [str(script)] if script.exists() else [sys.executable, "-m", "rlcat"]


def timed(cmd: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr}")
    return elapsed


def main() -> int:
    parser = bench_arguments(__doc__, repeat=7)
    parser.add_argument("--lines", type=int, default=100_000, help="metrics lines (default 100,000)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="rlcat-bench-runs-"))
    try:
        run, catalog = work / "run", work / "catalog"
        catalog.mkdir()
        rlcat = rlcat_command()
        compile_cmd = [*rlcat, "compile", "gsm8k_qwen3_8b_fsdp", "--platform", "rocm", "--run-dir", str(run)]
        timed(compile_cmd, work)
        metrics = run / "metrics.jsonl"
        metrics.write_text(metrics_lines(args.lines), encoding="utf-8")
        add = [*rlcat, "runs", "add", str(run), "--catalog", str(catalog), "--name", "bench", "--force"]
        python = [sys.executable, "-c", "pass"]

        timed(add, work)  # warm-up round, and the check that every step was read
        recorded = (catalog / "catalog" / "results" / "bench.yaml").read_text(encoding="utf-8")
        steps = args.lines - args.lines // (VALIDATION_EVERY + 1)
        if f"value: {steps}" not in recorded and f"value: {steps}.0" not in recorded:
            raise SystemExit(f"the recorded result does not say {steps} steps:\n{recorded[:2000]}")
        timed(python, work)

        samples: dict[str, list[float]] = {"python": [], "runs add": []}
        for _ in range(args.repeat):
            samples["python"].append(timed(python, work))
            samples["runs add"].append(timed(add, work))

        add_ms = median_ms(samples["runs add"])
        ok = add_ms <= BUDGET_MS
        size_mb = metrics.stat().st_size / 1e6
        rows = [
            [name, median_ms(s), *spread_ms(s), f"{median_ms(s) / median_ms(samples['python']):.1f}x"]
            for name, s in samples.items()
        ]
        print(f"metrics file: {args.lines:,} lines, {size_mb:.1f} MB; {args.repeat} rounds")
        print(table(["command", "median ms", "min ms", "max ms", "vs python"], rows))
        print(f"\nruns add <= {BUDGET_MS:.0f} ms: {add_ms:.0f} ms  {verdict(ok)}")
        write_json(
            args.json_path,
            {
                "machine": machine(),
                "lines": args.lines,
                "metrics_mb": round(size_mb, 2),
                "samples_s": samples,
                "median_ms": {name: median_ms(s) for name, s in samples.items()},
                "budget_ms": BUDGET_MS,
                "pass": ok,
            },
        )
        return 1 if args.check and not ok else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    os.environ.setdefault("NO_COLOR", "1")
    sys.exit(main())

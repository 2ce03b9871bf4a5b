"""Following a Ray job's log (`rlcat launch --target ray-job --submit --wait`): traffic and memory
against the log's size.

Run:  python bench/job_log.py [--mb N] [--polls N] [--repeat N] [--json FILE] [--check]

A stand-in of Ray's dashboard (tests/cli/fake_ray_api.py, served by a thread of this process on
127.0.0.1) runs one job whose log grows to N MB (default 30) in equal parts over the job's status
reads (default 30), then ends. Each round follows one such job with each of two clients, each a
fresh process, interleaved:

| name | what it does |
|---|---|
| `polled /logs` (reference) | what --wait did before: the status and the whole log at each poll |
| `rlcat` | `ray_job._follow`: the status at each poll, the log on the /logs/tail websocket |

Reported per client: the bytes of log the dashboard sent (its own count), their ratio to the log's
size, the peak resident memory of the client process (VmHWM of /proc/self/status, its own since
exec: `wait4`'s ru_maxrss would count this process's memory at the fork) and its wall time.
Budgets: rlcat's traffic <= 1.01 x the log's size (each byte once), its peak memory <= 100 MB.
The exit code is 0 unless --check is given and a budget fails.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _benchlib import REPO, bench_arguments, machine, median_ms, table, verdict, write_json

sys.path.insert(0, str(REPO / "tests" / "cli"))
from fake_ray_api import fake_ray_servers  # the dashboard stand-in of the tests

TRAFFIC_BUDGET = 1.01
MEMORY_BUDGET_MB = 100.0
POLL_SECONDS = 0.02

# The two clients, run as `python -c CODE ADDRESS POLL_SECONDS`; each prints nothing of the log (stdout is
# /dev/null), so the figures are the fetching and the holding.
SETUP = """
import sys
from rlcat.compile.assemble import Request, compile_request
from rlcat.launch.base import Console, Launch, LaunchOptions
from rlcat.launch.command import launch_command
from rlcat.launch.ray_job import _follow, submission
from rlcat.launch.ray_rest import TERMINAL_STATES, RayJobsClient
compiled = compile_request(Request("gsm8k_qwen3_8b_fsdp", "cuda"))
options = LaunchOptions(poll_seconds=float(sys.argv[2]))
launch = Launch(compiled, launch_command(compiled, "disabled"), options)
client = RayJobsClient(sys.argv[1])
job = client.submit(submission(launch))
"""

CLIENTS = {
    "polled /logs": SETUP
    + """
import time
while True:
    status = client.info(job)["status"]
    logs = client.logs(job)
    sys.stdout.write(logs[-1:])
    if status in TERMINAL_STATES:
        break
    time.sleep(float(sys.argv[2]))
"""
    + "PEAK",
    "rlcat": SETUP
    + """
code = _follow(client, job, launch, Console(sys.stdout.write, lambda found: None))
assert code == 0
"""
    + "PEAK",
}
PEAK = """
status = open("/proc/self/status").read()
print(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:")), file=sys.stderr)
"""
CLIENTS = {name: code.replace("PEAK", PEAK) for name, code in CLIENTS.items()}


def log_text(megabytes: float) -> str:
    """A trainer's log: Ray's echo of the entrypoint, then step lines of about 100 characters."""
    line = "(TaskRunner pid=4242) step:{i} - actor/pg_loss:0.0123 - critic/score/mean:0.456 - timing_s:12.3\n"
    count = int(megabytes * 2**20 / len(line.format(i=100000)))
    return "Running entrypoint for job raysubmit_test: {entrypoint}\n" + "".join(
        line.format(i=i) for i in range(count)
    )


def follow_once(start: object, name: str, log: str, polls: int) -> dict[str, float]:
    states = ["PENDING", *["RUNNING"] * polls, "SUCCEEDED"]
    fake, address = start(states, log=log, chunk=len(log) // polls + 1)  # type: ignore[operator]
    began = time.perf_counter()
    with open(os.devnull, "w") as devnull:
        child = subprocess.Popen(
            [sys.executable, "-c", CLIENTS[name], address, str(POLL_SECONDS)],
            stdout=devnull,
            stderr=subprocess.PIPE,
            text=True,
        )
        _, err = child.communicate()
    wall = time.perf_counter() - began
    if child.returncode != 0:
        raise SystemExit(f"{name} failed ({child.returncode}): {err[-2000:]}")
    peak_kb = float(err.split()[-1])
    return {"bytes": float(fake.log_bytes), "rss_mb": peak_kb / 1024.0, "wall": wall}


def main() -> int:
    parser = bench_arguments(__doc__, repeat=3)
    parser.add_argument("--mb", type=float, default=30.0, help="the log's size in MB (default 30)")
    parser.add_argument("--polls", type=int, default=30, help="status reads while it grows (default 30)")
    args = parser.parse_args()
    log = log_text(args.mb)
    size = len(log.encode())
    samples: dict[str, list[dict[str, float]]] = {name: [] for name in CLIENTS}
    with fake_ray_servers() as start:
        for _ in range(max(args.repeat, 1)):
            for name in CLIENTS:
                samples[name].append(follow_once(start, name, log, args.polls))
    rows, results = [], {}
    for name, runs in samples.items():
        sent = max(r["bytes"] for r in runs)
        rss = max(r["rss_mb"] for r in runs)
        wall = median_ms([r["wall"] for r in runs])
        results[name] = {
            "bytes_sent": sent,
            "ratio_to_log": sent / size,
            "peak_rss_mb": rss,
            "median_ms": wall,
        }
        rows.append([name, f"{sent / 2**20:.1f}", sent / size, rss, wall])
    ours = results["rlcat"]
    checks = {
        "traffic": ours["ratio_to_log"] <= TRAFFIC_BUDGET,
        "memory": ours["peak_rss_mb"] <= MEMORY_BUDGET_MB,
    }
    print(
        f"a job log of {size / 2**20:.1f} MB grown over {args.polls} status reads, {args.repeat} round(s)\n"
    )
    print(table(["client", "MB sent", "x log size", "peak RSS MB", "median ms"], rows))
    print(
        f"\nrlcat traffic <= {TRAFFIC_BUDGET} x the log: {verdict(checks['traffic'])}; "
        f"rlcat peak RSS <= {MEMORY_BUDGET_MB:g} MB: {verdict(checks['memory'])}"
    )
    write_json(
        args.json_path,
        {
            "machine": machine(),
            "log_bytes": size,
            "polls": args.polls,
            "samples": samples,
            "results": results,
            "pass": all(checks.values()),
        },
    )
    return 1 if args.check and not all(checks.values()) else 0


if __name__ == "__main__":
    sys.exit(main())

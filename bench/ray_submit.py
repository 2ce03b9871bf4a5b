"""Submitting a plan to a real Ray cluster: `rlcat launch --target ray-job --submit` against plain
`ray job submit`, from the command's start to the job's RUNNING.

Run:  python bench/ray_submit.py [--repeat N] [--address URL --ray-auth-mode M] [--no-warm-up] [--json FILE]
      [--check]

Without --address, a one-node Ray cluster is started for the run on 127.0.0.1 (eight fake GPUs; a
HOME of its own holding ray_bootstrap_config.yaml `{}`, so Ray reads no cloud metadata; usage stats
off; no token authentication) and stopped by PID at the end. With --address, that cluster is used
(for a token cluster, RAY_AUTH_MODE=token and RAY_AUTH_TOKEN, as Ray's own clients read them).
Either way the cluster's workers must find the stand-in trainer (tests/data/launch/stub on their
PYTHONPATH, RLCAT_STUB_OUT set), as the e2e tests' clusters do; the started one is set up so.

Each round submits the same plan (the shipped 1 × 8 `gsm8k_qwen3_8b_fsdp` on CUDA, with a stand-in
that holds its GPUs) with each client, interleaved, each a fresh process:

- `ray job submit` (the reference): what a user types with the compiled plan (`rlcat compile
  --format json`), `ray job submit --no-wait --submission-id ID --runtime-env-json '{"env_vars":
  ENV}' --entrypoint-num-cpus 1 -- python3 -m ENTRYPOINT --config-name=NAME OVERRIDES...`;
- `rlcat launch --submit`: `rlcat launch RECIPE --target ray-job --ray-auth-mode M --address URL
  --submit`, which compiles the plan, checks it against the cluster (its GPUs, its auth mode) and
  posts it.

Timed: from starting the command to the first read of the job's status (`/api/jobs/ID`, every
20 ms once the command has returned) that is RUNNING. The job is then stopped, and the next
submission waits for it to end. One submission of each client, not counted, comes first (a new
head's job agent starting; `--no-warm-up` leaves it out, for a cluster at `--address`); the clients
then take turns going first.
Budget: rlcat reaches RUNNING no later than plain `ray job submit` (median of the rounds' own
ratios <= 1.10). The exit code is 0 unless --check is given and the budget fails.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _benchlib import (
    REPO,
    bench_arguments,
    machine,
    median_ms,
    median_ratio,
    spread_ms,
    table,
    verdict,
    write_json,
)
from rlcat.launch.ray_rest import TERMINAL_STATES, RayApiError, RayJobsClient

sys.path.insert(0, str(REPO / "tests" / "e2e"))
import local_ray  # the e2e tests' local Ray cluster: its folder, env and processes

RECIPE = "gsm8k_qwen3_8b_fsdp"
HOLD = ("--set", "env.RLCAT_STUB_HOLD='600'")  # the stand-in holds its GPUs as a trainer would
BUDGET_RATIO = 1.10
POLL_SECONDS = 0.02
BIN = Path(sys.executable).parent


@contextlib.contextmanager
def ray_cluster() -> Iterator[tuple[str, dict[str, str]]]:
    """A one-node cluster of this run on 127.0.0.1: its dashboard's address and the env its
    clients run with. `ray start` runs in a session of its own, which every Ray process it starts
    keeps; at the end each process of that session is stopped by PID (tests/e2e/local_ray.py;
    never `ray stop`, which stops every Ray of the user)."""
    root, env = local_ray.cluster_folder("rlcat-bench-ray-", {"RAY_AUTH_MODE": "disabled"})
    dashboard = local_ray.free_port("127.0.0.1")
    started, session = local_ray.ray(
        env, root, "start", "--head", "--node-ip-address=127.0.0.1",
        f"--port={local_ray.free_port('127.0.0.1')}", "--dashboard-host=127.0.0.1",
        f"--dashboard-port={dashboard}", "--include-dashboard=true", *local_ray.agent_ports("127.0.0.1"),
        f"--temp-dir={root / 'ray'}", "--num-cpus=4", "--num-gpus=8", "--disable-usage-stats",
        timeout=120,
    )  # fmt: skip
    try:
        if started.returncode != 0:
            raise SystemExit(f"ray start failed ({started.returncode}): {started.stderr[-2000:]}")
        yield f"http://127.0.0.1:{dashboard}", env
    finally:
        local_ray.stop(lambda: local_ray.in_sessions([session]))
        shutil.rmtree(root, ignore_errors=True)


# a client: given a fresh submission id, its command and the id its job will have (None: the
# client makes its own and prints it, as rlcat does)
Client = Callable[[str], tuple[list[str], str | None]]


def clients(address: str, auth_mode: str, env: dict[str, str]) -> dict[str, Client]:
    """Each client's command for one submission."""
    compiled = subprocess.run(
        [str(BIN / "rlcat"), "compile", RECIPE, "--platform", "cuda", "--format", "json", *HOLD],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    plan = json.loads(compiled.stdout)
    argv = ["python3", "-m", plan["entrypoint"], f"--config-name={plan['config_name']}", *plan["overrides"]]
    runtime_env = json.dumps({"env_vars": plan["env"]})

    def ray_cli(job: str) -> tuple[list[str], str | None]:
        return [
            str(BIN / "ray"), "job", "submit", "--address", address, "--no-wait", "--submission-id", job,
            "--runtime-env-json", runtime_env, "--entrypoint-num-cpus", "1", "--", *argv,
        ], job  # fmt: skip

    def rlcat(job: str) -> tuple[list[str], str | None]:
        return [
            str(BIN / "rlcat"), "launch", RECIPE, "--platform", "cuda", "--target", "ray-job",
            "--ray-auth-mode", auth_mode, "--address", address, *HOLD, "--submit",
        ], None  # fmt: skip

    return {"ray job submit": ray_cli, "rlcat launch --submit": rlcat}


def submit_once(jobs: RayJobsClient, client: Client, env: dict[str, str]) -> float:
    """Seconds from starting the client's command to its job's first RUNNING read; the job is then
    stopped and waited for."""
    command, job = client(f"raysubmit_bench_{uuid.uuid4().hex[:12]}")
    began = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{command[0]} exited {done.returncode}: {(done.stdout + done.stderr)[-2000:]}")
    if job is None:
        found = re.search(r"submitted (raysubmit_\w+)", done.stderr)
        if not found:
            raise RuntimeError(f"rlcat named no job: {done.stderr[-2000:]}")
        job = found.group(1)
    while (status := jobs.info(job)["status"]) != "RUNNING":
        if status in TERMINAL_STATES or time.perf_counter() - began > 300:
            raise RuntimeError(f"{job} is {status}, not RUNNING: {jobs.logs(job)[-2000:]}")
        time.sleep(POLL_SECONDS)
    took = time.perf_counter() - began
    jobs.stop(job)
    deadline = time.monotonic() + 60
    while jobs.info(job)["status"] not in TERMINAL_STATES:
        if time.monotonic() > deadline:
            raise RuntimeError(f"{job} did not stop within 60 s")
        time.sleep(0.2)
    return took


def run(
    address: str, auth_mode: str, env: dict[str, str], repeat: int, warm_up: bool = True
) -> dict[str, list[float]]:
    """The rounds, after one submission of each client that is not counted (a head just started
    refuses jobs until its job agent is up; each client's first start reads its files from disk),
    unless `warm_up` is off. The clients take turns going first, round by round."""
    jobs = RayJobsClient(address, token=env.get("RAY_AUTH_TOKEN"))
    each = clients(address, auth_mode, env)
    deadline = time.monotonic() + 300
    for client in each.values() if warm_up else ():
        while True:
            try:
                submit_once(jobs, client, env)
                break
            except (RuntimeError, RayApiError) as exc:
                if "No available agent" not in str(exc):
                    raise SystemExit(str(exc)) from exc
                if time.monotonic() > deadline:
                    raise SystemExit(f"the cluster took no job within 300 s: {exc}") from exc
                time.sleep(1)
    samples: dict[str, list[float]] = {name: [] for name in each}
    names = list(each)
    for round_ in range(max(repeat, 1)):
        for name in names if round_ % 2 == 0 else names[::-1]:
            samples[name].append(submit_once(jobs, each[name], env))
    return samples


def main() -> int:
    parser = bench_arguments(__doc__, repeat=5)
    parser.add_argument("--address", help="a running cluster's dashboard (default: start one for the run)")
    parser.add_argument(
        "--ray-auth-mode", default="disabled", help="that cluster's auth mode (default disabled)"
    )
    parser.add_argument(
        "--no-warm-up",
        dest="warm_up",
        action="store_false",
        help="no uncounted first submission of each client (a smoke run on a cluster that runs jobs already)",
    )
    args = parser.parse_args()
    if not args.warm_up and not args.address:
        parser.error("--no-warm-up needs --address: a new head refuses jobs until its job agent is up")
    if args.address:
        env = {**os.environ, "PATH": f"{BIN}:{os.environ.get('PATH', '')}"}
        samples = run(args.address, args.ray_auth_mode, env, args.repeat, args.warm_up)
    else:
        with ray_cluster() as (address, env):
            samples = run(address, "disabled", env, args.repeat)
    reference = samples["ray job submit"]
    ratio = median_ratio(samples["rlcat launch --submit"], reference)
    rows = [
        [name, median_ms(values), *spread_ms(values), median_ratio(values, reference)]
        for name, values in samples.items()
    ]
    print(f"{RECIPE} on cuda, submitted to RUNNING, {args.repeat} round(s), load {os.getloadavg()[0]:.2f}\n")
    print(table(["client", "median ms", "min ms", "max ms", "x ray job submit"], rows))
    ok = ratio <= BUDGET_RATIO
    print(f"\nrlcat <= {BUDGET_RATIO} x plain `ray job submit` (median of per-round ratios): {verdict(ok)}")
    write_json(args.json_path, {"machine": machine(), "samples": samples, "ratio": ratio, "pass": ok})
    return 1 if args.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())

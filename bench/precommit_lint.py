"""`pre-commit run rlcat-lint-scripts` on a change of 10 launch scripts: what a hook user waits for.

Run:  python bench/precommit_lint.py [--repeat N] [--json FILE] [--check] [--files N]

The script builds, in a temporary folder, what a team has after `pre-commit install`:

- a git repository of this checkout's working tree (committed or not, in one commit), named by the
  team's `.pre-commit-config.yaml` as `repo:` with that commit as `rev:`, so the hook is the one of
  this checkout's `.pre-commit-hooks.yaml`, installed from its source;
- the team's repository: 10 real launch scripts (the first of tests/data/upstream_scripts/*.sh, by
  name) staged for a commit, and a second, trivial hook on the same files (`repo: local`,
  `language: system`, `entry: true`): pre-commit's own cost of running a hook;
- the hook's environment, installed once before timing (`pre-commit install-hooks`, untimed) as
  tests/e2e/test_precommit.py installs it (rlcat.dev.hook_repo): offline, pip taking every
  distribution from the wheelhouse `rlcat dev fetch-verl` downloads (.verl/wheelhouse), with its
  own PRE_COMMIT_HOME.

Then three commands, each a fresh process, measured interleaved (A B C A B C ...) after one
discarded warm-up round, wall time around subprocess.run (process spawn included in all alike):

  python        sys.executable -c pass                          (interpreter start-up, the reference)
  trivial hook  python -m pre_commit run noop                   (pre-commit alone, the same 10 files)
  lint hook     python -m pre_commit run rlcat-lint-scripts     (the hook on the 10 staged scripts)

Both hooks run on the staged files, as on `git commit`. Beside the wall times, the CPU time of each
command (all its processes) is reported: on a shared machine it moves less with the load. The
warm-up round runs the lint hook with --verbose once and checks that it read all 10 scripts.

Budget (docs/lint.md): the lint hook <= 1 s (median); its ratios to `python` and to the trivial
hook (the median of the rounds' own ratios) are reported. Exit 0 unless --check is given and the
budget fails. Needs the wheelhouse: run `rlcat dev fetch-verl` once, with network.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
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
from rlcat.dev import wheelhouse
from rlcat.dev.hook_repo import git, offline_env, source_repo

BUDGET_MS = 1000.0
HOOK_ID = "rlcat-lint-scripts"
SCRIPTS = REPO / "tests" / "data" / "upstream_scripts"
CONFIG = """\
repos:
  - repo: {source}
    rev: {rev}
    hooks:
      - id: {hook}
  - repo: local
    hooks:
      - id: noop
        name: a hook that does nothing
        entry: 'true'
        language: system
        files: '\\.sh$'
        types: [shell]
        pass_filenames: true
        require_serial: true
"""


def team_repo(root: Path, source: Path, rev: str, files: int) -> list[str]:
    """The team's repository with `files` launch scripts staged; their paths."""
    (root / "scripts").mkdir(parents=True)
    chosen = sorted(SCRIPTS.glob("*.sh"))[:files]
    if len(chosen) < files:
        sys.exit(f"only {len(chosen)} scripts in {SCRIPTS}")
    for script in chosen:
        shutil.copyfile(script, root / "scripts" / script.name)
    (root / ".pre-commit-config.yaml").write_text(
        CONFIG.format(source=source, rev=rev, hook=HOOK_ID), encoding="utf-8"
    )
    git(root, "init", "-q")
    git(root, "add", "-A")
    return [f"scripts/{script.name}" for script in chosen]


def run(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=900)
    return time.perf_counter() - t0, done


def measure(
    commands: dict[str, list[str]], cwd: Path, env: dict[str, str], repeat: int
) -> tuple[dict[str, list[float]], dict[str, list[float]], float]:
    """Wall and CPU seconds of each command per round, interleaved after a discarded warm-up round;
    the wall time of all rounds."""
    samples: dict[str, list[float]] = {name: [] for name in commands}
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    t_start = time.perf_counter()
    for round_no in range(repeat + 1):  # round 0 is the discarded warm-up
        for name, cmd in commands.items():
            cpu_before = cpu_of_children()
            elapsed, done = run(cmd, cwd, env)
            used = cpu_of_children() - cpu_before
            if done.returncode not in (0, 1):  # 1: the reference scripts have findings
                sys.exit(
                    f"{name} failed (exit {done.returncode}):\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
                )
            if round_no:
                samples[name].append(elapsed)
                cpu[name].append(used)
    wall = time.perf_counter() - t_start
    return samples, cpu, wall


def main(argv: list[str] | None = None) -> int:
    parser = bench_arguments(__doc__, repeat=15)
    parser.add_argument("--files", type=int, default=10, help="staged launch scripts (default 10)")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="rlcat-bench-precommit-"))
    try:
        wheels = wheelhouse.wheelhouse_dir()
        if not wheelhouse.is_complete(wheels):
            sys.exit(f"no complete wheelhouse in {wheels}: run `rlcat dev fetch-verl` once, with network")
        env = {**offline_env(work), "NO_COLOR": "1"}
        source = work / "rlcat-src"
        rev = source_repo(source)
        team = work / "team"
        staged = team_repo(team, source, rev, args.files)
        pre_commit = [sys.executable, "-m", "pre_commit"]
        t_install, installed = run([*pre_commit, "install-hooks"], team, env)
        if installed.returncode:
            sys.exit(
                f"pre-commit install-hooks failed:\n{installed.stdout[-3000:]}{installed.stderr[-3000:]}"
            )
        commands = {
            "python": [sys.executable, "-c", "pass"],
            "trivial hook": [*pre_commit, "run", "--color", "never", "noop"],
            "lint hook": [*pre_commit, "run", "--color", "never", HOOK_ID],
        }
        _, shown = run([*commands["lint hook"], "--verbose"], team, env)
        said = shown.stdout + shown.stderr
        if shown.returncode not in (0, 1) or f"{len(staged)} files checked" not in said:
            sys.exit(f"the hook did not check the {len(staged)} staged scripts:\n{said[-3000:]}")
        samples, cpu, wall = measure(commands, team, env, args.repeat)

        med = {name: median_ms(values) for name, values in samples.items()}
        ratios = {
            "lint hook / python": median_ratio(samples["lint hook"], samples["python"]),
            "lint hook / trivial hook": median_ratio(samples["lint hook"], samples["trivial hook"]),
        }
        ok = med["lint hook"] <= BUDGET_MS
        print(f"{len(staged)} staged scripts; hook environment installed in {t_install:.1f} s (untimed)")
        print(f"{args.repeat} interleaved rounds (+1 warm-up), {wall:.1f} s\n")
        print(samples_table(samples))
        print("\n" + cpu_summary(cpu))
        print()
        budget_rows = [
            [
                f"lint hook, {len(staged)} scripts",
                f"{med['lint hook']:.0f} ms",
                f"<= {BUDGET_MS:.0f} ms",
                verdict(ok),
            ]
        ]
        budget_rows += [[name, f"{value:.1f}x", "(reported)", "-"] for name, value in ratios.items()]
        print(table(["budget", "value", "limit", "verdict"], budget_rows))
        results: dict[str, Any] = {
            "benchmark": "precommit_lint",
            "machine": machine(),
            "argv": sys.argv,
            "files": staged,
            "repeat": args.repeat,
            "install_s": t_install,
            "wall_s": wall,
            "median_ms": med,
            "samples_ms": {name: [s * 1000 for s in values] for name, values in samples.items()},
            "cpu_median_ms": {name: median_ms(values) for name, values in cpu.items()},
            "ratios": ratios,
            "budget_ms": BUDGET_MS,
            "pass": ok,
        }
        write_json(args.json_path, results)
        return 1 if args.check and not ok else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

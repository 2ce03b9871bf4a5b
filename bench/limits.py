"""Hostile inputs that reach rlcat's limits: each refused (or, for the large legitimate ones, compiled)
in bounded time and memory, as a fresh `rlcat` process.

Run:  python bench/limits.py [--repeat N] [--json FILE] [--check]

Every case is generated in a temporary folder laid out as a recipes repository and run as the
console script would run it in CI (`rlcat validate FILE` or `rlcat compile NAME --catalog DIR`),
interleaved with a reference (`rlcat validate` of a small recipe, the cost of starting rlcat). Per
case: median wall time, the largest peak resident memory of its runs (`wait4`'s ru_maxrss), the exit
code and the first diagnostic code.

Budgets (issue: hostile input): each limit reached in <= 2 s and <= 500 MB; a 1,000-long `extends`
chain and a 16,000-key merge in <= 2 s. The exit code is 0 unless --check is given and a budget fails.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _benchlib import REPO, bench_arguments, machine, median_ms, table, verdict, write_json

BUDGET_S = 2.0
BUDGET_MB = 500.0
SEED = "gsm8k_qwen3_8b_fsdp"


def recipe(name: str, extra: str = "") -> str:
    return f"name: {name}\nextends: {SEED}\nsummary: generated\n{extra}"


def alias_count_bomb(root: Path) -> list[str]:
    shutil.copy(REPO / "tests" / "bad_input" / "alias_bomb.yaml", root / "recipes" / "alias_bomb.yaml")
    return ["validate", "recipes/alias_bomb.yaml"]


def alias_size_bomb(root: Path) -> list[str]:
    lines = ["env:", "  S0: &s0 " + "x" * 65536]
    lines += [f"  S{i}: &s{i} [" + ", ".join([f"*s{i - 1}"] * 16) + "]" for i in range(1, 4)]
    (root / "recipes" / "size_bomb.yaml").write_text(recipe("size_bomb", "\n".join(lines) + "\n"))
    return ["validate", "recipes/size_bomb.yaml"]


def oversized_file(root: Path) -> list[str]:
    path = root / "recipes" / "huge.yaml"
    with path.open("wb") as fh:  # sparse: 64 MiB that cost no disk
        fh.truncate(64 * 1024 * 1024)
    return ["validate", "recipes/huge.yaml"]


def endless_device(root: Path) -> list[str]:
    (root / "recipes" / "zero.yaml").symlink_to("/dev/zero")
    return ["validate", "recipes/zero.yaml"]


def fifo(root: Path) -> list[str]:
    os.mkfifo(root / "recipes" / "pipe.yaml")
    return ["validate", "recipes/pipe.yaml"]


def deep_nesting(root: Path) -> list[str]:
    (root / "recipes" / "deep.yaml").write_text(recipe("deep", "env: " + "[" * 5000 + "]" * 5000 + "\n"))
    return ["validate", "recipes/deep.yaml"]


def long_extends_chain(root: Path) -> list[str]:
    folder = root / "recipes"
    (folder / "c0000.yaml").write_text(recipe("c0000"))
    for i in range(1, 1000):
        (folder / f"c{i:04d}.yaml").write_text(
            f"name: c{i:04d}\nextends: c{i - 1:04d}\ntrainer: {{epochs: {i}}}\n"
        )
    return ["validate", "recipes/c0999.yaml"]


def sixteen_thousand_keys(root: Path) -> list[str]:
    keys = 16_000
    folder = root / "recipes"
    parent_env = "".join(f"  P_{i}: parent{i}\n" for i in range(keys))
    (folder / "parent.yaml").write_text(recipe("parent", "env:\n" + parent_env))
    child_env = "".join(f"  P_{i}: child{i}\n" for i in range(keys // 2, keys))
    child_env += "".join(f"  C_{i}: child{i}\n" for i in range(keys // 2))
    (folder / "child.yaml").write_text("name: child\nextends: parent\nenv:\n" + child_env)
    return ["compile", "child", "--catalog", ".", "--format", "json"]


def many_fields(root: Path) -> list[str]:
    fields = "".join(f"unknown_field_{i}: {i}\n" for i in range(150_000))
    (root / "recipes" / "wide.yaml").write_text(recipe("wide", fields))
    return ["validate", "recipes/wide.yaml"]


def unknown_keys(root: Path) -> list[str]:
    overrides = "".join(f"  trainer.unknown_key_{i}: {i}\n" for i in range(4000))
    (root / "recipes" / "unknown.yaml").write_text(recipe("unknown", "overrides:\n" + overrides))
    return ["validate", "recipes/unknown.yaml", "--platform", "cuda"]


def _run_folder(root: Path) -> Path:
    """A run folder as `rlcat compile --run-dir` writes it, and a team catalog to record into."""
    (root / "team").mkdir()
    subprocess.run(
        [sys.executable, "-m", "rlcat", "compile", SEED, "--run-dir", "runs/one", "-f", "shell"],
        cwd=root,
        check=True,
        capture_output=True,
    )
    return root / "runs" / "one"


def metrics_dev_zero(root: Path) -> list[str]:
    (_run_folder(root) / "metrics.jsonl").symlink_to("/dev/zero")
    return ["runs", "add", "runs/one", "--catalog", "team"]


def metrics_fifo(root: Path) -> list[str]:
    os.mkfifo(_run_folder(root) / "metrics.jsonl")
    return ["runs", "add", "runs/one", "--catalog", "team"]


def config_name_dev_zero(root: Path) -> list[str]:
    from rlcat.catalog import schemas_dir

    (root / "zero.json").symlink_to("/dev/zero")
    name = os.path.relpath(root / "zero", schemas_dir() / "verl" / "0.9.1")
    (root / "run.sh").write_text(f"python3 -m verl.trainer.main_ppo --config-name={name} a.b=1\n")
    return ["lint", "run.sh", "--verl", "0.9.1"]


def reference(root: Path) -> list[str]:
    (root / "recipes" / "small.yaml").write_text(recipe("small"))
    return ["validate", "recipes/small.yaml"]


CASES: dict[str, Callable[[Path], list[str]]] = {
    "reference: a small recipe": reference,
    "alias bomb by count (bad_input corpus)": alias_count_bomb,
    "alias bomb by size (66 KB → 256 MiB)": alias_size_bomb,
    "64 MiB file": oversized_file,
    "link to /dev/zero": endless_device,
    "named pipe": fifo,
    "runs add: metrics file linked to /dev/zero": metrics_dev_zero,
    "runs add: metrics file a named pipe": metrics_fifo,
    "lint: --config-name a path to /dev/zero": config_name_dev_zero,
    "5,000 levels of nesting": deep_nesting,
    "1,000-long extends chain": long_extends_chain,
    "16,000 keys over 16,000": sixteen_thousand_keys,
    "4,000 unknown verl keys": unknown_keys,
    "150,000 unknown fields (4 MB)": many_fields,
}


def run_once(command: list[str], cwd: Path) -> tuple[float, float, int, str]:
    """(seconds, peak RSS in MB, exit code, first diagnostic code) of one fresh process."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryFile() as output:
        start = time.perf_counter()
        proc = subprocess.Popen(command, cwd=cwd, env=env, stdout=output, stderr=output)
        # wait4, not Popen.wait: it also gives this child's own peak memory
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        output.seek(0)
        text = output.read().decode("utf-8", "replace")
    code = next((w for w in text.split() if w.startswith("RLC") and w[3:].isdigit()), "-")
    return seconds, usage.ru_maxrss / 1024, proc.returncode, code


def main(argv: list[str] | None = None) -> int:
    p = bench_arguments(__doc__, repeat=5, rounds="measured rounds")
    args = p.parse_args(argv)

    rlcat = shutil.which("rlcat", path=str(Path(sys.executable).parent)) or "rlcat"
    work = Path(tempfile.mkdtemp(prefix="rlcat-bench-limits-"))
    try:
        folders, commands = {}, {}
        for name, make in CASES.items():
            folder = work / str(len(folders))
            (folder / "recipes").mkdir(parents=True)
            commands[name] = [rlcat, *make(folder)]
            folders[name] = folder
        samples: dict[str, list[tuple[float, float, int, str]]] = {name: [] for name in CASES}
        for _ in range(args.repeat + 1):  # the first round warms the page cache and is discarded
            for name in CASES:
                samples[name].append(run_once(commands[name], folders[name]))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    rows, results = [], {}
    for name, runs in samples.items():
        measured = runs[1:] or runs  # --repeat 0: the first round alone (a smoke run of the script)
        med = median_ms([r[0] for r in measured]) / 1000
        peak = max(r[1] for r in measured)
        ok = med <= BUDGET_S and peak <= BUDGET_MB
        results[name] = {"median_s": med, "peak_mb": peak, "exit": measured[-1][2], "code": measured[-1][3]}
        rows.append([name, med, peak, measured[-1][2], measured[-1][3], verdict(ok)])
    print(f"{args.repeat} interleaved rounds (+1 warm-up), each a fresh `rlcat` process\n")
    budget = f"<= {BUDGET_S:.0f} s, {BUDGET_MB:.0f} MB"
    print(table(["case", "median s", "peak MB", "exit", "first code", budget], rows))
    ok = all(r[-1] == "PASS" for r in rows)
    write_json(
        args.json_path,
        {"benchmark": "limits", "machine": machine(), "repeat": args.repeat, "cases": results, "pass": ok},
    )
    return 1 if args.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())

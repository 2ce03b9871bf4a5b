"""The static bash reader (`rlcat lint`, `rlcat import`) on hostile scripts whose size doubles.

Run:  python bench/script_reader.py [--repeat N] [--scale F] [--json FILE] [--check]

Each case is a script built from one size n (the length of a value, of a pattern, or a count of
lines or words) at n, 2n and 4n. The scripts are read in this process with `rlcat.scripts.read_text`,
every case and size interleaved in each round (one warm-up round, discarded), and the median time
of each is reported with the ratio of each doubling (the median over rounds of that round's
t(2n) / t(n)). The time is this process's CPU time (`time.process_time`): on the shared 2-core
machine it moves less with the load than the wall time, and reading is single-threaded.

Property (issue 20): doubling the input at most doubles the time, plus a constant:
t(2n) <= 2 t(n) + 10 ms for each doubling of each case. The cases are the shapes that were
super-linear: a near-miss pattern in `${x##…}` (a backtracking regular expression: 34 s for a
64-character pattern), `${x//a/bc}` (each position tried against every end: 130 s for 16 KiB), the
same pattern in `case`, a pattern that doubles over a fixed text, many copies of a value, an array
of many words (one copy of the array per element), brace words, and a value of many `$(…)` split
into words (each blank tested against every unknown part). A pattern's cost is the text's
length times the pattern's, so the text and the pattern double in separate cases; what both together
may cost is bounded by the reader's MAX_WORK (a script past it is refused, RLC007).

`--scale F` multiplies every n (the smoke test runs 0.125). Exit 0 unless --check is given and the
property fails.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _benchlib import bench_arguments, machine, median_ms, table, verdict, write_json
from rlcat.scripts import read_text

CONSTANT_MS = 10.0
LAUNCH = "python3 -m verl.trainer.main_ppo a.b=$y\n"
NEAR_MISS = "*a" * 64 + "*b"  # 130 characters


def _glob(operator: str) -> Callable[[int], str]:
    return lambda n: f"x={'a' * n}\ny=${{x{operator}{NEAR_MISS}}}\n{LAUNCH}"


def _case(n: int) -> str:
    return f"x={'a' * n}\ncase $x in {NEAR_MISS}) y=1;; *) y=2;; esac\n{LAUNCH}"


def _pattern(n: int) -> str:
    return f"x={'a' * 4096}\ny=${{x##{'*a' * (n // 2)}*b}}\n{LAUNCH}"


def _replace(operation: str) -> Callable[[int], str]:
    return lambda n: f"x={('a' * 15 + 'b') * (n // 16)}\ny={operation}\n{LAUNCH}"


def _copies(n: int) -> str:
    return f"x={'v' * 1024}\n" + "".join(f'y{i}="$x$x"\n' for i in range(n)) + LAUNCH


def _array(n: int) -> str:
    return "a=(" + " ".join(f"w{i}" for i in range(n)) + ")\ny=${#a[@]}\n" + LAUNCH


def _unknown_parts(n: int) -> str:
    return 'x="' + "a.b=$(date) " * n + '"\npython3 -m verl.trainer.main_ppo $x\n'


def _braces(n: int) -> str:
    return "y=1\necho pre{" + ",".join(str(i) for i in range(n)) + "}post\n" + LAUNCH


# name: (script of size n, n at scale 1)
CASES: dict[str, tuple[Callable[[int], str], int]] = {
    "${x##near-miss}, text n": (_glob("##"), 8192),
    "${x%%near-miss}, text n": (_glob("%%"), 8192),
    "${x#near-miss}, text n": (_glob("#"), 8192),
    "case near-miss, text n": (_case, 8192),
    "${x##*a…*b}, pattern n": (_pattern, 512),
    "${x//a/bc}, text n": (_replace("${x//a/bc}"), 8192),
    "${x//?×32b/c}, text n": (_replace("${x//" + "?" * 32 + "b/c}"), 8192),
    "n copies of 2 KiB": (_copies, 500),
    "array of n words": (_array, 2500),
    "brace of n words": (_braces, 256),
    "$x of n unknown parts": (_unknown_parts, 500),
}


def main(argv: list[str] | None = None) -> int:
    p = bench_arguments(__doc__, repeat=5)
    p.add_argument("--scale", type=float, default=1.0, help="multiply every size n (default 1)")
    args = p.parse_args(argv)

    scripts = {
        (name, step): make(max(int(n * args.scale), 16) * 2**step)
        for name, (make, n) in CASES.items()
        for step in range(3)
    }
    for key, script in scripts.items():  # each one is read, not refused: the property is about reading
        found = read_text(script, file="bench.sh")
        refused = [d.code for d in found.diagnostics if d.code == "RLC007"]
        assert found.launches and not refused, (key, [d.headline() for d in found.diagnostics])
    samples: dict[tuple[str, int], list[float]] = {key: [] for key in scripts}
    for _ in range(args.repeat + 1):
        for key, script in scripts.items():
            start = time.process_time()
            read_text(script, file="bench.sh")
            samples[key].append(time.process_time() - start)
    for values in samples.values():
        del values[0]  # the warm-up round

    rows, results, ok = [], {}, True
    for name, (_, n) in CASES.items():
        size = max(int(n * args.scale), 16)
        times = [median_ms(samples[(name, step)]) for step in range(3)]
        ratios = [
            statistics.median(
                b / a for a, b in zip(samples[(name, step)], samples[(name, step + 1)], strict=True)
            )
            for step in range(2)
        ]
        holds = all(times[s + 1] <= 2 * times[s] + CONSTANT_MS for s in range(2))
        ok = ok and holds
        rows.append([name, size, *times, *ratios, verdict(holds)])
        results[name] = {"n": size, "median_ms": times, "doubling_ratios": ratios, "pass": holds}
    print(f"{args.repeat} interleaved rounds (+1 warm-up), in one process\n")
    headers = ["case", "n", "t(n) ms", "t(2n) ms", "t(4n) ms", "2n/n", "4n/2n", "t(2n) <= 2t(n)+10ms"]
    print(table(headers, rows))
    measured = {"repeat": args.repeat, "constant_ms": CONSTANT_MS, "cases": results, "pass": ok}
    write_json(args.json_path, {"benchmark": "script_reader", "machine": machine(), **measured})
    return 1 if args.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())

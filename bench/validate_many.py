"""`rlcat validate` over 1,000 recipe files in one process.

Run:  python bench/validate_many.py [--files N] [--repeat N] [--json FILE] [--check] [--profile]

The script writes N recipe files (1,000 by default) into a temp folder laid out as a user catalog,
<tmp>/recipes/{children,copies,broken}/, every file named after its `name:`:

- children (~75%): small recipes with `extends: <seed>` (a seed of recipes/, cycling) and a few
  changed fields (epochs, frequencies, project, learning rate, GPU memory share, an env var);
- copies (~20%): whole seed recipes renamed;
- broken (5%): a child or copy with one error each (unknown field, wrong type, unknown model,
  unknown parent, YAML syntax error, name mismatch, duplicate key, out-of-range value, unknown verl
  key, a path in `extends`).

It then times rlcat.survey.validate_files.validate_paths([tmp], Catalog.default([tmp])), which is what
`rlcat validate <tmp>` runs: every recipe is loaded, resolved and compiled on each of its target
platforms (cuda and rocm, plus any platform its `platforms:` block names) with guards and the verl
key check. Reported:

- the first run in this process (cold: lazy imports, first validations, key indexes loaded);
- the median of N runs after it, each with rlcat's parse cache emptied first (so every file is read
  and parsed again, as in a fresh `rlcat validate` process), interleaved with a reference that
  parses the same files with yaml's CSafeLoader (the bare cost of reading the inputs);
- the median of N runs that keep the parse cache (what a long-lived process sees);
- plans compiled per second, and the wall time of one fresh `rlcat validate <tmp>` process.

The first run also checks the generator: the broken files, and only they, have error-level findings.

Budget (issue: rlcat validate in CI): validating 1,000 recipe files <= 2 s in one process, checked
on the first run and on the uncached median. The exit code is 0 unless --check is given and the
budget fails (or the findings are not the expected ones).
"""

from __future__ import annotations

import contextlib
import cProfile
import io
import pstats
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _benchlib import REPO, bench_arguments, machine, median_ms, spread_ms, table, verdict, write_json

BUDGET_S = 2.0
SEEDS = sorted(p.stem for p in (REPO / "recipes").glob("*.yaml"))
BROKEN_EVERY = 20  # 5%
COPY_EVERY = 5  # 20% (of the files that are not broken)


# --- the generated catalog -------------------------------------------------------------------------


def child(name: str, seed: str, i: int) -> str:
    """A child recipe: extends a seed and changes a few fields."""
    lines = [
        f"name: {name}",
        f"summary: variant {i} of {seed}",
        f"extends: {seed}",
        "trainer:",
        f"  project: sweep_{i % 7}",
        f"  experiment: {name}",
        f"  epochs: {1 + i % 30}",
        f"  test_freq: {1 + i % 10}",
    ]
    if i % 2:
        lines += ["actor:", "  optim:", f"    lr: {1 + i % 9}.0e-6"]
    if i % 3 == 0:
        lines += ["rollout:", f"  gpu_memory_utilization: {0.4 + (i % 4) * 0.05:.2f}"]
    if i % 4 == 0:
        lines += ["env:", f"  SWEEP_INDEX: '{i}'"]
    return "\n".join(lines) + "\n"


def copy_of(name: str, seed: str) -> str:
    text = (REPO / "recipes" / f"{seed}.yaml").read_text(encoding="utf-8")
    return text.replace(f"\nname: {seed}\n", f"\nname: {name}\n", 1)


# (kind, how to break a good text): each must give at least one error-level finding
BREAKERS: list[tuple[str, Any]] = [
    ("unknown field", lambda t: t + "batch:\n  mini_batch_sise: 8\n"),
    ("wrong type", lambda t: t.replace("  epochs: ", "  epochs: ten", 1)),
    ("unknown model", lambda t: t + "model: qwen9_99b\n"),
    ("unknown parent", lambda t: t.replace("extends: ", "extends: nope_", 1)),
    ("YAML syntax", lambda t: t + "resources: {nodes: 1\n"),
    ("name mismatch", lambda t: t.replace("name: ", "name: other_", 1)),
    ("duplicate key", lambda t: t + "summary: twice\n"),
    ("out of range", lambda t: t.replace("  test_freq: ", "  test_freq: -5", 1)),
    (
        "unknown verl key",
        lambda t: t + "overrides:\n  actor_rollout_ref.rollout.gpu_memory_utilisation: 0.5\n",
    ),
    ("path in extends", lambda t: t.replace("extends: ", "extends: ../", 1)),
]


def generate(root: Path, count: int) -> dict[str, Any]:
    """Write `count` recipes under root/recipes; returns what was written (kinds, broken files)."""
    written: dict[str, int] = {"children": 0, "copies": 0, "broken": 0}
    broken: dict[str, str] = {}
    for i in range(count):
        seed = SEEDS[i % len(SEEDS)]
        if i % BROKEN_EVERY == BROKEN_EVERY - 1:
            kind, breaker = BREAKERS[(i // BROKEN_EVERY) % len(BREAKERS)]
            name = f"broken_{i:04d}"
            text = breaker(child(name, seed, i))
            folder = "broken"
            broken[name] = kind
        elif i % COPY_EVERY == 0:
            name = f"copy_{i:04d}_{seed}"
            text, folder = copy_of(name, seed), "copies"
        else:
            name = f"child_{i:04d}_{seed}"
            text, folder = child(name, seed, i), "children"
        path = root / "recipes" / folder / f"{name}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written[folder] += 1
    return {"written": written, "broken": broken}


# --- measuring -------------------------------------------------------------------------------------

_plans = [0]


def count_plans() -> None:
    """Count the plans validate compiles (validate_files compiles once per platform)."""
    import rlcat.survey.validate_files as v

    real = getattr(v, "compile_request", None)
    if real is None:  # validate no longer calls it by this name: plans are not counted
        return

    def counting(*args: Any, **kwargs: Any) -> Any:
        _plans[0] += 1
        return real(*args, **kwargs)

    setattr(v, "compile_request", counting)  # noqa: B010 - rlcat.survey.validate_files does not export it


def run_validate(root: Path, *, cached: bool) -> tuple[float, Any, int]:
    """One `rlcat validate <root>` in this process: seconds, the report, plans compiled."""
    import rlcat.read.document
    from rlcat.catalog import Catalog
    from rlcat.survey.validate_files import validate_paths

    if not cached:
        rlcat.read.document._parsed.clear()  # every file read and parsed again, as in a fresh process
    _plans[0] = 0
    t = time.perf_counter()
    report = validate_paths([root], Catalog.default([root]))
    return time.perf_counter() - t, report, _plans[0]


def reference(files: list[Path]) -> float:
    """Parse every generated file with yaml's C loader: the bare cost of reading the inputs."""
    import yaml

    t = time.perf_counter()
    for path in files:
        with contextlib.suppress(yaml.YAMLError):  # the broken files include a syntax error
            yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
    return time.perf_counter() - t


def check_findings(report: Any, broken: dict[str, str]) -> list[str]:
    """The broken files, and only they, have error-level findings."""
    from rlcat.diagnostics import Severity

    failing: dict[str, set[str]] = {}
    for d in report.diagnostics:
        if d.severity >= Severity.ERROR and d.file:
            failing.setdefault(Path(d.file).stem, set()).add(d.code)
    problems = [f"{name} ({kind}): no error reported" for name, kind in broken.items() if name not in failing]
    problems += [
        f"{name}: unexpected {sorted(codes)}" for name, codes in failing.items() if name not in broken
    ]
    return problems


def fresh_process(root: Path) -> float | None:
    """Wall time of one `rlcat validate <root> --format json` in a new process (the console script)."""
    exe = Path(sys.executable).with_name("rlcat")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "rlcat.cli"]
    t = time.perf_counter()
    done = subprocess.run(
        [*cmd, "validate", str(root), "--format", "json"], capture_output=True, text=True, check=False
    )
    took = time.perf_counter() - t
    return took if done.returncode in (0, 1) else None


def profile(root: Path, top: int = 15) -> str:
    import rlcat.read.document

    rlcat.read.document._parsed.clear()
    prof = cProfile.Profile()
    prof.enable()
    run_validate(root, cached=False)
    prof.disable()
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out)
    stats.sort_stats("cumulative").print_stats(top)
    stats.sort_stats("tottime").print_stats(top)
    return out.getvalue()


def measure(root: Path, made: dict[str, Any], repeat: int, process: bool) -> dict[str, Any]:
    """The first run, then `repeat` interleaved rounds of reference / uncached / cached runs."""
    from rlcat.diagnostics import Severity

    files = sorted(root.rglob("*.yaml"))
    count_plans()
    first_s, report, plans = run_validate(root, cached=False)
    problems = check_findings(report, made["broken"])
    reference(files)  # warm-up
    uncached: list[float] = []
    cached: list[float] = []
    refs: list[float] = []
    for _ in range(repeat):  # interleaved: R U C R U C ...
        refs.append(reference(files))
        uncached.append(run_validate(root, cached=False)[0])
        cached.append(run_validate(root, cached=True)[0])
    process_s = fresh_process(root) if process else None
    med_u = median_ms(uncached)
    return {
        "files": report.files,
        "written": made["written"],
        "broken": made["broken"],
        "error_findings": sum(1 for d in report.diagnostics if d.severity >= Severity.ERROR),
        "plans_per_run": plans,
        "first_ms": first_s * 1000,
        "uncached_ms": [s * 1000 for s in uncached],
        "uncached_median_ms": med_u,
        "uncached_spread_ms": list(spread_ms(uncached)),
        "cached_ms": [s * 1000 for s in cached],
        "cached_median_ms": median_ms(cached),
        "reference_ms": [s * 1000 for s in refs],
        "reference_median_ms": median_ms(refs),
        "plans_per_s_uncached": plans / med_u * 1000 if plans else None,
        "fresh_process_ms": None if process_s is None else process_s * 1000,
        "findings_as_planted": not problems,
        "findings_problems": problems,
        "budget_s": BUDGET_S,
        "pass": first_s <= BUDGET_S and med_u / 1000 <= BUDGET_S,
    }


def render(r: dict[str, Any], repeat: int) -> str:
    n, plans = r["files"], r["plans_per_run"]

    def rate(ms: float) -> float | str:
        return plans / ms * 1000 if plans else ""

    rows: list[list[Any]] = [
        ["first run (cold, in-process)", r["first_ms"]],
        [f"median of {repeat}, parse cache emptied", r["uncached_median_ms"]],
        [f"median of {repeat}, parse cache kept", r["cached_median_ms"]],
    ]
    rows = [[label, ms, ms / n, rate(ms)] for label, ms in rows]
    rows.append(
        [
            "reference: CSafeLoader parse of every file",
            r["reference_median_ms"],
            r["reference_median_ms"] / n,
            "",
        ]
    )
    if r["fresh_process_ms"] is not None:
        rows.append(["fresh `rlcat validate` process (wall)", r["fresh_process_ms"], "", ""])
    lo, hi = r["uncached_spread_ms"]
    out = [
        f"{n} files: " + ", ".join(f"{v} {k}" for k, v in r["written"].items()),
        f"{plans} plans compiled per run ({plans / max(1, n):.2f} per file); {r['error_findings']} "
        f"error-level findings in {len(r['broken'])} broken files",
        "",
        table(["run", "ms", "ms / file", "plans / s"], rows),
        "",
        f"uncached spread: {lo:.0f} .. {hi:.0f} ms; "
        f"uncached / reference = {r['uncached_median_ms'] / r['reference_median_ms']:.1f}x",
    ]
    if r["findings_problems"]:
        out += ["", "findings differ from what the generator planted:"]
        out += [f"  {line}" for line in r["findings_problems"][:20]]
    out += [
        "",
        f"budget: first {r['first_ms'] / 1000:.2f} s and median {r['uncached_median_ms'] / 1000:.2f} s "
        f"<= {BUDGET_S:.0f} s for {n} files -> {verdict(r['pass'])}",
    ]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    p = bench_arguments(__doc__, repeat=3)
    p.add_argument("--files", type=int, default=1000, help="recipe files to generate (default 1000)")
    p.add_argument("--profile", action="store_true", help="print a cProfile of one uncached run")
    p.add_argument("--no-process", action="store_true", help="skip the fresh-process run")
    args = p.parse_args(argv)

    tmp = Path(tempfile.mkdtemp(prefix="rlcat-bench-validate-"))
    try:
        made = generate(tmp, args.files)
        t0 = time.perf_counter()
        import yaml  # noqa: F401 - timed with the rest of validate's imports

        import rlcat.survey.validate_files  # noqa: F401

        import_ms = (time.perf_counter() - t0) * 1000
        r = measure(tmp, made, args.repeat, not args.no_process)
        print(f"imports (yaml, rlcat.survey.validate_files): {import_ms:.0f} ms; generated under {tmp}")
        print(render(r, args.repeat))
        if args.profile or not r["pass"]:
            print("\n" + profile(tmp))
        write_json(
            args.json_path,
            {
                "benchmark": "validate_many",
                "machine": machine(),
                "argv": sys.argv,
                "import_ms": import_ms,
                **r,
            },
        )
        return 1 if args.check and not (r["pass"] and r["findings_as_planted"]) else 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

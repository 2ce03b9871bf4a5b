"""In-process cost of compiling the whole catalog: every recipe x engine x platform, every format.

Run:  python bench/compile_all.py [--repeat N] [--json FILE] [--check]

One process. A sweep compiles every recipe (Catalog.default().names("recipe")) for each engine
(vllm, sglang) and each platform (Catalog.default().names("platform")) with
rlcat.compile.assemble.compile_request(Request(recipe, platform, engine=engine)) and renders each plan with
every format in rlcat.emit.formats.FORMATS. Combinations that raise RlcatError (the recipe does not
allow that engine, ...) are skipped and counted; the time spent rejecting them stays in the sweep.

The first sweep runs right after the imports and is reported on its own (cold, in-process: lazy
imports, functools caches, first pydantic validations). Then the sweep is measured N times,
interleaved with a reference workload (R S R S ...) so machine noise hits both alike: the reference
parses every YAML file of the catalog (recipes, models, datasets, platforms) with yaml's CSafeLoader,
i.e. the bare cost of reading the inputs. Reported: median ms per compiled plan (sweep time / plans
compiled), split into compile and render, and the sweep / reference ratio.

Budget (DESIGN): <= 5 ms per plan for the whole catalog in one process.
The exit code is 0 unless --check is given and the budget fails (or a sweep's output changes).
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _benchlib import bench_arguments, machine, median_ms, spread_ms, table, verdict, write_json

BUDGET_MS_PER_PLAN = 5.0
ENGINES = ("vllm", "sglang")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    return bench_arguments(__doc__, repeat=100, rounds="measured sweeps").parse_args(argv)


def sweep(combos: list[tuple[str, str, str]]) -> dict[str, Any]:
    """Compile every combination and render it in every format; times in seconds."""
    from rlcat.compile.assemble import Request, compile_request
    from rlcat.diagnostics import RlcatError
    from rlcat.emit.formats import FORMATS

    compile_s = render_s = 0.0
    by_format = dict.fromkeys(FORMATS, 0.0)
    compiled: list[tuple[str, str, str]] = []
    skipped: dict[tuple[str, str, str], str] = {}
    digest = hashlib.sha256()
    for recipe, engine, platform in combos:
        t = time.perf_counter()
        try:
            plan = compile_request(Request(recipe, platform, engine=engine, allow_known_broken=True))
        except RlcatError as exc:
            compile_s += time.perf_counter() - t
            first = exc.diagnostics[0] if exc.diagnostics else None
            skipped[(recipe, engine, platform)] = f"{first.code}: {first.message}" if first else "?"
            continue
        t1 = time.perf_counter()
        compile_s += t1 - t
        for name, render in FORMATS.items():
            t2 = time.perf_counter()
            text = render(plan)
            by_format[name] += time.perf_counter() - t2
            digest.update(f"{recipe}/{engine}/{platform}/{name}\0{text}\0".encode())
        render_s += time.perf_counter() - t1
        compiled.append((recipe, engine, platform))
    return {
        "compile_s": compile_s,
        "render_s": render_s,
        "total_s": compile_s + render_s,
        "by_format": by_format,
        "compiled": compiled,
        "skipped": skipped,
        "digest": digest.hexdigest(),
    }


def reference(yaml_files: list[Path]) -> float:
    """The reference workload: parse every catalog file with the C loader (the bare input cost)."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    t = time.perf_counter()
    for path in yaml_files:
        with open(path, encoding="utf-8") as fh:
            yaml.load(fh, Loader=loader)
    return time.perf_counter() - t


def summarise(cold: dict[str, Any], sweeps: list[dict[str, Any]], refs: list[float]) -> dict[str, Any]:
    from rlcat.emit.formats import FORMATS

    n = len(cold["compiled"])
    per_plan = {k: median_ms([s[k] for s in sweeps]) / n for k in ("total_s", "compile_s", "render_s")}
    lo, hi = spread_ms([s["total_s"] for s in sweeps])
    return {
        "compiled": n,
        "skipped": len(cold["skipped"]),
        "skipped_reasons": {"/".join(k): v for k, v in cold["skipped"].items()},
        "cold_sweep_ms": cold["total_s"] * 1000,
        "cold_ms_per_plan": cold["total_s"] * 1000 / n,
        "cold_compile_ms_per_plan": cold["compile_s"] * 1000 / n,
        "cold_render_ms_per_plan": cold["render_s"] * 1000 / n,
        "median_sweep_ms": median_ms([s["total_s"] for s in sweeps]),
        "sweep_spread_ms": [lo, hi],
        "median_ms_per_plan": per_plan["total_s"],
        "median_compile_ms_per_plan": per_plan["compile_s"],
        "median_render_ms_per_plan": per_plan["render_s"],
        "median_render_ms_per_plan_by_format": {
            f: median_ms([s["by_format"][f] for s in sweeps]) / n for f in FORMATS
        },
        "sweeps_ms": [s["total_s"] * 1000 for s in sweeps],
        "reference_ms": [r * 1000 for r in refs],
        "reference_median_ms": median_ms(refs),
        "sweep_vs_reference": median_ms([s["total_s"] for s in sweeps]) / median_ms(refs),
        "output_stable": all(
            s["digest"] == cold["digest"] and s["compiled"] == cold["compiled"] for s in sweeps
        ),
    }


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)

    t0 = time.perf_counter()
    import yaml  # noqa: F401 - timed with the rest of the compile path's imports

    from rlcat.catalog import KIND_DIRS, Catalog
    from rlcat.compile.assemble import compile_request  # noqa: F401
    from rlcat.emit.formats import FORMATS

    import_ms = (time.perf_counter() - t0) * 1000

    catalog = Catalog.default()
    recipes = list(catalog.names("recipe"))
    platforms = list(catalog.names("platform"))
    combos = [(r, e, p) for r in recipes for e in ENGINES for p in platforms]
    yaml_files = sorted({path for kind in KIND_DIRS for path in catalog.names(kind).values()})

    cold = sweep(combos)  # the first sweep in this process, also the warm-up
    if not cold["compiled"]:
        sys.exit(
            "no combination compiled; the first errors were:\n"
            + "\n".join(f"  {'/'.join(k)}: {v}" for k, v in list(cold["skipped"].items())[:5])
        )
    reference(yaml_files)  # warm-up

    refs: list[float] = []
    sweeps: list[dict[str, Any]] = []
    t_start = time.perf_counter()
    for _ in range(args.repeat):  # interleaved: R S R S ...
        refs.append(reference(yaml_files))
        sweeps.append(sweep(combos))
    wall = time.perf_counter() - t_start
    r = summarise(cold, sweeps, refs)
    ok = r["median_ms_per_plan"] <= BUDGET_MS_PER_PLAN

    print(
        f"{len(recipes)} recipes x {len(ENGINES)} engines x {len(platforms)} platforms = {len(combos)} "
        f"combinations: {r['compiled']} compiled, {r['skipped']} skipped (RlcatError); "
        f"{len(FORMATS)} formats each ({', '.join(FORMATS)})"
    )
    print(f"imports (yaml, rlcat.catalog, rlcat.compile.assemble, rlcat.emit.formats): {import_ms:.1f} ms")
    print(f"{args.repeat} measured sweeps interleaved with the reference (+1 cold sweep), {wall:.1f} s\n")
    print(
        table(
            ["run", "sweep ms", "ms / plan", "compile ms / plan", "render ms / plan"],
            [
                [
                    "cold (first sweep)",
                    r["cold_sweep_ms"],
                    r["cold_ms_per_plan"],
                    r["cold_compile_ms_per_plan"],
                    r["cold_render_ms_per_plan"],
                ],
                [
                    "warm (median)",
                    r["median_sweep_ms"],
                    r["median_ms_per_plan"],
                    r["median_compile_ms_per_plan"],
                    r["median_render_ms_per_plan"],
                ],
            ],
        )
    )
    print(
        "\nrender ms / plan by format (warm median): "
        + ", ".join(f"{f} {v:.2f}" for f, v in r["median_render_ms_per_plan_by_format"].items())
    )
    print("warm sweep spread: {:.1f} .. {:.1f} ms".format(*r["sweep_spread_ms"]))
    print(
        f"reference (CSafeLoader parse of {len(yaml_files)} catalog files): "
        f"{r['reference_median_ms']:.2f} ms median; sweep / reference = {r['sweep_vs_reference']:.1f}x"
    )
    print(f"output identical in every sweep: {'yes' if r['output_stable'] else 'NO'}")
    if r["skipped_reasons"]:
        print("\nskipped:")
        for combo, why in r["skipped_reasons"].items():
            print(f"  {combo}: {why[:100]}")
    print(
        f"\nbudget: {r['median_ms_per_plan']:.2f} ms per plan <= {BUDGET_MS_PER_PLAN:.0f} ms -> {verdict(ok)}"
    )

    write_json(
        args.json_path,
        {
            "benchmark": "compile_all",
            "machine": machine(),
            "argv": sys.argv,
            "repeat": args.repeat,
            "recipes": recipes,
            "platforms": platforms,
            "engines": list(ENGINES),
            "formats": list(FORMATS),
            "combinations": len(combos),
            "import_ms": import_ms,
            "wall_s": wall,
            **r,
            "budget_ms_per_plan": BUDGET_MS_PER_PLAN,
            "pass": ok,
        },
    )
    return 1 if args.check and not (ok and r["output_stable"]) else 0


if __name__ == "__main__":
    sys.exit(main())

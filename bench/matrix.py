"""`rlcat matrix` over every seed recipe and platform, in one process.

Run:  python bench/matrix.py [--repeat N] [--json FILE] [--check]

One sweep runs rlcat.survey.recipes.matrix(recipe, catalog) for every recipe of the catalog: every
mode × engine × backend cell the recipe allows, on every platform, each compiled with guards and
the key-index check. The first sweep (fresh process: lazy imports, first validations, index loads)
is reported on its own; then N sweeps are measured, interleaved with a reference that parses every
catalog YAML file, and the median is compared with the budget.

Budget (issue: matrix over every seed recipe and platform): <= 1 s in one process.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _benchlib import bench_arguments, machine, median_ms, spread_ms, table, verdict, write_json

BUDGET_MS = 1000.0


def main(argv: list[str] | None = None) -> int:
    p = bench_arguments(__doc__, repeat=15, rounds="measured sweeps")
    args = p.parse_args(argv)

    t0 = time.perf_counter()
    import yaml

    from rlcat.catalog import Catalog
    from rlcat.survey.recipes import matrix

    imported = time.perf_counter() - t0
    catalog = Catalog.default()
    recipes = sorted(catalog.names("recipe"))
    files = [p for kind in ("recipe", "model", "dataset", "platform") for p in catalog.names(kind).values()]  # type: ignore[arg-type]

    def sweep() -> int:
        return sum(len(matrix(r, catalog)) for r in recipes)

    def reference() -> None:
        for f in files:
            yaml.load(f.read_text(), Loader=yaml.CSafeLoader)

    t = time.perf_counter()
    cells = sweep()
    first = time.perf_counter() - t
    sweeps, refs = [], []
    for _ in range(args.repeat):
        t = time.perf_counter()
        reference()
        refs.append(time.perf_counter() - t)
        t = time.perf_counter()
        sweep()
        sweeps.append(time.perf_counter() - t)
    med, ref = median_ms(sweeps), median_ms(refs)
    ok = med <= BUDGET_MS and first * 1000 <= BUDGET_MS
    lo, hi = spread_ms(sweeps)
    print(
        table(
            ["measure", "value"],
            [
                ["recipes", len(recipes)],
                ["cells compiled per sweep", cells],
                ["imports (ms)", f"{imported * 1000:.0f}"],
                ["first sweep (ms)", f"{first * 1000:.0f}"],
                [f"median sweep of {args.repeat} (ms)", f"{med:.0f} (min {lo:.0f}, max {hi:.0f})"],
                ["per cell (ms)", f"{med / cells:.2f}"],
                ["reference: parse every catalog file (ms)", f"{ref:.1f}"],
                ["sweep / reference", f"{med / ref:.1f}x"],
                ["budget <= 1000 ms (first and median)", verdict(ok)],
            ],
        )
    )
    write_json(
        args.json_path,
        {
            "machine": machine(),
            "cells": cells,
            "first_ms": first * 1000,
            "median_ms": med,
            "reference_ms": ref,
            "samples_ms": [s * 1000 for s in sweeps],
            "pass": ok,
        },
    )
    return 1 if args.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())

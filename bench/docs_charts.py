"""The charts of one recipe page as its results hold more series: the page's drawing stays bounded.

Run:  python bench/docs_charts.py [--keys N] [--repeat N] [--json FILE] [--check]

Five results of one recipe hold N, 2N and 4N metric keys between them (default N = 200; series of
200 points, each result up to 200 series as the result schema allows), as hostile or careless
result files can.
One round draws the recipe page's charts (`rlcat.docsite.results.charts_md`, matplotlib's SVG) for
each size, interleaved, the drawings forgotten before each so every chart is drawn. Before the
page bound, each key was a chart (five files of 200 series: 1,001 figures, a 14.7 MB page, 117 s).

Budget (issue: hostile input, the docs' bound): the input doubled, the time at most doubled plus
0.5 s (t(2N) <= 2 t(N) + 0.5 s, and t(4N) <= 2 t(2N) + 0.5 s); with the bound the time stays flat.
"""

from __future__ import annotations

import itertools
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _benchlib import bench_arguments, machine, table, verdict, write_json

SLACK_S = 0.5
RESULTS = 5
POINTS = 200
RECIPE = "gsm8k_qwen3_8b_fsdp"


def results_with(keys: int) -> list:  # type: ignore[type-arg]
    """Five results of the recipe holding `keys` distinct metric keys between them."""
    from rlcat.model.results import Result

    per = -(-keys // RESULTS)

    return [
        Result.model_validate(
            {
                "name": f"r{i}",
                "summary": "many series",
                "recipe": RECIPE,
                "platform": "cuda",
                "hardware": {"gpu": "H100", "gpus": 8},
                "mode": "colocate",
                "kind": "reported",
                "source": {"title": "generated"},
                "series": [
                    {
                        "key": f"val-core/d{k}/reward/mean@1",
                        "unit": "fraction",
                        "steps": list(range(POINTS)),
                        "values": [0.3 + (i + j) / 10_000 for j in range(POINTS)],
                    }
                    for k in range(i * per, min(keys, (i + 1) * per))
                ],
            }
        )
        for i in range(RESULTS)
    ]


def main(argv: list[str] | None = None) -> int:
    p = bench_arguments(__doc__, repeat=3)
    p.add_argument("--keys", type=int, default=200, help="metric keys of the page at the smallest size")
    args = p.parse_args(argv)
    from rlcat.docsite.data import Site
    from rlcat.docsite.figures import forget_drawings
    from rlcat.docsite.results import charts_md

    sizes = [args.keys, 2 * args.keys, 4 * args.keys]  # at most 5 x 200, what five results may hold
    held = {}
    with tempfile.TemporaryDirectory(prefix="rlcat-bench-charts-") as root:
        for size in sizes:
            held[size] = results_with(size)
        samples: dict[int, list[float]] = {size: [] for size in sizes}
        charts: dict[int, int] = {}
        for _ in range(args.repeat + 1):  # the first round imports matplotlib and is discarded
            for size in sizes:
                forget_drawings()
                site = Site(Path(root), {}, {}, {}, {}, results=held[size])  # a new site draws anew
                start = time.perf_counter()
                page = charts_md(site, RECIPE, "series")
                samples[size].append(time.perf_counter() - start)
                charts[size] = page.count("data-rlc-figure")
    medians = {size: statistics.median(values[1:]) for size, values in samples.items()}
    checks = [
        (small, large, medians[large] <= 2 * medians[small] + SLACK_S)
        for small, large in itertools.pairwise(sizes)
    ]
    rows = [[f"{size} keys over {RESULTS} results", medians[size], charts[size]] for size in sizes]
    print(f"{args.repeat} interleaved rounds (+1 warm-up), in one process\n")
    print(table(["input", "median s", "charts drawn"], rows))
    for small, large, ok in checks:
        print(f"t({large}) <= 2 t({small}) + {SLACK_S} s: {verdict(ok)}")
    ok = all(c[2] for c in checks)
    write_json(
        args.json_path,
        {
            "benchmark": "docs_charts",
            "machine": machine(),
            "repeat": args.repeat,
            "median_s": {str(k): v for k, v in medians.items()},
            "charts": {str(k): v for k, v in charts.items()},
            "pass": ok,
        },
    )
    return 1 if args.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())

"""The documentation site: generate the Markdown and build it with MkDocs, repeatedly, in one process.

Run:  python bench/docs_build.py [--repeat N] [--json FILE] [--check] [--write-docs] [--draw]

One round is what `rlcat docs build` does after start-up: generate every page from the catalog
(which compiles every recipe on every platform for every engine it allows) and build the site with
MkDocs and the Material theme into a fresh folder. The generated Markdown is compared with the
committed files, not written, so the checkout is left as it is. The drawings cached in a round are
forgotten before the next; a figure unchanged since the committed page is taken from it, as `rlcat
docs build` does (rlcat.docsite.figures.drawn), and `--draw` draws every figure anew instead. The
first round (imports of MkDocs, Material, Markdown extensions, matplotlib; first compiles) is
reported on its own; then N rounds are measured, interleaved with a reference that copies docs/ (the
Markdown the build reads) to a temporary folder, and the median is compared with the budget. Each
round's CPU time in the process is reported beside its wall time: on a machine shared with other
work, the wall time grows with the load and the CPU time much less. `--write-docs` puts the figure
into docs/about.md.

Budget (issue: the docs site): a build of the shipped catalog takes <= 10 s.
"""

from __future__ import annotations

import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _benchlib import REPO, bench_arguments, machine, median_ms, spread_ms, table, verdict, write_json

BUDGET_MS = 10_000.0
ABOUT = REPO / "docs" / "about.md"
MARK_START = "<!-- bench/docs_build.py --write-docs updates the next paragraph -->"
MARK_END = "<!-- end of bench/docs_build.py figure -->"


def write_docs(
    *,
    med: float,
    gen: float,
    build: float,
    cpu: float,
    first_s: float,
    first_cpu_s: float,
    pages: int,
    repeat: int,
    drew: bool,
) -> bool:
    """Put the figure between the markers of docs/about.md."""
    m = machine()
    figure = (
        f"Generating every page and building the site takes **{med / 1000:.1f} s** (median of "
        f"{repeat} builds in one process: {gen / 1000:.1f} s generating the Markdown, which compiles "
        f"every recipe on every platform and "
        + ("draws every figure" if drew else "takes the unchanged figures from the committed pages")
        + f", and {build / 1000:.1f} s in MkDocs; "
        f"{cpu / 1000:.1f} s of CPU time; the first build, with imports, {first_s:.1f} s and "
        f"{first_cpu_s:.1f} s of CPU time) for {pages} pages, measured with `python bench/docs_build.py` "
        f"on a {m['cpus']}-core machine whose load average was {m['loadavg_1m'] or 0:.1f}, Python "
        f"{m['python']}, {time.strftime('%d %b %Y')}."
    )
    text = ABOUT.read_text(encoding="utf-8")
    pattern = re.compile(re.escape(MARK_START) + r"\n.*?\n" + re.escape(MARK_END), re.S)
    if not pattern.search(text):
        sys.stderr.write(f"{ABOUT}: markers not found; figure not written\n")
        return False
    ABOUT.write_text(pattern.sub(MARK_START + "\n" + figure + "\n" + MARK_END, text), encoding="utf-8")
    print(f"\nwrote the figure into {ABOUT.relative_to(REPO)}")
    return True


def main(argv: list[str] | None = None) -> int:
    p = bench_arguments(__doc__, repeat=5, rounds="measured rounds")
    p.add_argument("--write-docs", action="store_true", help="write the figure into docs/about.md")
    p.add_argument("--draw", action="store_true", help="draw every figure, none taken from docs/")
    args = p.parse_args(argv)

    from rlcat.cli.app import command_tree
    from rlcat.docsite.build import build_site
    from rlcat.docsite.data import load_site
    from rlcat.docsite.figures import forget_drawings
    from rlcat.docsite.figures.drawn import Drawn
    from rlcat.docsite.generate import generate, stale_files

    tmp = Path(tempfile.mkdtemp(prefix="rlcat-bench-docs-"))
    try:
        pages: list[int] = []

        def one_round(i: int) -> tuple[float, float, float, float]:
            forget_drawings()
            t0, c0 = time.perf_counter(), time.process_time()
            site = load_site(REPO)
            if args.draw:
                site.drawn = Drawn(None)
            files = generate(REPO, command_tree(), site)
            changed, extra = stale_files(REPO, files)
            t1 = time.perf_counter()
            out = tmp / f"site{i}"
            build_site(REPO, out)
            t2, c2 = time.perf_counter(), time.process_time()
            if changed or extra:
                sys.stderr.write(
                    f"note: docs/ is stale ({len(changed) + len(extra)} files); run rlcat docs build\n"
                )
            pages.append(sum(1 for _ in out.rglob("*.html")))
            shutil.rmtree(out)
            return t1 - t0, t2 - t1, t2 - t0, c2 - c0

        def reference(i: int) -> float:
            t = time.perf_counter()
            shutil.copytree(REPO / "docs", tmp / f"ref{i}")
            elapsed = time.perf_counter() - t
            shutil.rmtree(tmp / f"ref{i}")
            return elapsed

        first = one_round(0)
        refs, rounds = [], []
        for i in range(1, args.repeat + 1):
            refs.append(reference(i))
            rounds.append(one_round(i))
        # --repeat 0: the first round alone (a smoke run of the script)
        rounds, refs = rounds or [first], refs or [reference(0)]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    gens, builds, totals, cpus = (list(column) for column in zip(*rounds, strict=True))
    med, ref = median_ms(totals), median_ms(refs)
    ok = med <= BUDGET_MS and first[2] * 1000 <= BUDGET_MS
    lo, hi = spread_ms(totals)
    print(
        table(
            ["measure", "value"],
            [
                ["pages built", pages[-1]],
                [
                    "first round: generate + build (ms); CPU (ms)",
                    f"{first[0] * 1000:.0f} + {first[1] * 1000:.0f}; {first[3] * 1000:.0f}",
                ],
                [f"median generate of {args.repeat} (ms)", f"{median_ms(gens):.0f}"],
                [f"median MkDocs build of {args.repeat} (ms)", f"{median_ms(builds):.0f}"],
                [f"median total of {args.repeat} (ms)", f"{med:.0f} (min {lo:.0f}, max {hi:.0f})"],
                [f"median CPU time of {args.repeat} (ms)", f"{median_ms(cpus):.0f}"],
                ["reference: copy docs/ (ms)", f"{ref:.1f}"],
                ["load average (1 min) at the end", f"{machine()['loadavg_1m'] or 0:.1f}"],
                ["budget <= 10000 ms (first and median)", verdict(ok)],
            ],
        )
    )
    write_json(
        args.json_path,
        {
            "machine": machine(),
            "pages": pages[-1],
            "first_ms": first[2] * 1000,
            "first_cpu_ms": first[3] * 1000,
            "median_ms": med,
            "median_cpu_ms": median_ms(cpus),
            "figures_drawn": args.draw,
            "median_generate_ms": median_ms(gens),
            "median_build_ms": median_ms(builds),
            "reference_ms": ref,
            "samples_ms": [s * 1000 for s in totals],
            "pass": ok,
        },
    )
    if args.write_docs and not write_docs(
        med=med,
        gen=median_ms(gens),
        build=median_ms(builds),
        cpu=median_ms(cpus),
        first_s=first[2],
        first_cpu_s=first[3],
        pages=pages[-1],
        repeat=args.repeat,
        drew=args.draw,
    ):
        return 1
    return 1 if args.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())

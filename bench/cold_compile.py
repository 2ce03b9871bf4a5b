"""Cold-process cost of `rlcat compile`, against Python start-up and a Hydra compose of the same plan.

Run:  python bench/cold_compile.py [--repeat N] [--json FILE] [--importtime] [--check]
                                  [--via auto|script|module] [--recipe R] [--platform P]

Three commands, each a fresh process, measured interleaved (A B C A B C ...) after one discarded
warm-up round, wall time around subprocess.run (so process spawn is included in all three alike):

  python   sys.executable -c pass                        (interpreter start-up, the reference)
  rlcat    rlcat compile RECIPE --platform PLATFORM        (the console script next to
                                                            sys.executable, as users run it; or
                                                            python -m rlcat with --via module,
                                                            or when there is no script)
  hydra    one Hydra compose of verl's entry config with exactly the overrides rlcat emits, in a
           fresh process that imports hydra but never verl (initialize_config_dir on the entry
           config's folder + compose, hydra.searchpath pointing at the tree's trainer config)

Budgets (docs/architecture.md): rlcat <= 300 ms; one Hydra compose >= 1.7x slower than rlcat. The
ratio to python start-up is reported, not budgeted. The exit code is 0 unless --check is given and a
budget fails.

"Cold" means a fresh process with the OS page cache and __pycache__ warm (the everyday case: pip
writes the bytecode at install time; PYTHONDONTWRITEBYTECODE is dropped for the children so that a
source checkout gets it in the warm-up round). rlcat keeps nothing between runs.

It also checks, in a child process running the console script's rlcat.cli.main([...compile...]),
that the compile imports none of hydra, omegaconf, jsonschema, mkdocs (optional extras and
generator tools); --importtime adds the top import-time contributors of that compile
(python -X importtime, median of a few runs).
"""

from __future__ import annotations

import argparse
import atexit
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _benchlib import bench_arguments, machine, median_ms, spread_ms, table, verdict, write_json

BUDGET_MS = 300.0
BUDGET_VS_HYDRA = 1.7
HEAVY = ("hydra", "omegaconf", "jsonschema", "mkdocs", "material")

# The Hydra child: reads {config_dir, config_name, overrides} from the JSON file in argv[1].
HYDRA_CHILD = """\
import json, sys
from hydra import compose, initialize_config_dir
spec = json.load(open(sys.argv[1], encoding="utf-8"))
with initialize_config_dir(config_dir=spec["config_dir"], version_base=None, job_name="bench"):
    cfg = compose(config_name=spec["config_name"], overrides=spec["overrides"])
assert not any(m.split(".")[0] == "verl" for m in sys.modules), "verl was imported"
print(len(cfg))
"""

# The import check child: compile in-process as the console script does, then list what got imported.
IMPORT_CHILD = """\
import contextlib, io, json, sys
from rlcat.cli import main
heavy = set(json.loads(sys.argv[1]))
out = io.StringIO()
with contextlib.redirect_stdout(out):
    rc = main(json.loads(sys.argv[2]))
tops = {m.split(".")[0] for m in sys.modules}
third = sorted(t for t in tops if t not in sys.stdlib_module_names and not t.startswith("_") and t != "rlcat")
print(json.dumps({"rc": rc, "heavy": sorted(m for m in sys.modules if m.split(".")[0] in heavy),
                  "third_party": third, "modules": len(sys.modules), "out_chars": len(out.getvalue())}))
"""

IMPORTTIME_CHILD = "import json, sys\nfrom rlcat.cli import main\nsys.exit(main(json.loads(sys.argv[1])))\n"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = bench_arguments(__doc__, repeat=40)
    p.add_argument("--recipe", default="geo3k_megatron_4_4")
    p.add_argument("--platform", default="rocm")
    p.add_argument(
        "--via",
        choices=("auto", "script", "module"),
        default="auto",
        help="run rlcat as the console script (auto: if present) or as python -m rlcat",
    )
    p.add_argument("--importtime", action="store_true", help="also print the top import-time contributors")
    return p.parse_args(argv)


def child_env() -> dict[str, str]:
    import os

    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def pick_rlcat(args: argparse.Namespace) -> tuple[list[str], str, dict[str, Any]]:
    """Return (command prefix, how it was chosen, the plan as --format json) for the compile.

    --via auto prefers the console script next to sys.executable: it is what users run.
    `python -m rlcat` (the same entry point) is probed either way and its outcome reported.
    """
    tail = ["compile", args.recipe, "--platform", args.platform, "--format", "json"]
    env = child_env()
    via_m = [sys.executable, "-m", "rlcat"]
    probe = subprocess.run(via_m + tail, check=False, capture_output=True, text=True, env=env)
    module_ok = probe.returncode == 0 and bool(probe.stdout.strip())
    module_note = (
        "python -m rlcat works"
        if module_ok
        else f"python -m rlcat fails (exit {probe.returncode}) or prints nothing"
    )

    script = Path(sys.executable).parent / "rlcat"
    if not script.is_file():
        found = shutil.which("rlcat")
        script = Path(found) if found else script
    if args.via == "module" or (args.via == "auto" and not script.is_file()):
        if not module_ok:
            sys.exit(
                f"{module_note}, and --via module was asked or no console script was found:\n"
                f"{probe.stderr[-3000:]}"
            )
        return via_m, f"{' '.join(via_m)} ({module_note})", json.loads(probe.stdout)
    if not script.is_file():
        sys.exit(f"no rlcat console script next to {sys.executable} or on PATH")
    shebang = script.read_text(encoding="utf-8", errors="replace").splitlines()[0]
    r = subprocess.run([str(script), *tail], check=False, capture_output=True, text=True, env=env)
    if r.returncode != 0 or not r.stdout.strip():
        sys.exit(f"`{script} {' '.join(tail)}` failed (exit {r.returncode}):\n{r.stderr[-3000:]}")
    entry = next(
        (
            ln.split("import", 1)[0].replace("from", "").strip()
            for ln in script.read_text(encoding="utf-8", errors="replace").splitlines()
            if ln.startswith("from rlcat")
        ),
        "?",
    )
    how = f"console script {script} ({shebang}, entry {entry}); {module_note}"
    return [str(script)], how, json.loads(r.stdout)


def hydra_spec(plan: dict[str, Any]) -> dict[str, Any]:
    """The compose rlcat.dev.compose.compose would do for this plan, as data for HYDRA_CHILD."""
    from rlcat.dev.compose import entry_dir, with_trainer_searchpath

    version, name = plan["verl_index"], plan["config_name"]
    if any(o.split("=", 1)[0].strip() == "hydra.searchpath" for o in plan["overrides"]):
        sys.exit("the plan sets hydra.searchpath itself; this benchmark does not merge search paths")
    overrides = with_trainer_searchpath(version, name, plan["overrides"])
    return {
        "version": version,
        "config_dir": str(entry_dir(version, name)),
        "config_name": name,
        "overrides": overrides,
    }


def run_once(cmd: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    r = subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    elapsed = time.perf_counter() - t0
    if r.returncode != 0:
        sys.exit(f"command failed (exit {r.returncode}): {' '.join(cmd)}\n{r.stderr.decode()[-3000:]}")
    return elapsed


def import_check(args: argparse.Namespace) -> dict[str, Any]:
    argv = ["compile", args.recipe, "--platform", args.platform]
    r = subprocess.run(
        [sys.executable, "-c", IMPORT_CHILD, json.dumps(HEAVY), json.dumps(argv)],
        check=False,
        capture_output=True,
        text=True,
        env=child_env(),
    )
    if r.returncode != 0:
        sys.exit(f"import check child failed:\n{r.stderr[-3000:]}")
    data: dict[str, Any] = json.loads(r.stdout.strip().splitlines()[-1])
    return data


def import_times(args: argparse.Namespace, runs: int = 5) -> dict[str, Any]:
    """Median self time per top-level package and per module, and cumulative per rlcat import."""
    argv = json.dumps(["compile", args.recipe, "--platform", args.platform])
    per_pkg: dict[str, list[float]] = {}
    per_mod: dict[str, list[float]] = {}
    totals: list[float] = []
    for _ in range(runs):
        r = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", IMPORTTIME_CHILD, argv],
            check=False,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=child_env(),
        )
        pkg: dict[str, float] = {}
        total = 0.0
        for line in r.stderr.splitlines():
            if not line.startswith("import time:") or "self [us]" in line:
                continue
            self_us, _cumulative, name = line[len("import time:") :].split("|", 2)
            mod = name.strip()
            us = float(self_us)
            total += us
            top = mod.split(".")[0]
            pkg[top] = pkg.get(top, 0.0) + us
            per_mod.setdefault(mod, []).append(us)
        for top, us in pkg.items():
            per_pkg.setdefault(top, []).append(us)
        totals.append(total)
    med = {k: statistics.median(v + [0.0] * (runs - len(v))) / 1000 for k, v in per_pkg.items()}
    mods = {k: statistics.median(v + [0.0] * (runs - len(v))) / 1000 for k, v in per_mod.items()}
    return {
        "runs": runs,
        "total_import_ms": statistics.median(totals) / 1000,
        "by_package_ms": dict(sorted(med.items(), key=lambda kv: -kv[1])),
        "top_modules_ms": dict(sorted(mods.items(), key=lambda kv: -kv[1])[:15]),
    }


def measure(commands: dict[str, list[str]], args: argparse.Namespace) -> tuple[dict[str, list[float]], float]:
    """Run the commands interleaved; return samples (s) per command and the wall time."""
    env = child_env()
    samples: dict[str, list[float]] = {k: [] for k in commands}
    t_start = time.perf_counter()
    for round_no in range(args.repeat + 1):  # round 0 is the discarded warm-up
        for name, cmd in commands.items():
            elapsed = run_once(cmd, env)
            if round_no:
                samples[name].append(elapsed)
    return samples, time.perf_counter() - t_start


def print_report(
    args: argparse.Namespace,
    samples: dict[str, list[float]],
    wall: float,
    *,
    imports: dict[str, Any],
    itimes: dict[str, Any] | None,
) -> None:
    med = {k: median_ms(v) for k, v in samples.items()}
    rlcat_vs_python = med["rlcat"] / med["python"]
    hydra_vs_rlcat = med["hydra"] / med["rlcat"]
    print(f"\n{args.repeat} interleaved rounds (+1 warm-up), {wall:.1f} s\n")
    rows = []
    for name, v in samples.items():
        lo, hi = spread_ms(v)
        rows.append([name, med[name], lo, hi, med[name] / med["python"]])
    print(table(["command", "median ms", "min ms", "max ms", "x python"], rows))
    print()
    print(
        table(
            ["ratio", "value", "budget", "verdict"],
            [
                ["rlcat / python", f"{rlcat_vs_python:.1f}x", "(reported)", "-"],
                [
                    "hydra / rlcat",
                    f"{hydra_vs_rlcat:.2f}x",
                    f">= {BUDGET_VS_HYDRA:.1f}x",
                    verdict(hydra_vs_rlcat >= BUDGET_VS_HYDRA),
                ],
                [
                    "rlcat median",
                    f"{med['rlcat']:.1f} ms",
                    f"<= {BUDGET_MS:.0f} ms",
                    verdict(med["rlcat"] <= BUDGET_MS),
                ],
            ],
        )
    )
    print(
        f"\ncompile path imports of {'/'.join(HEAVY)}: {imports['heavy']} -> "
        f"{verdict(not imports['heavy'] and imports['rc'] == 0)} (exit {imports['rc']}, "
        f"{imports['modules']} modules loaded)"
    )
    print(f"third-party packages the compile imports: {', '.join(imports['third_party'])}")
    if itimes:
        print(
            f"\nimport time (python -X importtime, median of {itimes['runs']} runs): "
            f"{itimes['total_import_ms']:.1f} ms in imports"
        )
        pk = list(itimes["by_package_ms"].items())[:10]
        print(table(["top-level package", "self ms"], [[k, v] for k, v in pk]))
        print()
        print(table(["module", "self ms"], [[k, v] for k, v in itimes["top_modules_ms"].items()][:12]))


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="rlcat-bench-"))
    atexit.register(shutil.rmtree, work, ignore_errors=True)
    rlcat_prefix, rlcat_how, plan = pick_rlcat(args)
    spec = hydra_spec(plan)
    spec_file = work / "compose.json"
    spec_file.write_text(json.dumps(spec), encoding="utf-8")

    commands = {
        "python": [sys.executable, "-c", "pass"],
        "rlcat": [*rlcat_prefix, "compile", args.recipe, "--platform", args.platform],
        "hydra": [sys.executable, "-c", HYDRA_CHILD, str(spec_file)],
    }
    check = subprocess.run(commands["hydra"], check=False, capture_output=True, text=True)
    if check.returncode != 0:
        sys.exit(f"the Hydra compose failed:\n{check.stderr[-3000:]}")

    print(
        f"recipe {args.recipe} on {args.platform}: verl {spec['version']} "
        f"{spec['config_name']}, {len(plan['overrides'])} overrides"
    )
    print(f"rlcat runs as: {rlcat_how}")
    print(f"hydra composes: {spec['config_dir']} ({len(spec['overrides'])} overrides incl. search path)")

    samples, wall = measure(commands, args)
    imports = import_check(args)
    itimes = import_times(args) if args.importtime else None

    med = {k: median_ms(v) for k, v in samples.items()}
    rlcat_vs_python = med["rlcat"] / med["python"]
    hydra_vs_rlcat = med["hydra"] / med["rlcat"]
    checks = {
        f"rlcat <= {BUDGET_MS:.0f} ms": med["rlcat"] <= BUDGET_MS,
        f"hydra >= {BUDGET_VS_HYDRA:.1f}x rlcat": hydra_vs_rlcat >= BUDGET_VS_HYDRA,
        f"compile imports none of {', '.join(HEAVY)}": not imports["heavy"] and imports["rc"] == 0,
    }

    print_report(args, samples, wall, imports=imports, itimes=itimes)
    ok = all(checks.values())
    print("\nbudgets: " + ("all PASS" if ok else "FAIL: " + "; ".join(k for k, v in checks.items() if not v)))
    write_json(
        args.json_path,
        {
            "benchmark": "cold_compile",
            "machine": machine(),
            "argv": sys.argv,
            "recipe": args.recipe,
            "platform": args.platform,
            "verl_version": spec["version"],
            "config_name": spec["config_name"],
            "overrides": len(plan["overrides"]),
            "rlcat_command": rlcat_how,
            "repeat": args.repeat,
            "wall_s": wall,
            "median_ms": med,
            "samples_ms": {k: [s * 1000 for s in v] for k, v in samples.items()},
            "rlcat_vs_python": rlcat_vs_python,
            "hydra_vs_rlcat": hydra_vs_rlcat,
            "budgets": {
                "rlcat_ms": BUDGET_MS,
                "hydra_vs_rlcat_min": BUDGET_VS_HYDRA,
            },
            "checks": checks,
            "pass": ok,
            "imports": imports,
            "importtime": itimes,
        },
    )
    return 1 if args.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())

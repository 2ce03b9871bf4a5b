"""The command line: parse options, call the library, render, return an exit code.

`main(argv)` runs in-process (tests use it); `run()` is the console script. Heavy modules (Hydra,
rich tables) are imported inside the commands that need them, so `rlcat compile` stays fast.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from .cli_common import catalog_for, compile_command, exit_code_of, write_output
from .diagnostics import Diagnostic, ExitCode, RlcatError, Severity
from .docsite.cli import docs_app

app = typer.Typer(
    name="rlcat",
    help="Typed verl RL recipes compiled into validated launch plans for NVIDIA, AMD and Ascend.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    epilog="""Examples:

  rlcat list

  rlcat compile geo3k_megatron_4_4 --platform rocm

  rlcat show dapo_math_fsdp2_4_4
""",
)
dev_app = typer.Typer(
    help="Maintainer commands: fetch verl's config trees and regenerate generated files.",
    no_args_is_help=True,
    epilog="""Examples:

  rlcat dev fetch-verl

  rlcat dev verl-index --check

  rlcat dev schemas --check
""",
)
app.add_typer(dev_app, name="dev")
app.add_typer(docs_app, name="docs")

CatalogOpt = Annotated[
    Optional[list[Path]],  # noqa: UP045 - typer reads the annotation at runtime on Python 3.10
    # readable=False: cli_common.catalog_for checks the folders, for this CLI and the quick compile alike
    typer.Option(
        "--catalog", readable=False, help="Extra catalog folder (repeatable); RLCAT_PATH also adds folders."
    ),
]


@app.command(
    "compile",
    epilog="""Examples:

  rlcat compile geo3k_megatron_4_4 --platform rocm

  rlcat compile dapo_math_fsdp2_4_4 --platform cuda --engine sglang --format shell -o launch.sh

  rlcat compile my_recipes/run.yaml --platform rocm --set batch.mini_batch_size=64 --format json
""",
)
def compile_cmd(
    recipe: Annotated[str, typer.Argument(help="Recipe name from the catalog, or a path to a recipe file.")],
    platform: Annotated[
        str, typer.Option("--platform", "-p", help="Platform profile: cuda, rocm, ...")
    ] = "cuda",
    engine: Annotated[
        str | None, typer.Option(help="Rollout engine (vllm, sglang), if the recipe allows it.")
    ] = None,
    mode: Annotated[
        str | None, typer.Option(help="Runtime mode (colocate, fully_async), if allowed.")
    ] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", help="Change a recipe field: section.field=value (repeatable)."),
    ] = None,
    override: Annotated[
        list[str] | None,
        typer.Option(help="Set a verl key: verl.key=value (repeatable; checked against the key index)."),
    ] = None,
    fmt: Annotated[str, typer.Option("--format", "-f", help="overrides | shell | json | yaml")] = "overrides",
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", readable=False, help="Write to this file instead of stdout."),
    ] = None,
    explain: Annotated[
        bool, typer.Option("--explain", help="Annotate every override and env var with its origin.")
    ] = False,
    catalog: CatalogOpt = None,
) -> None:
    """Compile a recipe into the entrypoint, config, overrides and env that launch it on verl."""
    compile_command(
        recipe,
        platform=platform,
        engine=engine,
        mode=mode,
        sets=set_,
        overrides=override,
        fmt=fmt,
        output=output,
        explain=explain,
        catalog=catalog,
    )


@app.command(
    "list",
    epilog="""Examples:

  rlcat list

  rlcat list --backend megatron --mode fully_async

  rlcat list --format json
""",
)
def list_cmd(
    algorithm: Annotated[Optional[str], typer.Option(help="Only this algorithm.")] = None,  # noqa: UP045
    backend: Annotated[Optional[str], typer.Option(help="Only this backend.")] = None,  # noqa: UP045
    engine: Annotated[Optional[str], typer.Option(help="Only recipes that allow this engine.")] = None,  # noqa: UP045
    mode: Annotated[Optional[str], typer.Option(help="Only this mode.")] = None,  # noqa: UP045
    fmt: Annotated[str, typer.Option("--format", "-f", help="table | json")] = "table",
    catalog: CatalogOpt = None,
) -> None:
    """List the recipes in the catalog."""
    from .listing import list_recipes, render_list

    rows = list_recipes(catalog_for(catalog), algorithm=algorithm, backend=backend, engine=engine, mode=mode)
    write_output(render_list(rows, fmt), None)


@app.command(
    "show",
    epilog="""Examples:

  rlcat show geo3k_megatron_4_4

  rlcat show gsm8k_qwen3_8b_fsdp --platform rocm
""",
)
def show_cmd(
    recipe: Annotated[str, typer.Argument(help="Recipe name or path.")],
    platform: Annotated[
        str | None, typer.Option(help="Also merge this platform's block of the recipe.")
    ] = None,
    catalog: CatalogOpt = None,
) -> None:
    """Show a recipe resolved: extends merged, defaults filled in, catalog entries looked up."""
    from .listing import show_recipe

    write_output(show_recipe(recipe, catalog_for(catalog), platform), None)


@app.command(
    "explain",
    epilog="""Examples:

  rlcat explain geo3k_megatron_4_4 actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu --platform rocm

  rlcat explain dapo_math_fsdp2_4_4 SGLANG_ATTENTION_BACKEND --platform rocm --engine sglang
""",
)
def explain_cmd(
    recipe: Annotated[str, typer.Argument(help="Recipe name or path.")],
    key: Annotated[str, typer.Argument(help="A verl key (dotted) or an environment variable.")],
    platform: Annotated[str, typer.Option("--platform", "-p", help="Platform profile.")] = "cuda",
    engine: Annotated[str | None, typer.Option(help="Rollout engine, if the recipe allows it.")] = None,
    mode: Annotated[str | None, typer.Option(help="Runtime mode, if the recipe allows it.")] = None,
    set_: Annotated[
        list[str] | None, typer.Option("--set", help="Change a recipe field (repeatable).")
    ] = None,
    override: Annotated[list[str] | None, typer.Option(help="Set a verl key (repeatable).")] = None,
    catalog: CatalogOpt = None,
) -> None:
    """Show the final value of a key and every layer that set it, in order: verl default, recipe, mode,
    platform profile, recipe platform block, guard, command line."""
    from .compile import Request, compile_request
    from .explain import explain_key

    compiled = compile_request(
        Request(recipe, platform, engine, mode, None, list(set_ or []), list(override or [])),
        catalog_for(catalog),
    )
    write_output(explain_key(compiled, key), None)


@app.command(
    "diff",
    epilog="""Examples:

  rlcat diff geo3k_megatron_4_4 --platform cuda --against rocm

  rlcat diff gsm8k_qwen3_8b_fsdp gsm8k_qwen3_8b_megatron --platform rocm

  rlcat diff dapo_math_fsdp2_4_4 --platform rocm --against rocm-7.0.2 --format json
""",
)
def diff_cmd(
    recipe: Annotated[str, typer.Argument(help="Recipe name or path (the left side).")],
    other: Annotated[
        str | None, typer.Argument(help="A second recipe (the right side); or use --against.")
    ] = None,
    platform: Annotated[str, typer.Option("--platform", "-p", help="Platform of the left side.")] = "cuda",
    against: Annotated[
        str | None, typer.Option(help="Platform of the right side (default: --platform).")
    ] = None,
    engine: Annotated[str | None, typer.Option(help="Rollout engine for both sides.")] = None,
    fmt: Annotated[str, typer.Option("--format", "-f", help="text | json")] = "text",
    catalog: CatalogOpt = None,
) -> None:
    """Show added, removed and changed settings between two recipes or two platforms, with origins."""
    from .compile import Request, compile_request
    from .survey import diff, render_diff

    if other is None and against is None:
        raise RlcatError(
            [
                Diagnostic(
                    "RLC105",
                    "give a second recipe or --against PLATFORM",
                    hint="rlcat diff geo3k_megatron_4_4 --platform cuda --against rocm",
                )
            ]
        )
    if fmt not in ("text", "json"):
        raise RlcatError([Diagnostic("RLC105", f"--format must be text or json; got '{fmt}'")])
    right_recipe, right_platform = other or recipe, against or platform
    cat = catalog_for(catalog)
    a = compile_request(Request(recipe, platform, engine), cat)
    b = compile_request(Request(right_recipe, right_platform, engine), cat)
    labels = (f"{recipe} on {platform}", f"{right_recipe} on {right_platform}")
    write_output(render_diff(diff(a, b), *labels, fmt), None)


@app.command(
    "matrix",
    epilog="""Examples:

  rlcat matrix geo3k_megatron_4_4

  rlcat matrix dapo_math_fsdp2_4_4 --platform rocm --format json
""",
)
def matrix_cmd(
    recipe: Annotated[str, typer.Argument(help="Recipe name or path.")],
    platform: Annotated[
        list[str] | None, typer.Option("--platform", "-p", help="Only these platforms (repeatable).")
    ] = None,
    fmt: Annotated[str, typer.Option("--format", "-f", help="table | json")] = "table",
    catalog: CatalogOpt = None,
) -> None:
    """Compile every mode × engine × backend cell the recipe allows on every platform: whether it
    compiles, the guards that fire, and the platform's support status."""
    from .survey import matrix, render_matrix

    if fmt not in ("table", "json"):
        raise RlcatError([Diagnostic("RLC105", f"--format must be table or json; got '{fmt}'")])
    write_output(render_matrix(matrix(recipe, catalog_for(catalog), list(platform or []) or None), fmt), None)


@app.command(
    "guards",
    epilog="""Examples:

  rlcat guards

  rlcat guards --platform rocm --format json

  rlcat guards RLC501
""",
)
def guards_cmd(
    guard_id: Annotated[str | None, typer.Argument(help="Show this guard's docs.")] = None,
    platform: Annotated[
        str | None, typer.Option("--platform", "-p", help="Only guards that can apply here.")
    ] = None,
    fmt: Annotated[str, typer.Option("--format", "-f", help="table | json")] = "table",
    catalog: CatalogOpt = None,
) -> None:
    """List the known-issue guards, or show one guard's docs."""
    from .guards_cli import guard_docs, list_guards

    if guard_id is not None:
        write_output(guard_docs(guard_id), None)
        return
    if fmt not in ("table", "json"):
        raise RlcatError([Diagnostic("RLC105", f"--format must be table or json; got '{fmt}'")])
    write_output(list_guards(platform, fmt, catalog_for(catalog)), None)


@app.command(
    "validate",
    epilog="""Examples:

  rlcat validate

  rlcat validate my_recipes/run.yaml --format github

  rlcat validate my_recipes/run.yaml --platform rocm --strict
""",
)
def validate_cmd(
    paths: Annotated[
        list[Path] | None, typer.Argument(help="Files or folders (recursive). Default: the catalog.")
    ] = None,
    platform: Annotated[
        list[str] | None,
        typer.Option("--platform", "-p", help="Check recipes on these platforms only (repeatable)."),
    ] = None,
    fmt: Annotated[str, typer.Option("--format", "-f", help="text | json | github | sarif")] = "text",
    strict: Annotated[bool, typer.Option("--strict", help="Warnings fail the check too.")] = False,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the report to this file.")
    ] = None,
    catalog: CatalogOpt = None,
) -> None:
    """Check recipe and catalog files: YAML, schema, references, compile on every target platform,
    guards and verl keys. Exit 0 clean (warnings allowed unless --strict), 1 findings, 2 usage."""
    from .paths import builtin_root
    from .reporters import REPORTERS
    from .validate import UNREADABLE, roots_for, validate_paths

    if fmt not in REPORTERS:
        raise RlcatError(
            [Diagnostic("RLC105", f"--format must be one of {', '.join(REPORTERS)}; got '{fmt}'")]
        )
    targets = list(paths or [])
    if not targets:
        root = builtin_root()
        targets = [root / "recipes", root / "catalog"]
    cat = catalog_for([*(catalog or []), *roots_for(targets)])
    for name in platform or []:
        cat.find("platform", name, key="--platform")  # an unknown platform is a usage error
    report = validate_paths(targets, cat, list(platform or []) or None)
    write_output(REPORTERS[fmt](report.diagnostics, report.files), output)
    if any(d.code in UNREADABLE and d.severity >= Severity.ERROR for d in report.diagnostics):
        raise typer.Exit(int(ExitCode.INPUT))
    failing = Severity.WARNING if strict else Severity.ERROR
    if any(d.severity >= failing for d in report.diagnostics):
        raise typer.Exit(int(ExitCode.FINDINGS))


@dev_app.command(
    "verl-index",
    epilog="""Examples:

  rlcat dev verl-index --check
""",
)
def dev_verl_index(
    check: Annotated[
        bool, typer.Option("--check", help="Fail if the stored indexes are stale; write nothing.")
    ] = False,
) -> None:
    """Regenerate schemas/verl/ from the real verl releases (needs `rlcat dev fetch-verl` first)."""
    from .verl import build_index

    try:
        code = build_index.main(["--check"] if check else [])
    except FileNotFoundError as exc:  # no checkout to write into, or verl trees not fetched
        raise RlcatError(
            [
                Diagnostic(
                    "RLC105", str(exc), hint="run it from a checkout of rlcat after `rlcat dev fetch-verl`"
                )
            ]
        ) from None
    if code:
        raise typer.Exit(code)


@dev_app.command(
    "schemas",
    epilog="""Examples:

  rlcat dev schemas --check
""",
)
def dev_schemas(
    check: Annotated[
        bool, typer.Option("--check", help="Fail if a generated file is stale; write nothing.")
    ] = False,
) -> None:
    """Regenerate the JSON Schemas under schemas/ and the plain classes from the pydantic models."""
    from . import schemas
    from .paths import repo_root

    root = repo_root()
    if root is None:
        raise RlcatError([Diagnostic("RLC105", "rlcat dev schemas runs from a checkout of rlcat")])
    stale = schemas.write(root, check=check)
    for rel in stale:
        sys.stdout.write(f"{'stale' if check else 'wrote'}: {rel}\n")
    if check and stale:
        sys.stderr.write("run `rlcat dev schemas` to regenerate them\n")
        raise typer.Exit(int(ExitCode.FINDINGS))


@dev_app.command(
    "fetch-verl",
    epilog="""Examples:

  rlcat dev fetch-verl
""",
)
def dev_fetch_verl() -> None:
    """Install verl's releases (YAML config trees only, --no-deps) into .verl/ for tests and generators."""
    from .verl import trees

    for path in trees.fetch(list(trees.VERL_VERSIONS), quiet=True):
        sys.stdout.write(f"{path}\n")
    # wheels for the pre-commit test, which installs the hook in a fresh virtualenv offline
    from . import devdata

    sys.stdout.write(f"{devdata.fetch_wheelhouse(quiet=True)}\n")


def main(argv: list[str] | None = None) -> int:
    """Run the CLI in-process and return its exit code (diagnostics.ExitCode)."""
    args = list(sys.argv[1:] if argv is None else argv)
    return exit_code_of(lambda: _run_app(args))


def _run_app(args: list[str]) -> int:
    try:
        returned = app(args=args, prog_name="rlcat", standalone_mode=False)
    except typer.Exit as exc:
        if exc.exit_code == ExitCode.INTERRUPTED:  # Typer's own Ctrl-C handling: say it as we do
            raise KeyboardInterrupt from None
        return int(exc.exit_code)
    except typer.Abort:
        raise KeyboardInterrupt from None
    except Exception as exc:
        # Usage errors (bad option, missing argument) from the click layer that Typer uses; matched
        # by shape because Typer releases differ in whether click is vendored.
        show = getattr(exc, "show", None)
        if callable(show) and hasattr(exc, "exit_code"):
            show()
            return int(ExitCode.INPUT)
        raise
    # click hands back typer.Exit codes in non-standalone mode
    return returned if isinstance(returned, int) else int(ExitCode.OK)


def run() -> None:
    sys.exit(main())


if __name__ == "__main__":  # `python -m rlcat.cli` (the console script is rlcat.entry:run)
    run()

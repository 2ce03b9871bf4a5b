"""The command line: parse options, call the library, render, return an exit code.

`main(argv)` runs in-process (tests use it); `run()` is the console script. Heavy modules (Hydra,
rich tables) are imported inside the commands that need them, so `rlcat compile` stays fast.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Annotated, Optional

import typer

from .diagnostics import Diagnostic, ExitCode, RlcatError, Severity

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

CatalogOpt = Annotated[
    Optional[list[Path]],  # noqa: UP045 - typer reads the annotation at runtime on Python 3.10
    typer.Option("--catalog", help="Extra catalog folder (repeatable); RLCAT_PATH also adds folders."),
]


def _catalog(extra: list[Path] | None):  # type: ignore[no-untyped-def]
    from .catalog import Catalog

    return Catalog.default(extra)


def _print_diagnostics(diagnostics: list[Diagnostic]) -> None:
    for d in diagnostics:
        sys.stderr.write(d.render() + "\n")


# files this process wrote (path → text), so that a cached compile can write them again
written_files: dict[str, str] = {}


def _write_output(text: str, output: Path | None) -> None:
    """Print, or write the file atomically so that a failure never leaves a partial file."""
    if output is None:
        sys.stdout.write(text)
        return
    written_files[str(output.resolve())] = text
    output.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=output.parent, prefix=f".{output.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        os.replace(tmp, output)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


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
        Path | None, typer.Option("--output", "-o", help="Write to this file instead of stdout.")
    ] = None,
    catalog: CatalogOpt = None,
) -> None:
    """Compile a recipe into the entrypoint, config, overrides and env that launch it on verl."""
    from .compile import Request, compile_request
    from .emit.formats import FORMATS

    if fmt not in FORMATS:
        raise RlcatError([Diagnostic("RLC105", f"--format must be one of {', '.join(FORMATS)}; got '{fmt}'")])
    compiled = compile_request(
        Request(recipe, platform, engine, mode, None, list(set_ or []), list(override or [])),
        _catalog(catalog),
    )
    notes = [d for d in compiled.diagnostics if d.severity < Severity.ERROR]
    _print_diagnostics(notes)
    _write_output(FORMATS[fmt](compiled), output)


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

    rows = list_recipes(_catalog(catalog), algorithm=algorithm, backend=backend, engine=engine, mode=mode)
    sys.stdout.write(render_list(rows, fmt))


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

    sys.stdout.write(show_recipe(recipe, _catalog(catalog), platform))


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

    code = build_index.main(["--check"] if check else [])
    if code:
        raise typer.Exit(code)


@dev_app.command(
    "schemas",
    epilog="""Examples:

  rlcat dev schemas --check
""",
)
def dev_schemas(
    check: Annotated[bool, typer.Option("--check", help="Fail if schemas/ is stale; write nothing.")] = False,
) -> None:
    """Regenerate the JSON Schemas under schemas/ from the pydantic models."""
    from . import schemas
    from .paths import repo_root

    root = repo_root()
    if root is None:
        raise RlcatError([Diagnostic("RLC105", "rlcat dev schemas runs from a checkout of rlcat")])
    stale = schemas.write(root / "schemas", check=check)
    for name in stale:
        sys.stdout.write(f"{'stale' if check else 'wrote'}: schemas/{name}\n")
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


def main(argv: list[str] | None = None) -> int:
    """Run the CLI in-process and return its exit code (0 ok, 1 findings, 2 usage/input, 130 Ctrl-C)."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        app(args=args, prog_name="rlcat", standalone_mode=False)
    except RlcatError as exc:
        _print_diagnostics(exc.diagnostics)
        return int(exc.exit_code)
    except typer.Exit as exc:
        return int(exc.exit_code)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return int(ExitCode.INTERRUPTED)
    except Exception as exc:  # usage errors and crashes
        return _unexpected(exc)
    return int(ExitCode.OK)


def _unexpected(exc: Exception) -> int:
    if isinstance(exc, typer.Abort):
        sys.stderr.write("interrupted\n")
        return int(ExitCode.INTERRUPTED)
    # Usage errors (bad option, missing argument) from the click layer that Typer uses; matched by
    # shape because Typer releases differ in whether click is vendored.
    show = getattr(exc, "show", None)
    if callable(show) and hasattr(exc, "exit_code"):
        show()
        return int(ExitCode.INPUT)
    if os.environ.get("RLCAT_TRACEBACK"):
        raise exc
    import traceback

    log = Path(tempfile.gettempdir()) / "rlcat-crash.log"
    log.write_text("".join(traceback.format_exception(exc)), encoding="utf-8")
    sys.stderr.write(
        f"rlcat: internal error: {type(exc).__name__}: {exc}\n"
        f"The traceback is in {log}; set RLCAT_TRACEBACK=1 to print it.\n"
    )
    return 3


def run() -> None:
    sys.exit(main())


if __name__ == "__main__":  # `python -m rlcat.cli` (the console script is rlcat.entry:run)
    run()

"""What the Typer CLI (cli.py) and the quick `rlcat compile` entry (entry.py) share: the compile
command itself, catalog folders from --catalog, diagnostics on stderr, atomic output files, and the
exit code of every way a command can end. Nothing here imports Typer, rich or pydantic.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from .catalog import Catalog
from .diagnostics import Diagnostic, ExitCode, RlcatError, Severity, diag
from .files import atomic_write


def catalog_for(extra: list[Path] | None) -> Catalog:
    """The catalog with the --catalog folders (and RLCAT_PATH) in front of the built-in one."""
    for folder in extra or []:
        if not folder.is_dir():
            raise RlcatError([diag("RLC001", f"--catalog {folder}: no such folder", file=str(folder))])
    catalog = Catalog.default(extra)
    for root in catalog.roots:
        if root.is_dir() and not os.access(root, os.R_OK | os.X_OK):
            raise RlcatError([diag("RLC001", f"catalog folder {root}: permission denied", file=str(root))])
    return catalog


class OutputClosed(Exception):
    """The reader of stdout or stderr went away. Not an OSError, so that click (under Typer) passes
    it on instead of exiting with its own code."""


def _emit(stream: TextIO, text: str) -> None:
    try:
        stream.write(text)
        stream.flush()
    except BrokenPipeError:
        raise OutputClosed from None


def print_diagnostics(diagnostics: list[Diagnostic]) -> None:
    _emit(sys.stderr, "".join(d.render() + "\n" for d in diagnostics))


def write_output(text: str, output: Path | None) -> None:
    """Print, or write the file atomically so that a failure never leaves a partial file."""
    if output is None:
        _emit(sys.stdout, text)
        return
    if output.is_dir():
        raise RlcatError([Diagnostic("RLC105", f"-o {output}: is a directory; name a file")])
    try:
        atomic_write(output, text)
    except OSError as exc:
        raise RlcatError(
            [Diagnostic("RLC105", f"-o {output}: cannot write there ({exc.strerror or exc})")]
        ) from None


def compile_command(
    recipe: str,
    *,
    platform: str = "cuda",
    engine: str | None = None,
    mode: str | None = None,
    sets: list[str] | None = None,
    overrides: list[str] | None = None,
    fmt: str = "overrides",
    output: Path | None = None,
    explain: bool = False,
    catalog: list[Path] | None = None,
) -> None:
    """`rlcat compile`: compile, print the notes, write the plan in the chosen format."""
    from .compile import Request, compile_request
    from .emit.formats import FORMATS

    if fmt not in FORMATS:
        raise RlcatError([Diagnostic("RLC105", f"--format must be one of {', '.join(FORMATS)}; got '{fmt}'")])
    compiled = compile_request(
        Request(recipe, platform, engine, mode, None, list(sets or []), list(overrides or [])),
        catalog_for(catalog),
    )
    print_diagnostics([d for d in compiled.diagnostics if d.severity < Severity.ERROR])
    if explain:
        from .explain import annotated_overrides, origins_json

        if fmt == "overrides":
            text = annotated_overrides(compiled)
        elif fmt == "json":
            import json

            data = json.loads(FORMATS["json"](compiled))
            data["origins"] = json.loads(origins_json(compiled))
            text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
        else:
            raise RlcatError(
                [
                    Diagnostic(
                        "RLC105",
                        "--explain works with --format overrides or json; a shell "
                        "script or YAML file has no room for annotations",
                    )
                ]
            )
    else:
        text = FORMATS[fmt](compiled)
    write_output(text, output)


def exit_code_of(command: Callable[[], int | None]) -> int:
    """Run a command and turn however it ends into its documented exit code (ExitCode): findings and
    bad input are printed as diagnostics, a crash is logged to a file instead of a traceback."""
    try:
        try:
            return command() or int(ExitCode.OK)
        except RlcatError as exc:
            print_diagnostics(exc.diagnostics)
            return int(exc.exit_code)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return int(ExitCode.INTERRUPTED)
    except (BrokenPipeError, OutputClosed):
        _quiet_closed_streams()
        return int(ExitCode.BROKEN_PIPE)
    except Exception as exc:
        return _crashed(exc)


def _quiet_closed_streams() -> None:
    """Point a stream whose reader went away at devnull, so that the flush at exit cannot fail
    again; a stream that still works keeps what was written to it."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except OSError:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, stream.fileno())
            os.close(devnull)


def _crashed(exc: Exception) -> int:
    if os.environ.get("RLCAT_TRACEBACK"):
        raise exc
    import tempfile
    import traceback

    # a fresh file each time: a fixed name could belong to another user or another run
    fd, log = tempfile.mkstemp(prefix="rlcat-crash-", suffix=".log")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write("".join(traceback.format_exception(exc)))
    sys.stderr.write(
        f"rlcat: internal error: {type(exc).__name__}: {exc}\n"
        f"The traceback is in {log}; set RLCAT_TRACEBACK=1 to print it.\n"
    )
    return int(ExitCode.INTERNAL)

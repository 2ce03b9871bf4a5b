"""The Typer app, and how every way a command can end becomes its documented exit code.

`main(argv)` runs the command line in-process and returns the exit code (tests use it); `run()` is
the console script. The commands register themselves on `app` from their own modules.
"""

from __future__ import annotations

import os
import sys
import tempfile
import traceback
from collections.abc import Callable

import typer

from rlcat.cli.common import OutputClosed, print_diagnostics
from rlcat.diagnostics import ExitCode, RlcatError

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


def command_tree() -> typer.core.TyperGroup:
    """The command tree Typer builds from `app` (the CLI reference page is generated from it)."""
    tree = typer.main.get_command(app)
    assert isinstance(tree, typer.core.TyperGroup)
    return tree


def main(argv: list[str] | None = None) -> int:
    """Run the CLI in-process and return its exit code (diagnostics.ExitCode)."""
    args = list(sys.argv[1:] if argv is None else argv)
    return exit_code_of(lambda: _run_app(args))


def run() -> None:
    sys.exit(main())


def _run_app(args: list[str]) -> int:
    try:
        returned = app(args=args, prog_name="rlcat", standalone_mode=False)
    except typer.Exit as exc:
        if exc.exit_code == ExitCode.INTERRUPTED:  # Typer's own Ctrl-C handling: say it as we do
            raise KeyboardInterrupt from None
        return int(exc.exit_code)
    except typer.Abort:
        raise KeyboardInterrupt from None
    except typer.TyperException as exc:  # a usage error: unknown option, bad value, missing argument
        show = getattr(exc, "show", None)
        if show is None:
            raise
        show()
        return int(ExitCode.INPUT)
    # in non-standalone mode Typer hands back the code of a typer.Exit raised inside a command
    return returned if isinstance(returned, int) else int(ExitCode.OK)


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
    # a fresh file each time: a fixed name could belong to another user or another run
    fd, log = tempfile.mkstemp(prefix="rlcat-crash-", suffix=".log")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write("".join(traceback.format_exception(exc)))
    sys.stderr.write(
        f"rlcat: internal error: {type(exc).__name__}: {exc}\n"
        f"The traceback is in {log}; set RLCAT_TRACEBACK=1 to print it.\n"
    )
    return int(ExitCode.INTERNAL)

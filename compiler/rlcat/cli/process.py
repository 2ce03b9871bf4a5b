"""The process around a command: how it starts (the console script) and how every way a command
can end becomes its documented exit code. Every command is a Typer command (cli/app.py); this module
imports no Typer, so that `import rlcat.cli` stays cheap.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from types import FrameType

from rlcat.diagnostics import ExitCode, RlcatError


def main(argv: list[str] | None = None) -> int:
    """Run the CLI in-process and return its exit code (diagnostics.ExitCode)."""
    args = list(sys.argv[1:] if argv is None else argv)
    from rlcat.cli.app import run_app  # Typer and the command registry: not for `import rlcat.cli`

    return exit_code_of(lambda: run_app(args))


class Terminated(BaseException):
    """SIGTERM arrived; `run()` turns the signal into this exception. A BaseException, as
    KeyboardInterrupt is, so that no `except Exception` stops it and every clean-up on the way out
    runs (atomic_write removes its temporary file), as for Ctrl-C."""


def run() -> None:
    """The console script (`rlcat`, `python -m rlcat`): main() and what only a whole process owns,
    its signals and its standard streams (tests call main() in-process and keep theirs)."""
    _hold_closed_std_streams()
    signal.signal(signal.SIGTERM, _raise_terminated)
    sys.exit(main())


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    # later SIGTERMs are ignored so that they cannot cut the clean-up short; SIGKILL still ends it
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise Terminated


def _hold_closed_std_streams() -> None:
    """A stream closed when rlcat starts (`rlcat ... >&-`) is None in Python, and its descriptor
    would go to the next file rlcat opens. Hold the descriptor with /dev/null opened read-only:
    every write to it fails (EBADF) as on a closed descriptor, so the lost output is reported as a
    reader that went away (exit 141), and no file of rlcat's ever lands on fd 1 or 2."""
    for fd, name in ((1, "stdout"), (2, "stderr")):
        if getattr(sys, name) is not None:
            continue
        held = os.open(os.devnull, os.O_RDONLY)
        if held != fd:
            os.dup2(held, fd)
            os.close(held)
        setattr(sys, name, open(fd, "w", encoding="utf-8", closefd=False))  # noqa: SIM115 - for the whole run


def exit_code_of(command: Callable[[], int | None]) -> int:
    """Run a command and turn however it ends into its documented exit code (ExitCode): findings and
    bad input are printed as diagnostics, a crash is logged to a file instead of a traceback."""
    try:
        try:
            return command() or int(ExitCode.OK)
        except RlcatError as exc:
            from rlcat.cli.report import print_diagnostics  # the commands' module: loaded with a command

            print_diagnostics(exc.diagnostics)
            return int(exc.exit_code)
    except RlcatError as exc:  # stderr failed while reporting (RLC106): nowhere left to say so
        return int(exc.exit_code)
    except KeyboardInterrupt:
        _tell("interrupted")
        return int(ExitCode.INTERRUPTED)
    except Terminated:
        _tell("terminated")
        return int(ExitCode.TERMINATED)
    except BrokenPipeError:
        return int(ExitCode.BROKEN_PIPE)
    except Exception as exc:
        return int(ExitCode.BROKEN_PIPE) if _output_closed(exc) else _crashed(exc)
    finally:
        # output a failed write left in a buffer must not fail again, unseen, at interpreter exit
        _quiet_closed_streams()


def _output_closed(exc: Exception) -> bool:
    # cli.report raises OutputClosed: imported here, as it is with any command, not at start-up
    from rlcat.cli.report import OutputClosed

    return isinstance(exc, OutputClosed)


def _tell(text: str) -> None:
    """A last word on stderr, if stderr still works."""
    try:
        sys.stderr.write(text + "\n")
        sys.stderr.flush()
    except OSError:
        pass


def _quiet_closed_streams() -> None:
    """Point a stream whose reader went away at devnull, so that the flush at exit cannot fail
    again; a stream that still works keeps what was written to it."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # ValueError: the stream was closed
            devnull = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(devnull, stream.fileno())
            except (OSError, ValueError):
                pass  # a stream without a descriptor of its own: nothing is flushed to it at exit
            finally:
                os.close(devnull)


def _crashed(exc: Exception) -> int:
    if os.environ.get("RLCAT_TRACEBACK"):
        raise exc
    # imported here: only a crash needs them, and every start would pay for them
    import tempfile
    import traceback

    # a fresh file each time: a fixed name could belong to another user or another run
    fd, log = tempfile.mkstemp(prefix="rlcat-crash-", suffix=".log")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write("".join(traceback.format_exception(exc)))
    _tell(
        f"rlcat: internal error: {type(exc).__name__}: {exc}\n"
        f"The traceback is in {log}; set RLCAT_TRACEBACK=1 to print it."
    )
    return int(ExitCode.INTERNAL)

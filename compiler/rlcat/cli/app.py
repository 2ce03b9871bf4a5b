"""The Typer app, and how every way a command can end becomes its documented exit code.

`main(argv)` runs the command line in-process and returns the exit code (tests use it); `run()` is
the console script. The commands register themselves on `app` from their own modules, which are
imported only when their command is looked up (COMMAND_MODULES).
"""

from __future__ import annotations

import importlib
import io
import os
import signal
import sys
import tempfile
import traceback
from collections.abc import Callable, Iterator, MutableMapping
from functools import cache
from types import FrameType
from typing import TYPE_CHECKING

import typer
from typer.core import TyperGroup

if TYPE_CHECKING:
    from typer._click.core import Command  # the click Typer vendors: what a group's commands are

from rlcat.diagnostics import ExitCode, RlcatError

# Every command, in the order --help lists them, and the module that registers it. A module is
# imported when its command is looked up (run, or listed by --help), not at start-up: importing
# all of them (pydantic models, the compile pipeline, launch, docs) was most of a short command's
# start-up (bench/lint_scripts.py).
COMMAND_MODULES: dict[str, str] = {
    "compile": "rlcat.cli.compile",
    "launch": "rlcat.cli.launch",
    "import": "rlcat.cli.import_cmd",
    "list": "rlcat.cli.list",
    "show": "rlcat.cli.show",
    "explain": "rlcat.cli.explain",
    "diff": "rlcat.cli.diff",
    "matrix": "rlcat.cli.matrix",
    "guards": "rlcat.cli.guards",
    "validate": "rlcat.cli.validate",
    "lint": "rlcat.cli.lint",
    "results": "rlcat.cli.results",
    "init": "rlcat.cli.init",
    "new": "rlcat.cli.new",
    "config": "rlcat.cli.config",
    "runs": "rlcat.cli.runs",
    "schemas": "rlcat.cli.schemas",
    "dev": "rlcat.cli.dev",
    "docs": "rlcat.cli.docs",
}


class LazyCommands(MutableMapping[str, "Command"]):
    """The root group's commands: every name of COMMAND_MODULES, each built from its module when
    first looked up. Click reads `.commands` for --help, suggestions and dispatch alike, so each
    sees every command, in order, and only the commands it touches are imported."""

    def __init__(self) -> None:
        self._built: dict[str, Command] = {}

    def __getitem__(self, name: str) -> Command:
        if name not in self._built:
            if name not in COMMAND_MODULES:
                raise KeyError(name)
            importlib.import_module(COMMAND_MODULES[name])
            self._built[name] = _registered(name)
        return self._built[name]

    def __setitem__(self, name: str, command: Command) -> None:
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        del self._built[name]

    def __iter__(self) -> Iterator[str]:
        yield from COMMAND_MODULES
        yield from (name for name in self._built if name not in COMMAND_MODULES)

    def __len__(self) -> int:
        return len(COMMAND_MODULES) + sum(name not in COMMAND_MODULES for name in self._built)


class LazyGroup(TyperGroup):
    """The root command group, its commands a LazyCommands (click's "lazy loading subcommands")."""

    def __init__(self, **attrs: object) -> None:
        attrs.pop("commands", None)  # those registered so far: LazyCommands builds each on demand
        super().__init__(**attrs)  # type: ignore[arg-type]
        self.commands = LazyCommands()


def _registered(name: str) -> Command:
    """The click command Typer builds for `name`, which its module registered on `app`."""
    for info in app.registered_commands:
        assert info.callback is not None
        if (info.name or typer.main.get_command_name(info.callback.__name__)) == name:
            return typer.main.get_command_from_info(
                info,
                pretty_exceptions_short=app.pretty_exceptions_short,
                rich_markup_mode=app.rich_markup_mode,
            )
    for group in app.registered_groups:
        if group.name == name:
            return typer.main.get_group_from_info(
                group,
                pretty_exceptions_short=app.pretty_exceptions_short,
                suggest_commands=app.suggest_commands,
                rich_markup_mode=app.rich_markup_mode,
            )
    raise LookupError(f"{COMMAND_MODULES[name]} registers no command '{name}'")


app = typer.Typer(
    name="rlcat",
    cls=LazyGroup,
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


@cache
def root_group() -> TyperGroup:
    """The root command group, built once per process: its commands are built as they are looked up."""
    return typer.main.get_group(app)


def command_tree() -> TyperGroup:
    """The whole command tree, every command built (the CLI reference page is generated from it)."""
    tree = root_group()
    for name in tree.commands:
        tree.commands[name]
    return tree


def main(argv: list[str] | None = None) -> int:
    """Run the CLI in-process and return its exit code (diagnostics.ExitCode)."""
    args = list(sys.argv[1:] if argv is None else argv)
    return exit_code_of(lambda: _run_app(args))


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


def _run_app(args: list[str]) -> int:
    try:
        returned = root_group()(args=args, prog_name="rlcat", standalone_mode=False)
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
        # Typer repeats the offending argument as it was given: shown escaped, like every message
        usage = io.StringIO()
        show(file=usage)
        from rlcat.cli.common import print_escaped  # the commands' module: loaded with a command

        print_escaped(usage.getvalue())
        return int(ExitCode.INPUT)
    # in non-standalone mode Typer hands back the code of a typer.Exit raised inside a command, and
    # the 130 it makes of a Ctrl-C there (no command returns 130 itself): say that one as we do
    if returned == ExitCode.INTERRUPTED:
        raise KeyboardInterrupt
    return returned if isinstance(returned, int) else int(ExitCode.OK)


def exit_code_of(command: Callable[[], int | None]) -> int:
    """Run a command and turn however it ends into its documented exit code (ExitCode): findings and
    bad input are printed as diagnostics, a crash is logged to a file instead of a traceback."""
    try:
        try:
            return command() or int(ExitCode.OK)
        except RlcatError as exc:
            from rlcat.cli.common import print_diagnostics  # the commands' module: loaded with a command

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
    # cli.common raises OutputClosed: imported here, as it is with any command, not at start-up
    from rlcat.cli.common import OutputClosed

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
    # a fresh file each time: a fixed name could belong to another user or another run
    fd, log = tempfile.mkstemp(prefix="rlcat-crash-", suffix=".log")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write("".join(traceback.format_exception(exc)))
    _tell(
        f"rlcat: internal error: {type(exc).__name__}: {exc}\n"
        f"The traceback is in {log}; set RLCAT_TRACEBACK=1 to print it."
    )
    return int(ExitCode.INTERNAL)

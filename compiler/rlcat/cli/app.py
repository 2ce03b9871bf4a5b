"""The Typer app every command registers on, and `run_app`, which runs it and turns Typer's own
endings (usage errors, Exit, Abort) into the documented exit codes.

The commands register themselves on `app` from their own modules, which are imported only when
their command is looked up (COMMAND_MODULES). The process around a command (`main`, the console
script, the exit code of an exception) is cli/process.py.
"""

from __future__ import annotations

import errno
import importlib
import io
import re
import sys
from collections.abc import Callable, Iterator, MutableMapping
from functools import cache
from typing import TYPE_CHECKING, Annotated, TextIO

import typer
from typer.core import TyperGroup

if TYPE_CHECKING:
    from typer._click.core import Command  # the click Typer vendors: what a group's commands are

from rlcat import __version__
from rlcat.diagnostics import ExitCode, suggestion_hint

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
            return _with_metavars(
                typer.main.get_command_from_info(
                    info,
                    pretty_exceptions_short=app.pretty_exceptions_short,
                    rich_markup_mode=app.rich_markup_mode,
                )
            )
    for group in app.registered_groups:
        if group.name == name:
            return _with_metavars(
                typer.main.get_group_from_info(
                    group,
                    pretty_exceptions_short=app.pretty_exceptions_short,
                    suggest_commands=app.suggest_commands,
                    rich_markup_mode=app.rich_markup_mode,
                )
            )
    raise LookupError(f"{COMMAND_MODULES[name]} registers no command '{name}'")


# What a value is, by parameter name, as help and usage show it (RECIPE, DIR, FIELD=VALUE) where
# Typer would show the Python type (`<str>`, `<list[Path]>`). A declaration's own `metavar=` wins
# (import's -o is a folder); choices keep Typer's `<a|b>`; a name missing here is its name in capitals.
METAVARS = {
    "a": "RECIPE",
    "b": "RECIPE",
    "other": "RECIPE",
    "folder": "DIR",
    "guard_id": "GUARD",
    "in_image": "PATH",
    "pass_env": "NAME",
    "paths": "PATH",
    "scripts": "SCRIPT",
    "run_dir": "DIR",
    "address": "URL",
    "against": "PLATFORM",
    "catalog": "DIR",
    "cpus_per_node": "N",
    "emit": "FILE",
    "entrypoint_cpus": "N",
    "env": "NAME=VALUE",
    "exclude": "PATTERN",
    "mount": "SRC:DST[:ro]",
    "network_interface": "INTERFACE",
    "out": "DIR",
    "output": "FILE",
    "override": "KEY=VALUE",
    "provenance": "OWNER/REPO:PATH@COMMIT",
    "python": "PATH",
    "releases": "RELEASE",
    "sbatch_arg": "OPTION",
    "set_": "FIELD=VALUE",
    "setup": "LINE",
    "timeout": "SECONDS",
    "top": "N",
    "verl": "RELEASE",
    "working_dir": "DIR",
}


def _with_metavars(command: Command) -> Command:
    """`command` (and a group's subcommands) with METAVARS filled in where no metavar was declared."""
    for param in command.params:
        descriptor = getattr(param, "type_descriptor", None)
        if param.metavar is not None or getattr(param, "is_flag", False) or descriptor is None:
            continue
        if descriptor.is_choice or param.name is None:
            continue
        param.metavar = METAVARS.get(param.name, param.name.upper())
    for sub in getattr(command, "commands", {}).values():
        _with_metavars(sub)
    return command


app = typer.Typer(
    name="rlcat",
    cls=LazyGroup,
    help="Typed verl RL recipes compiled into validated launch plans for NVIDIA, AMD and Ascend.",
    no_args_is_help=True,
    # click hands these to every subcommand's context: `-h` works wherever `--help` does
    context_settings={"help_option_names": ["--help", "-h"]},
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    epilog="""Examples:

  rlcat list

  rlcat compile geo3k_megatron_4_4 --platform rocm

  rlcat show dapo_math_fsdp2_4_4
""",
)


# Typer's words for a value outside an option's choices (a Literal): "'fully-async' is not one of
# 'colocate', 'fully_async', 'one_step_off'."
_NOT_ONE_OF = re.compile(r"'([^']*)' is not one of ((?:'[^']*'(?:, )?)+)")


def _choice_hint(usage: str) -> str:
    """A did-you-mean line for a value outside an option's choices, as a recipe file gets one."""
    found = _NOT_ONE_OF.search(usage)
    if found is None:
        return ""
    hint = suggestion_hint(found.group(1), re.findall(r"'([^']*)'", found.group(2)))
    return f"  hint: {hint}\n" if hint else ""


def _print_version(asked: bool) -> None:
    if asked:
        typer.echo(f"rlcat {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print rlcat's version and exit."
        ),
    ] = False,
) -> None:
    """The options of `rlcat` itself, before a command (only --version)."""


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


class _CheckedOutput:
    """stdout as Typer writes to it (help, --version, usage): a write to a reader that went away, or
    to a stream closed when rlcat started, is OutputClosed (exit 141), as for every command's output
    (cli.report), instead of Click's exit 1 for a broken pipe or a crash for a closed stream."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def _checked(self, call: Callable[[], object]) -> object:
        try:
            return call()
        except OSError as exc:
            if isinstance(exc, BrokenPipeError) or exc.errno == errno.EBADF:
                from rlcat.cli.report import OutputClosed  # the commands' module: loaded with a command

                raise OutputClosed from None
            raise

    def write(self, text: str) -> int:
        written = self._checked(lambda: self._stream.write(text))
        return written if isinstance(written, int) else len(text)

    def flush(self) -> None:
        self._checked(self._stream.flush)

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)


def run_app(args: list[str]) -> int:
    """Run the Typer command line on `args`; the exit code of a usage error or of the command."""
    stdout = sys.stdout
    sys.stdout = _CheckedOutput(stdout)
    try:
        return _run_app(args)
    finally:
        sys.stdout = stdout


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
        from rlcat.cli.report import print_escaped  # the commands' module: loaded with a command

        print_escaped(usage.getvalue().replace("Value error, ", "") + _choice_hint(usage.getvalue()))
        return int(ExitCode.INPUT)
    # in non-standalone mode Typer hands back the code of a typer.Exit raised inside a command, and
    # the 130 it makes of a Ctrl-C there (no command returns 130 itself): say that one as we do
    if returned == ExitCode.INTERRUPTED:
        raise KeyboardInterrupt
    return returned if isinstance(returned, int) else int(ExitCode.OK)

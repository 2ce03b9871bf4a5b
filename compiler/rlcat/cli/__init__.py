"""The command line: the only code that knows argv and exit codes. One module per command; each
registers itself on the Typer app (cli/app.py), which imports a command's module only when the
command is looked up (app.COMMAND_MODULES, in --help order). `main(argv)` runs the command line
in-process, `run()` as the console script (cli/process.py)."""

from __future__ import annotations

from rlcat.cli.process import main, run

__all__ = ["main", "run"]

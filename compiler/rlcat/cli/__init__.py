"""The command line: the only code that knows argv and exit codes. One module per command; each
registers itself on the Typer app (cli/app.py), which imports a command's module only when the
command is looked up (app.COMMAND_MODULES, in --help order); `rlcat lint` parses its own arguments
(cli/process.py). `main(argv)` runs the command line in-process, `run()` as the console script."""

from __future__ import annotations

from rlcat.cli.process import main, run

__all__ = ["main", "run"]

"""The command line: the only code that knows argv and exit codes. One module per command; each
registers itself on the Typer app (cli/app.py), which `main(argv)` runs in-process and `run()` runs
as the console script."""

from __future__ import annotations

from rlcat.cli.app import app, command_tree, main, run

# Importing a command's module registers the command; --help lists them in this order.
# isort: off
import rlcat.cli.compile
import rlcat.cli.launch
import rlcat.cli.import_cmd
import rlcat.cli.list
import rlcat.cli.show
import rlcat.cli.explain
import rlcat.cli.diff
import rlcat.cli.matrix
import rlcat.cli.guards
import rlcat.cli.validate
import rlcat.cli.lint
import rlcat.cli.results
import rlcat.cli.runs
import rlcat.cli.init
import rlcat.cli.new
import rlcat.cli.schemas
import rlcat.cli.config
import rlcat.cli.dev
import rlcat.cli.docs  # noqa: F401
# isort: on

__all__ = ["app", "command_tree", "main", "run"]

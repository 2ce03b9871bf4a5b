"""The console script. A well-formed `rlcat compile` is parsed here and compiled without Typer,
rich or pydantic (importing them costs more than the compile); everything else, and any compile
command line this parser does not take as plainly well formed, goes to the Typer CLI in cli.py,
which then gives the same result or the usage error.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

# `rlcat compile`'s options as cli.compile_cmd declares them (a test compares the two):
# option spelling → (parameter, kind), kind: "one" value, "many" (repeatable) or "flag".
COMPILE_OPTIONS: dict[str, tuple[str, str]] = {
    "--platform": ("platform", "one"),
    "-p": ("platform", "one"),
    "--engine": ("engine", "one"),
    "--mode": ("mode", "one"),
    "--set": ("sets", "many"),
    "--override": ("overrides", "many"),
    "--format": ("fmt", "one"),
    "-f": ("fmt", "one"),
    "--output": ("output", "one"),
    "-o": ("output", "one"),
    "--explain": ("explain", "flag"),
    "--catalog": ("catalog", "many"),
}
PATH_PARAMETERS = {"output", "catalog"}


def run() -> None:
    sys.exit(main(sys.argv[1:]))


def main(argv: list[str]) -> int:
    if argv[:1] == ["compile"]:
        args = parse_compile(argv[1:])
        if args is not None:
            from .cli_common import compile_command, exit_code_of

            return exit_code_of(lambda: compile_command(**args))
    from .cli import main as cli_main

    return cli_main(argv)


def parse_compile(tokens: list[str]) -> dict[str, Any] | None:
    """The keyword arguments of compile_command, or None when the command line is anything but
    plainly well formed (help, unknown or repeated options, a missing value, values that look like
    options, `--`): those are left to Typer, which knows every rule and message."""
    args: dict[str, Any] = {}
    positional: list[str] = []
    rest = list(tokens)
    while rest:
        token = rest.pop(0)
        if not token.startswith("-") or token == "-":
            positional.append(token)
            continue
        if token.startswith("--"):
            name, has_value, value = token.partition("=")
        else:  # a short option stands alone: -pcuda, -p=cuda and flag bundles go to Typer
            name, has_value, value = token, "", ""
        spec = COMPILE_OPTIONS.get(name)
        if spec is None:
            return None
        parameter, kind = spec
        if kind == "flag":
            if has_value or parameter in args:
                return None
            args[parameter] = True
            continue
        if not has_value:
            if not rest or rest[0].startswith("-"):
                return None
            value = rest.pop(0)
        typed: Any = Path(value) if parameter in PATH_PARAMETERS else value
        if kind == "many":
            args.setdefault(parameter, []).append(typed)
        elif parameter in args:
            return None
        else:
            args[parameter] = typed
    if len(positional) != 1:
        return None
    return {"recipe": positional[0], **args}

"""The CLI reference, generated from the Typer app: every command's usage, help, parameters and examples.

It walks the command tree Typer builds (`rlcat.cli.app.command_tree()`) and renders each
command's help, usage, parameters (names, default, help) and epilog examples from the parameter
objects, so the page cannot drift from the CLI. It reads only the attributes every Click-based
Typer release has, not Typer's own help formatting, so the page is the same whatever Typer is
installed.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Mapping
from typing import Any

from typer.core import TyperGroup

from rlcat.diagnostics import EXIT_CODES_TEXT
from rlcat.docsite.md import anchor, code, esc, fence, table


def _paragraphs(text: str | None) -> str:
    """Docstring-style text as Markdown paragraphs (line breaks inside a paragraph joined)."""
    if not text:
        return ""
    parts = [" ".join(p.split()) for p in inspect.cleandoc(text).split("\n\n")]
    return "\n\n".join(esc(p) for p in parts if p) + "\n"


def _examples(epilog: str | None) -> list[str]:
    """The commands listed in an `Examples:` epilog, one per entry."""
    if not epilog:
        return []
    body = inspect.cleandoc(epilog)
    if body.lower().startswith("examples:"):
        body = body.split(":", 1)[1]
    return [" ".join(p.split()) for p in body.split("\n\n") if p.strip()]


def _is_group(cmd: Any) -> bool:
    # a mapping, not only a dict: the root group's commands are built as they are looked up (cli/app.py)
    return isinstance(getattr(cmd, "commands", None), Mapping)


def _argument_name(param: Any) -> str:
    """What the value is (the metavar cli/app.py gives each parameter), as `--help` shows it."""
    name = str(param.metavar) if param.metavar else str(param.name).upper()
    return name + ("..." if param.nargs == -1 or param.multiple else "")


def _usage(cmd: Any, name: str) -> str:
    """Click's usage line, built from the parameters (the same text in every Typer release)."""
    parts = [name, "[OPTIONS]"]
    for param in cmd.params:
        if param.param_type_name == "argument" and not getattr(param, "hidden", False):
            arg = _argument_name(param)
            parts.append(arg if param.required else f"[{arg}]")
    if _is_group(cmd):
        parts.append("COMMAND [ARGS]...")
    return " ".join(parts)


def _default(param: Any) -> str:
    value = param.default
    if param.required or value is None or value is False or value == [] or callable(value):
        return "—"
    return code(value)


def _choices(param: Any) -> tuple[str, ...]:
    """The values a closed-choice option takes (a Literal annotation, possibly Optional)."""
    annotation = getattr(getattr(param, "type_descriptor", None), "annotation", None)
    for candidate in (annotation, *typing.get_args(annotation)):
        if typing.get_origin(candidate) is typing.Literal:
            return tuple(str(c) for c in typing.get_args(candidate))
    return ()


def _command_md(cmd: Any, path: list[str], level: int) -> str:
    name = " ".join(path)
    out = [f"{'#' * level} {name} {{#{anchor(name)}}}\n"]
    out.append(_paragraphs(cmd.help))
    out.append(fence(_usage(cmd, name), "text"))
    args: list[list[str]] = []
    opts: list[list[str]] = []
    for param in cmd.params:
        if getattr(param, "hidden", False):
            continue
        text = esc(" ".join(str(param.help or "").split())) or "—"
        if param.param_type_name == "argument":
            args.append([code(_argument_name(param)), "yes" if param.required else "no", text])
            continue
        names = sorted([*param.opts, *param.secondary_opts], key=lambda o: (len(o), o))
        flag = bool(getattr(param, "is_flag", False))
        cell = ", ".join(code(n) for n in names) + ("" if flag else f" *{esc(param.metavar or 'value')}*")
        if param.multiple and "repeatable" not in text:
            text += " (repeatable)"
        choices = _choices(param)
        if choices:
            text += " One of " + ", ".join(code(c) for c in choices) + "."
        opts.append([cell, _default(param), text])
    if args:
        out.append("**Arguments**\n\n" + table(["argument", "required", "description"], args))
    opts.append([code("-h, --help"), "—", "Show the help and exit."])
    out.append("**Options**\n\n" + table(["option", "default", "description"], opts))
    examples = _examples(cmd.epilog)
    if examples:
        out.append("**Examples**\n\n" + fence("\n".join(examples), "bash"))
    return "\n".join(out)


def _walk(cmd: Any, path: list[str], level: int, out: list[str]) -> None:
    out.append(_command_md(cmd, path, level))
    if not _is_group(cmd):
        return
    for sub_name, sub in cmd.commands.items():  # registration order, as `--help` lists them
        if not getattr(sub, "hidden", False):
            _walk(sub, [*path, sub_name], min(level + 1, 3), out)


def cli_page(root: TyperGroup) -> str:
    """The reference page of the command tree `root` (rlcat.cli.app.command_tree())."""
    out = [
        "# Command line\n",
        "Generated from the command line itself (the Typer app in `rlcat.cli`): what `rlcat COMMAND "
        "--help` prints, as a page. Exit codes are the same for every command: "
        f"{EXIT_CODES_TEXT} ([diagnostics](diagnostics.md)).\n",
    ]
    body: list[str] = []
    _walk(root, ["rlcat"], 1, body)
    # the top-level entry reads as the page's introduction, its commands as sections
    out.append(body[0].split("\n", 1)[1])
    out.extend(body[1:])
    return "\n".join(out)

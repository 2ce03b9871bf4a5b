"""Data as a YAML document that a terminal, a CI log and a YAML reader all show as it is: the one
YAML writer of every output (compile's yaml format, the tables, the importer's recipes, run
records, the SkyPilot task and the RayJob manifest of a launch)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import yaml

from rlcat.diagnostics import RlcatError, diag, dotted, printable
from rlcat.syntax.bash import comment_line
from rlcat.syntax.hydra_value import RequestedInterpolation

# What a refusal suggests by default: compile's formats that escape what YAML cannot.
FORMATS_HINT = "use --format json (it escapes them) or --format shell"


class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """The C emitter where PyYAML has it (~4x faster, same text), writing `!interp` values back
    with their tag."""


class _LiteralDumper(_Dumper):
    """Multi-line text as a `|` block, so that a reviewer reads a run script as it runs; and no
    anchors: a reviewer reads every value where it applies."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _literal_text(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


def _interp(dumper: yaml.SafeDumper, value: RequestedInterpolation) -> yaml.Node:
    return dumper.represent_scalar("!interp", str(value))


_Dumper.add_representer(RequestedInterpolation, _interp)
_LiteralDumper.add_representer(str, _literal_text)
_LiteralDumper.add_representer(RequestedInterpolation, _interp)


def yaml_document(
    data: Any,
    *,
    header: Sequence[str] = (),
    hint: str = FORMATS_HINT,
    file: str | None = None,
) -> str:
    """`data` as a YAML document for a terminal, a CI log or a file, under `header` as comment lines
    (comment_line). YAML has no escape a terminal and a CI log both honour, so text with hidden
    characters or `##[`, or that would begin a line with `::` (a workflow command), is refused
    (RLC405, with `hint`: an output that escapes them). Lines are never folded, so no value can
    start a line of its own.

    One rule for every YAML output (a value with a line break is written by all of them or refused
    by all): multi-line text is a `|` block and nothing is an alias; the line breaks of a block are
    its layout, every other character of it is checked as any text is.
    A refusal names `file` (what the command was writing from) and the key the text sits at."""
    hidden = _hidden_text(_lines_of(data))
    if hidden is not None:
        where, text = hidden
        raise RlcatError(
            [
                diag(
                    "RLC405",
                    f"{printable(text)!s} holds a hidden character or `##[`, which YAML output "
                    "would show as it is",
                    hint=hint,
                    file=file,
                    key=dotted(where) or None,
                )
            ]
        )
    body = yaml.dump(
        data,
        Dumper=_LiteralDumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=2**30,
    )
    forged = [line for line in body.splitlines() if line.lstrip().startswith("::")]
    if forged:
        raise RlcatError(
            [
                diag(
                    "RLC405",
                    f"{printable(forged[0].strip())} would begin a line with `::`, a CI workflow command",
                    hint=hint,
                    file=file,
                )
            ]
        )
    return "".join(comment_line(line) + "\n" for line in header) + str(body)


def _hidden_text(data: Any) -> tuple[tuple[str | int, ...], str] | None:
    """(where, text) of the first text, key or value, that printable would change, else None."""
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), data)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(((*where, i), v) for i, v in reversed(list(enumerate(item))))
        elif isinstance(item, dict):
            for key, value in reversed(list(item.items())):
                if isinstance(key, str) and printable(key) != key:
                    return (*where, key), key
                stack.append(((*where, key), value))
        elif isinstance(item, str) and printable(item) != item:
            return where, item
    return None


def _lines_of(data: Any) -> Any:
    """`data` with each multi-line text split into its lines (the layout of a literal block)."""
    if isinstance(data, dict):
        return {key: _lines_of(value) for key, value in data.items()}
    if isinstance(data, list):
        return [_lines_of(value) for value in data]
    if isinstance(data, str) and "\n" in data:
        return data.split("\n")
    return data

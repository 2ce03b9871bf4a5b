"""YAML artifacts (SkyPilot task, RayJob manifest) with scripts as literal blocks, so a reviewer
reads the run script as it runs. The safety rules are syntax.yaml_text.yaml_document's: the data is
passed through it first (it refuses hidden characters and lines that would start a CI workflow
command), and the literal layout is checked for the same lines again."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import yaml

from rlcat.diagnostics import RlcatError, diag, printable
from rlcat.syntax.bash import comment_line
from rlcat.syntax.yaml_text import yaml_document

_HINT = "use --target ray-job (JSON escapes it)"


class _LiteralDumper(yaml.SafeDumper):
    """Multi-line text as a `|` block; everything else as yaml_document writes it, and no
    anchors: a reviewer reads every value where it applies."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_LiteralDumper.add_representer(str, _text)


def yaml_artifact(data: Any, header: list[str]) -> str:
    """`header` as comment lines, then `data` as YAML with multi-line text in literal blocks."""
    try:  # the refusals (RLC405), on every line the artifact will hold
        yaml_document(_lines_of(data))
    except RlcatError as exc:  # its hint names compile's formats; a launch has a target for it
        raise RlcatError([replace(d, hint=_HINT) for d in exc.diagnostics], exc.exit_code) from None
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
                    hint=_HINT,
                )
            ]
        )
    return "".join(comment_line(line) + "\n" for line in header) + body


def _lines_of(data: Any) -> Any:
    """`data` with each multi-line text split into its lines: the line breaks of a literal block
    are the layout, every other character is checked as yaml_document checks text."""
    if isinstance(data, dict):
        return {key: _lines_of(value) for key, value in data.items()}
    if isinstance(data, list):
        return [_lines_of(value) for value in data]
    if isinstance(data, str) and "\n" in data:
        return data.split("\n")
    return data

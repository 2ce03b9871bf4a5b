"""Data as a YAML document that a terminal, a CI log and a YAML reader all show as it is."""

from __future__ import annotations

from typing import Any

import yaml

from rlcat.diagnostics import RlcatError, diag, printable
from rlcat.syntax.hydra_value import RequestedInterpolation, leaves


class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """The C emitter where PyYAML has it (~4x faster, same text), writing `!interp` values back
    with their tag."""


_Dumper.add_representer(RequestedInterpolation, lambda d, v: d.represent_scalar("!interp", str(v)))


def yaml_document(data: Any) -> str:
    """`data` as a YAML document for a terminal, a CI log or a file. YAML has no escape a terminal
    and a CI log both honour, so text with hidden characters or `##[`, or that would begin a line
    with `::` (a workflow command), is refused (RLC405: use the json format). Lines are never
    folded, so no value can start a line of its own."""
    for text in leaves(data, keys=True):
        if isinstance(text, str) and printable(text) != text:
            raise RlcatError(
                [
                    diag(
                        "RLC405",
                        f"{printable(text)!s} holds a hidden character or `##[`, which YAML output "
                        "would show as it is",
                        hint="use --format json (it escapes them) or --format shell",
                    )
                ]
            )
    body = yaml.dump(
        data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, default_flow_style=False, width=2**30
    )
    forged = [line for line in body.splitlines() if line.lstrip().startswith("::")]
    if forged:
        raise RlcatError(
            [
                diag(
                    "RLC405",
                    f"{printable(forged[0].strip())} would begin a line with `::`, a CI workflow command",
                    hint="use --format json (it escapes them) or --format shell",
                )
            ]
        )
    return str(body)

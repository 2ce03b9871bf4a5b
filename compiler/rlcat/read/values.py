"""A command-line value (--set, --override) read as recipe files read values."""

from __future__ import annotations

import json
import re
from typing import Any

import yaml

from rlcat.diagnostics import RlcatError, diag
from rlcat.read.hidden_breaks import HIDDEN_BREAKS, Lines, hidden_line_breaks, inside, scan_text
from rlcat.read.nodes import Builder, Path_
from rlcat.read.yaml_schema import Loader, describe
from rlcat.syntax.bash import shell_word

# Tokens of text YAML reads but drops from a value: on a command line they are never meant as YAML.
_DROPPED_TOKENS: dict[type, str] = {
    yaml.DirectiveToken: "a YAML directive (`%`)",
    yaml.DocumentStartToken: "a YAML document marker (`---`)",
    yaml.DocumentEndToken: "a YAML document marker (`...`)",
    yaml.AnchorToken: "a YAML anchor (`&`)",
}


def parse_value(raw: str, source: str) -> Any:
    """A command-line value (--set, --override) read as recipe files read values: 1e-6 is a number,
    and the same tags and limits apply. `source` names the value in diagnostics. Raises
    yaml.YAMLError for text that is not YAML (the caller keeps it as text)."""
    return read_value(raw, source)[0]


def read_value(raw: str, argument: str) -> tuple[Any, dict[Path_, str]]:
    """parse_value, and the notes on parts of the value that YAML 1.1 reads differently.

    Text that YAML would silently drop or take as markup is refused with the argument named: a
    comment (`run #3` would be 'run'), a document marker or directive (`--- a` would be 'a'), an
    anchor, a block scalar header, and hidden line breaks outside quotes (RLC009).
    """
    hidden = hidden_line_breaks(raw, unscanned_too=True)
    if hidden:
        name = HIDDEN_BREAKS[raw[hidden[0]]]
        raise RlcatError(
            [
                diag(
                    "RLC009",
                    f"{name} at character {hidden[0] + 1} of the value: YAML reads it as a line break, "
                    "while a terminal or a log shows one line",
                    argument=argument,
                    hint=f"the character is {name} (invisible); delete it, or write it as "
                    f"\\u{ord(raw[hidden[0]]):04x} inside a double-quoted string",
                )
            ]
        )
    _refuse_dropped_text(raw, argument)
    root = yaml.compose(raw, Loader=Loader)
    if root is None:
        return None, {}
    builder = Builder(argument, raw, Lines(raw), argument=True)
    value = builder.build(root, (), 0)
    if builder.errors:
        raise RlcatError(builder.errors)
    return value, builder.notes


def _refuse_dropped_text(raw: str, argument: str) -> None:
    scan = scan_text(raw)
    if scan.stopped_at is not None:
        return  # not YAML: compose raises, and the caller keeps the text as it is
    dropped = [what for token, what in _DROPPED_TOKENS.items() if token in scan.tokens]
    if any(style in ("|", ">") for _, _, style in scan.scalars):
        dropped.append("a block scalar header (`|` or `>`)")
    starts = [s[0] for s in scan.scalars]
    # a `#` outside every scalar can only start a comment: the scanner skips it and what follows
    if any(not inside(m.start(), scan.scalars, starts) for m in re.finditer("#", raw)):
        dropped.append("a YAML comment (` #`)")
    if not dropped:
        return
    try:
        root = yaml.compose(raw, Loader=Loader)
        builder = Builder(argument, raw, Lines(raw), argument=True)
        read = None if root is None else builder.build(root, (), 0)
        reading = f"would read it as {describe(read)}"
    except yaml.YAMLError:
        reading = "cannot read it"
    flag, _, assignment = argument.partition(" ")
    key = assignment[: -len(raw) - 1] if raw and assignment.endswith("=" + raw) else None
    quoted = shell_word(f"{key}={json.dumps(raw.strip(), ensure_ascii=False)}") if key else None
    raise RlcatError(
        [
            diag(
                "RLC105",
                f"the value holds {' and '.join(dropped)}: YAML {reading}",
                argument=argument,
                hint="put the value in double quotes for YAML, inside quotes for the shell"
                + (f": {flag} {quoted}" if quoted else ""),
            )
        ]
    )

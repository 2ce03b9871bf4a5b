"""Reporters for findings: text (people), json (scripts), github (workflow commands), sarif (code
scanning). Each takes the diagnostics and returns the whole output as text."""

from __future__ import annotations

import io
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from urllib.parse import quote

from rlcat import __version__
from rlcat.diagnostics import CODES, Diagnostic, RlcatError, Severity, json_text, printable
from rlcat.files import read_bytes
from rlcat.guards import REGISTRY
from rlcat.inside import link_leaves

# 2: each diagnostic has `notes` (where an inherited value came from) and no `docs_url`
# 3: each diagnostic has `platforms`: those validate compiled a recipe on that gave it ([] elsewhere)
JSON_FORMAT_VERSION = 3


def _summary(diagnostics: Sequence[Diagnostic], files: int) -> str:
    errors = sum(d.severity == Severity.ERROR for d in diagnostics)
    warnings = sum(d.severity == Severity.WARNING for d in diagnostics)
    return f"{files} file{'s' if files != 1 else ''} checked: {errors} error(s), {warnings} warning(s)"


# Lines as the loader counts them (as people see them: U+2028 and friends are refused outside
# quoted strings), so that `d.line` picks the line the loader meant.
_YAML_LINE_BREAK = re.compile("\r\n|\r|\n")


def _excerpt(d: Diagnostic, lines_of: Callable[[str], list[str] | None]) -> list[str]:
    if not d.file or not d.line:
        return []
    lines = lines_of(d.file)
    if lines is None or d.line > len(lines):
        return []
    source = lines[d.line - 1].replace("\t", " ")[:200]
    gutter = f"{d.line:>5} | "
    out = [gutter + printable(source)]
    if d.col:
        # the caret goes under the column as shown: escapes before it are wider than their characters
        indent = len(printable(source[: d.col - 1]))
        out.append(" " * (len(gutter) - 2) + "| " + " " * indent + "^")
    return out


def _leaves_through_a_link(folder: Path, name: str) -> bool:
    """Whether a link on the way from `folder` to `name` leads out of the folder it sits in: the
    readers follow a link only inside the folder they read (inside.link_leaves), so a file reached
    that way is one they refused, and its lines are not shown, even when it is in the working folder."""
    path = folder
    for part in Path(name).parts:
        path = path / part
        if path.is_symlink() and link_leaves(path, os.path.realpath(path.parent)) is not None:
            return True
    return False


def _source_lines(name: str, folder: Path) -> list[str] | None:
    """The lines of `name` if it is a regular file inside `folder` (links followed only within it):
    an excerpt must never show a file the input points at elsewhere (`/proc/self/environ`, a `.env`
    through a symlink)."""
    try:
        path = (folder / name).resolve()
        if not path.is_relative_to(folder) or _leaves_through_a_link(folder, name):
            return None
        data = read_bytes(path, name)  # a regular file only, of at most MAX_BYTES
        return _YAML_LINE_BREAK.split(data.decode("utf-8"))
    # RuntimeError: a symlink loop; ValueError: a NUL in the name, or bad UTF-8
    except (OSError, RuntimeError, ValueError, RlcatError):
        return None


def _reader() -> Callable[[str], list[str] | None]:
    cache: dict[str, list[str] | None] = {}
    try:
        folder: Path | None = Path.cwd().resolve()
    except OSError:  # the working directory was removed: nothing is inside it
        folder = None

    def lines_of(name: str) -> list[str] | None:
        if name not in cache:
            cache[name] = None if folder is None else _source_lines(name, folder)
        return cache[name]

    return lines_of


def text(diagnostics: Sequence[Diagnostic], files: int, color: bool | None = None) -> str:
    """One line per finding, then its notes (where an inherited value came from), the hint and the
    source line with a caret under the column.
    Colour (through rich) only when writing to a terminal. Everything from the input is printable
    (diagnostics.printable): no line break, escape sequence or bidi control reaches the output. The
    source line comes only from a regular file inside the working folder (_source_lines)."""
    lines_of = _reader()
    use_color = sys.stdout.isatty() if color is None else color
    blocks: list[tuple[Diagnostic, list[str]]] = []
    for d in diagnostics:
        hint = [f"  hint: {printable(d.hint)}"] if d.hint else []
        blocks.append((d, d.note_lines() + hint + ["  " + line for line in _excerpt(d, lines_of)]))
    summary = _summary(diagnostics, files)
    if not use_color:
        out = [line for d, rest in blocks for line in (d.headline(), *rest)]
        return "\n".join([*out, summary]) + "\n"
    style = {Severity.ERROR: "red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}
    # rich costs about 20 ms to import, a tenth of a cold compile: only colour on a terminal needs it
    from rich.console import Console
    from rich.text import Text

    console = Console(
        file=io.StringIO(),
        force_terminal=True,
        color_system="standard",
        width=10_000,
        highlight=False,
        soft_wrap=True,
    )
    # Text objects, never markup strings: rich reads no `[style]` or `:emoji:` from the input
    for d, rest in blocks:
        head = Text()
        head.append(d.location(), style="bold")
        head.append(f" {d.code} {d.severity}: ", style=style[d.severity])
        head.append(printable(d.message) + (f" [{printable(d.key)}]" if d.key else ""))
        console.print(head)
        for line in rest:
            console.print(Text(line, style="dim" if line.startswith(("  hint", "  note")) else ""))
    console.print(Text(summary, style="bold"))
    return console.file.getvalue()  # type: ignore[attr-defined,no-any-return]


def as_json(diagnostics: Sequence[Diagnostic], files: int) -> str:
    """{"version": 3, "files": N, "summary": {...}, "diagnostics": [Diagnostic.to_dict(), ...]}"""
    data = {
        "version": JSON_FORMAT_VERSION,
        "tool": {"name": "rlcat", "version": __version__},
        "files": files,
        "summary": {str(s): sum(d.severity == s for d in diagnostics) for s in reversed(Severity)},
        "diagnostics": [d.to_dict() for d in diagnostics],
    }
    return json_text(data)


def _escape_data(text: str) -> str:
    """The message of a workflow command: the runner turns %25, %0D and %0A back into %, CR and LF."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    """A property value: ':' would end the properties and ',' start another one."""
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github(diagnostics: Sequence[Diagnostic], files: int) -> str:
    """GitHub Actions workflow commands, so findings show on the pull request's diff: exactly one
    command line per finding, on the file validated (a finding about an inherited value names its
    origin in a note below the message). Every field is printable first (no control, bidi or
    line-break character, no legacy `##[` command), then escaped for its place in the command."""
    command = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}
    out = []
    for d in diagnostics:
        props = []
        if d.file:
            props.append(f"file={_escape_property(printable(d.file))}")
        if d.line:
            props.append(f"line={d.line}")
        if d.col:
            props.append(f"col={d.col}")
        props.append(f"title={_escape_property(d.code)}")
        message = printable(d.message) + (f" [{printable(d.key)}]" if d.key else "")
        # the only line breaks: the annotation shows the notes and the hint below the message
        for note in d.notes:
            message += "\n" + printable(note.message)
        if d.hint:
            message += "\n" + printable(d.hint)
        out.append(f"::{command[d.severity]} {','.join(props)}::{_escape_data(message)}")
    out.append(_summary(diagnostics, files))
    return "\n".join(out) + "\n"


_SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def sarif(diagnostics: Sequence[Diagnostic], files: int) -> str:
    """SARIF 2.1.0 for code scanning: one run, one rule per code that occurs, each with its help
    (the code's title; a guard's docs page) in the log itself, as no docs site is published. A
    finding about an inherited value is located on the file validated: its origin is said in the
    message and, when it is a file of the user's, given as a related location."""
    codes = sorted({d.code for d in diagnostics})
    results = []
    for d in diagnostics:
        text = d.message + (f" [{d.key}]" if d.key else "")
        text += "".join(f" ({note.message})" for note in d.notes) + (f" — {d.hint}" if d.hint else "")
        result: dict[str, object] = {
            "ruleId": d.code,
            "ruleIndex": codes.index(d.code),
            "level": _SARIF_LEVEL[d.severity],
            "message": {"text": text},
        }
        if d.file:
            result["locations"] = [{"physicalLocation": _physical_location(d.file, d.line, d.col)}]
        related: list[dict[str, object]] = []
        for note in d.notes:  # a built-in origin has no file here: the user's repository lacks it
            if note.file is not None:
                location = _physical_location(note.file, note.line, note.col)
                related.append(
                    {"id": len(related) + 1, "physicalLocation": location, "message": {"text": note.message}}
                )
        if related:
            result["relatedLocations"] = related
        if d.platforms:
            result["properties"] = {"platforms": list(d.platforms)}
        results.append(result)
    log = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "rlcat",
                        "version": __version__,
                        "rules": [_sarif_rule(code) for code in codes],
                    }
                },
                "results": results,
            }
        ],
    }
    return json_text(log)


def _physical_location(file: str, line: int | None, col: int | None) -> dict[str, object]:
    # percent-encoded: a URI reference has no spaces or non-ASCII, and a ':' in the first segment
    # would read as a scheme. surrogateescape: the bytes of a name that is not UTF-8
    uri = quote(Path(file).as_posix(), errors="surrogateescape")
    location: dict[str, object] = {"artifactLocation": {"uri": uri}}
    if line:
        location["region"] = {"startLine": line, **({"startColumn": col} if col else {})}
    return location


def _sarif_rule(code: str) -> dict[str, object]:
    """A rule with its help text in the log: the code's title, and for a guard its docs page (the
    docstring, in Markdown), which code scanning shows beside each alert."""
    guard = REGISTRY.get(code)
    title, severity = CODES.get(code) or ((guard.title, guard.severity) if guard else (code, Severity.ERROR))
    rule: dict[str, object] = {
        "id": code,
        "name": title.replace(" ", "_") or code,
        "shortDescription": {"text": title or code},
        "defaultConfiguration": {"level": _SARIF_LEVEL[severity]},
    }
    if guard is not None:
        rule["fullDescription"] = {"text": guard.summary()}
        rule["help"] = {"text": guard.docs(), "markdown": f"**{code}: {title}**\n\n{guard.docs()}"}
    else:
        rule["help"] = {"text": f"{code}: {title}", "markdown": f"**{code}: {title}**"}
    return rule


REPORTERS: dict[str, Callable[[Sequence[Diagnostic], int], str]] = {
    "text": text,
    "json": as_json,
    "github": github,
    "sarif": sarif,
}

"""Reporters for findings: text (people), json (scripts), github (workflow commands), sarif (code
scanning). Each takes the diagnostics and returns the whole output as text."""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from rlcat import __version__
from rlcat.diagnostics import CODES, Diagnostic, Severity
from rlcat.guards import REGISTRY

JSON_FORMAT_VERSION = 1


def _summary(diagnostics: Sequence[Diagnostic], files: int) -> str:
    errors = sum(d.severity == Severity.ERROR for d in diagnostics)
    warnings = sum(d.severity == Severity.WARNING for d in diagnostics)
    return f"{files} file{'s' if files != 1 else ''} checked: {errors} error(s), {warnings} warning(s)"


def _excerpt(d: Diagnostic, lines_of: Callable[[str], list[str] | None]) -> list[str]:
    if not d.file or not d.line:
        return []
    lines = lines_of(d.file)
    if lines is None or d.line > len(lines):
        return []
    text = lines[d.line - 1].replace("\t", " ")
    gutter = f"{d.line:>5} | "
    out = [gutter + text[:200]]
    if d.col:
        out.append(" " * (len(gutter) - 2) + "| " + " " * (d.col - 1) + "^")
    return out


def _reader() -> Callable[[str], list[str] | None]:
    cache: dict[str, list[str] | None] = {}

    def lines_of(name: str) -> list[str] | None:
        if name not in cache:
            try:
                cache[name] = Path(name).read_text(encoding="utf-8").splitlines()
            except (OSError, UnicodeDecodeError):
                cache[name] = None
        return cache[name]

    return lines_of


def text(diagnostics: Sequence[Diagnostic], files: int, color: bool | None = None) -> str:
    """One line per finding, then the hint and the source line with a caret under the column.
    Colour (through rich) only when writing to a terminal."""
    lines_of = _reader()
    use_color = sys.stdout.isatty() if color is None else color
    blocks: list[tuple[Diagnostic, list[str]]] = []
    for d in diagnostics:
        rest = ([f"  hint: {d.hint}"] if d.hint else []) + ["  " + line for line in _excerpt(d, lines_of)]
        blocks.append((d, rest))
    summary = _summary(diagnostics, files)
    if not use_color:
        out = [line for d, rest in blocks for line in (d.render().split("\n", 1)[0], *rest)]
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
    for d, rest in blocks:
        head = Text()
        head.append(d.location(), style="bold")
        head.append(f" {d.code} {d.severity}: ", style=style[d.severity])
        head.append(d.message + (f" [{d.key}]" if d.key else ""))
        console.print(head)
        for line in rest:
            console.print(Text(line, style="dim" if line.startswith("  hint") else ""))
    console.print(Text(summary, style="bold"))
    return console.file.getvalue()  # type: ignore[attr-defined,no-any-return]


def as_json(diagnostics: Sequence[Diagnostic], files: int) -> str:
    """{"version": 1, "files": N, "summary": {...}, "diagnostics": [Diagnostic.to_dict(), ...]}"""
    data = {
        "version": JSON_FORMAT_VERSION,
        "tool": {"name": "rlcat", "version": __version__},
        "files": files,
        "summary": {str(s): sum(d.severity == s for d in diagnostics) for s in reversed(Severity)},
        "diagnostics": [d.to_dict() for d in diagnostics],
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github(diagnostics: Sequence[Diagnostic], files: int) -> str:
    """GitHub Actions workflow commands, so findings show on the pull request's diff."""
    command = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}
    out = []
    for d in diagnostics:
        props = []
        if d.file:
            props.append(f"file={_escape_property(d.file)}")
        if d.line:
            props.append(f"line={d.line}")
        if d.col:
            props.append(f"col={d.col}")
        props.append(f"title={_escape_property(d.code)}")
        message = d.message + (f" [{d.key}]" if d.key else "") + (f"\n{d.hint}" if d.hint else "")
        out.append(f"::{command[d.severity]} {','.join(props)}::{_escape_data(message)}")
    out.append(_summary(diagnostics, files))
    return "\n".join(out) + "\n"


def sarif(diagnostics: Sequence[Diagnostic], files: int) -> str:
    """SARIF 2.1.0 for code scanning: one run, one rule per code that occurs."""
    level = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
    codes = sorted({d.code for d in diagnostics})
    rules = []
    for code in codes:
        title = CODES.get(code, ("", Severity.ERROR))[0] or _guard_title(code)
        rules.append(
            {
                "id": code,
                "name": title.replace(" ", "_") or code,
                "shortDescription": {"text": title or code},
                "helpUri": Diagnostic(code, "").docs_url,
            }
        )
    results = []
    for d in diagnostics:
        result: dict[str, object] = {
            "ruleId": d.code,
            "ruleIndex": codes.index(d.code),
            "level": level[d.severity],
            "message": {
                "text": d.message + (f" [{d.key}]" if d.key else "") + (f" — {d.hint}" if d.hint else "")
            },
        }
        if d.file:
            region: dict[str, int] = {}
            if d.line:
                region["startLine"] = d.line
                if d.col:
                    region["startColumn"] = d.col
            location: dict[str, object] = {"artifactLocation": {"uri": Path(d.file).as_posix()}}
            if region:
                location["region"] = region
            result["locations"] = [{"physicalLocation": location}]
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
                        "informationUri": "https://github.com/rlcat/rlcat",
                        "rules": rules,
                    }
                },
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"


def _guard_title(code: str) -> str:
    cls = REGISTRY.get(code)
    return cls.title if cls else ""


REPORTERS: dict[str, Callable[[Sequence[Diagnostic], int], str]] = {
    "text": text,
    "json": as_json,
    "github": github,
    "sarif": sarif,
}

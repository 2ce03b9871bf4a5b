"""U+0085, U+2028 and U+2029: line breaks to YAML, inside one line to editors, grep and GitHub;
and line and column as people count them."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

import yaml

from rlcat.diagnostics import Diagnostic, diag
from rlcat.read.yaml_schema import Loader

MAX_REPORTED = 20  # hidden line breaks reported per file: enough to find them, bounded for a hostile one
MAX_SCANS = 3  # scans of a file holding hidden line breaks, to find those after the first (see below)


# Characters YAML reads as line breaks although editors, grep and GitHub show them inside one line.
HIDDEN_BREAKS = {
    "\x85": "U+0085 NEXT LINE",
    "\u2028": "U+2028 LINE SEPARATOR",
    "\u2029": "U+2029 PARAGRAPH SEPARATOR",
}
_HIDDEN_BREAK = re.compile("[\x85\u2028\u2029]")
_LINE_BREAK = re.compile("\r\n|\r|\n")


def _has_hidden_breaks(text: str) -> bool:
    # `in` is much faster than a regular expression here: a pure-ASCII text (almost every file)
    # cannot hold U+2028 and answers at once, and U+0085 is found with a byte search
    return "\x85" in text or "\u2028" in text or "\u2029" in text


class Lines:
    """Line and column as people count them: lines end at `\\n` (and, as PyYAML and editors have it,
    at `\\r\\n` and a lone `\\r`), columns count characters, a leading byte-order mark is not
    counted. PyYAML also ends lines at U+0085, U+2028 and U+2029, so its own line and column are
    used only when the text holds none of them (almost always)."""

    def __init__(self, text: str):
        # libyaml's marks count characters from after a leading byte-order mark
        self.shift = 1 if text.startswith("\ufeff") else 0
        self.starts: list[int] | None = None
        if _has_hidden_breaks(text):
            self.starts = [self.shift, *(m.end() for m in _LINE_BREAK.finditer(text))]

    def at(self, mark: yaml.Mark) -> tuple[int, int]:
        if self.starts is None:
            return mark.line + 1, mark.column + 1
        return self.at_offset(mark.index + self.shift)

    def at_offset(self, offset: int) -> tuple[int, int]:
        """1-based line and column of a character offset in the text (hidden breaks present)."""
        assert self.starts is not None
        line = bisect.bisect_right(self.starts, offset)
        return line, offset - self.starts[line - 1] + 1


@dataclass
class Scan:
    """What PyYAML's scanner makes of a text: the spans of its scalars, by style ('' for plain), and
    the offset where scanning stopped at an error (None when the whole text was scanned)."""

    scalars: list[tuple[int, int, str]] = field(default_factory=list)
    tokens: set[type] = field(default_factory=set)
    stopped_at: int | None = None


def scan_text(text: str) -> Scan:
    shift = 1 if text.startswith("\ufeff") else 0
    found = Scan()
    try:
        for token in yaml.scan(text, Loader=Loader):
            found.tokens.add(type(token))
            if isinstance(token, yaml.ScalarToken):
                span = (token.start_mark.index + shift, token.end_mark.index + shift, token.style or "")
                found.scalars.append(span)
    except yaml.MarkedYAMLError as exc:
        found.stopped_at = exc.problem_mark.index + shift if exc.problem_mark else 0
    except yaml.YAMLError:  # pragma: no cover - scanner errors carry a mark
        found.stopped_at = 0
    return found


def inside(offset: int, spans: list[tuple[int, int, str]], starts: list[int]) -> bool:
    i = bisect.bisect_right(starts, offset) - 1
    return i >= 0 and spans[i][0] <= offset < spans[i][1]


def hidden_line_breaks(text: str, *, unscanned_too: bool) -> list[int]:
    """Offsets of U+0085, U+2028 and U+2029 in `text` that are not inside a quoted scalar.

    A quoted scalar is the one place where such a character is data: it cannot end a comment, a key
    or a plain value there, so what follows it stays inside the quotes. Only the scanner knows where
    a quoted scalar starts and ends (a quote may also sit in a plain scalar or a comment, where it
    opens nothing), and PyYAML's own scanner is the one compose runs, so these spans are exactly the
    ones the parser reads. Block scalars, comments, keys and plain values are refused alike: in each
    the character starts a line YAML reads and people do not see.

    A hidden break often makes the rest unreadable (the "comment" goes on as YAML), which stops the
    scanner. The text is then scanned again, up to MAX_SCANS times in all, with the breaks found so
    far made spaces, as people see them, so that the others are reported too; where the scanner
    still stops, what follows is refused with `unscanned_too`, and otherwise left to the syntax
    error that compose reports next.
    """
    if not _has_hidden_breaks(text):
        return []
    found: set[int] = set()
    for _ in range(MAX_SCANS):
        scan = scan_text(text)
        quoted = [s for s in scan.scalars if s[2] in ("'", '"')]
        starts = [s[0] for s in quoted]
        end = len(text) if scan.stopped_at is None else scan.stopped_at
        new = {
            m.start()
            for m in _HIDDEN_BREAK.finditer(text, 0, end)
            if m.start() not in found and not inside(m.start(), quoted, starts)
        }
        found |= new
        if scan.stopped_at is None or not new or len(found) > MAX_REPORTED:
            break
        for offset in new:
            text = f"{text[:offset]} {text[offset + 1 :]}"
    if unscanned_too and scan.stopped_at is not None:
        found |= {m.start() for m in _HIDDEN_BREAK.finditer(text, scan.stopped_at)}
    return sorted(found)


def hidden_break_diagnostics(text: str, offsets: list[int], file: str) -> list[Diagnostic]:
    lines = Lines(text)
    out = []
    for offset in offsets[:MAX_REPORTED]:
        line, col = lines.at_offset(offset)
        out.append(
            diag(
                "RLC009",
                f"{HIDDEN_BREAKS[text[offset]]} outside a quoted string: YAML reads it as a line break, "
                "while editors, grep and GitHub show one line",
                file=file,
                line=line,
                col=col,
                hint=f"the character is {HIDDEN_BREAKS[text[offset]]} (invisible); what follows it on this "
                "line is read as YAML of its own. Delete it, or write it as "
                f"\\u{ord(text[offset]):04x} inside a double-quoted string",
            )
        )
    if len(offsets) > MAX_REPORTED:
        out.append(
            diag("RLC009", f"{len(offsets) - MAX_REPORTED} more hidden line breaks not listed", file=file)
        )
    return out

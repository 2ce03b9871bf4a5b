"""Small Markdown writers: escaping, code spans and fences, tables, links, content tabs.

Everything the generator writes goes through these, so a value from a catalog file (which may hold
`|`, `*`, `_` or `<`) never breaks a table or turns into markup.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence

_SPECIAL = re.compile(r"([\\`*_\[\]{}>|#])")


def esc(text: object) -> str:
    """Plain text for a paragraph or a table cell: Markdown specials escaped, one line."""
    flat = " ".join(str(text).split()).replace("&", "&amp;").replace("<", "&lt;")
    return _SPECIAL.sub(r"\\\1", flat)


def code(text: object) -> str:
    """An inline code span that holds any text (a longer backtick fence when the text has backticks)."""
    value = " ".join(str(text).split("\n"))
    longest = max((len(m) for m in re.findall(r"`+", value)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if longest or value.startswith(" ") or value.endswith(" ") else ""
    return f"{fence}{pad}{value}{pad}{fence}"


def breakable_code(text: object, after: str = ".=") -> str:
    """Inline code for long dotted keys in narrow table columns: the browser may break the line after
    each character of `after` (a <wbr>), never inside a name. Copying the text copies no break."""
    value = html.escape(" ".join(str(text).split("\n")), quote=False).replace("|", "&#124;")
    for ch in after:
        value = value.replace(ch, ch + "<wbr>")
    return f"<code>{value}</code>"


def fence(text: str, lang: str = "", attrs: str = "", indent: int = 0) -> str:
    """A fenced code block (longer fence when the text holds one), optionally indented for a tab."""
    longest = max((len(m) for m in re.findall(r"^`{3,}", text, flags=re.M)), default=0)
    ticks = "`" * max(3, longest + 1)
    info = f"{{.{lang} {attrs}}}" if attrs else lang
    body = text if text.endswith("\n") else text + "\n"
    return _indent(f"{ticks} {info}\n{body}{ticks}\n" if info else f"{ticks}\n{body}{ticks}\n", indent)


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], indent: int = 0) -> str:
    """A pipe table; cells must already be Markdown (use esc/code/link)."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join(" --- " for _ in headers) + "|"]
    for row in rows:
        assert len(row) == len(headers), (headers, row)
        lines.append("| " + " | ".join(cell.replace("\n", " ") or " " for cell in row) + " |")
    return _indent("\n".join(lines) + "\n", indent)


def facts(items: Sequence[tuple[str, str]]) -> str:
    """A bullet list of `**label**: value` lines (values already Markdown)."""
    return "".join(f"- **{label}**: {value}\n" for label, value in items)


def link(text: str, target: str) -> str:
    """[text](target); `text` must already be Markdown."""
    return f"[{text}]({target})"


def tabs(items: Sequence[tuple[str, str]]) -> str:
    """Content tabs (pymdownx.tabbed): each (label, markdown body)."""
    out = []
    for label, body in items:
        out.append(f'=== "{label}"\n\n{_indent(body, 4)}')
    return "\n".join(out)


def details(summary: str, body: str, kind: str = "note", indent: int = 0) -> str:
    """A collapsed block (pymdownx.details)."""
    return _indent(f'??? {kind} "{summary}"\n\n{_indent(body, 4)}', indent)


def _indent(text: str, n: int) -> str:
    if not n:
        return text
    pad = " " * n
    return "".join(pad + line if line.strip() else line for line in text.splitlines(keepends=True))


def anchor(text: str) -> str:
    """A stable HTML id from a name: lower case, runs of other characters become '-'."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")

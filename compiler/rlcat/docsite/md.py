"""Small Markdown writers: escaping, code spans and fences, tables, links, content tabs.

Everything the generator writes goes through these, and the escaping for each place a value can
land lives here and nowhere else, because catalog values may come from a hostile pull request and
the site is read by browsers:

- Markdown text (`esc`): Markdown specials (an `_` after a letter or a digit opens no emphasis and
  is left as it is), HTML and emoji shortcodes escaped, and nothing that starts a block (list,
  admonition, fence, tab) at the start of a line.
- code spans and fences (`code`, `fence`): a fence longer than any backtick run in the value.
- raw HTML (`breakable_code`): HTML escaped, and every character Markdown would still read
  there (it parses the text between inline HTML tags) written as a character reference.
- links (`link`): only http, https and relative links to the site's pages; any other target is
  shown as text.

Hidden characters (control, bidi and zero-width characters) show as their escapes (`\\u202e`), as
rlcat's other outputs write them (`rlcat.diagnostics.printable`).
"""

from __future__ import annotations

import html
import re
import unicodedata
import urllib.parse
from collections.abc import Iterable, Sequence

from rlcat.diagnostics import printable
from rlcat.model.axes import NAME_PATTERN

# An `_` right after a letter or a digit opens no emphasis (Python-Markdown's "smart" underscore) and
# closes none that an escaped `_` could not open: it stays as it is, as in keys and file names, which
# then cost Markdown no escape each (a tenth of the time it spends on a recipe page's tables).
_SPECIAL = re.compile(r"([\\`*\[\]{}>|#]|(?<![^\W_])_)")
# pymdownx.emoji turns `:name:` into an icon (an image from a CDN for most emoji): the colon that
# opens a shortcode becomes a character reference, so the text shows as typed.
_SHORTCODE_COLON = re.compile(r":(?=[+\-\w]+:)")
# What opens a block when it starts a line: a list item (`- `, `+ `, `1. `), a rule or a setext
# underline (`---`, `===`), an admonition (`!!!`), a collapsed block (`???`), a content tab
# (`=== "x"`), a definition (`: `) or a `~~~` fence (`--engine` opens none). Backticks, `*`, `#`,
# `>`, `|` and `<` are escaped wherever they are.
_BLOCK_START = re.compile(
    r"^(?:(?P<escapable>[-+](?=\s|$)|-(?=[-\s]*$)|!)|(?P<other>[=?:~])|(?P<number>\d+)\.(?=\s|$))"
)
# Inside raw HTML, what Markdown still reads in the text between the tags: backslash escapes, code
# spans, `*` and `_` emphasis, the `](` or `][` that makes a link or an image, emoji shortcodes, and
# `|` (a table cell's end). An `_` right after a letter or a digit cannot open emphasis (Python-
# Markdown's "smart" underscore), so the underscores of keys stay as they are. `[` and `{` alone do
# nothing there: an attribute list needs an element right before it, and none can form.
_HTML_ACTIVE = re.compile(r"[\\`*|]|(?<![^\W_])_|\](?=\s?[(\[])|:(?=[+\-\w]+:)")
# `#!lang` and `:::lang` at the start of a code span are read by pymdownx.inlinehilite as its
# language, not shown.
_HIGHLIGHT_PREFIX = ("#!", ":::")
SAFE_SCHEMES = ("http", "https")
# The characters a link target keeps as they are (RFC 3986's reserved and unreserved characters,
# without the parentheses and quotes that would end a Markdown link); the rest are percent-encoded.
_URL_SAFE = "/:?#[]@!$&*+,;=%-._~"


def _shown(text: object) -> str:
    """One line of text, every hidden character written as its escape."""
    return printable(" ".join(str(text).split("\n")))


def _reference(match: re.Match[str]) -> str:
    return f"&#{ord(match.group(0))};"


def esc(text: object) -> str:
    """Plain text for a paragraph, a list item or a table cell, as one line: Markdown specials, HTML
    and emoji shortcodes escaped, hidden characters written as escapes, and a block start (`- `,
    `!!!`, `===`, ...) at its beginning made plain."""
    flat = printable(" ".join(str(text).split())).replace("&", "&amp;").replace("<", "&lt;")
    escaped = _SHORTCODE_COLON.sub(_reference, _SPECIAL.sub(r"\\\1", flat))
    return _BLOCK_START.sub(_inert_block_start, escaped, count=1)


def _inert_block_start(match: re.Match[str]) -> str:
    if match.group("escapable"):
        return "\\" + match.group("escapable")
    if match.group("other"):
        return _reference(match)
    return match.group("number") + "\\."


def name_code(name: str, width: int = 30) -> str:
    """A name as inline code; one longer than `width` characters may break after an `_`, so that a
    table column of long names (the upstream examples') does not widen the table past the page."""
    return breakable_code(name, "_") if len(name) > width else code(name)


def name_md(name: str) -> str:
    """An entry name (letters, digits, `_ . -`) as Markdown text: only an underscore that could open
    emphasis is escaped, so the names people type read the same in the Markdown."""
    if not re.fullmatch(NAME_PATTERN, name):
        return esc(name)
    return re.sub(r"(?<![^\W_])_", r"\\_", name)


def code(text: object) -> str:
    """An inline code span that holds any text (a longer backtick fence when the text has backticks)."""
    value = _shown(text)
    longest = max((len(m) for m in re.findall(r"`+", value)), default=0)
    fence = "`" * (longest + 1)
    padded = longest or value.startswith((" ", *_HIGHLIGHT_PREFIX)) or value.endswith(" ")
    pad = " " if padded else ""
    return f"{fence}{pad}{value}{pad}{fence}"


def breakable_code(text: object, after: str = ".=") -> str:
    """Inline code for long dotted keys in narrow table columns: the browser may break the line after
    each character of `after` (a <wbr>), never inside a name. Copying the text copies no break.

    The value lands in raw HTML, whose text Markdown still parses: HTML is escaped and each character
    Markdown would read there is a character reference (it shows the same). `after` must hold no
    letter or digit: an `_` is left as it is only when a letter or a digit is right before it."""
    value = _HTML_ACTIVE.sub(_reference, html.escape(_shown(text), quote=False))
    for ch in after:
        value = value.replace(ch, ch + "<wbr>")
    return f"<code>{value}</code>"


def html_text(text: object) -> str:
    """Text (or an attribute value) inside a raw HTML block: one line, HTML and quotes escaped, and
    each character Markdown reads in inline HTML written as a character reference (it shows the
    same)."""
    return _HTML_ACTIVE.sub(_reference, html.escape(_shown(text), quote=True))


def html_link(text_html: str, target: str) -> str:
    """<a href> for raw HTML; `text_html` must already be HTML. A target `safe_target` refuses is
    shown as text after the link text, not linked."""
    href = safe_target(target)
    if href is None:
        return f"{text_html} ({html_text(target)})"
    return f'<a href="{html.escape(href, quote=True)}">{text_html}</a>'


def figure(svg: str, caption: str = "", key: str = "") -> str:
    """An SVG figure inlined in the page: a raw HTML block (md_in_html, `markdown="0"`) that MkDocs
    passes through unchanged. `svg` comes from rlcat.docsite.figures (its text escaped there);
    the caption is plain text; `key` (hex digits and a dash) is the drawing's, which lets the next
    generation take it from the page (rlcat.docsite.figures.drawn)."""
    assert re.fullmatch(r"[0-9a-f-]*", key), key
    shown = f"<figcaption>{html_text(caption)}</figcaption>\n" if caption else ""
    drawn = f' data-rlc-figure="{key}"' if key else ""
    return f'<figure class="rlc-figure"{drawn} markdown="0">\n{svg.strip()}\n{shown}</figure>\n'


def fence(text: str, lang: str = "", attrs: str = "", indent: int = 0) -> str:
    """A fenced code block (longer fence when the text holds one), optionally indented for a tab."""
    text = "\n".join(printable(line) for line in text.split("\n"))
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


def safe_target(target: str) -> str | None:
    """`target` written for a Markdown link, or None when a browser could open it as anything but an
    http(s) URL or a relative link to a page of the site.

    Refused: another scheme (`javascript:`, `data:`, `vbscript:`, in any case), a protocol-relative
    or absolute path (`//host`, `/path`, `\\host`), and anything a browser would read differently
    than it shows: whitespace or hidden characters (browsers drop tabs and newlines from a URL) and
    character references (`java&#115;cript:`), which the HTML would decode."""
    if (
        not target
        or html.unescape(target) != target
        or "\\" in target
        or any(ch.isspace() or unicodedata.category(ch)[0] in "CZ" for ch in target)
    ):
        return None
    scheme = re.match(r"([A-Za-z][A-Za-z0-9+.\-]*):", target)
    if scheme:
        if scheme.group(1).lower() not in SAFE_SCHEMES or not target[scheme.end() :].startswith("//"):
            return None
    elif target.startswith("/"):
        return None
    return urllib.parse.quote(target, safe=_URL_SAFE)


def link(text: str, target: str, title: str = "") -> str:
    """[text](target "title"); `text` must already be Markdown. A target `safe_target` refuses is
    shown as text after the link text, not linked."""
    href = safe_target(target)
    if href is None:
        return f"{text} ({esc(target)})"
    shown_title = f' "{html.escape(printable(title))}"' if title else ""
    return f"[{text}]({href}{shown_title})"


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

"""What every figure shares: a matplotlib figure without pyplot, text made inert, and the SVG text
written deterministically and ready to inline in a page.

- No pyplot and no global backend: a `Figure` is drawn by the SVG backend's own canvas, so building
  the docs changes no process-wide matplotlib state (the settings below hold inside `rc_context`).
- Deterministic: `svg.hashsalt` fixed (clip-path and marker ids are hashes), no date or creator in
  the metadata, DejaVu Sans (shipped with matplotlib, so text is measured the same everywhere).
- Text stays text (`svg.fonttype` 'none'): numbers and labels are `<text>` a reader can select and
  a test can find. matplotlib escapes text and attributes for XML; `plain` makes the one thing it
  would still interpret, `$...$` mathtext, literal.
- Inlined: no XML prolog or DOCTYPE, and every id scoped by the figure's name, so two figures on a
  page never share an id (ids starting with `rlc-` are public and kept as they are).
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from rlcat.diagnostics import printable
from rlcat.docsite.md import anchor

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

HASH_SALT = "rlcat-docs"
# A figure costs about 0.1-0.3 s to draw and some show on several pages (a recipe's charts on each
# of its results' pages): each drawing is kept by its (hashable) input, at most this many.
CACHED_FIGURES = 512
FONT = "DejaVu Sans"
PUBLIC_ID_PREFIX = "rlc-"
_RC: dict[Any, Any] = {
    "svg.hashsalt": HASH_SALT,
    "svg.fonttype": "none",
    "svg.id": None,
    "font.family": "sans-serif",
    "font.sans-serif": [FONT],
    "font.size": 9.0,
    "axes.unicode_minus": False,
    "path.simplify": True,
}
_METADATA = re.compile(r"\s*<metadata>.*?</metadata>", re.S)
_STYLE = re.compile(r"\s*<style[^>]*>[^<]*</style>")
_TAG = re.compile(r"<[^<>]*>")
_PATH_DATA = re.compile(r'\bd="([^"]*)"')
_NUMBER = re.compile(r"-?\d+\.\d+")
_ID_ATTR = re.compile(r"""\bid=(["'])([^"']*)\1""")
_ID_REF = re.compile(r"""(url\(#|xlink:href=["']#)([^)"']+)""")


def plain(text: object) -> str:
    """Text shown exactly as written: one line per line, hidden characters as escapes, and `$`
    escaped so that matplotlib never reads it as mathtext."""
    lines = str(text).split("\n")
    return "\n".join(printable(line) for line in lines).replace("$", r"\$")


def text_width(text: str, size: float) -> float:
    """About how wide `text` is at `size` points, in inches (DejaVu Sans averages 0.6 em, its widest
    letters 0.8 em): margins are laid out from this rather than measured by a second drawing pass
    (a tight bounding box), which would double the cost of every figure."""
    return len(text) * size * 0.65 / 72


def axes_at(fig: Figure, *, left: float, bottom: float, width: float, height: float) -> Axes:
    """Axes placed in inches from the figure's lower left corner."""
    fig_w, fig_h = fig.get_size_inches()
    return fig.add_axes((left / fig_w, bottom / fig_h, width / fig_w, height / fig_h))


@contextmanager
def figure(width: float, height: float) -> Iterator[Figure]:
    """A figure of `width` × `height` inches, with the docs' settings in force while it is drawn."""
    import matplotlib
    from matplotlib.figure import Figure

    with matplotlib.rc_context(_RC):
        yield Figure(figsize=(width, height), dpi=72)


def svg_text(fig: Figure, name: str) -> str:
    """The figure as SVG to inline in HTML: deterministic, ids scoped by `name`."""
    from matplotlib.backends.backend_svg import FigureCanvasSVG

    FigureCanvasSVG(fig)
    out = io.StringIO()
    fig.savefig(out, format="svg", metadata={"Date": None, "Creator": None})
    svg = out.getvalue()
    svg = svg[svg.index("<svg") :]
    # inside an HTML page an SVG <style> applies to the whole document: its two rules live in the
    # site's stylesheet instead (generate.CSS), scoped to the figures; the metadata says nothing
    svg = _METADATA.sub("", _STYLE.sub("", svg))
    scope = "rlcfig-" + (anchor(name) or "figure")
    return _TAG.sub(lambda m: _scoped(m.group(0), scope), svg).strip() + "\n"


def _compact_path(match: re.Match[str]) -> str:
    """Path data on one line, coordinates to 0.01 pt (matplotlib writes a vertex per line with six
    decimals: a chart of a few runs is then about half the size, for pages MkDocs reads faster)."""
    data = _NUMBER.sub(lambda m: f"{float(m.group(0)):.2f}".rstrip("0").rstrip("."), match.group(1))
    return 'd="' + " ".join(data.split()) + '"'


def _scoped(tag: str, scope: str) -> str:
    """One tag with its path data compacted, its ids and id references scoped, and its link opening
    in the same tab (matplotlib adds target="_blank" to every link)."""

    def own(value: str) -> str:
        return value if value.startswith(PUBLIC_ID_PREFIX) else f"{scope}-{value}"

    tag = _PATH_DATA.sub(_compact_path, tag)
    tag = _ID_ATTR.sub(lambda m: f"id={m.group(1)}{own(m.group(2))}{m.group(1)}", tag)
    tag = _ID_REF.sub(lambda m: m.group(1) + own(m.group(2)), tag)
    return tag.replace(' target="_blank"', "")

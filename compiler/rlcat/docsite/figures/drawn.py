"""Figures drawn before: a figure whose drawing would come out the same is taken from the page that
already holds it, not drawn again.

Every figure the generator inlines carries a key in its `<figure>` element,
`data-rlc-figure="INPUT-SVG"`: INPUT hashes what the drawing is made from (the kind of figure, its
input, the source of rlcat.docsite.figures and matplotlib's version), SVG hashes the drawing's own
text. Generating the pages again reads the figures of the pages under docs/ once; a figure whose
INPUT is found there, with a drawing that still hashes to its SVG part, is taken as it is. Drawing
is deterministic (rlcat.docsite.figures.svg), so the page comes out byte for byte as a new drawing
would make it: a build where no figure changed draws none and imports no matplotlib (1.4 s of the
shipped build, a seventh of it), `--check` compares the same bytes, and a figure whose input, drawing
code or matplotlib changed is drawn anew, as is one edited by hand. A catalog's site is generated in
a temporary folder without pages: it draws every figure.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rlcat.diagnostics import RlcatError
from rlcat.files import read_text

_FIGURE = re.compile(
    r'<figure class="rlc-figure" data-rlc-figure="([0-9a-f]{32})-([0-9a-f]{16})" markdown="0">\n'
    r"(<svg\b.*?</svg>)\n",
    re.S,
)


@functools.cache
def _drawing_code() -> bytes:
    """What the drawings depend on besides their input: the source of the modules that draw (this
    one, which draws nothing, left out) and matplotlib's version."""
    digest = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        if path.name != Path(__file__).name:
            digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    try:
        matplotlib = importlib.metadata.version("matplotlib")
    except importlib.metadata.PackageNotFoundError:  # no figure matches: drawing one says what is missing
        matplotlib = "absent"
    digest.update(matplotlib.encode())
    return digest.digest()


def _svg_hash(svg: str) -> str:
    return hashlib.sha256(svg.encode("utf-8")).hexdigest()[:16]


class Drawn:
    """The figures of the pages in `docs` (none when it is None), by the hash of their input."""

    def __init__(self, docs: Path | None) -> None:
        self._docs = docs
        self._found: dict[str, str] | None = None

    def _read(self) -> dict[str, str]:
        found: dict[str, str] = {}
        if self._docs is None or not self._docs.is_dir():
            return found
        for path in sorted(self._docs.rglob("*.md")):
            try:  # a page as a build wrote it; anything else (a FIFO, a huge file) holds no figure
                text = read_text(path, str(path))
            except RlcatError:
                continue
            if "data-rlc-figure" not in text:
                continue
            for match in _FIGURE.finditer(text):
                key, svg_hash, svg = match.groups()
                if _svg_hash(svg) == svg_hash:  # a drawing edited by hand is drawn again
                    found[key] = svg
        return found

    def figure(self, draw: Callable[..., str], *args: Any, **kwargs: Any) -> tuple[str, str]:
        """(the SVG, its key) of the figure `draw(*args, **kwargs)` makes: taken from a page that
        holds it, or drawn. The arguments must hold all the drawing is made from, with a stable repr
        (the figures' dataclasses, tuples, strings, numbers)."""
        digest = hashlib.sha256(_drawing_code())
        digest.update(
            f"\0{draw.__module__}.{draw.__qualname__}\0{args!r}\0{sorted(kwargs.items())!r}".encode()
        )
        key = digest.hexdigest()[:32]
        if self._found is None:
            self._found = self._read()
        svg = self._found.get(key)
        if svg is None:
            svg = draw(*args, **kwargs).strip()
            self._found[key] = svg
        return svg, f"{key}-{_svg_hash(svg)}"

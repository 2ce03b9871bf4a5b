"""Build the site with MkDocs (Python API) and serve it; MkDocs is imported here only.

Two builds of the same checkout give identical files: the build time stamp MkDocs uses is pinned
(SOURCE_DATE_EPOCH), and the sitemap, which needs a site_url this site does not have and would carry
that stamp, is not written.

Material's search plugin parses the whole HTML of every page, then leaves out the sections whose
heading says `data-search-exclude`, and of an inlined SVG figure it keeps only the text. A recipe page
ends with such sections (the plan of every platform: most of its bytes) and holds a figure of
hundreds of shapes, so the build hands the plugin each page without its excluded tail and with each
figure reduced to its `<text>` elements, then puts the page back as it was
(`search_reads_less`): the same index and the same pages as a plain `mkdocs build`, in a fifth of
the time the plugin took.
"""

from __future__ import annotations

import functools
import http.server
import importlib.util
import json
import logging
import os
import re
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rlcat.diagnostics import Diagnostic, RlcatError, diag
from rlcat.files import replace_dir

if TYPE_CHECKING:
    from mkdocs.plugins import BasePlugin

# Any fixed date: the sitemap (dropped) is the only output that would show it.
SOURCE_DATE_EPOCH = "315532800"  # 1980-01-01, the earliest date a zip file can hold
DROPPED = ("sitemap.xml", "sitemap.xml.gz")
# A heading with an id opens a section of the search index (Material's search Parser); one marked
# data-search-exclude opens a section the index leaves out.
_HEADING = re.compile(r"<h[1-6]\b[^>]*>")
# What the search plugin strips from the HTML it indexed; the parts it never saw get the same.
_SEARCH_ATTRS = re.compile(r'\s?data-search-\w+="[^"]+"')
# An inlined figure and its text: the search Parser keeps an SVG's text data and none of its tags.
_SVG = re.compile(r"<svg\b.*?</svg>", re.S)
_SVG_TEXT = re.compile(r"<text\b[^>]*>.*?</text>", re.S)


def need_mkdocs() -> None:
    if any(importlib.util.find_spec(name) is None for name in ("mkdocs", "material")):
        raise RlcatError(
            [
                Diagnostic(
                    "RLC105",
                    "rlcat docs needs MkDocs and the Material theme",
                    hint="pip install 'rlcat[docs]'  (or: pip install mkdocs mkdocs-material)",
                )
            ]
        )


@contextmanager
def _environment() -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in ("SOURCE_DATE_EPOCH", "NO_MKDOCS_2_WARNING")}
    os.environ["SOURCE_DATE_EPOCH"] = SOURCE_DATE_EPOCH
    os.environ["NO_MKDOCS_2_WARNING"] = "1"  # Material's start-up banner, not a build problem
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _not_the_dirty_warning(record: logging.LogRecord) -> bool:
    """MkDocs warns of every dirty build that links may go stale, which strict mode makes an error:
    rlcat builds dirty only when the list of pages (the nav, every page's links) is unchanged."""
    return not record.getMessage().startswith("A 'dirty' build is being performed")


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def excluded_tail(content: str) -> int | None:
    """Where the page's excluded tail starts: the first heading marked data-search-exclude, when
    every heading with an id after it is marked too (so the index holds nothing from there on).
    The generator writes these headings at the top level of the page (`## name {#id
    data-search-exclude}`), where a section ends only at the next heading."""
    start = None
    for match in _HEADING.finditer(content):
        tag = match.group(0)
        if "data-search-exclude" in tag:
            start = match.start() if start is None else start
        elif start is not None and re.search(r"\bid=", tag):
            return None
    return start


def searchable(content: str) -> str:
    """What the search plugin needs of a page to index it as it would the whole page: the page up
    to its excluded tail, each SVG figure reduced to its <text> elements (one per line: the Parser
    makes the whitespace between them a single space, as between the figure's other tags)."""
    start = excluded_tail(content)
    head = content if start is None else content[:start]
    return _SVG.sub(lambda m: "\n".join(_SVG_TEXT.findall(m.group(0))), head)


def search_reads_less() -> BasePlugin[Any]:
    """A plugin whose page_context handlers run around the search plugin's: the first hands it the
    searchable part of the page, the last puts the whole page back (with the attributes the search
    plugin strips stripped)."""
    from mkdocs.plugins import BasePlugin, CombinedEvent, event_priority

    class SearchReadsLess(BasePlugin):  # type: ignore[type-arg,no-untyped-call]
        def __init__(self) -> None:
            self.pages: dict[str, str] = {}

        @event_priority(100)  # before the search plugin (0)
        def _cut(self, context: object, /, *, page: Any, **_: object) -> object:
            if page.content:
                self.pages[page.file.src_uri] = page.content
                page.content = searchable(page.content)
            return context

        @event_priority(-100)  # after it
        def _restore(self, context: object, /, *, page: Any, **_: object) -> object:
            whole = self.pages.pop(page.file.src_uri, None)
            if whole is not None:
                page.content = _SEARCH_ATTRS.sub("", whole)
            return context

        on_page_context = CombinedEvent(_cut, _restore)

    return SearchReadsLess()


def build_site(root: Path, out: Path, *, dirty: bool = False) -> list[str]:
    """Build docs/ (as mkdocs.yml describes it) into `out`; returns MkDocs' warnings (none in strict
    mode, where a warning fails the build with RLC105). `dirty` builds over the site in `out` only
    the pages whose Markdown is newer than their HTML (MkDocs' --dirty), for `rlcat docs serve` after
    an edit that left the nav as it was; the search index keeps the entries of the pages not built
    again (MkDocs' search plugin would index only the pages it built)."""
    need_mkdocs()
    from mkdocs.commands.build import build
    from mkdocs.config import load_config
    from mkdocs.exceptions import MkDocsException

    logger = logging.getLogger("mkdocs")
    build_log = logging.getLogger("mkdocs.commands.build")
    build_log.addFilter(_not_the_dirty_warning)
    collect = _Collect()
    propagate, level = logger.propagate, logger.level
    logger.addHandler(collect)
    logger.propagate = False  # MkDocs' INFO lines are noise here; warnings are collected
    logger.setLevel(logging.INFO)
    try:
        with _environment():
            config = load_config(str(root / "mkdocs.yml"), site_dir=str(out.resolve()))
            config.plugins["rlcat/search-reads-less"] = search_reads_less()
            index = out / SEARCH_INDEX
            kept = json.loads(index.read_text(encoding="utf-8")) if dirty and index.is_file() else None
            build(config, dirty=dirty)
            if kept is not None:
                _keep_unbuilt_entries(index, kept)
    except MkDocsException as exc:
        lines = "; ".join(collect.messages) or str(exc)
        raise RlcatError([Diagnostic("RLC105", f"the site does not build: {exc}", hint=lines)]) from None
    finally:
        build_log.removeFilter(_not_the_dirty_warning)
        logger.removeHandler(collect)
        logger.propagate, logger.level = propagate, level
    for name in DROPPED:
        (out / name).unlink(missing_ok=True)
    return collect.messages


SEARCH_INDEX = "search/search_index.json"


def _keep_unbuilt_entries(index: Path, before: dict[str, Any]) -> None:
    """Put back into the search index the entries of pages a dirty build did not build again."""
    now = json.loads(index.read_text(encoding="utf-8"))
    built = {doc["location"].partition("#")[0] for doc in now["docs"]}
    kept = [doc for doc in before["docs"] if doc["location"].partition("#")[0] not in built]
    now["docs"] = sorted([*now["docs"], *kept], key=lambda doc: doc["location"])
    index.write_text(json.dumps(now, separators=(",", ":")), encoding="utf-8")


def build_into(root: Path, out: Path) -> None:
    """Build the site of `root` into a fresh folder next to `out`, which replaces `out` only once the
    build succeeded: a failed build leaves `out` as it was, never half a site. `out` must be new, an
    empty folder or a site built before (it holds index.html): rlcat never deletes other files."""
    check_out(out)

    def fill(staging: Path) -> None:
        build_site(root, staging)

    try:
        replace_dir(out, f".{out.name}.building-", fill)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise RlcatError(
            [diag("RLC106", f"cannot write the site ({reason}); nothing was written", file=str(out))]
        ) from None


def check_out(out: Path) -> None:
    """Refuse, before any work, a site folder that cannot be written or holds other files (RLC106)."""
    existing = next(p for p in [out, *out.absolute().parents] if p.exists() or p.is_symlink())
    if existing != out and not (existing.is_dir() and os.access(existing, os.W_OK | os.X_OK)):
        reason = "permission denied" if existing.is_dir() else f"{existing} is not a folder"
        raise RlcatError(
            [diag("RLC106", f"cannot write the site ({reason}); nothing was written", file=str(out))]
        )
    if existing != out:
        return
    if out.is_symlink() or not out.is_dir():
        raise RlcatError([diag("RLC106", "not a folder; nothing was written", file=str(out))])
    try:
        holds_files = any(out.iterdir())
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise RlcatError(
            [diag("RLC106", f"cannot read the folder ({reason}); nothing was written", file=str(out))]
        ) from None
    if holds_files and not (out / "index.html").is_file():
        raise RlcatError(
            [
                diag(
                    "RLC106",
                    "the folder holds files that are not a built site; nothing was written",
                    file=str(out),
                    hint="name a new or empty folder: building replaces the folder's whole content",
                )
            ]
        )


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serves files without a log line per request."""

    def log_message(self, format: str, *args: object) -> None:
        pass


class SiteServer(http.server.ThreadingHTTPServer):
    """A browser that leaves a page drops the requests it no longer needs: not an error."""

    def handle_error(self, request: object, client_address: object) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)  # type: ignore[arg-type]


def server(directory: Path, port: int = 0, host: str = "127.0.0.1") -> SiteServer:
    """An HTTP server for a built site (port 0: any free port); call serve_forever() on it."""
    handler = functools.partial(QuietHandler, directory=str(directory))
    return SiteServer((host, port), handler)


def serve(directory: Path, port: int, host: str = "127.0.0.1", timeout: float = 0) -> None:
    """Serve a built site until Ctrl-C, or for `timeout` seconds when it is positive."""
    with server(directory, port, host) as httpd:
        url = f"http://{host}:{httpd.server_address[1]}/"
        until = f"for {timeout:g} s" if timeout > 0 else "until Ctrl-C"
        sys.stdout.write(f"serving {directory} at {url} ({until})\n")
        sys.stdout.flush()
        if timeout > 0:
            stopper = threading.Timer(timeout, httpd.shutdown)
            stopper.start()
            try:
                httpd.serve_forever()
            finally:
                stopper.cancel()
        else:
            httpd.serve_forever()

"""A cache of successful `rlcat compile` runs, keyed by the command and checked against every file
the run read (recipes, catalog entries, key indexes, the folders names were looked up in, and
rlcat's own code). A hit replays the run's output without importing pydantic, so a repeated
compile costs little more than Python's start-up; any changed file is a miss.

Only the standard library is imported here. Set RLCAT_NO_CACHE=1 to turn it off, RLCAT_CACHE_DIR
to move it (default: $XDG_CACHE_HOME/rlcat or ~/.cache/rlcat).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

from .files import atomic_write

FORMAT = 1
PACKAGE = Path(__file__).resolve().parent


def cache_dir() -> Path | None:
    if os.environ.get("RLCAT_NO_CACHE"):
        return None
    explicit = os.environ.get("RLCAT_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "rlcat"


def key(argv: list[str]) -> str:
    """Everything besides file contents that decides the output: the command, where it runs from,
    the user's catalog path, and the interpreter."""
    parts = [str(FORMAT), sys.executable, os.getcwd(), os.environ.get("RLCAT_PATH", ""), *argv]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def _stamp(path: str) -> list[int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_mtime_ns, st.st_size]


def _code_files() -> list[str]:
    return sorted(str(p) for p in PACKAGE.rglob("*.py"))


def lookup(argv: list[str]) -> dict[str, Any] | None:
    """The recorded run for this command, if every file it depended on is unchanged."""
    folder = cache_dir()
    if folder is None:
        return None
    try:
        entry: dict[str, Any] = json.loads((folder / f"{key(argv)}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    deps: dict[str, Any] = entry.get("deps", {})
    if entry.get("format") != FORMAT or sorted(deps) != sorted(set(deps) | set(_code_files())):
        return None
    if any(_stamp(path) != stamp for path, stamp in deps.items()):
        return None
    return entry


def replay(entry: dict[str, Any]) -> int:
    for path, text in entry.get("files", {}).items():
        atomic_write(Path(path), text)
    sys.stdout.write(entry.get("stdout", ""))
    sys.stderr.write(entry.get("stderr", ""))
    return 0


def store(argv: list[str], deps: list[str], stdout: str, stderr: str, files: dict[str, str]) -> None:
    """Record a successful run; a cache that cannot be written is silently skipped."""
    folder = cache_dir()
    if folder is None:
        return
    stamps = {path: _stamp(path) for path in [*deps, *_code_files()]}
    if any(s is None for s in stamps.values()):
        return
    entry = {
        "format": FORMAT,
        "argv": argv,
        "deps": stamps,
        "stdout": stdout,
        "stderr": stderr,
        "files": files,
    }
    try:
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write(folder / f"{key(argv)}.json", json.dumps(entry))
    except OSError:
        pass

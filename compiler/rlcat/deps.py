"""The files and folders a command read, so that its output can be cached against them."""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

_read: dict[str, None] = {}  # ordered set of absolute paths


def record(path: Path) -> None:
    """Note that a file's content (or a folder's listing) shaped this command's output."""
    _read[_absolute(str(path), os.getcwd())] = None


@cache
def _absolute(path: str, cwd: str) -> str:
    return str(Path(cwd, path).resolve())


def recorded() -> list[str]:
    return list(_read)


def reset() -> None:
    _read.clear()

"""Where rlcat's data lives: the built-in catalog (inside the wheel, or the checkout) and user roots."""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent


@cache
def builtin_root() -> Path:
    """The folder holding catalog/, recipes/ and schemas/.

    In a wheel they are copied to rlcat/_data; in a checkout (editable install) they sit at the
    repository's top level, two folders above this package (compiler/rlcat).
    """
    packaged = PACKAGE_DIR / "_data"
    if packaged.is_dir():
        return packaged
    return PACKAGE_DIR.parent.parent


def repo_root() -> Path | None:
    """The checkout this package runs from, if any (generators write there)."""
    root = PACKAGE_DIR.parent.parent
    return root if (root / "pyproject.toml").is_file() else None


def user_roots(extra: list[Path] | None = None) -> list[Path]:
    """User catalog folders: --catalog options first, then RLCAT_PATH entries."""
    roots = list(extra or [])
    env = os.environ.get("RLCAT_PATH", "")
    roots += [Path(p) for p in env.split(os.pathsep) if p]
    return roots


def schemas_dir() -> Path:
    return builtin_root() / "schemas"


def display_path(path: Path) -> str:
    """A short, stable name for a file in diagnostics and provenance: relative to its data root."""
    return _display(str(path), os.getcwd())


@cache
def _display(path: str, cwd: str) -> str:
    # cached: validating a thousand recipes asks for the same few names thousands of times
    resolved = Path(path).resolve()
    for base in (builtin_root(), Path(cwd)):
        try:
            return resolved.relative_to(base.resolve()).as_posix()
        except ValueError:
            continue
    return path

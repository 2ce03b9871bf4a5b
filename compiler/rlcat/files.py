"""Writing files so that a failure never leaves a partial one."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path


def atomic_write(path: Path, text: str) -> None:
    """Write to a temporary file beside `path`, then rename it over `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def replace_dir(dest: Path, prefix: str, fill: Callable[[Path], None]) -> None:
    """Fill a fresh folder next to `dest`, then swap it in for `dest`: a fill that fails or is
    interrupted leaves `dest` as it was, never half-populated."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=prefix, dir=dest.parent))
    try:
        fill(staging)
        staging.chmod(0o755)  # mkdtemp makes it private; the folder is ordinary shared data
        if dest.exists():
            shutil.rmtree(dest)
        staging.replace(dest)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)

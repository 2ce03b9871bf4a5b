"""The catalog on disk: recipes, models, datasets and platform profiles, found by name.

Files are named after their entry (`recipes/geo3k_megatron_4_4.yaml` holds recipe
`geo3k_megatron_4_4`), so a lookup opens one file instead of parsing the whole catalog.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Literal

from rlcat.diagnostics import RlcatError, diag, suggestion_hint

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


@cache
def repo_root() -> Path | None:
    """The rlcat checkout this package runs from (generators write there), or None for an installed
    wheel. Only a pyproject.toml that declares the rlcat project counts: an installed rlcat may sit
    in a site-packages inside some unrelated project, whose root must not be written to."""
    pyproject = PACKAGE_DIR.parent.parent / "pyproject.toml"
    try:
        declares_rlcat = 'name = "rlcat"' in pyproject.read_text(encoding="utf-8")
    except OSError:
        return None
    return pyproject.parent if declares_rlcat else None


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


Kind = Literal["recipe", "model", "dataset", "platform"]
KIND_DIRS: dict[Kind, str] = {
    "recipe": "recipes",
    "model": "catalog/models",
    "dataset": "catalog/datasets",
    "platform": "catalog/platforms",
}


@dataclass
class Catalog:
    """Search roots in order (user roots first, the built-in catalog last); the first match wins."""

    roots: list[Path] = field(default_factory=list)
    _names: dict[Kind, dict[str, Path]] = field(default_factory=dict, repr=False)

    @classmethod
    def default(cls, extra: list[Path] | None = None) -> Catalog:
        return cls([*user_roots(extra), builtin_root()])

    def names(self, kind: Kind) -> dict[str, Path]:
        """Every entry of a kind, name → file (recursive: nested folders are searched too)."""
        if kind not in self._names:
            found: dict[str, Path] = {}
            for root in self.roots:
                folder = root / KIND_DIRS[kind]
                if kind == "recipe" and not folder.is_dir() and root != builtin_root():
                    folder = root  # a user folder may hold recipe files directly
                if not folder.is_dir():
                    continue
                for path in sorted(folder.rglob("*.yaml")):
                    found.setdefault(path.stem, path)
            self._names[kind] = found
        return self._names[kind]

    def find(
        self,
        kind: Kind,
        name: str,
        *,
        file: str | None = None,
        line: int | None = None,
        key: str | None = None,
    ) -> Path:
        """The file of a named entry, or a diagnostic with close names."""
        table = self.names(kind)
        if name in table:
            return table[name]
        code = {"recipe": "RLC201", "platform": "RLC204"}.get(kind, "RLC202")
        where = ", ".join(dict.fromkeys(display_path(r / KIND_DIRS[kind]) for r in self.roots))
        raise RlcatError(
            [
                diag(
                    code,
                    f"unknown {kind} '{name}'",
                    file=file,
                    line=line,
                    key=key,
                    hint=suggestion_hint(name, table) or f"{kind}s are looked up in: {where}",
                )
            ]
        )

"""The catalog on disk: recipes, models, datasets and platform profiles, found by name.

Files are named after their entry (`recipes/geo3k_megatron_4_4.yaml` holds recipe
`geo3k_megatron_4_4`), so a lookup opens one file instead of parsing the whole catalog.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from .diagnostics import RlcatError, diag, suggestion_hint
from .paths import builtin_root, display_path, user_roots

Kind = Literal["recipe", "model", "dataset", "platform"]
KIND_DIRS: dict[Kind, str] = {
    "recipe": "recipes",
    "model": "catalog/models",
    "dataset": "catalog/datasets",
    "platform": "catalog/platforms",
}


# Not dataclasses: importing dataclasses (it imports inspect) is a measurable part of a cold compile.
class Catalog:
    """Search roots in order (user roots first, the built-in catalog last); the first match wins."""

    __slots__ = ("_names", "roots")

    def __init__(
        self, roots: list[Path] | None = None, _names: dict[Kind, dict[str, Path]] | None = None
    ) -> None:
        self.roots: list[Path] = [] if roots is None else roots
        self._names: dict[Kind, dict[str, Path]] = {} if _names is None else _names

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

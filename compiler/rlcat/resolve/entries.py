"""Catalog entries by name, validated against their schema, with the origin of what they bring."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

from rlcat.catalog import Catalog, Kind, display_path
from rlcat.diagnostics import Diagnostic, RlcatError, diag
from rlcat.model.base import to_fill_in, todo_markers
from rlcat.model.plan import Layer, Origin
from rlcat.model.platform import PlatformProfile
from rlcat.model.validate import validate
from rlcat.read.document import Document, load_yaml, with_yaml11_hints

M = TypeVar("M", bound=BaseModel)


def validate_document(model: type[M], doc: Document) -> M:
    """Validate a parsed file as `model`; schema findings point at it, with YAML 1.1 hints."""
    try:
        return validate(model, doc.data, doc.locate)
    except RlcatError as exc:
        raise RlcatError(with_yaml11_hints(exc.diagnostics, doc.yaml11_hints())) from None


def check_name(doc: Document, path: Path, kind: str, name: str) -> None:
    """Entries are found by file name, so the `name:` inside must be the file's stem."""
    if name == path.stem:
        return
    line, col = doc.positions.get(("name",), (None, None))
    raise RlcatError(
        [
            diag(
                "RLC103",
                f"{kind} file {path.name} declares name '{name}'",
                file=doc.file,
                line=line,
                col=col,
                key="name",
                hint=f"a {kind}'s name is its file name: use '{path.stem}'",
            )
        ]
    )


def todo_problems(model: type[BaseModel], doc: Document) -> list[Diagnostic]:
    """RLC107 at every `TODO:` marker of an entry file (model.base.is_todo: what `rlcat import`
    writes where its source does not say a value), with what the field holds as the hint."""
    found = []
    for path, marker in todo_markers(doc.data):
        key = ".".join(str(p) for p in path)
        found.append(
            diag(
                "RLC107",
                f"{key} is left to fill in: {marker!r}",
                **doc.locate(path),
                key=key,
                hint=f"replace the marker with the real value: {to_fill_in(model, str(path[0]))}",
            )
        )
    return found


# Validated catalog entries per parsed file (entries are frozen models, safe to share).
_entries: dict[tuple[str, int, type[BaseModel]], tuple[Document, BaseModel]] = {}


def load_entry(
    kind: Kind,
    name: str,
    model: type[M],
    catalog: Catalog,
    *,
    file: str | None = None,
    line: int | None = None,
    key: str | None = None,
) -> tuple[M, Origin]:
    """Load and validate a catalog entry by name; its origin points at the entry's file."""
    path = catalog.find(kind, name, file=file, line=line, key=key)
    doc = load_yaml(path, display_path(path))
    cached = _entries.get((kind, id(doc), model))
    if cached is not None and cached[0] is doc:
        entry = cached[1]
    else:
        entry = validate_document(model, doc)
        check_name(doc, path, kind, getattr(entry, "name", name))
        _entries[(kind, id(doc), model)] = (doc, entry)
    return entry, Origin(Layer.RECIPE, f"catalog {kind} {name}", doc.file, 1)  # type: ignore[return-value]


def load_platform(name: str, catalog: Catalog) -> tuple[PlatformProfile, Origin]:
    return load_entry("platform", name, PlatformProfile, catalog)

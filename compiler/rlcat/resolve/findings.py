"""Findings on the file under review."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from rlcat.catalog import Kind, kind_at, origin_note
from rlcat.diagnostics import Diagnostic, Where
from rlcat.read.document import Document

# A team's pull request changes its own recipe files: a finding that points at a parent recipe it
# inherits from (often a built-in one, which its repository does not even have) would never reach
# the diff. Such findings are reported on the recipe, and where they pointed becomes a note.

# The recipe field that brings in another file: where a finding about that file lands.
ANCHOR_FIELDS: dict[Kind, str] = {"recipe": "extends", "model": "model", "dataset": "dataset"}


def relocate(
    diagnostics: Iterable[Diagnostic],
    target: str,
    anchors: Mapping[Kind, Where],
    moves: Callable[[str], bool],
) -> list[Diagnostic]:
    """Findings located in a file that `moves` accepts, reported on `target` instead: at the anchor
    for that file's kind (the `extends:` line for a parent recipe, `model:` or `dataset:` for those
    entries), else on the file as a whole; where each pointed is kept as a note (origin_note)."""
    out = []
    for d in diagnostics:
        if d.file is None or d.file == target or not moves(d.file):
            out.append(d)
            continue
        anchor = anchors.get(kind_at(Path(d.file).parts)) or {"file": target}
        out.append(d.moved(anchor, origin_note(d.file, d.line, d.col)))
    return out


def recipe_anchors(doc: Document) -> dict[Kind, Where]:
    """Where findings about the files a recipe file brings in land in it (see ANCHOR_FIELDS)."""
    return {kind: doc.locate((field,)) for kind, field in ANCHOR_FIELDS.items() if (field,) in doc.positions}

"""Recipe data merged from its files and layers, with the origin of every value: the merges, the
platform block, --set."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from rlcat.arguments import split_assignment
from rlcat.catalog import origin_note
from rlcat.diagnostics import Diagnostic, RlcatError, Where, diag, dotted, suggestion_hint
from rlcat.model.plan import Layer, Origin
from rlcat.read.document import Document, WhereKey
from rlcat.read.nodes import Path_
from rlcat.read.values import read_value
from rlcat.resolve.findings import ANCHOR_FIELDS, relocate

# Fields a platform block or --set may change; the identity of a recipe (its axes, model and
# dataset) is fixed by the recipe itself and chosen on the command line with --engine/--mode.
LAYER_FIELDS = (
    "resources",
    "parallelism",
    "batch",
    "rollout",
    "actor",
    "algo",
    "reward",
    "critic",
    "async",
    "trainer",
    "env",
    "overrides",
)


@dataclass
class Source:
    """Recipe data merged from its files and layers, and the origin of every value in it."""

    data: dict[str, Any]
    origins: dict[Path_, Origin]
    files: list[str] = field(default_factory=list)
    # hints for schema findings about values YAML 1.1 reads differently, by where the finding points
    yaml11_hints: dict[WhereKey, str] = field(default_factory=dict)
    # the recipe's own file on disk (its `files` are display names): where its repository is
    path: Path | None = None
    # the values a recipe replaced of its parents' (extends), each with its origin, parent first:
    # `rlcat explain` shows every layer, the parent recipe's among them
    shadowed: dict[Path_, list[tuple[Any, Origin]]] = field(default_factory=dict)

    def origin(self, path: Path_) -> Origin | None:
        return self.origins.get(path)

    def locate(self, path: tuple[str | int, ...]) -> Where:
        """Where a value is, or its nearest ancestor (missing fields point at their parent); a
        command-line value points at its argument, never at an enclosing file."""
        while True:
            origin = self.origins.get(path)
            if origin is not None:
                return origin.position()
            if not path:
                return {"file": self.files[-1] if self.files else None}
            path = path[:-1]

    @property
    def recipe_file(self) -> str | None:
        """The file of the recipe itself (its ancestors come first in `files`)."""
        return self.files[-1] if self.files else None

    def at_own_field(self, found: Diagnostic, field_path: str) -> Diagnostic:
        """A finding about an inherited value, at the recipe's own `field_path` that makes it one
        (unchanged when the recipe does not set that field), with the inherited origin as a note."""
        own = self.origins.get(tuple(field_path.split(".")))
        if (
            found.file is None
            or found.file not in self.files[:-1]
            or own is None
            or own.file != self.recipe_file
        ):
            return found
        return found.moved(own.position(), origin_note(found.file, found.line, found.col))

    def onto_recipe(self, diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
        """Findings located in an ancestor recipe (a value the recipe inherits) reported on the
        recipe itself, at its `extends:` line, with the inherited origin as a note."""
        target, ancestors = self.recipe_file, set(self.files[:-1])
        if target is None or not ancestors:
            return list(diagnostics)
        anchors = {
            kind: self.origins[(field,)].position()
            for kind, field in ANCHOR_FIELDS.items()
            if (field,) in self.origins and self.origins[(field,)].file == target
        }
        return relocate(diagnostics, target, anchors, ancestors.__contains__)


_origins_memo: dict[tuple[int, Layer], tuple[Document, dict[Path_, Origin]]] = {}


def origins_from(doc: Document, layer: Layer) -> dict[Path_, Origin]:
    """The origin of every value of a parsed file (memoised per document: parents are shared)."""
    memo = _origins_memo.get((id(doc), layer))
    if memo is None or memo[0] is not doc:
        origins = {
            path: Origin(layer, f"{doc.file}:{line}", doc.file, line, col)
            for path, (line, col) in doc.positions.items()
        }
        memo = _origins_memo[(id(doc), layer)] = (doc, origins)
    return dict(memo[1])


def _merge(
    base: Any, patch: Any, origins: dict[Path_, Origin], patch_origins: dict[Path_, Origin], path: Path_
) -> Any:
    """Deep-merge mappings; a scalar or list in the patch replaces the base value with its origins.

    Linear in the size of both: the origins a replaced value drops are found by walking that value,
    and the ones a patch value brings by walking it, never by scanning every origin per key."""
    if isinstance(base, dict) and isinstance(patch, dict):
        merged = dict(base)
        for key, value in patch.items():
            child = (*path, key)
            if key in merged:
                merged[key] = _merge(merged[key], value, origins, patch_origins, child)
            else:
                merged[key] = value
                _take_origins(origins, patch_origins, child, None, value)
            if child in patch_origins:
                origins[child] = patch_origins[child]
        return merged
    _take_origins(origins, patch_origins, path, base, patch)
    return patch


def _take_origins(
    origins: dict[Path_, Origin], patch_origins: dict[Path_, Origin], path: Path_, replaced: Any, value: Any
) -> None:
    """`value` replaces `replaced` at `path`: the origins below the old value go, and every origin the
    patch has at or below the new one comes (origins only ever name paths of their data)."""
    for stale in _paths_below(replaced, path):
        origins.pop(stale, None)
    if path in patch_origins:
        origins[path] = patch_origins[path]
    for fresh in _paths_below(value, path):
        if fresh in patch_origins:
            origins[fresh] = patch_origins[fresh]


def _paths_below(value: Any, path: Path_) -> Iterator[Path_]:
    """Every path strictly inside `value` (found at `path`), without recursion."""
    stack = [(value, path)]
    while stack:
        node, at = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, child in items:
            inner = (*at, key)
            yield inner
            stack.append((child, inner))


def merge_layer(source: Source, patch: dict[str, Any], patch_origins: dict[Path_, Origin]) -> Source:
    """A new Source with `patch` merged over `source`."""
    origins = dict(source.origins)
    data = _merge(source.data, patch, origins, patch_origins, ())
    return Source(data, origins, list(source.files), source.yaml11_hints, source.path, source.shadowed)


def layer_patch(
    source: Source, patch: dict[str, Any], patch_origins: dict[Path_, Origin], what: str, key_prefix: str = ""
) -> Source:
    """Merge a platform block or command-line settings, refusing fields outside LAYER_FIELDS."""
    for key in patch:
        _refuse_outside_layer_fields(key, what, key_prefix, patch_origins.get((key,)))
    return merge_layer(source, patch, patch_origins)


def _refuse_outside_layer_fields(
    key: str, what: str, key_prefix: str = "", origin: Origin | None = None
) -> None:
    if key in LAYER_FIELDS:
        return
    raise RlcatError(
        [
            diag(
                "RLC101",
                f"{what} cannot set '{key}'",
                file=origin.file if origin else None,
                line=origin.line if origin else None,
                col=origin.col if origin else None,
                key=key_prefix + key,
                hint=suggestion_hint(key, LAYER_FIELDS) or "allowed here: " + ", ".join(LAYER_FIELDS),
            )
        ]
    )


def platform_block(source: Source, names: list[str]) -> Source:
    """Merge the recipe's `platforms:` blocks that match the platform (family first, then its name)."""
    blocks = source.data.get("platforms")
    if not isinstance(blocks, dict):
        return source
    for name in names:
        block = blocks.get(name)
        if not isinstance(block, dict):
            continue
        prefix: Path_ = ("platforms", name)
        patch_origins = {
            p[2:]: Origin(Layer.PLATFORM_BLOCK, f"recipe platforms.{name} block", o.file, o.line, o.col)
            for p, o in source.origins.items()
            if p[:2] == prefix and len(p) > 2
        }
        source = layer_patch(
            source, block, patch_origins, f"the platforms.{name} block", f"platforms.{name}."
        )
    return source


def command_line_sets(source: Source, assignments: list[str]) -> Source:
    """Apply `--set section.field=value` (value in YAML syntax) as the command-line layer."""
    for text in assignments:
        dotted_key, raw = split_assignment(text, "--set", "section.field", "batch.mini_batch_size=64")
        argument = f"--set {text}"
        value, notes = _recipe_value(raw, argument)
        parts = tuple(dotted_key.split("."))
        if not all(parts):
            raise RlcatError(
                [diag("RLC105", f"--set expects section.field=value, got '{text}'", argument=argument)]
            )
        _refuse_outside_layer_fields(parts[0], "--set")
        source = replace_at(source, parts, value, Origin(Layer.COMMAND_LINE, argument))
        if notes:  # findings about every part of the value point at the argument, and name the part
            where = (None, None, None, argument)
            hints: dict[WhereKey, str] = {(*where, dotted((*parts, *inner))): n for inner, n in notes.items()}
            source.yaml11_hints = {**source.yaml11_hints, **hints}
    return source


def _recipe_value(raw: str, argument: str) -> tuple[Any, dict[Path_, str]]:
    """A --set value read as recipe files read values (YAML 1.2, with 1e-6 a number), and its notes
    on YAML 1.1; text that is not YAML stays text."""
    if not raw.strip():
        return "", {}
    try:
        return read_value(raw, argument)
    except yaml.YAMLError:
        return raw, {}


def replace_at(source: Source, path: tuple[str, ...], value: Any, origin: Origin) -> Source:
    """Set one field to `value` (a mapping replaces the field whole: --set means set, not merge)."""
    # copy only the mappings along the path: the rest is shared, and recipe data is never changed in place
    data = dict(source.data)
    node = data
    for part in path[:-1]:
        child = node.get(part)
        node[part] = child = dict(child) if isinstance(child, dict) else {}
        node = child
    node[path[-1]] = value
    n = len(path)
    origins = {p: o for p, o in source.origins.items() if not (p[:n] == path and len(p) > n)}
    for i in range(1, n + 1):
        origins[path[:i]] = origins.get(path[:i], origin) if i < n else origin
    return Source(data, origins, list(source.files), source.yaml11_hints, source.path, source.shadowed)

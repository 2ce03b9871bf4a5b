"""Resolve a recipe: follow `extends`, merge layers (platform block, --set), look up catalog entries.

Values keep their origin through every merge, so a value inherited from a parent recipe points at
the parent file and a value from a platform block points at that block.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel

from rlcat.arguments import split_assignment
from rlcat.catalog import Catalog, Kind, display_path, kind_at, origin_note, walk_entries
from rlcat.diagnostics import Diagnostic, RlcatError, Where, diag, dotted, suggestion_hint
from rlcat.model.axes import NAME_PATTERN
from rlcat.model.catalog import DatasetEntry, ModelEntry
from rlcat.model.plan import Layer, Origin
from rlcat.model.platform import PlatformProfile
from rlcat.model.recipe import Recipe
from rlcat.model.validate import validate
from rlcat.read.document import Document, WhereKey, load_yaml, with_yaml11_hints
from rlcat.read.nodes import Path_
from rlcat.read.values import read_value

M = TypeVar("M", bound=BaseModel)

# Ancestors a recipe may have through `extends`: real ones have one to three; the bound keeps a
# hostile chain of thousands of files from being read and merged.
MAX_EXTENDS = 32

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


def _origins_from(doc: Document, layer: Layer) -> dict[Path_, Origin]:
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
    return Source(data, origins, list(source.files), source.yaml11_hints)


def is_path_ref(ref: str) -> bool:
    return ref.endswith((".yaml", ".yml")) or "/" in ref or "\\" in ref


def load_recipe_source(ref: str, catalog: Catalog) -> Source:
    """Load a recipe by name or path, following `extends` through the catalog. A path given as a
    link is followed only inside its catalog root (or the working folder), as lookups follow links."""
    if is_path_ref(ref):
        path = Path(ref)
        walk = walk_entries(path, catalog.root_of(path) or Path.cwd())
        if walk.problems:
            raise RlcatError(walk.problems)
    else:
        path = catalog.find("recipe", ref)
    return _merge_chain(_extends_chain(path, catalog))


def _extends_chain(path: Path, catalog: Catalog) -> list[tuple[Path, Document]]:
    """The recipe file and its ancestors through `extends`, child first (a loop, not a recursion:
    the chain is bounded by MAX_EXTENDS, and each refusal points at the `extends` that causes it)."""
    chain: list[tuple[Path, Document]] = []
    names: list[str] = []
    while True:
        doc = load_yaml(path, display_path(path))
        chain.append((path, doc))
        name = doc.data.get("name")
        if isinstance(name, str):
            check_name(doc, path, "recipe", name)
        parent = doc.data.get("extends")
        if parent is None:
            return chain
        line, col = doc.positions.get(("extends",), (None, None))
        where: Where = {"file": doc.file, "line": line, "col": col}
        if not isinstance(parent, str):
            raise RlcatError(
                [diag("RLC102", "`extends` takes the name of another recipe", **where, key="extends")]
            )
        names.append(name if isinstance(name, str) else path.stem)
        if parent in names:
            loop = " → ".join([*names, parent])
            raise RlcatError(
                [
                    diag(
                        "RLC203",
                        f"extends cycle: {loop}",
                        **where,
                        key="extends",
                        hint="a recipe cannot extend itself or one that extends it",
                    )
                ]
            )
        if not re.fullmatch(NAME_PATTERN.strip("^$"), parent) or len(parent) > 100:
            # never a path: extends can only reach recipes in the catalog roots, by name
            raise RlcatError(
                [
                    diag(
                        "RLC103",
                        f"'{parent}' is not a recipe name",
                        **where,
                        key="extends",
                        hint="extends takes the name of a catalog recipe, not a file path",
                    )
                ]
            )
        if len(chain) > MAX_EXTENDS:
            raise RlcatError(
                [
                    diag(
                        "RLC007",
                        f"extends chain longer than {MAX_EXTENDS} recipes: '{parent}' would be "
                        f"ancestor {len(chain)} of {chain[0][1].file}",
                        **where,
                        key="extends",
                        hint="a recipe extends a base recipe, which may extend one more; flatten the chain",
                    )
                ]
            )
        path = catalog.find("recipe", parent, file=doc.file, line=line, key="extends")


def _merge_chain(chain: list[tuple[Path, Document]]) -> Source:
    """Merge an extends chain (child first) from its root down: each child over its parent."""
    hints: dict[WhereKey, str] = {}
    for _, doc in chain:
        hints.update(doc.yaml11_hints())
    root = chain[-1][1]
    source = Source(root.data, _origins_from(root, Layer.RECIPE), [root.file], hints)
    for path, doc in reversed(chain[:-1]):
        origins = _origins_from(doc, Layer.RECIPE)
        child = {k: v for k, v in doc.data.items() if k != "extends"}
        merged = merge_layer(source, child, origins)
        merged.data["extends"] = doc.data["extends"]
        if "provenance" not in doc.data:
            merged.data.pop("provenance", None)  # the parent's upstream file is not the child's
        merged.origins[("extends",)] = origins[("extends",)]
        if () in origins:
            merged.origins[()] = origins[()]  # findings about the whole recipe point at the child
        merged.files.append(doc.file)
        if "name" not in doc.data:
            raise RlcatError(
                [
                    diag(
                        "RLC104",
                        f"recipe file {path.name} has no name (it would take its parent's)",
                        file=doc.file,
                        line=1,
                        key="name",
                        hint=f"add `name: {path.stem}`",
                    )
                ]
            )
        source = merged
    return source


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
    return Source(data, origins, list(source.files), source.yaml11_hints)


def validate_recipe(source: Source) -> Recipe:
    """The merged data as a Recipe; a schema finding about an inherited value is reported on the
    recipe (Source.onto_recipe)."""
    try:
        return validate(Recipe, source.data, source.locate)
    except RlcatError as exc:
        found = with_yaml11_hints(exc.diagnostics, source.yaml11_hints)
        raise RlcatError(source.onto_recipe(found)) from None


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


@dataclass(frozen=True)
class Resolved:
    """A validated recipe with its catalog entries and the origin of each of its values."""

    recipe: Recipe
    source: Source
    model: ModelEntry
    model_origin: Origin
    dataset: DatasetEntry
    dataset_origin: Origin

    def origin(self, field_path: str) -> Origin:
        """Who set a recipe field: the file position that set it, or rlcat's default on the field."""
        path = tuple(field_path.split("."))
        found = self.source.origin(path)
        if found is not None:
            return found
        return Origin(Layer.RECIPE, f"rlcat default of {field_path}")


def resolve(source: Source, catalog: Catalog) -> Resolved:
    """Validate the merged recipe data and look up its model and dataset."""
    recipe = validate_recipe(source)
    known = catalog.names("platform")
    for block in recipe.platforms:
        if block not in known:  # a block for a platform that does not exist is a typo
            raise RlcatError(
                [
                    diag(
                        "RLC204",
                        f"platforms.{block}: unknown platform '{block}'",
                        **source.locate(("platforms", block)),
                        key=f"platforms.{block}",
                        hint=suggestion_hint(block, known),
                    )
                ]
            )
    refs = {}
    kinds: tuple[tuple[Kind, type[BaseModel]], ...] = (("model", ModelEntry), ("dataset", DatasetEntry))
    for kind, entry_model in kinds:
        name = getattr(recipe, kind)
        where = source.locate((kind,))
        refs[kind] = load_entry(
            kind, name, entry_model, catalog, file=where.get("file"), line=where.get("line"), key=kind
        )
    model, model_origin = refs["model"]
    dataset, dataset_origin = refs["dataset"]
    assert isinstance(model, ModelEntry) and isinstance(dataset, DatasetEntry)
    # what the entries bring was set by the recipe's `model:` and `dataset:` fields
    return Resolved(
        recipe,
        source,
        model,
        replace(model_origin, field="model"),
        dataset,
        replace(dataset_origin, field="dataset"),
    )


def load_platform(name: str, catalog: Catalog) -> tuple[PlatformProfile, Origin]:
    return load_entry("platform", name, PlatformProfile, catalog)


# --- findings on the file under review -------------------------------------------------------------
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


__all__ = ["Resolved", "Source", "load_platform", "load_recipe_source", "resolve"]

"""The types verl's config dataclasses declare, read from a release tree's source (never imported).

A YAML default shows one type; the dataclass a config section is instantiated into may declare
more (`rollout_is_threshold: str | float = 2.0` takes `"0.5_2.0"` as well as `2.0`). verl converts a
section with a `_target_` into that class, and its nested sections into the classes its field
annotations name (`rollout_correction: Optional[RolloutCorrectionConfig]`), so the annotation is
what verl accepts. The key index records such a union where the YAML default shows one member of it.

Classes are found by name in the module or package the `_target_` names (verl re-exports them from
the package's `__init__`); the source is parsed with `ast`, as importing verl would need its
dependencies (torch) and run its code.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

# Annotation names → the key index's type vocabulary (build_index._TYPES).
_SCALARS = {
    "str": "str",
    "int": "int",
    "float": "float",
    "bool": "bool",
    "None": "null",
    "list": "list",
    "List": "list",
    "ListConfig": "list",
    "tuple": "list",
    "dict": "dict",
    "Dict": "dict",
    "DictConfig": "dict",
}
_WRAPPERS = {"Optional", "Union"}


def union_types(tree: Path, container: dict[str, Any]) -> dict[str, tuple[str, ...]]:
    """`{dotted key: member types}` for every leaf of the composed `container` whose dataclass field
    is annotated with a union of two or more types (None aside), members in annotation order."""
    return dict(_walk(tree, container, None, ""))


def _walk(
    tree: Path, node: dict[str, Any], cls: tuple[str, str] | None, prefix: str
) -> Iterator[tuple[str, tuple[str, ...]]]:
    target = node.get("_target_")
    if isinstance(target, str) and target.startswith("verl.") and "." in target:
        module, _, name = target.rpartition(".")
        cls = (module, name)
    fields = _fields(tree, *cls) if cls else {}
    for key, value in node.items():
        annotation = fields.get(str(key))
        if isinstance(value, dict):
            nested = _dataclass_named(annotation) if annotation is not None else None
            inner = (cls[0], nested) if cls and nested else None
            yield from _walk(tree, value, inner, f"{prefix}{key}.")
            continue
        if annotation is None:
            continue
        members = tuple(dict.fromkeys(_members(annotation)))
        if None not in members and len([m for m in members if m != "null"]) >= 2:
            yield f"{prefix}{key}", tuple(str(m) for m in members if m != "null")


def _members(annotation: ast.expr) -> Iterator[str | None]:
    """The index types a field annotation admits; None for one the vocabulary has no name for."""
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        yield from _members(annotation.left)
        yield from _members(annotation.right)
    elif isinstance(annotation, ast.Subscript):
        name = _name(annotation.value)
        if name in _WRAPPERS:
            inner = annotation.slice
            for element in inner.elts if isinstance(inner, ast.Tuple) else [inner]:
                yield from _members(element)
            if name == "Optional":
                yield "null"
        else:
            yield _SCALARS.get(name or "")
    elif isinstance(annotation, ast.Constant) and annotation.value is None:
        yield "null"
    elif isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        yield from _members(ast.parse(annotation.value, mode="eval").body)  # a quoted annotation
    else:
        yield _SCALARS.get(_name(annotation) or "")


def _dataclass_named(annotation: ast.expr) -> str | None:
    """The one class an annotation names besides None (`Optional[RolloutCorrectionConfig]`)."""
    names = [n for n in _names(annotation) if n not in _SCALARS and n not in _WRAPPERS]
    return names[0] if len(names) == 1 else None


def _names(annotation: ast.expr) -> Iterator[str]:
    for node in ast.walk(annotation):
        name = _name(node) if isinstance(node, ast.expr) else None
        if name is not None:
            yield name


def _name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


@cache
def _fields(tree: Path, module: str, name: str) -> dict[str, ast.expr]:
    """The annotated fields of class `name` (its bases' first, as dataclasses order them)."""
    found = _class_def(tree, module, name)
    if found is None:
        return {}
    fields: dict[str, ast.expr] = {}
    for base in found.bases:
        base_name = _name(base)
        if base_name is not None and base_name != name:
            fields.update(_fields(tree, module, base_name))
    for statement in found.body:
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            fields[statement.target.id] = statement.annotation
    return fields


def _class_def(tree: Path, module: str, name: str) -> ast.ClassDef | None:
    found = _class_location(tree, module, name)
    return found[1] if found else None


def _class_location(tree: Path, module: str, name: str) -> tuple[Path, ast.ClassDef] | None:
    """The file and definition of class `name` in `module`'s file, or anywhere in its package
    (sorted paths, so the first definition found is the same on every machine)."""
    base = tree / Path(*module.split("."))
    files = [base.with_suffix(".py")] if base.with_suffix(".py").is_file() else sorted(base.rglob("*.py"))
    for file in files:
        for node in _parsed(file).body:
            if isinstance(node, ast.ClassDef) and node.name == name:
                return file, node
    return None


@cache
def _parsed(file: Path) -> ast.Module:
    return ast.parse(file.read_text(encoding="utf-8"), filename=str(file))


def refused_values(tree: Path, container: dict[str, Any]) -> dict[str, list[list[str]]]:
    """`{dotted key: [[value, verl's message, "file:line"], ...]}`: the values a dataclass's
    `__post_init__` refuses by name (`if self.mode == "sync": raise ValueError("...removed...")`),
    for every section the composed `container` builds into a verl dataclass. Read from the release's
    own code, so a value a release removes, or brings back, is known from that release alone."""
    found: dict[str, list[list[str]]] = {}
    for prefix, (module, name) in _sections(container, ""):
        located = _class_location(tree, module, name)
        if located is None:
            continue
        file, definition = located
        for field_name, value, message, line in _refusals(definition):
            where = f"{file.relative_to(tree).as_posix()}:{line}"
            found.setdefault(f"{prefix}{field_name}", []).append([value, message, where])
    return found


def _sections(node: dict[str, Any], prefix: str) -> Iterator[tuple[str, tuple[str, str]]]:
    """(prefix, (module, class)) of every section with a verl `_target_`."""
    target = node.get("_target_")
    if isinstance(target, str) and target.startswith("verl.") and "." in target:
        module, _, name = target.rpartition(".")
        yield prefix, (module, name)
    for key, value in node.items():
        if isinstance(value, dict):
            yield from _sections(value, f"{prefix}{key}.")


def _refusals(definition: ast.ClassDef) -> Iterator[tuple[str, str, str, int]]:
    """(field, value, message, line) of each `if self.<field> == "<value>": raise E("<message>")`
    at the top of the class's `__post_init__`."""
    for item in definition.body:
        if not (isinstance(item, ast.FunctionDef) and item.name == "__post_init__"):
            continue
        for statement in item.body:
            if not (
                isinstance(statement, ast.If) and statement.body and isinstance(statement.body[0], ast.Raise)
            ):
                continue
            test, raised = statement.test, statement.body[0].exc
            if not (
                isinstance(test, ast.Compare)
                and len(test.ops) == 1
                and isinstance(test.ops[0], ast.Eq)
                and isinstance(test.left, ast.Attribute)
                and isinstance(test.left.value, ast.Name)
                and test.left.value.id == "self"
                and isinstance(test.comparators[0], ast.Constant)
                and isinstance(test.comparators[0].value, str)
            ):
                continue
            message = ""
            if isinstance(raised, ast.Call) and raised.args and isinstance(raised.args[0], ast.Constant):
                message = str(raised.args[0].value)
            yield test.left.attr, test.comparators[0].value, message, statement.lineno

"""`rlcat validate`: every finding in recipe and catalog files, for pull-request checks.

Unlike `compile`, which stops at the first stage that fails, validation visits every file and
reports what each one gets wrong: YAML errors, schema errors, references, and for recipes the
compile on every platform the recipe targets (guards and key-index checks included).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel

from rlcat.catalog import Catalog, display_path
from rlcat.diagnostics import Diagnostic, RlcatError, Severity, diag
from rlcat.model.catalog import DatasetEntry, ModelEntry
from rlcat.model.platform import PlatformProfile
from rlcat.model.validate import validate
from rlcat.pipeline.assemble import Request, compile_request
from rlcat.pipeline.load import load_yaml
from rlcat.pipeline.resolve import check_name, load_recipe_source, resolve

# A recipe is checked on the project's two primary platforms and on every platform its
# `platforms:` block names, unless --platform says otherwise.
DEFAULT_TARGETS = ("cuda", "rocm")
ENTRY_MODELS: dict[str, type[BaseModel]] = {
    "models": ModelEntry,
    "datasets": DatasetEntry,
    "platforms": PlatformProfile,
}
UNREADABLE = {"RLC001", "RLC006", "RLC007"}  # input that could not be read at all (exit 2)


@dataclass
class Report:
    files: int = 0
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def count(self, severity: Severity) -> int:
        return sum(1 for d in self.diagnostics if d.severity == severity)


def collect(paths: Iterable[Path]) -> tuple[list[Path], list[Diagnostic]]:
    """YAML files under the given files and folders (recursive), and diagnostics for missing paths."""
    files: list[Path] = []
    problems: list[Diagnostic] = []
    for path in paths:
        if path.is_dir():
            files += sorted(
                p
                for p in path.rglob("*")
                if p.suffix in (".yaml", ".yml")
                and p.is_file()
                and not any(part.startswith(".") for part in p.relative_to(path).parts)
            )
        elif path.is_file() or path.is_symlink():
            files.append(path)
        else:
            problems.append(diag("RLC001", f"no such file or folder: {path}", file=str(path)))
    return list(dict.fromkeys(files)), problems


def roots_for(paths: Iterable[Path]) -> list[Path]:
    """Catalog roots implied by the paths: a folder holding recipes/ or catalog/, or the folder above
    a recipes/ or catalog/ folder a file sits in."""
    roots: list[Path] = []
    for path in paths:
        for candidate in [path, *path.parents] if path.exists() else []:
            if candidate.is_dir() and ((candidate / "recipes").is_dir() or (candidate / "catalog").is_dir()):
                roots.append(candidate)
                break
    return list(dict.fromkeys(roots))


def kind_of(path: Path) -> str:
    """recipe, or the catalog kind named by the folder the file sits in (catalog/models/...)."""
    parts = path.resolve().parts
    for i in range(len(parts) - 2, 0, -1):
        if parts[i - 1] == "catalog" and parts[i] in ENTRY_MODELS:
            return parts[i]
    return "recipe"


def validate_paths(paths: list[Path], catalog: Catalog, platforms: list[str] | None = None) -> Report:
    """Validate every YAML file under `paths`; never raises for problems in the files."""
    files, problems = collect(paths)
    report = Report(len(files), list(problems))
    for path in files:
        report.diagnostics += validate_file(path, catalog, platforms)
    return report


def validate_file(path: Path, catalog: Catalog, platforms: list[str] | None) -> list[Diagnostic]:
    kind = kind_of(path)
    try:
        if kind != "recipe":
            return _validate_entry(path, kind)
        return _validate_recipe(path, catalog, platforms)
    except RlcatError as exc:
        return exc.diagnostics


def _validate_entry(path: Path, kind: str) -> list[Diagnostic]:
    doc = load_yaml(path, display_path(path))
    entry = validate(ENTRY_MODELS[kind], doc.data, doc.locate)
    check_name(doc, path, kind[:-1], getattr(entry, "name", path.stem))
    return []


def _validate_recipe(path: Path, catalog: Catalog, platforms: list[str] | None) -> list[Diagnostic]:
    source = load_recipe_source(str(path), catalog)
    recipe = resolve(source, catalog).recipe
    targets = platforms or list(dict.fromkeys([*DEFAULT_TARGETS, *recipe.platforms]))
    known = catalog.names("platform")
    targets = [t for t in targets if t in known]
    found: dict[tuple[object, ...], tuple[Diagnostic, list[str]]] = {}
    for platform in targets:
        try:
            diagnostics = compile_request(Request(str(path), platform), catalog, source).diagnostics
        except RlcatError as exc:
            diagnostics = exc.diagnostics
        for d in diagnostics:
            key = (d.code, d.file, d.line, d.col, d.key, d.message)
            found.setdefault(key, (d, []))[1].append(platform)
    out = []
    for d, on in found.values():
        if len(on) < len(targets):  # say where a finding holds when it does not hold everywhere
            out.append(
                Diagnostic(
                    d.code,
                    f"{d.message} (on {', '.join(on)})",
                    d.severity,
                    d.file,
                    d.line,
                    d.col,
                    d.key,
                    d.hint,
                )
            )
        else:
            out.append(d)
    return out

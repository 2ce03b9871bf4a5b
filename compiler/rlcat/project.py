"""The project file: what a team's repository tells every rlcat command.

Found as ruff and mypy find theirs: from the working folder upward, the nearest folder holding an
`rlcat.toml` (its top-level keys), or a `pyproject.toml` with a `[tool.rlcat]` table (a
pyproject.toml without one is passed by). In one folder `rlcat.toml` wins. The file may come from a
pull request: it is read bounded, as a regular file only, and every problem is a diagnostic at its
file, line and key.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rlcat.catalog import builtin_root, user_roots
from rlcat.diagnostics import RlcatError, Where, diag, dotted, printable
from rlcat.files import read_text
from rlcat.guards.base import Allowance
from rlcat.inside import link_out, named_path_problem

if TYPE_CHECKING:
    from rlcat.model.project import ProjectSettings

PROJECT_FILE = "rlcat.toml"
PYPROJECT = "pyproject.toml"
MAX_PROJECT_BYTES = 1 << 20  # a project file is a screenful; a megabyte is already absurd
_TOOL_TABLE = ("tool", "rlcat")
_MENTIONS_TOOL_TABLE = re.compile(r"^\s*\[\s*tool\s*\.\s*rlcat\s*[\].]|^\s*tool\s*\.\s*rlcat\s*[.=]", re.M)


@dataclass(frozen=True)
class Project:
    """A project file and its settings; `origins` names, for each setting the file sets, its line."""

    file: Path
    settings: ProjectSettings
    origins: dict[str, int] = field(default_factory=dict)  # setting → line in the file

    @property
    def root(self) -> Path:
        return self.file.parent

    @property
    def catalog(self) -> list[Path]:
        """The catalog folders, absolute (relative ones are relative to the project file)."""
        return [Path(os.path.normpath(self.root / folder)) for folder in self.settings.catalog]

    def catalog_roots(self) -> list[SearchRoot]:
        """The project's catalog folders as search roots. The default, the project's own folder,
        counts once it holds recipes/ or catalog/: the folder of a pyproject.toml is a whole Python
        project, whose other YAML files are no recipes."""
        if "catalog" in self.origins:
            return [SearchRoot(folder, f"catalog of {self.origin('catalog')}") for folder in self.catalog]
        if not _holds_catalog(self.root):
            return []
        return [SearchRoot(self.root, f"the folder of {printable(str(self.file))}")]

    def allowances(self) -> dict[str, Allowance]:
        """The project's `[allow]` entries, each pointing at the project file."""
        line = self.origins.get("allow")
        shown = printable(str(self.file))
        return {
            guard: Allowance(reason, "the project file", shown, line, f"allow.{guard}")
            for guard, reason in self.settings.allow.items()
        }

    @property
    def schemas(self) -> Path:
        return Path(os.path.normpath(self.root / self.settings.schemas))

    def where(self, setting: str) -> Where:
        """Where a finding about a setting the file sets points: the file and its line."""
        return {"file": printable(str(self.file)), "line": self.origins.get(setting, 1)}

    def origin(self, setting: str) -> str:
        """Where a setting comes from: `rlcat.toml:3`, or `default` when the file leaves it out."""
        line = self.origins.get(setting)
        return "default" if line is None else f"{printable(str(self.file))}:{line}"


def default_platform(project: Project | None) -> str:
    """The platform of a command given no --platform: the first of the project's `platforms` (that
    setting's default, without a project file, starts with cuda)."""
    if project is not None:
        return project.settings.platforms[0]
    from rlcat.model.project import ProjectSettings  # the default lives on the field

    return ProjectSettings().platforms[0]


def strict_setting(project: Project | None) -> bool:
    """The project file's `strict`; False without a project file (the setting's default, which a
    test keeps equal), read without loading the settings model."""
    return project.settings.strict if project is not None else False


def find_project(start: Path | None = None) -> Project | None:
    """The project file governing `start` (default: the working folder), read and validated, or
    None when there is none up to the root of the file system."""
    found = _find(os.path.abspath(start or Path.cwd()))
    return None if found is None else read_project(Path(found))


def _find(start: str) -> str | None:
    for folder in [start, *map(str, Path(start).parents)]:
        candidate = os.path.join(folder, PROJECT_FILE)
        if os.path.isfile(candidate):
            return candidate
        pyproject = os.path.join(folder, PYPROJECT)
        if os.path.isfile(pyproject) and _MENTIONS_TOOL_TABLE.search(_read(Path(pyproject))):
            return pyproject
    return None


def read_project(file: Path) -> Project:
    """Read and validate one project file; RlcatError with file:line:key diagnostics if it is bad."""
    return _read_project(os.path.abspath(file))


def _read_project(path: str) -> Project:
    # imported here: a folder without a project file is the common case for a cold `rlcat lint`
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib

    file = Path(path)
    shown = printable(str(file))
    # the project's settings are the project's own: not a file elsewhere that a link names (whether a
    # pyproject.toml holds [tool.rlcat] was read to find it; nothing of it is shown)
    outside = link_out(file, os.path.realpath(file.parent), shown)
    if outside is not None:
        raise RlcatError([outside])
    text = _read(file)
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line, col = _error_position(str(exc), text)
        raise RlcatError(
            [
                diag(
                    "RLC013",
                    f"not valid TOML: {_without_position(str(exc))}",
                    file=shown,
                    line=line,
                    col=col,
                    hint="https://toml.io describes the syntax",
                )
            ]
        ) from None
    prefix: tuple[str, ...] = _TOOL_TABLE if file.name == PYPROJECT else ()
    table: Any = document
    for part in prefix:
        table = table.get(part, {}) if isinstance(table, Mapping) else {}
    if not isinstance(table, Mapping):
        raise RlcatError([diag("RLC004", "[tool.rlcat] is not a table", file=shown, key="tool.rlcat")])
    # imported here: the settings model loads pydantic, which a command in a folder without a project
    # file never needs (a cold `rlcat lint`, bench/lint_scripts.py)
    from rlcat.model.project import ProjectSettings
    from rlcat.model.validate import validate

    lines = _KeyLines(text.splitlines(), prefix, shown)
    settings = validate(ProjectSettings, table, lines.locate)
    _refuse_paths_outside(file.parent, settings, lines)
    origins = {name: lines.line_of((name,)) or 1 for name in table}
    origins |= _launch_origins(table, lines)
    return Project(file, settings, origins)


def _launch_origins(table: Mapping[str, Any], lines: _KeyLines) -> dict[str, int]:
    """The lines of `[launch]`'s settings, as `launch.NAME` and `launch.slurm.NAME`: a launch's
    finding about one of them points there."""
    found: dict[str, int] = {}
    launch = table.get("launch")
    if not isinstance(launch, Mapping):
        return found
    for name, value in launch.items():
        found[f"launch.{name}"] = lines.line_of(("launch", name)) or found.get("launch", 1)
        if name == "slurm" and isinstance(value, Mapping):
            for inner in value:
                found[f"launch.slurm.{inner}"] = lines.line_of(("launch", "slurm", inner)) or 1
    return found


def _refuse_paths_outside(root: Path, settings: ProjectSettings, lines: _KeyLines) -> None:
    """The folders the project file names stay inside the project (inside.named_path_problem):
    commands read catalogs there and write schemas, recipes and results there. RLC011 at the file,
    line and key of each one that does not."""
    named: list[tuple[tuple[str | int, ...], str]] = [(("schemas",), settings.schemas)]
    named += [(("catalog", i), folder) for i, folder in enumerate(settings.catalog)]
    found = [
        diag(
            "RLC011",
            printable(problem),
            **lines.locate(path),
            key=dotted(path),
            hint="rlcat reads and writes inside the project only: move or copy the folder in",
        )
        for path, folder in named
        if (problem := named_path_problem(root, folder)) is not None
    ]
    if found:
        raise RlcatError(found)


def _read(file: Path) -> str:
    """A project file's text: a regular file, at most MAX_PROJECT_BYTES, UTF-8 (rlcat.files.read_text)."""
    return read_text(file, printable(str(file)), limit=MAX_PROJECT_BYTES)


_POSITION = re.compile(r"\s*\(at line (\d+), column (\d+)\)$")


def _error_position(message: str, text: str) -> tuple[int, int]:
    found = _POSITION.search(message)
    if found:
        return int(found.group(1)), int(found.group(2))
    return text.count("\n") + 1, 1  # "(at end of document)"


def _without_position(message: str) -> str:
    return printable(_POSITION.sub("", message).replace(" (at end of document)", " at the end"))


@dataclass
class _KeyLines:
    """Lines of keys in a small TOML file, for diagnostics: tomllib keeps no positions, so a key is
    found as `name =` (or `name.`) under its table's header, or as the header `[table.name]`."""

    lines: list[str]
    prefix: tuple[str, ...]
    file: str

    def locate(self, path: tuple[str | int, ...]) -> Where:
        return {"file": self.file, "line": self.line_of(path) or self._table_line() or 1}

    def line_of(self, path: tuple[str | int, ...]) -> int | None:
        names = [str(p) for p in path if isinstance(p, str)]
        if not names:
            return None
        # `[tool.rlcat.allow]` then `RLC303 = ...`, or `allow = {...}` / `allow.RLC303 = ...` in the table
        nested = self._key_under([*self.prefix, *names[:-1]], names[-1]) if len(names) > 1 else None
        return (
            nested or self._key_under(list(self.prefix), names[0]) or self._header([*self.prefix, names[0]])
        )

    def _table_line(self) -> int | None:
        return self._header(list(self.prefix)) if self.prefix else None

    def _header(self, table: list[str]) -> int | None:
        pattern = re.compile(r"^\s*\[\s*" + r"\s*\.\s*".join(map(_key_pattern, table)) + r"\s*\]")
        for number, line in enumerate(self.lines, 1):
            if pattern.match(line):
                return number
        return None

    def _key_under(self, table: list[str], key: str) -> int | None:
        start = self._header(table) if table else 0
        if start is None:
            return None
        assignment = re.compile(r"^\s*" + _key_pattern(key) + r"\s*[.=]")
        for number, line in enumerate(self.lines[start:], start + 1):
            if line.lstrip().startswith("["):
                return None  # the next table begins
            if assignment.match(line):
                return number
        return None


def _key_pattern(key: str) -> str:
    """A TOML key as written bare or quoted."""
    escaped = re.escape(key)
    return f"(?:{escaped}|\"{escaped}\"|'{escaped}')"


@dataclass(frozen=True)
class SearchRoot:
    """A catalog folder lookups search, and why: `--catalog`, a recipe path, RLCAT_PATH, the
    project file, or rlcat's built-in catalog."""

    folder: Path
    source: str
    builtin: bool = False


def search_roots(extra: list[Path] | None, paths: list[Path], project: Project | None) -> list[SearchRoot]:
    """Every catalog folder in lookup order, the first match winning: `--catalog` folders, the
    catalog a recipe path given on the command line sits in, RLCAT_PATH entries, the project's
    catalog folders, the built-in catalog."""
    roots = [SearchRoot(folder, f"--catalog {printable(str(folder))}") for folder in extra or []]
    roots += [
        SearchRoot(folder, f"the catalog of {printable(str(path))}") for path, folder in _roots_of(paths)
    ]
    roots += [SearchRoot(folder, f"RLCAT_PATH entry {printable(str(folder))}") for folder in user_roots()]
    if project is not None:
        roots += project.catalog_roots()
    roots.append(SearchRoot(builtin_root(), "built-in", builtin=True))
    return roots


def _holds_catalog(folder: Path) -> bool:
    return os.path.isdir(folder / "recipes") or os.path.isdir(folder / "catalog")


def _roots_of(paths: list[Path]) -> list[tuple[Path, Path]]:
    """For each path, the catalog root it sits in: the folder holding recipes/ or catalog/ that is
    the path or above it (`os.path.isdir` is false for what cannot be read: the walk reports it)."""
    found = []
    for path in paths:
        for candidate in [path, *path.parents]:
            if _holds_catalog(candidate):
                found.append((path, candidate))
                break
    return found

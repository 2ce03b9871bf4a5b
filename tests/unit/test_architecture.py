"""docs/architecture.md stays true: every folder and top-level module of the package has its row,
every exit code is listed, and every import made inside a function is one of the listed exceptions."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from rlcat.diagnostics import ExitCode

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "compiler" / "rlcat"
PAGE = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")


def _table_rows(heading: str) -> list[list[str]]:
    """The body rows of the first Markdown table after `heading`, as lists of cell texts."""
    section = PAGE[PAGE.index(heading) :]
    rows: list[list[str]] = []
    for line in section.splitlines()[1:]:
        if line.strip().startswith("|"):
            rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
        elif rows:
            break
    return rows[2:] if rows and set(rows[1][0]) <= {"-", " ", ":"} else rows[1:]


def _code_spans(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text)


def _folders() -> list[Path]:
    return sorted(p.parent for p in PACKAGE.rglob("__init__.py") if p.parent != PACKAGE)


def test_every_folder_and_top_level_module_has_a_row() -> None:
    named = {span for row in _table_rows("## The folders") for span in _code_spans(row[1])}
    top_level = [p.name + "/" for p in _folders() if p.parent == PACKAGE]
    modules = [p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py"]
    assert top_level and modules
    assert [name for name in top_level + modules if name not in named] == []


def test_every_nested_folder_is_named_in_its_parents_row() -> None:
    rows = {_code_spans(row[1])[0]: row[2] for row in _table_rows("## The folders")}
    nested = [p for p in _folders() if p.parent != PACKAGE]
    assert nested, "the package has nested folders (guards/config/, docsite/figures/, ...)"
    missing = []
    for folder in nested:
        top = folder.relative_to(PACKAGE).parts[0] + "/"
        if f"`{folder.name}/`" not in rows.get(top, "") and f"`{top}{folder.name}/`" not in rows.get(top, ""):
            missing.append(str(folder.relative_to(PACKAGE)))
    assert missing == []


def test_the_folder_table_lists_the_layers_in_the_contracts_order() -> None:
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    start = pyproject.index("layers = [")
    layers_block = pyproject[start : pyproject.index("]", start)]
    contract = [
        sorted(name.strip().removeprefix("rlcat.") for name in line.split("|"))
        for line in re.findall(r'^\s*"([^"]+)"', layers_block, flags=re.MULTILINE)
    ]
    by_layer: dict[int, list[str]] = {}
    for row in _table_rows("## The folders"):
        name = _code_spans(row[1])[0].removesuffix("/").removesuffix(".py")
        by_layer.setdefault(int(row[0]), []).append(name)
    assert [sorted(names) for _, names in sorted(by_layer.items())] == contract


def test_every_exit_code_is_listed() -> None:
    listed = {int(row[0]) for row in _table_rows("## Exit codes")}
    assert listed == {int(code) for code in ExitCode}


def _imports_inside_functions(path: Path) -> list[str]:
    """Modules imported inside a function or class body (TYPE_CHECKING blocks are not imports)."""
    found: list[str] = []

    def visit(node: ast.AST, nested: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            if nested and isinstance(child, ast.Import):
                found.extend(alias.name for alias in child.names)
            elif nested and isinstance(child, ast.ImportFrom) and child.module:
                found.append(child.module)
            inner = isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            visit(child, nested or inner)

    visit(ast.parse(path.read_text(encoding="utf-8")), False)
    return found


EXCEPTIONS = [(_code_spans(row[0]), row[1]) for row in _table_rows("| imported inside a function")]


def _listed(module: str, where: Path) -> bool:
    relative = str(where.relative_to(PACKAGE))
    for names, places in EXCEPTIONS:
        places_named = _code_spans(places)
        in_place = any(relative == p or (p.endswith("/") and relative.startswith(p)) for p in places_named)
        if in_place and any(module == n or module.startswith(n + ".") for n in names):
            return True
    return False


def test_the_exception_table_is_read() -> None:
    assert len(EXCEPTIONS) >= 10
    assert _listed("matplotlib.figure", PACKAGE / "docsite" / "figures" / "svg.py")
    assert not _listed("matplotlib", PACKAGE / "emit" / "tables.py")


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_every_import_inside_a_function_is_a_listed_exception(path: Path) -> None:
    unlisted = [module for module in _imports_inside_functions(path) if not _listed(module, path)]
    assert unlisted == [], "add a row with its reason to docs/architecture.md, or import at module level"

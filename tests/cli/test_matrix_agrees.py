"""`rlcat matrix` and `rlcat compile` agree on every cell of every recipe (issue 22): a cell is
"supported" (or "untested") only where the recipe compiles there, because the matrix is the compile
(survey.recipes.compile_cells, which the docs' matrix reads too), not a rule of its own."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from import_helpers import SCRIPTS

from rlcat.catalog import Catalog
from rlcat.compile.assemble import Request, compile_request
from rlcat.diagnostics import RlcatError, Severity
from rlcat.docsite.recipes import cell_status
from rlcat.survey.recipes import CompiledCell, matrix, matrix_row

from conftest import Result

COMPILES = ("supported", "untested", "unknown")  # a cell's status where the recipe compiles
FULLY_ASYNC_MEGATRON = [s for s in SCRIPTS if "fully_async_policy" in s and "megatron" in s]


def _compile_errors(recipe: str, platform: str, catalog: Catalog, **axes: str | None) -> list[str]:
    """The error codes of `rlcat compile RECIPE --platform P` with these axes (none: it compiles)."""
    try:
        compiled = compile_request(Request(recipe, platform, **axes), catalog)  # type: ignore[arg-type]
    except RlcatError as exc:
        return [d.code for d in exc.diagnostics if d.severity >= Severity.ERROR]
    return [d.code for d in compiled.diagnostics if d.severity >= Severity.ERROR]


@pytest.mark.slow
@pytest.mark.xdist_group("verl-oracle")  # catalog_site, the whole catalog compiled, is built once there
def test_every_built_in_cell_is_supported_only_where_it_compiles(catalog_site: Any, catalog: Catalog) -> None:
    cells: list[CompiledCell] = catalog_site.cells
    assert {c.recipe for c in cells} == set(catalog.names("recipe"))
    assert {c.platform for c in cells} == set(catalog.names("platform"))
    for cell in cells:
        row = matrix_row(cell)
        assert row.compiles == cell.compiles
        assert (row.status in COMPILES) == cell.compiles or row.status == "known-broken", (cell.recipe, row)
        assert cell.compiles or row.status in ("does not compile", "known-broken"), (cell.recipe, row)
        assert cell_status(cell) != "supported" or cell.compiles  # the docs' word agrees
    # the cells compiled only through --allow-known-broken (to show their plans): without the flag,
    # as a user runs it, `rlcat compile` refuses them for that reason (RLC303) and no other
    flagged = [c for c in cells if c.compiled is not None and c.compiled.known_broken_by_flag]
    assert flagged
    for cell in flagged:
        axes = {"engine": cell.engine, "mode": cell.mode, "backend": cell.backend}
        assert _compile_errors(cell.recipe, cell.platform, catalog, **axes) == ["RLC303"]
        assert matrix_row(cell).errors == ["RLC303"]


@pytest.mark.slow
@pytest.mark.xdist_group("reference-imports")
@pytest.mark.parametrize("name", FULLY_ASYNC_MEGATRON)
def test_imported_fully_async_megatron_cells_agree_with_compile(
    reference_imports: Callable[[str], Any], rlcat: Callable[..., Result], name: str
) -> None:
    """The imported Megatron fully-async recipes: every cell of `rlcat matrix`, on every platform
    (rocm-7.0.2 runs verl 0.7.1, which lacks keys they set), is "supported" only where
    `rlcat compile` compiles it; the recipe's own cells through the command line too."""
    done = reference_imports(name)
    folder: Path = done.folder
    recipe = str(folder / done.imported.recipe_file)
    catalog = Catalog([folder, *Catalog.default().roots])
    rows = matrix(recipe, catalog)
    assert {r.platform for r in rows} == set(catalog.names("platform"))
    own = rows[0]  # the recipe's own mode, engine and backend come first
    for row in rows:
        axes = {"engine": row.engine, "mode": row.mode, "backend": row.backend}
        errors = _compile_errors(recipe, row.platform, catalog, **axes)
        assert row.compiles == (not errors), (row, errors)
        assert (row.status in COMPILES) <= (not errors), (row, errors)
        if (row.mode, row.engine, row.backend) == (own.mode, own.engine, own.backend):
            code = rlcat("compile", recipe, "--platform", row.platform, "--catalog", str(folder)).code
            assert (code == 0) == row.compiles, (row, code)

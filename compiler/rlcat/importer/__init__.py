"""`rlcat import`: an existing verl run (a launch script, a Hydra overrides.yaml, a command line)
turned into a recipe and the catalog entries it needs, then proved by compiling it back.

    read_source (source.py: the static script reader, or the YAML list)
      → Solver (solve.py): the axes, then typed fields found by lowering (probe.py), the rest as
        `overrides:`, keys the release lacks left out
      → place_entries (entries.py): built-in model and dataset entries where one lowers the same
      → recipe_text / entry_text (write.py) → files written whole
      → prove (roundtrip.py): compile for the platform, compare with the source key by key

No verl key is named here: which field sets which key is learnt from the lowering itself
(`Origin.field` of every setting), so new typed fields flow into the import as they are added.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from rlcat import inside
from rlcat.catalog import Catalog
from rlcat.diagnostics import Diagnostic, RlcatError, diag
from rlcat.importer.entries import entry_path, place_entries
from rlcat.importer.roundtrip import Report, prove, render_report, share
from rlcat.importer.solve import Solution, Solver
from rlcat.importer.source import SourceRun, read_source
from rlcat.importer.write import entry_text, recipe_text
from rlcat.lower.context import Target
from rlcat.model.recipe import Provenance
from rlcat.resolve.entries import load_platform
from rlcat.verl.index import groups

__all__ = [
    "Imported",
    "Report",
    "import_run",
    "prove",
    "read_source",
    "render_report",
    "share",
    "target_for",
    "write_files",
]


@dataclass
class Imported:
    """What an import writes, before anything is written."""

    run: SourceRun
    solution: Solution
    name: str
    files: dict[Path, str] = field(default_factory=dict)  # relative to the output folder
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def recipe_file(self) -> Path:
        return Path("recipes") / f"{self.name}.yaml"


def target_for(platform: str, catalog: Catalog) -> Target:
    profile, _ = load_platform(platform, catalog)
    return Target(profile, groups(profile.verl_index))


def import_run(
    run: SourceRun,
    target: Target,
    catalog: Catalog,
    name: str,
    provenance: Provenance | None = None,
    *,
    migrate: bool = False,
) -> Imported:
    """The recipe and entries for one source run (nothing written). `catalog` is searched for
    entries to reuse; it should not hold the output folder (a re-import would match itself).
    `provenance` names the upstream file the source is a copy of; the recipe carries it. A key the
    entrypoint never reads is left out, as the source's run ignored it; `migrate` moves it where
    verl's own migration puts it instead (Solver)."""
    solver = Solver(run, target, migrate=migrate)
    solution = solver.solve()
    result = solver.evaluate(solution.draft)
    draft, new, findings = place_entries(solver, solution.draft, result, catalog, name)
    solution.draft = draft
    imported = Imported(run, solution, name, diagnostics=[*run.diagnostics, *solution.diagnostics, *findings])
    imported.files[imported.recipe_file] = recipe_text(run, solution, name, provenance)
    for entry in new:
        imported.files[entry_path(entry.kind, entry.name)] = entry_text(entry, run, solution)
    return imported


# What a file name may be on Linux and macOS (NAME_MAX); an entry's name stays well under it.
MAX_FILE_NAME_BYTES = 255


def write_files(imported: Imported, folder: Path, *, force: bool) -> list[Path]:
    """Write every file whole (inside.write_files: nothing through a link below `folder`); without
    `force`, refuse (RLC1306, exit 2) before writing anything when one of them is there already."""
    targets = [folder / rel for rel in imported.files]
    too_long = [p for p in targets if len(p.name.encode()) > MAX_FILE_NAME_BYTES]
    if too_long:  # refused before any file is written: an import is written whole or not at all
        raise RlcatError(
            [
                diag(
                    "RLC106",
                    f"a file name of {len(p.name.encode())} bytes: at most {MAX_FILE_NAME_BYTES}; nothing "
                    "was written",
                    file=str(p),
                    hint="pass a shorter --name",
                )
                for p in too_long
            ]
        )
    there = [p for p in targets if os.path.lexists(p)]
    if there and not force:
        raise RlcatError(
            [
                diag(
                    "RLC1306",
                    f"{p} is there already; nothing was written",
                    file=str(p),
                    hint="pass --force to replace it, or choose another -o folder or --name",
                )
                for p in there
            ]
        )
    # below the -o folder nothing is written through a link, nor over a folder or a special file
    files = {rel.as_posix(): text for rel, text in imported.files.items()}
    return inside.write_files(folder, files, overwrite=True)

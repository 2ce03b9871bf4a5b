"""What the commands share: the --catalog option and catalog, choices from registries, diagnostics
on stderr, and output written whole or not at all."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, Optional, TextIO, TypeAlias

import typer

from rlcat.catalog import Catalog
from rlcat.diagnostics import Diagnostic, RlcatError, diag
from rlcat.emit.formats import FORMATS
from rlcat.emit.reporters import REPORTERS
from rlcat.files import atomic_write
from rlcat.model.axes import ALGORITHMS, BACKENDS, ENGINES, MODES

CatalogOpt = Annotated[
    Optional[list[Path]],  # noqa: UP045 - typer reads the annotation at runtime on Python 3.10
    # readable=False: catalog_for checks the folders and says what is wrong in rlcat's own words
    typer.Option(
        "--catalog", readable=False, help="Extra catalog folder (repeatable); RLCAT_PATH also adds folders."
    ),
]


def one_of(names: Iterable[str]) -> Any:
    """The names of a registry as a Literal type: Typer offers exactly these in --help and refuses
    anything else with a usage error naming the option."""
    return Literal[tuple(names)]


# The closed choices of the command line, each from its registry.
if TYPE_CHECKING:  # for the type checker a choice is its value, a str
    AlgorithmName: TypeAlias = str
    BackendName: TypeAlias = str
    EngineName: TypeAlias = str
    ModeName: TypeAlias = str
    PlanFormat: TypeAlias = str
    ReportFormat: TypeAlias = str
    TableFormat: TypeAlias = str
    DiffFormat: TypeAlias = str
else:
    AlgorithmName, BackendName = one_of(ALGORITHMS), one_of(BACKENDS)
    EngineName, ModeName = one_of(ENGINES), one_of(MODES)
    PlanFormat, ReportFormat = one_of(FORMATS), one_of(REPORTERS)
    TableFormat, DiffFormat = one_of(("table", "json")), one_of(("text", "json"))


def catalog_for(extra: list[Path] | None) -> Catalog:
    """The catalog with the --catalog folders (and RLCAT_PATH) in front of the built-in one."""
    for folder in extra or []:
        if not folder.is_dir():
            raise RlcatError([diag("RLC001", f"--catalog {folder}: no such folder", file=str(folder))])
    catalog = Catalog.default(extra)
    for root in catalog.roots:
        if root.is_dir() and not os.access(root, os.R_OK | os.X_OK):
            raise RlcatError([diag("RLC001", f"catalog folder {root}: permission denied", file=str(root))])
    return catalog


class OutputClosed(Exception):
    """The reader of stdout or stderr went away. Not an OSError, so that Typer passes it on instead
    of exiting with its own code."""


def _emit(stream: TextIO, text: str) -> None:
    try:
        stream.write(text)
        stream.flush()
    except BrokenPipeError:
        raise OutputClosed from None


def print_diagnostics(diagnostics: list[Diagnostic]) -> None:
    _emit(sys.stderr, "".join(d.render() + "\n" for d in diagnostics))


def write_output(text: str, output: Path | None = None) -> None:
    """Print, or write the file atomically so that a failure never leaves a partial file."""
    if output is None:
        _emit(sys.stdout, text)
        return
    if output.is_dir():
        raise RlcatError([Diagnostic("RLC105", f"-o {output}: is a directory; name a file")])
    try:
        atomic_write(output, text)
    except OSError as exc:
        raise RlcatError(
            [Diagnostic("RLC105", f"-o {output}: cannot write there ({exc.strerror or exc})")]
        ) from None

"""What the Typer commands share: the --catalog option, the closed choices from registries, and the
options of the commands that check files and report findings. Nothing here loads the compile
pipeline, which `rlcat lint` does without: the options and helpers of the commands that compile a
plan are in cli/compiling.py; output, diagnostics and the catalog searched in cli/report.py."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, Optional, TypeAlias

import typer

from rlcat.emit.reporters import REPORTERS
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
    ReportFormat: TypeAlias = str
    TableFormat: TypeAlias = str
    DiffFormat: TypeAlias = str
else:
    AlgorithmName, BackendName = one_of(ALGORITHMS), one_of(BACKENDS)
    EngineName, ModeName = one_of(ENGINES), one_of(MODES)
    ReportFormat = one_of(REPORTERS)
    TableFormat, DiffFormat = one_of(("table", "json")), one_of(("text", "json"))

# --format of the listing commands (tables or JSON) and of the comparing ones (text or JSON)
TableFormatOpt = Annotated[TableFormat, typer.Option("--format", "-f", help="Output format.")]
DiffFormatOpt = Annotated[DiffFormat, typer.Option("--format", "-f", help="Output format.")]


# The options and the ending of the commands that check files and report findings (validate, lint)
StrictOpt = Annotated[
    Optional[bool],  # noqa: UP045 - typer reads the annotation at runtime on Python 3.10
    typer.Option(
        "--strict/--no-strict", help="Warnings fail the check too. Default: the project file's `strict`."
    ),
]
ReportOutputOpt = Annotated[
    Optional[Path],  # noqa: UP045
    typer.Option("--output", "-o", help="Write the report to this file."),
]

# verl's own start-up checks (validate, lint, compile): rlcat.native
VerlNativeOpt = Annotated[
    bool,
    typer.Option(
        "--verl-native",
        help="Also run verl's own start-up checks (validate_config and the worker dataclasses, as "
        "main_ppo does before any GPU work) on what rlcat accepts, in a subprocess with the Python that "
        "has verl: --verl-python, else this one. A refusal is RLC450 at the line that set the value, "
        "verl's message quoted. Without verl, one line on stderr says so and nothing else changes.",
    ),
]
VerlPythonOpt = Annotated[
    Optional[Path],  # noqa: UP045
    typer.Option(
        "--verl-python",
        metavar="PATH",
        readable=False,  # a missing interpreter is the one line --verl-native prints, not a usage error
        help="The Python interpreter that has verl (a training image's); implies --verl-native.",
    ),
]

"""What the commands share that needs no Typer: the catalog they search, their output and
diagnostics, and how a report ends. cli/process.py prints a command's diagnostics with these, so it
stays free of Typer."""

from __future__ import annotations

import contextlib
import errno
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TextIO

from rlcat.catalog import Catalog, kernel_folder
from rlcat.diagnostics import Diagnostic, ExitCode, RlcatError, Severity, diag, printable
from rlcat.emit.reporters import REPORTERS
from rlcat.files import NotARegularFile, atomic_write
from rlcat.native.checks import NativeChecks
from rlcat.project import find_project, search_roots


def catalog_for(extra: list[Path] | None, paths: Iterable[str | Path] = ()) -> Catalog:
    """The catalog every command searches (project.search_roots): --catalog folders, the catalog a
    recipe path given on the command line sits in (`paths`: recipe names are passed too, and only
    those that are files or folders count), RLCAT_PATH, the project file's folders, the built-in one.

    Every folder named must exist: a mistyped entry would otherwise hide a catalog without a word.
    The root of the file system is refused: every YAML file on the machine would be a recipe."""
    given = [Path(p) for p in paths if os.path.exists(p)]
    roots = search_roots(extra, given, find_project())
    for root in roots:
        if root.builtin:
            continue
        folder = root.folder
        if not folder.is_dir():
            problem = "not a folder" if folder.exists() else "no such folder"
            raise RlcatError([diag("RLC001", f"{root.source}: {problem}", file=str(folder))])
        kernel = kernel_folder(folder)
        if kernel is not None:
            raise RlcatError([kernel])
        resolved = folder.resolve()
        if resolved.parent == resolved:
            raise RlcatError(
                [
                    diag(
                        "RLC105",
                        "the root of the file system is not a catalog folder: every YAML file on the "
                        "machine would be searched for recipes",
                        argument=root.source,
                        hint="name the folder that holds recipes/ and catalog/ (or the recipe files)",
                    )
                ]
            )
    catalog = Catalog([root.folder for root in roots])
    for folder in catalog.roots:
        if folder.is_dir() and not os.access(folder, os.R_OK | os.X_OK):
            raise RlcatError(
                [diag("RLC001", f"catalog folder {folder}: permission denied", file=str(folder))]
            )
    return catalog


def native_checks(
    native: bool, python: Path | None
) -> contextlib.AbstractContextManager[NativeChecks | None]:
    """verl's own checks for a command given `--verl-native` or `--verl-python` (None otherwise):
    the runner ends with the command; why verl could not be asked is one line on stderr."""
    if not native and python is None:
        return contextlib.nullcontext()
    return NativeChecks(python, print_escaped)


def finish_report(
    diagnostics: list[Diagnostic],
    files: int,
    fmt: str,
    output: Path | None,
    *,
    strict: bool,
    unreadable: frozenset[str],
) -> int:
    """Write the report; the exit code: 2 when an input could not be read, 1 when a finding fails
    the check (an error, or with `strict` a warning too), else 0."""
    write_output(REPORTERS[fmt](diagnostics, files), output)
    if any(d.code in unreadable and d.severity >= Severity.ERROR for d in diagnostics):
        return int(ExitCode.INPUT)
    failing = Severity.WARNING if strict else Severity.ERROR
    return int(ExitCode.FINDINGS) if any(d.severity >= failing for d in diagnostics) else int(ExitCode.OK)


class OutputClosed(Exception):
    """The reader of stdout or stderr went away, or the stream was closed (`>&-`): exit 141. Not an
    OSError, so that Typer passes it on instead of exiting with its own code."""


def _emit(stream: TextIO, name: str, text: str) -> None:
    """Write and flush, checked: a stream that fails (a full disk, /dev/full, an I/O error) is
    bad output (RLC106, exit 2), never a silently short one."""
    try:
        stream.write(text)
        stream.flush()
    except BrokenPipeError:
        raise OutputClosed from None
    except OSError as exc:
        if exc.errno == errno.EBADF:  # closed when rlcat started (cli.process.run holds it read-only)
            raise OutputClosed from None
        raise RlcatError(
            [
                diag(
                    "RLC106",
                    f"writing failed ({exc.strerror or exc}); the output is incomplete, do not use it",
                    argument=name,
                    hint="write to a file with -o FILE: it is replaced only once it is written whole",
                )
            ]
        ) from None


def print_diagnostics(diagnostics: list[Diagnostic]) -> None:
    _emit(sys.stderr, "stderr", "".join(d.render() + "\n" for d in diagnostics))


def print_escaped(text: str) -> None:
    """Text rlcat did not write itself (Typer's usage messages repeat the arguments as given) on
    stderr, each line shown as `printable` shows it."""
    # split at newlines only: splitlines() would also split at U+2028, showing it as a new line
    _emit(sys.stderr, "stderr", "".join(printable(line) + "\n" for line in text.rstrip("\n").split("\n")))


STDOUT = Path("-")  # `-o -`: print, as most tools read `-`


def write_output(text: str, output: Path | None = None, *, executable: bool = False) -> None:
    """Print, or write the file whole or not at all (files.atomic_write; `executable` for a launch
    script). A file that cannot be written, or a path that is not a regular file (a device such as
    /dev/null, a pipe, a folder, a symbolic link), is RLC106 and exit 2, with nothing written."""
    if output is None or output == STDOUT:
        _emit(sys.stdout, "stdout", text)
        return
    where = f"-o {output}"
    try:
        atomic_write(output, text, executable=executable)
    except NotARegularFile as exc:
        raise RlcatError(
            [
                diag(
                    "RLC106",
                    f"this is {exc.kind}, not a regular file; nothing was written",
                    argument=where,
                    hint=_not_a_file_hint(output, exc.kind),
                )
            ]
        ) from None
    except OSError as exc:
        raise RlcatError(
            [
                diag(
                    "RLC106",
                    f"cannot write there ({exc.strerror or exc}); nothing was written",
                    argument=where,
                )
            ]
        ) from None


def _not_a_file_hint(output: Path, kind: str) -> str:
    if kind == "a directory":
        return f"name a file in it: -o {output / 'plan.txt'}"
    if kind == "a symbolic link":
        # neither followed (a link in a checkout may point anywhere, /etc included) nor replaced
        # (whoever made the link wants it kept): the user names the file meant
        try:
            target = os.readlink(output)
        except OSError:
            target = "?"
        return f"it points to {target}; name the file meant, or redirect stdout instead: > {output}"
    # -o replaces the file by a rename, which would turn a device or a pipe into a regular file
    return f"leave out -o (or use -o -) and redirect stdout instead: > {output}"

"""One rule for where rlcat reads and writes: inside the project, inside the folder.

A pull request can change the project file, add links anywhere in a repository, and choose the
files a job writes into its run folder; none of that may move a read or a write outside the folder
it belongs to.

- A path a file names (the project file's `catalog` and `schemas`) is relative to that file's
  folder, climbs out of it with no `..`, and reaches nothing outside it through a link
  (`named_path_problem`, checked when the project file is read).
- A link is followed only while its target stays inside the folder being read (`link_leaves`): the
  catalog walk (lookups, `rlcat validate`, `rlcat lint`) and the working_dir `rlcat launch` uploads.
- The repository being checked is the git work tree holding the file checked (`repository_of`):
  code a recipe or a launch script names is reviewed with it when it is a file of that tree, named
  by a relative path that stays inside (`names_code_inside`; RLC903 is quiet about it).
- A write below a folder goes through real folders only: no link and no special file on the way,
  and a regular file or nothing at the end (`write_blocker`); `write_files` writes a set of files
  whole, or none of them when one is blocked. Every command that writes files into a folder
  (`init`, `new`, `import -o`, `runs add`, `schemas export`) writes through it.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path, PurePath, PurePosixPath

from rlcat.diagnostics import Diagnostic, RlcatError, diag
from rlcat.files import NotARegularFile, atomic_write, file_kind

# How many folders deep a path a file names, or a file rlcat writes, may go below its folder: far
# above any repository's, and below what a recursive walk of the path (pathlib's mkdir) can take.
MAX_DEPTH = 64


def inside(path: str, folder: str) -> bool:
    """Whether `path` is `folder` or under it (both absolute and normalised)."""
    return os.path.commonpath([path, folder]) == folder


def climbs_out(rel: str | PurePath) -> bool:
    """Whether a path meant to be relative to a folder leaves it as written: an absolute path, or a
    `..` that climbs above the folder (`a/../b` stays, `a/../../b` leaves)."""
    text = str(rel)
    if not text or os.path.isabs(text) or text.startswith("~"):
        return True
    return os.path.normpath(text).split(os.sep)[0] == os.pardir


def link_leaves(path: str | Path, boundary_real: str) -> str | None:
    """The real target of `path` when following it leaves `boundary_real` (a real path), else None
    (also for a path that cannot be resolved: whoever opens it says why)."""
    try:
        real = os.path.realpath(path, strict=True)
    except OSError:
        return None
    return None if inside(real, boundary_real) else real


def link_target(path: str | Path, fallback: str = "a target that cannot be read") -> str:
    """What a link says it points at, for a message. The link may be gone by now, or unreadable
    (a process of /proc that ended, another user's): the message then says so, never a crash."""
    try:
        return os.readlink(path)
    except OSError:
        return fallback


def link_out(path: Path, boundary_real: str, shown: str) -> Diagnostic | None:
    """RLC011 when `path` is a link (or sits below one) whose target leaves `boundary_real` (a real
    path), naming it as `shown`; None otherwise. The words of every such refusal: the catalog walk
    (lookups, validate, lint) and the files of a run folder (`runs add`)."""
    real = link_leaves(path, boundary_real)
    if real is None:
        return None
    target = link_target(path, real) if os.path.islink(path) else real
    return diag(
        "RLC011",
        f"{shown} is a link to {target}, outside the folder rlcat reads; not followed",
        file=shown,
        hint=f"rlcat reads files inside {boundary_real} only: copy the file in",
    )


def named_path_problem(root: Path, named: str) -> str | None:
    """Why the path `named`, written in a file of the folder `root` (the project file), reaches
    outside `root`, or None: an absolute path, a `..` that climbs out, or a link on the way (one
    that exists now) that leads out."""
    if "\0" in named:
        return "the path holds a NUL character, which no file name can"
    if climbs_out(named):
        return f"'{named}' is outside the project: name a folder inside it, relative to the project file"
    if len(Path(named).parts) > MAX_DEPTH:
        return f"the path is more than {MAX_DEPTH} folders deep"
    root_real = os.path.realpath(root)
    real = os.path.realpath(os.path.join(root, named))  # links of the part that exists, resolved
    if not inside(real, root_real):
        return f"'{named}' leads through a link to {real}, outside the project; not followed"
    return None


def write_blocker(root: Path, rel: str | PurePath, *, overwrite: bool = False) -> Diagnostic | None:
    """Why the file `rel` cannot be written under `root`, or None (RLC106). `rel` is relative and
    stays below `root`; each folder on the way is a real folder (or not there yet: it is made), and
    the file is not there (or, with `overwrite`, a regular file) — a link is never followed, inside
    or out, and nothing is written over a folder, a FIFO or a device."""
    if "\0" in str(rel):
        return diag("RLC106", "the path holds a NUL character; nothing was written", file=repr(str(rel)))
    if climbs_out(rel):
        return diag("RLC106", f"{rel} is not inside {root}; nothing was written", file=str(root / rel))
    path = root
    parts = PurePosixPath(PurePath(rel).as_posix()).parts
    if len(parts) > MAX_DEPTH:
        problem = f"more than {MAX_DEPTH} folders deep; nothing was written"
        return diag("RLC106", problem, file=str(root / rel))
    for depth, part in enumerate(parts, 1):
        path = path / part
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            return None  # made on the way
        except OSError as exc:
            return diag(
                "RLC106", f"cannot look at it ({exc.strerror or exc}); nothing was written", file=str(path)
            )
        is_last = depth == len(parts)
        if not is_last and stat.S_ISDIR(info.st_mode):
            continue
        if is_last and stat.S_ISREG(info.st_mode):
            if overwrite:
                return None
            return diag(
                "RLC106",
                "exists already; nothing was written",
                file=str(path),
                hint="move it aside (or pass --force to overwrite it)",
            )
        wanted = "a file" if is_last else "a folder"
        return diag(
            "RLC106",
            f"{wanted} goes here, and this is {file_kind(info.st_mode)}; nothing was written",
            file=str(path),
            hint="move it aside",
        )
    return None


def write_files(root: Path, files: dict[str, str], *, overwrite: bool = False) -> list[Path]:
    """Write each file under `root` whole (files.atomic_write), or nothing at all when one of them
    is blocked (write_blocker: a link, a folder or a special file on the way, a path outside
    `root`, or, without `overwrite`, a file that exists). RLC106, exit 2. Returns the paths written."""
    if os.path.lexists(root) and not os.path.isdir(root):
        raise RlcatError([diag("RLC106", "not a folder; nothing was written", file=str(root))])
    blocked = [d for rel in files if (d := write_blocker(root, rel, overwrite=overwrite)) is not None]
    if blocked:
        raise RlcatError(blocked)
    written = []
    for rel, text in files.items():
        path = root / rel
        try:
            atomic_write(path, text)
        except (NotARegularFile, OSError) as exc:  # changed since the check, or cannot be written
            reason = exc.kind if isinstance(exc, NotARegularFile) else exc.strerror or str(exc)
            raise RlcatError([diag("RLC106", f"cannot write it ({reason})", file=str(path))]) from None
        written.append(path)
    return written


_MODULE = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")


def repository_of(checked: str | Path | None) -> Path | None:
    """The repository being checked: the git work tree holding the checked file (`rlcat validate`'s
    recipe, `rlcat compile`'s, `rlcat lint`'s script), found as git finds it: the nearest folder at or
    above the file's own (links resolved) with a `.git` folder or file. None outside any work tree,
    or for a file that is not there: nothing is then reviewed with it."""
    if checked is None:
        return None
    try:
        real = Path(os.path.realpath(checked, strict=True))
    except (OSError, ValueError):  # not there, a link loop, a NUL in the name
        return None
    for folder in real.parents:
        if os.path.lexists(folder / ".git"):
            return folder
    return None


def names_code_inside(repository: Path | None, named: str, *, module: bool = False) -> bool:
    """Whether `named` (a file path, or with `module` a dotted module name) is Python code of the
    repository: a regular file of the work tree reached from its root without leaving it (a relative
    path with no `..` climbing out, no link out; a module as `a/b.py` or `a/b/__init__.py`). Relative
    to the root, as verl reads it in a job started there. An absolute path never is: it names a file
    of the machine the job runs on, which no review of the repository shows."""
    if repository is None or not named:
        return False
    if module:
        if not _MODULE.fullmatch(named):
            return False
        stem = named.replace(".", "/")
        candidates = [f"{stem}.py", f"{stem}/__init__.py"]
    else:
        candidates = [named]
    root = os.path.realpath(repository)
    for rel in candidates:
        if climbs_out(rel):
            continue
        try:
            real = os.path.realpath(os.path.join(root, rel), strict=True)
        except (OSError, ValueError):
            continue
        if (
            inside(real, root)
            and os.path.isfile(real)
            and ".git" not in Path(os.path.relpath(real, root)).parts
        ):
            return True
    return False

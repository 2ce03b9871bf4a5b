"""Writing files so that a failure never leaves a partial one."""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path

from rlcat.diagnostics import RlcatError, diag

# What lstat says a path is, in the words a diagnostic uses.
_KINDS: tuple[tuple[Callable[[int], bool], str], ...] = (
    (stat.S_ISREG, "a regular file"),
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
)


# The largest input file rlcat reads (a recipe, a catalog entry, a project file); the reporters read
# no more of a file they quote.
MAX_BYTES = 16 * 1024 * 1024


def file_kind(mode: int) -> str:
    """What `lstat` says a path is, as words: 'a regular file', 'a character device', ..."""
    return next((kind for is_kind, kind in _KINDS if is_kind(mode)), "a file of unknown kind")


class NotARegularFile(Exception):
    """The path exists and is not a regular file, so writing it whole by a rename would destroy it
    (as root, /dev/null becomes a file) or, for a symbolic link, replace the link instead of the file
    it names."""

    def __init__(self, path: Path, kind: str) -> None:
        super().__init__(f"{path}: {kind}, not a regular file")
        self.path = path
        self.kind = kind


def atomic_write(path: Path, text: str, *, executable: bool = False) -> None:
    """Write `text` to a temporary file beside `path`, flush and fsync it, then rename it over
    `path`: a reader sees the old file or the whole new one, and a write that fails (a full disk) or
    is interrupted leaves `path` as it was and no temporary file behind.

    `path` must be a regular file or not exist yet; anything else raises NotARegularFile before
    anything is written. Symbolic links are refused too, not followed: whether the link or the
    file it names should change is the caller's to say, by naming the file.

    Permissions: an existing file keeps its permission bits (set-id and sticky bits are dropped, as
    a write by anyone but root drops them); a new file gets 0666 & ~umask, as any new file. With
    `executable` (a launch script) a new file gets 0777 & ~umask, and an existing one gains the
    execute bit wherever it has the read bit (0640 becomes 0750): whoever could read the script
    can run it, nobody else.
    """
    mode = _mode_for(path, executable=executable)
    path.parent.mkdir(parents=True, exist_ok=True)
    # 48 characters are at most 192 bytes: the temporary name stays within the 255 a name may have
    import tempfile  # here: a command that writes no file starts without it (cli/lint.py)

    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name[:48]}.", suffix=".tmp")
    try:
        with open(fd, "w", encoding="utf-8", newline="\n") as fh:
            os.fchmod(fh.fileno(), mode)
            fh.write(text)
            fh.flush()  # a full disk fails here or in fsync, before the rename, never after it
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _mode_for(path: Path, *, executable: bool) -> int:
    """The permission bits the file at `path` gets (see atomic_write); refuses what is not a
    regular file."""
    try:
        existing = os.lstat(path)
    except FileNotFoundError:
        return (0o777 if executable else 0o666) & ~_umask()
    if not stat.S_ISREG(existing.st_mode):
        raise NotARegularFile(path, file_kind(existing.st_mode))
    mode = stat.S_IMODE(existing.st_mode) & 0o777
    if executable:
        mode |= (mode & 0o444) >> 2  # r-- becomes r-x, for owner, group and others alike
    return mode


def _umask() -> int:
    # the umask can only be read by setting it; set a strict one meanwhile, never a permissive one
    current = os.umask(0o077)
    os.umask(current)
    return current


def replace_dir(dest: Path, prefix: str, fill: Callable[[Path], None]) -> None:
    """Fill a fresh folder next to `dest`, then swap it in for `dest`: a fill that fails or is
    interrupted leaves `dest` as it was, never half-populated."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    import tempfile  # here: a command that writes no file starts without it (cli/lint.py)

    staging = Path(tempfile.mkdtemp(prefix=prefix, dir=dest.parent))
    try:
        fill(staging)
        staging.chmod(0o755)  # mkdtemp makes it private; the folder is ordinary shared data
        if dest.exists():
            shutil.rmtree(dest)
        staging.replace(dest)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)


def write_whole(path: Path, text: str, *, shown: str | None = None) -> None:
    """atomic_write, its failures as RLC106 (exit 2) naming the file as `shown` (default: the path),
    with nothing written."""
    try:
        atomic_write(path, text)
    except NotARegularFile as exc:
        problem = f"this is {exc.kind}, not a regular file; not written"
        raise RlcatError([diag("RLC106", problem, file=shown or str(path))]) from None
    except OSError as exc:
        problem = f"cannot write there ({exc.strerror or exc})"
        raise RlcatError([diag("RLC106", problem, file=shown or str(path))]) from None

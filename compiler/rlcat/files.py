"""Writing files so that a failure never leaves a partial one, and the one bounded reader of every
file rlcat opens (open_regular, read_bytes, read_text)."""

from __future__ import annotations

import errno
import io
import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from rlcat.diagnostics import Diagnostic, RlcatError, diag

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


# --- reading: the one bounded reader of every file rlcat opens ---------------------------------------
#
# Every file rlcat reads (recipes, catalog entries, the project file, launch scripts, Hydra files,
# metrics files, plan.json, key indexes, the files a report quotes) goes through open_regular: a
# regular file only (a FIFO, a device, a socket is refused before a byte is read, and opening a FIFO
# never waits for a writer), its size checked first against the caller's bound, and never more than
# that bound read, even from a file that grows meanwhile.


def open_regular(
    path: Path | str, name: str, *, limit: int = MAX_BYTES, hint: str | None = None
) -> tuple[BinaryIO, os.stat_result]:
    """Open a file for reading, refusing anything but a regular file of at most `limit` bytes
    (RLC001 missing or unreadable, RLC012 not a regular file, RLC007 too large; `hint` goes with
    RLC007). The stream returned yields at most `limit + 1` bytes, so a file that grew past the bound
    after the check is still read no further (read_bytes then refuses it).

    The checks use fstat on the opened file, so a link swapped after them cannot change what is read.
    O_NONBLOCK keeps opening a FIFO from waiting for a writer (it changes nothing for regular files).
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise RlcatError([diag("RLC001", f"no such file: {name}", file=name)]) from None
    except IsADirectoryError:
        raise RlcatError([diag("RLC001", f"is a directory, not a file: {name}", file=name)]) from None
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a socket: it cannot be opened at all
            raise RlcatError([_not_regular(Path(path), name)]) from None
        raise RlcatError([diag("RLC001", f"cannot read {name}: {exc.strerror}", file=name)]) from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise RlcatError([diag("RLC001", f"is a directory, not a file: {name}", file=name)])
        if not stat.S_ISREG(info.st_mode):
            raise RlcatError([_not_regular(Path(path), name, info)])
        if info.st_size > limit:
            raise RlcatError([_too_large(name, f"file is {info.st_size} bytes; the limit is {limit}", hint)])
        os.set_blocking(fd, True)  # a regular file: reads never wait, and buffered reads expect blocking
        raw = io.FileIO(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    return io.BufferedReader(_Bounded(raw, limit + 1)), info


def read_bytes(path: Path | str, name: str, *, limit: int = MAX_BYTES, hint: str | None = None) -> bytes:
    """A regular file's bytes, at most `limit` of them (see open_regular); RlcatError otherwise."""
    stream, _ = open_regular(path, name, limit=limit, hint=hint)
    with stream:
        return _read_limited(stream, name, limit, hint)


def read_text(path: Path | str, display: str | None = None, *, limit: int = MAX_BYTES) -> str:
    """A regular file of at most `limit` bytes as UTF-8 without NUL bytes, every failure a diagnostic."""
    name = display or str(path)
    return decode_text(read_bytes(path, name, limit=limit), name)


def read_stream(stream: BinaryIO, name: str, *, limit: int = MAX_BYTES) -> str:
    """The text of a file opened with open_regular, read no further than `limit` bytes."""
    return decode_text(_read_limited(stream, name, limit, None), name)


def decode_text(raw: bytes, name: str) -> str:
    """`raw` as UTF-8 text without NUL bytes, else RLC006 at the line and column of the first bad byte."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise RlcatError(
            [diag("RLC006", f"invalid UTF-8 byte 0x{raw[exc.start]:02x}", file=name, line=line, col=col)]
        ) from None
    if "\x00" in text:
        offset = text.index("\x00")
        line = text.count("\n", 0, offset) + 1
        raise RlcatError([diag("RLC006", "NUL byte in a text file", file=name, line=line)])
    return text


class _Bounded(io.RawIOBase):
    """A raw stream that ends after `left` bytes of the file under it."""

    def __init__(self, raw: io.FileIO, left: int) -> None:
        super().__init__()
        self._raw = raw
        self._left = left

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        if self._left <= 0:
            return 0
        view = memoryview(buffer)
        got = self._raw.readinto(view[: min(len(view), self._left)]) or 0
        self._left -= got
        return got

    def fileno(self) -> int:
        return self._raw.fileno()

    def close(self) -> None:
        self._raw.close()
        super().close()


def _read_limited(stream: BinaryIO, name: str, limit: int, hint: str | None) -> bytes:
    raw = stream.read(limit + 1)  # a file that grew since fstat is still read no further
    if len(raw) > limit:
        raise RlcatError([_too_large(name, f"file is more than {limit} bytes, the limit", hint)])
    return raw


def _too_large(name: str, problem: str, hint: str | None) -> Diagnostic:
    return diag("RLC007", problem, file=name, hint=hint)


_SPECIAL_FILES = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _not_regular(path: Path, name: str, info: os.stat_result | None = None) -> Diagnostic:
    try:
        mode = (info or path.stat()).st_mode
    except OSError:
        mode = 0
    kind = next((what for test, what in _SPECIAL_FILES if test(mode)), "a special file")
    return diag(
        "RLC012",
        f"not a regular file: {name} is {kind}",
        file=name,
        hint="rlcat reads regular files only; reading a device, pipe or socket may never end",
    )

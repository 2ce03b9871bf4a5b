"""Reading a file: a regular file only, of at most MAX_BYTES, as UTF-8 without NUL bytes."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

from rlcat.diagnostics import Diagnostic, RlcatError, diag
from rlcat.files import MAX_BYTES


def open_regular(path: Path, name: str) -> tuple[BinaryIO, os.stat_result]:
    """Open a file for reading, refusing anything but a regular file of at most MAX_BYTES.

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
            raise RlcatError([_not_regular(path, name)]) from None
        raise RlcatError([diag("RLC001", f"cannot read {name}: {exc.strerror}", file=name)]) from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise RlcatError([diag("RLC001", f"is a directory, not a file: {name}", file=name)])
        if not stat.S_ISREG(info.st_mode):
            raise RlcatError([_not_regular(path, name, info)])
        if info.st_size > MAX_BYTES:
            raise RlcatError(
                [diag("RLC007", f"file is {info.st_size} bytes; the limit is {MAX_BYTES}", file=name)]
            )
        return os.fdopen(fd, "rb"), info
    except BaseException:
        os.close(fd)
        raise


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
        hint="rlcat reads recipe and catalog files only; reading a device, pipe or socket may never end",
    )


def _read_limited(stream: BinaryIO, name: str) -> bytes:
    raw = stream.read(MAX_BYTES + 1)  # a file that grew since fstat is still read no further
    if len(raw) > MAX_BYTES:
        raise RlcatError([diag("RLC007", f"file is more than {MAX_BYTES} bytes, the limit", file=name)])
    return raw


def _decode(raw: bytes, name: str) -> str:
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


def read_text(path: Path, display: str | None = None) -> str:
    """Read a regular file as UTF-8, turning every failure into a diagnostic."""
    name = display or str(path)
    stream, _ = open_regular(path, name)
    with stream:
        return read_stream(stream, name)


def read_stream(stream: BinaryIO, name: str) -> str:
    """The text of a file opened with open_regular, read no further than MAX_BYTES."""
    return _decode(_read_limited(stream, name), name)

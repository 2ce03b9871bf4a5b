"""The console script. `rlcat compile` is served from the cache when nothing it read has changed;
everything else (and every miss) goes to the Typer CLI in cli.py."""

from __future__ import annotations

import io
import sys


def run() -> None:
    sys.exit(main(sys.argv[1:]))


def main(argv: list[str]) -> int:
    if not argv or argv[0] != "compile" or "--help" in argv:
        from .cli import main as cli_main

        return cli_main(argv)
    from . import cache

    entry = cache.lookup(argv)
    if entry is not None:
        return cache.replay(entry)
    return _compile_and_store(argv)


def _compile_and_store(argv: list[str]) -> int:
    from . import cache, deps
    from .cli import main as cli_main
    from .cli import written_files

    out, err = io.StringIO(), io.StringIO()
    real_out, real_err = sys.stdout, sys.stderr
    deps.reset()
    written_files.clear()
    sys.stdout, sys.stderr = _Tee(out, real_out), _Tee(err, real_err)
    try:
        code = cli_main(argv)
    finally:
        sys.stdout, sys.stderr = real_out, real_err
    if code == 0:
        cache.store(argv, deps.recorded(), out.getvalue(), err.getvalue(), dict(written_files))
    return code


class _Tee(io.TextIOBase):
    """Writes through to the real stream while keeping a copy for the cache."""

    def __init__(self, copy: io.StringIO, real: object):
        self.copy, self.real = copy, real

    def write(self, text: str) -> int:
        self.copy.write(text)
        return self.real.write(text)  # type: ignore[attr-defined,no-any-return]

    def flush(self) -> None:
        self.real.flush()  # type: ignore[attr-defined]

    def isatty(self) -> bool:
        return False

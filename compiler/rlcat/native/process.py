"""One process of verl's own start-up checks: :data:`RUNNER` started with an interpreter that has
verl, fed cases, read for verdicts.

The runner (``runner.py``, beside this module) is run by path with that interpreter and never imports
rlcat; it reads one case per line (JSON) and answers one verdict per line, after a greeting that names
the versions it runs. The process is bounded: its data segment is limited (:data:`MEMORY_LIMIT`), every
wait for a reply has a timeout, and a runner that does not answer in time is killed by its PID. Its
stderr (verl's logging, an import's traceback) goes to a log file in its temporary folder, so a chatty
release never blocks the pipe.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import subprocess
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

#: The worker, run by path with the interpreter that has verl (it imports verl, never rlcat).
RUNNER = Path(__file__).with_name("runner.py")
#: The runner's data segment (heap and private mappings, RLIMIT_DATA): importing verl 0.9.1 and
#: judging a plan peaks near 0.5 GB resident; the limit leaves room for a larger release and
#: stops a runaway before it takes the machine. Not the address space: a CUDA build of torch maps
#: gigabytes of libraries it never touches.
MEMORY_LIMIT = 8 << 30


#: The variables the runner gets from rlcat's environment: what an interpreter needs to start and
#: find its libraries (a training image's CUDA or ROCm ones), and HOME and PWD, which the paths of
#: verl's defaults and rlcat's plans read (`${oc.env:HOME}`, `${oc.env:PWD}`). No other: a config's
#: `${oc.env:NAME}` is resolved by verl's checks and a refusal quotes values, so a CI job's secrets
#: must not be there to read.
KEPT_ENV = (
    "PATH",
    "HOME",
    "PWD",
    "USER",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TMPDIR",
    "LD_LIBRARY_PATH",
    "PYTHONPATH",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "CUDA_HOME",
    "ROCM_PATH",
    "HF_HOME",
)


def runner_env() -> dict[str, str]:
    """The runner's environment: :data:`KEPT_ENV` from rlcat's own, no bytecode written."""
    kept = {name: os.environ[name] for name in KEPT_ENV if name in os.environ}
    # the folder rlcat runs in, where a launch from here would run (the runner's own is a temporary one)
    kept.setdefault("PWD", os.getcwd())
    return {**kept, "PYTHONDONTWRITEBYTECODE": "1"}


class RunnerGone(RuntimeError):
    """The runner stopped answering: it exited (verl does not import), or ran past its time and was
    killed (`late`). The message ends with the last line it logged."""

    def __init__(self, message: str, late: bool) -> None:
        super().__init__(message)
        self.late = late


class VerlProcess:
    """One runner process with `python`; :meth:`judge` sends it cases, in order.

    ``with VerlProcess(python) as verl: verl.judge(cases)``. verl's import runs while the caller goes
    on (it waits at the first :meth:`ready` or :meth:`judge`), so several runners import at once."""

    def __init__(self, python: Path, timeout: float = 600.0, name: str = "verl") -> None:
        self.python = python
        self.timeout = timeout  # the longest wait for one reply: verl's import, or a case past its bound
        self.name = name
        self.hello: dict[str, Any] = {}
        self._process: subprocess.Popen[str] | None = None
        self._tmp: tempfile.TemporaryDirectory[str] | None = None

    def __enter__(self) -> VerlProcess:
        self._tmp = tempfile.TemporaryDirectory(prefix="rlcat-verl-")
        tmp = Path(self._tmp.name)
        with (tmp / "runner.log").open("w") as log:
            self._process = subprocess.Popen(
                [str(self.python), str(RUNNER), "--models", str(tmp / "models")],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
                cwd=tmp,
                start_new_session=True,  # the terminal's Ctrl-C reaches rlcat, which ends the runner
                env=runner_env(),
            )
        # limited once started (no code between fork and exec: rlcat runs threads); the runner
        # spends its first seconds importing, long before it could reach the limit
        resource.prlimit(self._process.pid, resource.RLIMIT_DATA, (MEMORY_LIMIT, MEMORY_LIMIT))
        return self

    def __exit__(self, *exc: object) -> None:
        process = self._process
        if process is not None:
            if exc and exc[0] is not None:  # Ctrl-C, a failure: no wait for verl to finish importing
                process.kill()
            if process.stdin:
                with contextlib.suppress(BrokenPipeError):  # the runner is gone already
                    process.stdin.close()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            if process.stdout:
                process.stdout.close()
        if self._tmp is not None:
            self._tmp.cleanup()

    @property
    def log(self) -> str:
        """What the runner wrote on stderr so far (verl's warnings, a crash's traceback)."""
        assert self._tmp is not None
        return (Path(self._tmp.name) / "runner.log").read_text(encoding="utf-8", errors="replace")

    def last_words(self) -> str:
        """The runner's last line on stderr (an import's `ModuleNotFoundError: ...`), or ''."""
        lines = [line.strip() for line in self.log.splitlines() if line.strip()]
        return lines[-1] if lines else ""

    def _read_line(self, timeout: float) -> dict[str, Any]:
        assert self._process is not None and self._process.stdout is not None
        got: list[str] = []
        reader = threading.Thread(target=lambda out=self._process.stdout: got.append(out.readline()))
        reader.start()
        reader.join(timeout)
        if reader.is_alive() or not got or not got[0]:
            late = reader.is_alive()
            self._process.kill()  # by its PID: only the runner this object started
            self._process.wait()
            reader.join()
            why = f"no answer within {timeout:g} s" if late else f"exit status {self._process.returncode}"
            said = f"{self.name} stopped answering ({why}): {self.last_words()}".rstrip(": ")
            raise RunnerGone(said, late)
        reply: dict[str, Any] = json.loads(got[0])
        return reply

    def ready(self) -> dict[str, Any]:
        """The runner's greeting (the versions it runs), once verl is imported."""
        if not self.hello:
            self.hello = self._read_line(self.timeout)
        return self.hello

    def judge(self, cases: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        """The verdict of every case, in order. All cases are written by a thread while the replies
        are read, so the pipe never fills up either way."""
        assert self._process is not None and self._process.stdin is not None
        self.ready()
        # the same case twice (a plan that two platforms compile alike) is judged once
        asked = list(cases)
        key_of = [json.dumps({k: v for k, v in c.items() if k != "id"}, sort_keys=True) for c in asked]
        first: dict[str, int] = {}  # a case's key → its place in the batch sent
        batch: list[dict[str, Any]] = []
        for case, key in zip(asked, key_of, strict=True):
            if key not in first:
                first[key] = len(batch)
                batch.append(case)
        stdin: IO[str] = self._process.stdin

        def feed() -> None:
            try:
                for case in batch:
                    stdin.write(json.dumps(case) + "\n")
                    stdin.flush()
            except BrokenPipeError:
                pass  # the runner died: the reader says so

        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        replies = [self._read_line(self.timeout) for _ in batch]
        writer.join()
        return [
            {**replies[first[key]], "id": case.get("id")} for case, key in zip(asked, key_of, strict=True)
        ]

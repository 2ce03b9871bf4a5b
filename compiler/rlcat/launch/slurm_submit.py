"""`rlcat launch --target slurm --submit`: the sbatch script handed to `sbatch` on its stdin.

The job's output goes to a file of its own, `slurm-JOBID-RANDOM.out` in the submitting folder
(`sbatch --output`, which wins over an `#SBATCH --output` or SBATCH_OUTPUT): Slurm's default
`slurm-JOBID.out` may hold an earlier job's output (a controller whose job ids started again).
With `--wait`, rlcat reads `scontrol show job` every poll_seconds (sbatch --wait polls at up to
32 s) and prints the output file as it grows, each byte read once; the job's end is noticed at the
next poll, its exit code is Slurm's (ExitCode=CODE:SIGNAL). `sbatch --wait` runs beside it, the
word of last resort when the controller no longer knows the job. Ctrl-C, SIGTERM and `--timeout`
cancel the job (`scancel`), so a job never outlives the command that started it."""

from __future__ import annotations

import codecs
import contextlib
import os
import re
import secrets
import shutil
import stat
import subprocess
import time
from pathlib import Path

from rlcat.diagnostics import ExitCode, RlcatError, Severity, diag, printable
from rlcat.launch.base import Console, LaunchOptions
from rlcat.launch.ray_job import JobLog

# How long rlcat gives sbatch to answer when it submits (the controller accepts or refuses at once).
SUBMIT_SECONDS = 60
# Reasons a pending job gives when it can never start as asked (Slurm's squeue "REASON CODES"); a
# controller without EnforcePartLimits accepts such a job and leaves it pending forever.
NEVER_STARTS = frozenset(
    {
        "PartitionNodeLimit",
        "PartitionTimeLimit",
        "PartitionConfig",
        "BadConstraints",
        "InvalidAccount",
        "InvalidQOS",
    }
)


def submit_batch(script: str, options: LaunchOptions, *, wait: bool, console: Console) -> int:
    sbatch = shutil.which("sbatch")
    if sbatch is None:
        raise RlcatError(
            [
                diag(
                    "RLC1012",
                    "sbatch is not on PATH: --submit runs on a Slurm login node",
                    argument="--submit",
                    hint="write the script with --emit FILE and run sbatch FILE where Slurm is",
                )
            ],
            ExitCode.INPUT,
        )
    output = f"slurm-%j-{secrets.token_hex(4)}.out"  # %j: the job id; the rest: this submission's
    args = [sbatch, "--parsable", f"--output={output}", *(["--wait"] if wait else [])]
    with subprocess.Popen(
        args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as process:  # closes the pipes and reaps sbatch however this ends
        return _submitted(process, script, output, options, wait=wait, console=console)


def _submitted(
    process: subprocess.Popen[str],
    script: str,
    output: str,
    options: LaunchOptions,
    *,
    wait: bool,
    console: Console,
) -> int:
    try:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(script)
        process.stdin.close()
        # sbatch prints the job id once the controller accepted the job (and then, with --wait, waits)
        job_id = process.stdout.readline().strip().split(";")[0]
    except BaseException:
        process.kill()
        raise
    if not job_id:
        raise _refused(process)
    try:
        console.tell(
            [
                diag(
                    "RLC1010",
                    f"submitted Slurm job {job_id}; its output: {output.replace('%j', job_id)}",
                    severity=Severity.INFO,
                    argument="sbatch",
                )
            ]
        )
    except BaseException:  # Ctrl-C or SIGTERM the moment the job exists: --wait owns the job
        if wait:
            _cancel(job_id, process, console)
        raise
    if not wait:
        process.wait(timeout=SUBMIT_SECONDS)
        console.log(job_id + "\n")
        return int(ExitCode.OK)
    return _follow(process, job_id, output.replace("%j", job_id), options, console)


def _refused(process: subprocess.Popen[str]) -> RlcatError:
    assert process.stderr is not None
    err = process.stderr.read()  # sbatch closed stdout without a job id: it is ending
    try:
        process.wait(timeout=SUBMIT_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()
    lines = [line for line in err.strip().splitlines() if line.strip()]
    message = printable(lines[-1]) if lines else f"sbatch exited with {process.returncode}"
    return RlcatError(
        [
            diag(
                "RLC1012",
                f"Slurm refused the job: {message}",
                argument="sbatch",
                hint="the nodes, GPUs and CPUs come from the recipe's resources and --cpus-per-node; "
                "compare them with `sinfo -o '%P %D %c %G'`",
            )
        ],
        ExitCode.FINDINGS,
    )


# Job states after which a job runs no more (Slurm's squeue "JOB STATE CODES"); COMPLETING is not
# one: its epilog still runs, and its exit code may yet change.
ENDED = frozenset(
    {
        "COMPLETED",
        "FAILED",
        "CANCELLED",
        "TIMEOUT",
        "NODE_FAIL",
        "PREEMPTED",
        "BOOT_FAIL",
        "DEADLINE",
        "OUT_OF_MEMORY",
    }
)


def _follow(
    process: subprocess.Popen[str], job_id: str, name: str, options: LaunchOptions, console: Console
) -> int:
    """Print the job's output file (`name`, in the job's working folder) as it grows until Slurm
    says the job ended (or, when the controller no longer knows it, sbatch --wait returns); the
    job's exit code."""
    deadline = None if options.timeout is None else time.monotonic() + options.timeout
    output = JobOutput(console)
    try:
        while True:
            shown = _show_job(job_id)
            state, reason = _field(shown, "JobState"), _field(shown, "Reason")
            output.path = output.path or _output_path(shown, name)
            output.print_new()
            if state in ENDED or (state is None and process.poll() is not None):
                break
            if state == "PENDING" and reason in NEVER_STARTS:
                ended = _cancel(job_id, process, console)
                raise RlcatError(
                    [
                        diag(
                            "RLC1012",
                            f"Slurm accepted job {job_id} but will never start it as asked ({reason}); "
                            + _cancelled(ended, job_id),
                            argument="sbatch",
                            hint="the nodes, GPUs and CPUs come from the recipe's resources and "
                            "--cpus-per-node; compare them with `sinfo -o '%P %D %c %G'`",
                        )
                    ],
                    ExitCode.FINDINGS,
                )
            if deadline is not None and time.monotonic() > deadline:
                output.end()
                ended = _cancel(job_id, process, console)
                raise RlcatError(
                    [
                        diag(
                            "RLC1010",
                            f"Slurm job {job_id} did not end within --timeout {options.timeout:g} s; "
                            + _cancelled(ended, job_id),
                            severity=Severity.ERROR,
                            argument="--timeout",
                        )
                    ],
                    ExitCode.FINDINGS,
                )
            time.sleep(options.poll_seconds)
    except RlcatError:
        raise
    except BaseException:  # Ctrl-C or SIGTERM (cli.process.Terminated): cancel the job on the way out
        _cancel(job_id, process, console)
        raise
    output.print_new()
    output.end()
    if state in ENDED:
        process.kill()  # sbatch --wait would say the same, up to 32 s later
        process.wait()
        code = _exit_code(state, _field(shown, "ExitCode"))
        said = f"Slurm job {job_id} {state} with exit code {_field(shown, 'ExitCode')}"
    else:
        code = process.returncode
        said = f"Slurm job {job_id} ended with exit code {code}"
    console.tell(
        [
            diag(
                "RLC1010",
                said,
                severity=Severity.INFO if code == 0 else Severity.ERROR,
                argument="sbatch --wait",
            )
        ]
    )
    return code if 0 <= code < 256 else int(ExitCode.FINDINGS)


def _output_path(shown: str, name: str) -> str | None:
    """The job's output file: Slurm's StdOut once scontrol names the job's own file, else `name`
    in this folder (where sbatch ran, the job's working folder); None before the job is known."""
    said = _field(shown, "StdOut")
    if said is not None and os.path.basename(said) == name:
        return said
    return str(Path.cwd() / name) if _field(shown, "JobState") else None


def _exit_code(state: str | None, exit_code: str | None) -> int:
    """What `sbatch --wait` returns for an ended job: the batch script's exit code, 1 when a
    signal ended it; 1 for a job that did not complete yet says 0 (a node failure, a time limit)."""
    code, _, signal = (exit_code or "1:0").partition(":")
    if not code.isdigit() or (signal.isdigit() and int(signal)):
        return int(ExitCode.FINDINGS)
    if state != "COMPLETED" and int(code) == 0:
        return int(ExitCode.FINDINGS)
    return int(code)


def _show_job(job_id: str) -> str:
    """`scontrol show job -o JOB` (empty when scontrol cannot say)."""
    scontrol = shutil.which("scontrol")
    if scontrol is None:
        return ""
    try:
        return subprocess.run(
            [scontrol, "show", "job", "-o", job_id], capture_output=True, text=True, timeout=30, check=False
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""


def _field(shown: str, name: str) -> str | None:
    found = re.search(rf"\b{name}=(\S+)", shown)
    return found.group(1) if found else None


# What one poll reads of the job's output at most: a job that writes faster is caught up with over
# the next polls, and memory stays bounded.
CHUNK_BYTES = 16 * 2**20


class JobOutput:
    """The job's own output file (`path`, from `scontrol show job`: StdOut), printed as it grows:
    each poll reads from where the last one stopped, so the reading is linear in the output."""

    def __init__(self, console: Console) -> None:
        self.path: str | None = None
        self._offset = 0
        self._text = codecs.getincrementaldecoder("utf-8")("replace")
        self._log = JobLog(console)

    def print_new(self) -> None:
        if self.path is None:
            return
        while chunk := _read_from(Path(self.path), self._offset, CHUNK_BYTES):
            self._offset += len(chunk)
            self._log.feed(self._text.decode(chunk))
            if len(chunk) < CHUNK_BYTES:
                break

    def end(self) -> None:
        self._log.feed(self._text.decode(b"", final=True))
        self._log.end()


def _read_from(path: Path, offset: int, limit: int) -> bytes:
    """Up to `limit` bytes of the regular file `path` from `offset` (b"" when there are none, it
    does not exist yet, or is no regular file: a FIFO would block, a device never end)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return b""
    with contextlib.closing(os.fdopen(fd, "rb", buffering=0)) as file:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return b""
        file.seek(offset)
        return file.read(limit) or b""


def _cancel(job_id: str, process: subprocess.Popen[str], console: Console) -> bool:
    """`scancel JOB`, and sbatch --wait stopped; whether Slurm took the cancel (a failing scancel is
    said as scancel said it, never as a cancelled job)."""
    scancel = shutil.which("scancel")
    failed = None
    try:
        if scancel is None:
            failed = "scancel is not on PATH"
        else:
            done = subprocess.run([scancel, job_id], capture_output=True, text=True, timeout=30, check=False)
            if done.returncode != 0:
                lines = [line for line in done.stderr.strip().splitlines() if line.strip()]
                failed = lines[-1] if lines else f"scancel exited with {done.returncode}"
    except (OSError, subprocess.TimeoutExpired) as exc:
        failed = str(exc)
    finally:
        process.kill()
        process.wait()
    if failed is not None:
        console.tell(
            [
                diag(
                    "RLC1010",
                    f"could not cancel Slurm job {job_id}: {printable(failed)}",
                    severity=Severity.WARNING,
                    argument="scancel",
                    hint=f"see `squeue -j {job_id}` and cancel it with `scancel {job_id}`",
                )
            ]
        )
        return False
    console.tell(
        [diag("RLC1010", f"Slurm job {job_id} cancelled", severity=Severity.INFO, argument="scancel")]
    )
    return True


def _cancelled(ended: bool, job_id: str) -> str:
    """How a message that cancelled a job ends: what became of it."""
    if ended:
        return "it was cancelled"
    return f"rlcat could not cancel it: it may still be running (squeue -j {job_id})"

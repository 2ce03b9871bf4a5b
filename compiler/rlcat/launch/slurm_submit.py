"""`rlcat launch --target slurm --submit`: the sbatch script handed to `sbatch` on its stdin.

With `--wait`, `sbatch --wait` follows the job and returns its exit code; rlcat prints the job's
output file as it grows (its path from `scontrol show job`), and cancels the job (`scancel`) on
Ctrl-C, SIGTERM or `--timeout`, so a job never outlives the command that started it."""

from __future__ import annotations

import re
import shutil
import subprocess
import time

from rlcat.diagnostics import ExitCode, RlcatError, Severity, diag, printable
from rlcat.files import read_bytes
from rlcat.launch.base import Console, LaunchOptions
from rlcat.launch.ray_job import _print_new

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
    args = [sbatch, "--parsable", *(["--wait"] if wait else [])]
    with subprocess.Popen(
        args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as process:  # closes the pipes and reaps sbatch however this ends
        return _submitted(process, script, options, wait=wait, console=console)


def _submitted(
    process: subprocess.Popen[str], script: str, options: LaunchOptions, *, wait: bool, console: Console
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
    console.tell(
        [diag("RLC1010", f"submitted Slurm job {job_id}", severity=Severity.INFO, argument="sbatch")]
    )
    if not wait:
        process.wait(timeout=SUBMIT_SECONDS)
        console.log(job_id + "\n")
        return int(ExitCode.OK)
    return _follow(process, job_id, options, console)


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


def _follow(process: subprocess.Popen[str], job_id: str, options: LaunchOptions, console: Console) -> int:
    """Print the job's output as it grows until sbatch --wait returns the job's exit code."""
    deadline = None if options.timeout is None else time.monotonic() + options.timeout
    output = None
    printed = 0
    try:
        while process.poll() is None:
            shown = _show_job(job_id)
            output = output or _field(shown, "StdOut")
            reason = _field(shown, "Reason")
            if _field(shown, "JobState") == "PENDING" and reason in NEVER_STARTS:
                _cancel(job_id, process, console)
                raise RlcatError(
                    [
                        diag(
                            "RLC1012",
                            f"Slurm accepted job {job_id} but will never start it as asked ({reason}); "
                            "it was cancelled",
                            argument="sbatch",
                            hint="the nodes, GPUs and CPUs come from the recipe's resources and "
                            "--cpus-per-node; compare them with `sinfo -o '%P %D %c %G'`",
                        )
                    ],
                    ExitCode.FINDINGS,
                )
            printed = _print_output(output, printed, console)
            if deadline is not None and time.monotonic() > deadline:
                _cancel(job_id, process, console)
                raise RlcatError(
                    [
                        diag(
                            "RLC1010",
                            f"Slurm job {job_id} did not end within --timeout {options.timeout:g} s; "
                            "it was cancelled",
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
    _print_output(output, printed, console, final=True)
    code = process.returncode
    console.tell(
        [
            diag(
                "RLC1010",
                f"Slurm job {job_id} ended with exit code {code}",
                severity=Severity.INFO if code == 0 else Severity.ERROR,
                argument="sbatch --wait",
            )
        ]
    )
    return code if 0 <= code < 256 else int(ExitCode.FINDINGS)


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


MAX_OUTPUT_BYTES = 256 * 1024 * 1024  # a job's output shown while it runs; past that, no more


def _print_output(output: str | None, printed: int, console: Console, *, final: bool = False) -> int:
    if output is None:
        return printed
    try:  # the job's output file, as Slurm names it: a regular file, read no further than the bound
        text = read_bytes(output, output, limit=MAX_OUTPUT_BYTES).decode("utf-8", errors="replace")
    except RlcatError:
        return printed
    if final and text and not text.endswith("\n"):
        text += "\n"
    return _print_new(text, printed, console)


def _cancel(job_id: str, process: subprocess.Popen[str], console: Console) -> None:
    scancel = shutil.which("scancel")
    try:
        if scancel is not None:
            subprocess.run([scancel, job_id], capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        console.tell(
            [diag("RLC1010", f"could not cancel Slurm job {job_id}: {exc}", severity=Severity.WARNING)]
        )
    finally:
        process.kill()
        process.wait()
    console.tell(
        [diag("RLC1010", f"Slurm job {job_id} cancelled", severity=Severity.INFO, argument="scancel")]
    )

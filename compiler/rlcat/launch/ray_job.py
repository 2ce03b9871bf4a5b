"""`--target ray-job`: the plan as a Ray Jobs submission to a running cluster (verl's documented
first path: `ray job submit --address http://HEAD:8265 -- python3 -m verl.trainer.main_ppo ...`).
The entrypoint probes each node's env (env_probe.py) before the trainer starts.

`--emit` writes the REST body (`POST /api/jobs/`) as JSON; `--submit` posts it after checking the
cluster's GPUs (ray_rest.py: the standard library, or Ray's public JobSubmissionClient when a
local --working-dir must be uploaded), and with `--wait` follows the job to its end, printing its
logs, and stops it on Ctrl-C or SIGTERM.
"""

from __future__ import annotations

import os
import shlex
import time
from pathlib import Path
from typing import Any

from rlcat import __version__
from rlcat.diagnostics import Diagnostic, ExitCode, RlcatError, Severity, diag, json_text, printable
from rlcat.launch import checks
from rlcat.launch.base import Console, Launch, Target, working_dir_path
from rlcat.launch.command import RAY_AUTH_MODE, RAY_AUTH_MODES, ray_accelerator
from rlcat.launch.env_probe import ray_probe_line
from rlcat.launch.ray_rest import (
    TERMINAL_STATES,
    TOKEN_HINT,
    LogTail,
    RayApiError,
    RayJobsClient,
    RaySdkMissing,
    auth_token,
    job_submission_client,
    sdk_address_override,
)


def entrypoint(launch: Launch) -> str:
    """The env probe, then (`&& exec`) the trainer: both quoted for POSIX sh, as the job supervisor
    runs the entrypoint with `subprocess.Popen(entrypoint, shell=True)`. The trainer replaces the
    shell, so stopping the job stops it."""
    return f"{ray_probe_line(launch.command.env)} && exec {launch.command.posix_line()}"


def submission(launch: Launch) -> dict[str, Any]:
    """The body of `POST /api/jobs/` (the entrypoint: `entrypoint`), with --working-dir as given: a
    remote URI Ray fetches, or a local folder, which Ray's clients (JobSubmissionClient,
    `ray job submit --runtime-env-json`) upload and replace with the package's URI."""
    options = launch.options
    runtime_env: dict[str, Any] = {"env_vars": launch.command.env_vars}
    if options.working_dir:
        runtime_env["working_dir"] = options.working_dir
        runtime_env["excludes"] = list(options.excludes)
    plan = launch.compiled.plan
    body: dict[str, Any] = {
        "entrypoint": entrypoint(launch),
        "runtime_env": runtime_env,
        "metadata": {
            "rlcat_recipe": plan.recipe,
            "rlcat_platform": plan.platform,
            "rlcat_verl_version": plan.verl_version,
            "rlcat_verl_index": launch.compiled.profile.verl_index,
            "rlcat_version": __version__,
            "rlcat_command": shlex.join(launch.regenerate),
        },
    }
    passed = [given.text for given in options.site.pass_env]
    if passed:  # names only: the values join the body rlcat posts (passed_values), never the artifact
        body["metadata"]["rlcat_pass_env"] = ",".join(passed)
    if options.entrypoint_cpus > 0:
        # entrypoint resources keep the NOSET variables in the driver's env (RLC1009)
        body["entrypoint_num_cpus"] = options.entrypoint_cpus
    return body


class RayJob(Target):
    name = "ray-job"
    summary = "a Ray Jobs submission (REST body as JSON; --submit posts it to --address)"

    def checks(self, launch: Launch) -> list[Diagnostic]:
        found = [
            *checks.verl_env_conflicts(launch),
            *checks.dollar_in_env(launch),
            *checks.gpu_visibility(launch),
            *checks.noset_survives(launch),
            *checks.pass_env_conflicts(launch),
            *checks.missing_credentials(
                launch, "a Ray job's env is its runtime env and the cluster's, not the submitting shell's"
            ),
        ]
        folder = working_dir_path(launch.options)
        if folder is not None:
            found += checks.working_dir(folder, launch.options.excludes)
        return found

    def render(self, launch: Launch) -> str:
        return json_text(submission(launch))

    def submit(self, launch: Launch, artifact: str, *, wait: bool, console: Console) -> int:
        address = launch.options.address
        if not address:
            raise RlcatError(
                [
                    diag(
                        "RLC105",
                        "--submit with --target ray-job needs the cluster's dashboard address",
                        argument="--address",
                        hint="--address http://HEAD:8265",
                    )
                ]
            )
        try:
            token = auth_token() if launch.command.env_vars.get(RAY_AUTH_MODE) == "token" else None
            client = RayJobsClient(address, token=token)
        except ValueError as exc:
            raise RlcatError([diag("RLC105", str(exc), argument=f"--address {address}")]) from None
        folder = working_dir_path(launch.options)
        if folder is not None:
            _check_uploader(client, folder)
        try:
            return _submit(client, launch, wait, console)
        except RayApiError as exc:
            raise _api_failure(exc, address) from None


def _api_failure(exc: RayApiError, address: str) -> RlcatError:
    problem = diag(
        "RLC1008",
        printable(str(exc)),
        argument=f"--address {address}",
        hint=exc.hint
        or (
            None
            if exc.reached
            else "is the head's dashboard up (ray start --head --include-dashboard=true), and reachable "
            "from here on that port?"
        ),
    )
    return RlcatError([problem], ExitCode.FINDINGS if exc.reached else ExitCode.INPUT)


def _submit(client: RayJobsClient, launch: Launch, wait: bool, console: Console) -> int:
    _check_auth_mode(client, launch)
    version = client.version()
    nodes = [n for n in client.nodes() if n.alive]
    resource = ray_accelerator(launch.compiled.profile.family)
    per_node = [n.resources.get(resource, 0.0) for n in nodes]
    problems = checks.gpus_fit(launch.command.pools, per_node, resource)
    if problems:
        raise RlcatError(problems, ExitCode.FINDINGS)
    folder = working_dir_path(launch.options)
    ray_warnings: list[str] = []
    body = submission(launch)
    body["runtime_env"]["env_vars"].update(passed_values(launch))
    if folder is None:
        submission_id = client.submit(body)
    else:
        submission_id, ray_warnings = client.submit_uploading(body)
    gpus = sum(per_node)
    try:
        console.tell(
            [
                diag(
                    "RLC1010",
                    f"submitted {submission_id} to Ray {version.get('ray_version')} ({len(nodes)} nodes, "
                    f"{gpus:g} {resource}s)",
                    severity=Severity.INFO,
                    argument=client.url,
                )
            ]
        )
        if folder is not None:
            _tell_package(client, submission_id, folder, ray_warnings, console)
    except BaseException:  # Ctrl-C or SIGTERM the moment the job exists: --wait owns the job
        if wait:
            _stop_quietly(client, submission_id, console)
        raise
    if not wait:
        console.log(submission_id + "\n")
        return int(ExitCode.OK)
    return _follow(client, submission_id, launch, console)


def passed_values(launch: Launch) -> dict[str, str]:
    """The --pass-env variables from rlcat's own environment, for the body it posts (the job's
    runtime env); one that is not set is RLC1013 before anything is submitted."""
    missing = [g for g in launch.options.site.pass_env if g.text not in os.environ]
    if missing:
        raise RlcatError(
            [
                diag(
                    "RLC1013",
                    f"{given.text} is not set here, and --pass-env sends this shell's value",
                    hint=f"export {given.text} before rlcat launch ... --submit",
                    **given.at(),
                )
                for given in missing
            ]
        )
    return {g.text: os.environ[g.text] for g in launch.options.site.pass_env}


# How long rlcat gives a stopped job to reach a final state before it reports the state it is in,
# and how long it reads the rest of an ended job's log.
SETTLE_SECONDS = 10.0
DRAIN_SECONDS = 10.0


def _follow(client: RayJobsClient, submission_id: str, launch: Launch, console: Console) -> int:
    """Print the job's log as it grows until it ends; its result as the exit code. The log is
    followed on the dashboard's tail websocket, so each byte crosses the network once; the status
    is read every poll_seconds. Ctrl-C, SIGTERM (cli.process.Terminated) and --timeout stop the
    job before rlcat exits."""
    options = launch.options
    deadline = None if options.timeout is None else time.monotonic() + options.timeout
    log = JobLog(console, submission_id, entrypoint(launch), launch.command.posix_line())
    tail = JobTail(client, submission_id, console)
    try:
        while True:
            tail.follow(options.poll_seconds, log)
            info = client.info(submission_id)
            status = str(info.get("status"))
            if status in TERMINAL_STATES:
                tail.rest(log)
                return _result(submission_id, info, console)
            if deadline is not None and time.monotonic() > deadline:
                log.end()
                raise _timed_out(client, submission_id, options.timeout)
    except (RlcatError, RayApiError):
        raise
    except BaseException:  # Ctrl-C or SIGTERM: the job must not outlive the command that started it
        _stop_quietly(client, submission_id, console)
        raise
    finally:
        tail.close()


class JobTail:
    """The job's log websocket (ray_rest.LogTail), opened again where it dropped before the job
    ended: a new one starts from the log's beginning, so what was read already is skipped. Where
    the dashboard offers none (a proxy that does not pass websockets), a warning, and the whole log
    once the job ends."""

    def __init__(self, client: RayJobsClient, submission_id: str, console: Console) -> None:
        self._client, self._id = client, submission_id
        self._received = 0  # characters of the log read so far
        self._skip = 0  # characters a reopened tail sends again
        self._socket: LogTail | None = None
        try:
            self._socket = client.tail(submission_id)
        except RayApiError as exc:
            console.tell(
                [
                    diag(
                        "RLC1010",
                        f"the dashboard does not stream the job's log ({printable(str(exc))}): it is "
                        "printed once the job ends",
                        severity=Severity.WARNING,
                        argument=client.url,
                    )
                ]
            )
        self.offered = self._socket is not None

    def follow(self, seconds: float, log: JobLog) -> None:
        """Feed `log` what arrives within `seconds`; reopen a tail that dropped first."""
        if self.offered and (self._socket is None or self._socket.closed):
            self._reopen()
        if self._socket is None or self._socket.closed:
            time.sleep(seconds)
            return
        until = time.monotonic() + seconds
        while not self._socket.closed and (left := until - time.monotonic()) > 0:
            log.feed(self._text(self._socket.read(left)))

    def rest(self, log: JobLog) -> None:
        """What the ended job's log holds beyond what was printed: the tail's last parts (the
        dashboard closes it once it has sent them; a tail that dropped is opened again), or the
        whole log once when there was no tail."""
        if not self.offered:
            log.feed(self._client.logs(self._id))
        else:
            if self._socket is None or (self._socket.closed and not self._socket.ended):
                self._reopen()  # it dropped: the log's end is still to be read
            stop_at = time.monotonic() + DRAIN_SECONDS
            while (
                self._socket is not None
                and not self._socket.closed
                and (left := stop_at - time.monotonic()) > 0
            ):
                log.feed(self._text(self._socket.read(left)))
        log.end()

    def close(self) -> None:
        if self._socket is not None:
            self._socket.close()

    def _reopen(self) -> None:
        try:
            self._socket = self._client.tail(self._id)
        except RayApiError:
            self._socket = None  # tried again at the next poll
            return
        self._skip = self._received

    def _text(self, text: str) -> str:
        if self._skip:
            dropped = min(self._skip, len(text))
            self._skip -= dropped
            text = text[dropped:]
        self._received += len(text)
        return text


def _timed_out(client: RayJobsClient, submission_id: str, timeout: float | None) -> RlcatError:
    """Stop the job and say the state it is really in, once it settles or SETTLE_SECONDS pass."""
    said = f"{submission_id} did not end within --timeout {timeout or 0:g} s"
    hint = None
    try:
        client.stop(submission_id)
        settle_at = time.monotonic() + SETTLE_SECONDS
        status = str(client.info(submission_id).get("status"))
        while status not in TERMINAL_STATES and time.monotonic() < settle_at:
            time.sleep(1.0)
            status = str(client.info(submission_id).get("status"))
    except RayApiError as exc:
        status, hint = "in an unknown state", f"rlcat could not stop it: {printable(str(exc))}"
    if status in TERMINAL_STATES:
        message = f"{said}; it was stopped and is {status}"
    else:
        message = f"{said}; rlcat asked Ray to stop it, and it is still {status}"
        hint = hint or (
            f"see `ray job status {submission_id}` and stop it with `ray job stop {submission_id}` "
            "(both with --address); a job PENDING this long often waits for its runtime env or has a "
            "RAY_AUTH_MODE the cluster does not have"
        )
    return RlcatError(
        [diag("RLC1010", message, severity=Severity.ERROR, argument="--timeout", hint=hint)],
        ExitCode.FINDINGS,
    )


# A line longer than this is printed as it is, unended, rather than held in memory.
MAX_PENDING_CHARS = 1 << 20


class JobLog:
    """The job's log as the user reads it: whole lines, each escaped (diagnostics.printable), and
    Ray's echo of the entrypoint (`Running entrypoint for job ID: ENTRYPOINT`, job_supervisor.py)
    without the env probe's source (about thirty lines of Python): the trainer's line is what the
    user ran."""

    def __init__(
        self, console: Console, submission_id: str = "", entrypoint_text: str = "", trainer_line: str = ""
    ) -> None:
        self._header = f"Running entrypoint for job {submission_id}: "
        self._echo = self._header + entrypoint_text + "\n"
        self._short = self._header + "(rlcat env probe) && exec " + trainer_line + "\n"
        self._echo_done = not submission_id  # a log without Ray's echo (Slurm's output file)
        self._pending = ""
        self._console = console

    def feed(self, text: str) -> None:
        self._pending += text
        if not self._echo_done:
            at = self._pending.find(self._echo)
            if at >= 0:
                self._pending = self._pending[:at] + self._short + self._pending[at + len(self._echo) :]
                self._echo_done = True
            else:
                start = self._pending.find(self._header)
                if start >= 0 and self._echo.startswith(self._pending[start:]):
                    self._pending = self._print(self._pending[:start]) + self._pending[start:]
                    return  # the echo is still arriving
        self._pending = self._print(self._pending)
        if len(self._pending) > MAX_PENDING_CHARS:
            self.end()

    def end(self) -> None:
        """Print what is left: a last line without its line break."""
        if self._pending:
            self._print(self._pending + "\n")
            self._pending = ""

    def _print(self, text: str) -> str:
        """Print the whole lines of `text`; the rest."""
        end = text.rfind("\n") + 1
        if end:
            self._console.log("".join(printable(line) + "\n" for line in text[: end - 1].split("\n")))
        return text[end:]


def _stop_quietly(client: RayJobsClient, submission_id: str, console: Console) -> None:
    try:
        stopped = client.stop(submission_id)
    except RayApiError as exc:
        console.tell([diag("RLC1010", f"could not stop {submission_id}: {exc}", severity=Severity.WARNING)])
        return
    said = "stopped" if stopped else "was no longer running"
    console.tell([diag("RLC1010", f"{submission_id} {said}", severity=Severity.INFO)])


def _result(submission_id: str, info: dict[str, Any], console: Console) -> int:
    status = str(info.get("status"))
    if status == "SUCCEEDED":
        console.tell([diag("RLC1010", f"{submission_id} SUCCEEDED", severity=Severity.INFO)])
        return int(ExitCode.OK)
    code = info.get("driver_exit_code")
    message = _ray_reason(str(info.get("message") or ""))
    console.tell(
        [
            diag(
                "RLC1010",
                f"{submission_id} {status}"
                + (f" (driver exit code {code})" if code is not None else "")
                + (f": {message}" if message else ""),
                severity=Severity.ERROR,
            )
        ]
    )
    # the job's own exit code where it has one, as `sbatch --wait` returns it
    return code if isinstance(code, int) and 0 < code < 256 else int(ExitCode.FINDINGS)


def _check_auth_mode(client: RayJobsClient, launch: Launch) -> None:
    """The launch's RAY_AUTH_MODE must be the cluster's, as its dashboard reports it, before
    anything is sent: a job whose env says `token` on a cluster without token authentication has
    every worker abort and stays PENDING forever; `disabled` against a token cluster is refused at
    every request."""
    cluster = client.authentication_mode()
    planned = launch.command.env_vars.get(RAY_AUTH_MODE)
    where: dict[str, object] = next(
        (dict(v.where) for v in launch.command.env if v.name == RAY_AUTH_MODE), {}
    )
    argument = str(where.get("argument") or "--ray-auth-mode")
    if cluster == planned:
        if planned == "token" and not client.token:
            raise RlcatError(
                [
                    diag(
                        "RLC1006",
                        f"the cluster at {client.url} checks a token, and none is set here",
                        argument=argument,
                        hint=TOKEN_HINT,
                    )
                ],
                ExitCode.FINDINGS,
            )
        return
    if cluster not in RAY_AUTH_MODES:
        return  # a mode this rlcat does not know: the cluster's answers say the rest
    if argument != "--ray-auth-mode":
        hint = f"set RAY_AUTH_MODE to {cluster} where the plan sets it ({argument})"
    elif cluster == "disabled":
        hint = "--ray-auth-mode disabled: the cluster checks no token"
    else:
        hint = TOKEN_HINT
    effect = (
        "every Ray worker of the job would abort, and the job stay PENDING"
        if planned == "token"
        else "the cluster refuses every request without its token"
    )
    raise RlcatError(
        [
            diag(
                "RLC1006",
                f"RAY_AUTH_MODE={planned} is not the cluster's authentication mode, {cluster} (as its "
                f"dashboard says at {client.url}/api/authentication_mode): {effect}",
                argument=argument,
                hint=hint,
            )
        ],
        ExitCode.FINDINGS,
    )


def _ray_reason(message: str) -> str:
    """Ray's own sentence of why a job ended ("Job entrypoint command failed with exit code 7"):
    the first line of its message, which then quotes the log's last lines (job_supervisor.py)."""
    lines = message.strip().splitlines()
    first = lines[0] if lines else ""
    return printable(first.split(", last available logs")[0].rstrip(":"))


def _check_uploader(client: RayJobsClient, folder: Path) -> None:
    """Before anything is sent: a local --working-dir is uploaded by Ray's JobSubmissionClient (the
    package routes are not part of the documented REST API), which must be installed here and must
    not be sent elsewhere by RAY_ADDRESS."""
    try:
        job_submission_client()
    except RaySdkMissing as exc:
        raise RlcatError(
            [
                diag(
                    "RLC1007",
                    f"uploading a local working_dir takes Ray's job submission client, and {exc}",
                    argument=f"--working-dir {folder}",
                    hint='pip install "ray[default]" beside rlcat, or give a URI Ray fetches itself '
                    "(https://.../dir.zip, s3://..., gs://...)",
                )
            ]
        ) from None
    override = sdk_address_override(client.url)
    if override is not None:
        name, value = override
        raise RlcatError(
            [
                diag(
                    "RLC105",
                    f"{name}={value} is set, and Ray's JobSubmissionClient, which uploads the "
                    f"working_dir, would submit there instead of to {client.url}",
                    argument=f"--address {client.url}",
                    hint=f"unset {name} for this command, or set it to {client.url}",
                )
            ]
        )


def _tell_package(
    client: RayJobsClient, submission_id: str, folder: Path, ray_warnings: list[str], console: Console
) -> None:
    """What Ray's client warned of while it packed the working_dir, and the package the cluster
    holds for it (the job's runtime_env says which)."""
    where = f"--working-dir {folder}"
    runtime_env = client.info(submission_id).get("runtime_env") or {}
    uri = runtime_env.get("working_dir") if isinstance(runtime_env, dict) else None
    warned = [
        diag("RLC1010", f"Ray: {said}", severity=Severity.WARNING, argument=where) for said in ray_warnings
    ]
    console.tell([*warned, diag("RLC1010", f"uploaded as {uri}", severity=Severity.INFO, argument=where)])

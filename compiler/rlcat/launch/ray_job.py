"""`--target ray-job`: the plan as a Ray Jobs submission to a running cluster (verl's documented
first path: `ray job submit --address http://HEAD:8265 -- python3 -m verl.trainer.main_ppo ...`).
The entrypoint probes each node's env (env_probe.py) before the trainer starts.

`--emit` writes the REST body (`POST /api/jobs/`) as JSON; `--submit` posts it after checking the
cluster's GPUs (ray_rest.py: the standard library, or Ray's public JobSubmissionClient when a
local --working-dir must be uploaded), and with `--wait` follows the job to its end, printing its
logs, and stops it on Ctrl-C or SIGTERM.
"""

from __future__ import annotations

import shlex
import time
from pathlib import Path
from typing import Any

from rlcat import __version__
from rlcat.diagnostics import Diagnostic, ExitCode, RlcatError, Severity, diag, json_text, printable
from rlcat.launch import checks
from rlcat.launch.base import Console, Launch, Target, working_dir_path
from rlcat.launch.command import RAY_AUTH_MODE, ray_accelerator
from rlcat.launch.env_probe import ray_probe_line
from rlcat.launch.ray_rest import (
    TERMINAL_STATES,
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
        hint=None
        if exc.reached
        else "is the head's dashboard up (ray start --head --include-dashboard=true), and reachable "
        "from here on that port?",
    )
    return RlcatError([problem], ExitCode.FINDINGS if exc.reached else ExitCode.INPUT)


def _submit(client: RayJobsClient, launch: Launch, wait: bool, console: Console) -> int:
    version = client.version()
    nodes = [n for n in client.nodes() if n.alive]
    resource = ray_accelerator(launch.compiled.profile.family)
    per_node = [n.resources.get(resource, 0.0) for n in nodes]
    problems = checks.gpus_fit(launch.command.pools, per_node, resource)
    if problems:
        raise RlcatError(problems, ExitCode.FINDINGS)
    folder = working_dir_path(launch.options)
    ray_warnings: list[str] = []
    if folder is None:
        submission_id = client.submit(submission(launch))
    else:
        submission_id, ray_warnings = client.submit_uploading(submission(launch))
    gpus = sum(per_node)
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
    if not wait:
        console.log(submission_id + "\n")
        return int(ExitCode.OK)
    return _follow(client, submission_id, launch, console)


def _follow(client: RayJobsClient, submission_id: str, launch: Launch, console: Console) -> int:
    """Print the job's logs as they grow until it ends; its result as the exit code. Ctrl-C,
    SIGTERM (cli.process.Terminated) and --timeout stop the job before rlcat exits."""
    deadline = None if launch.options.timeout is None else time.monotonic() + launch.options.timeout
    printed = 0
    try:
        while True:
            info = client.info(submission_id)
            logs = client.logs(submission_id)
            printed = _print_new(logs, printed, console)
            status = str(info.get("status"))
            if status in TERMINAL_STATES:
                return _result(submission_id, info, console)
            if deadline is not None and time.monotonic() > deadline:
                client.stop(submission_id)
                raise RlcatError(
                    [
                        diag(
                            "RLC1010",
                            f"{submission_id} did not end within --timeout {launch.options.timeout:g} s; "
                            "it was stopped",
                            argument="--timeout",
                        )
                    ],
                    ExitCode.FINDINGS,
                )
            time.sleep(launch.options.poll_seconds)
    except (RlcatError, RayApiError):
        raise
    except BaseException:  # Ctrl-C or SIGTERM: the job must not outlive the command that started it
        _stop_quietly(client, submission_id, console)
        raise


def _print_new(logs: str, printed: int, console: Console) -> int:
    """Print the whole lines the logs gained since `printed` characters; returns the new count."""
    end = logs.rfind("\n") + 1
    if end > printed:
        console.log("".join(printable(line) + "\n" for line in logs[printed:end].split("\n")[:-1]))
        return end
    return printed


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
    last_lines = str(info.get("message") or "").strip().splitlines()[-1:]
    message = printable(last_lines[0]) if last_lines else ""
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

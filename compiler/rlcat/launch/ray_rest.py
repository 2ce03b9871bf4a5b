"""The Ray Jobs API. What the documented REST API covers goes through the standard library, so
submitting needs no `ray` install (384 MB); a local working_dir, which that API cannot upload, goes
through Ray's public `ray.job_submission.JobSubmissionClient` (`submit_uploading`).

Documented routes (docs.ray.io, Ray Jobs REST API and its OpenAPI specification): GET /api/version,
POST /api/jobs/, GET /api/jobs/{id}, GET /api/jobs/{id}/logs, POST /api/jobs/{id}/stop. Besides
them, GET /api/v0/nodes is the state API's route (what `ray list nodes` and
`ray.util.state.list_nodes` read: ray/dashboard/modules/state/state_head.py). Token authentication
sends `Authorization: Bearer TOKEN`, the token read as Ray reads it: RAY_AUTH_TOKEN, else the file
RAY_AUTH_TOKEN_PATH, else ~/.ray/auth_token.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import logging
import logging.handlers
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlcat.diagnostics import RlcatError
from rlcat.files import read_text

TERMINAL_STATES = frozenset({"SUCCEEDED", "FAILED", "STOPPED"})


class RayApiError(Exception):
    """A request the cluster did not answer, or answered with an error. `reached` tells the two
    apart: an unreachable address is bad input (exit 2), a refusal is the cluster's word."""

    def __init__(self, message: str, *, reached: bool) -> None:
        super().__init__(message)
        self.reached = reached


@dataclass(frozen=True)
class Node:
    ip: str
    alive: bool
    resources: dict[str, float]


def dashboard_url(address: str) -> str:
    """`http://HOST:PORT` from what the user gave (`HOST:8265` gets `http://`); anything but http
    and https, or text after the port, is refused (ValueError)."""
    url = address if "://" in address else f"http://{address}"
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("the address is the dashboard's http://HOST:PORT (Ray's default port is 8265)")
    if parts.path.strip("/") or parts.query or parts.fragment or parts.username:
        raise ValueError("give only http://HOST:PORT: a path, query or user name is not the dashboard's")
    return f"{parts.scheme}://{parts.netloc}"


MAX_TOKEN_BYTES = 64 * 1024


def auth_token() -> str | None:
    """The cluster token as Ray's own clients find it, or None."""
    token = os.environ.get("RAY_AUTH_TOKEN")
    if token:
        return token.strip()
    path = Path(os.environ.get("RAY_AUTH_TOKEN_PATH") or Path.home() / ".ray" / "auth_token")
    try:  # a token is a line; a FIFO, a device or a megabyte file is no token file
        return read_text(path, str(path), limit=MAX_TOKEN_BYTES).strip() or None
    except RlcatError:
        return None


SUBMIT_SECONDS = 120.0


class RayJobsClient:
    """One cluster's job API. Every request it sends itself is bounded by `timeout` seconds."""

    def __init__(self, address: str, *, token: str | None = None, timeout: float = 10.0) -> None:
        self.url = dashboard_url(address)
        self.token = token
        self.timeout = timeout

    def _call(self, method: str, path: str, body: Any = None, timeout: float | None = None) -> Any:
        headers = {"Content-Type": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        data = None if body is None else json.dumps(body).encode("utf-8")
        request = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=timeout or self.timeout) as response:
                text = response.read().decode("utf-8", "replace")
        except urllib.error.HTTPError as exc:
            detail = _tail(exc.read().decode("utf-8", "replace"))
            raise RayApiError(f"{method} {path}: HTTP {exc.code} {detail}", reached=True) from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise RayApiError(f"{self.url} did not answer: {reason}", reached=False) from None
        try:
            return json.loads(text) if text.strip() else None
        except json.JSONDecodeError:
            raise RayApiError(
                f"{method} {path}: the answer is not JSON: {text[:200]}", reached=True
            ) from None

    def version(self) -> dict[str, Any]:
        """{"version": API version, "ray_version": ..., ...}: also proves the address is a dashboard."""
        answer = self._call("GET", "/api/version")
        if not isinstance(answer, dict) or "ray_version" not in answer:
            raise RayApiError(f"{self.url} answered, but not as a Ray dashboard", reached=True)
        return answer

    def nodes(self) -> list[Node]:
        """Every node the cluster knows, with its total resources (the state API)."""
        answer = self._call("GET", "/api/v0/nodes?limit=10000")
        try:
            rows = answer["data"]["result"]["result"]
            return [
                Node(
                    str(row.get("node_ip")),
                    row.get("state") == "ALIVE",
                    {str(k): float(v) for k, v in (row.get("resources_total") or {}).items()},
                )
                for row in rows
            ]
        except (KeyError, TypeError, ValueError):
            raise RayApiError("GET /api/v0/nodes: unexpected answer", reached=True) from None

    def submit(self, body: dict[str, Any]) -> str:
        # The dashboard answers a submission only once the job's supervisor actor has started: on a
        # busy head that takes tens of seconds, far longer than a status read.
        answer = self._call("POST", "/api/jobs/", body, timeout=max(self.timeout, SUBMIT_SECONDS))
        if not isinstance(answer, dict) or not isinstance(answer.get("submission_id"), str):
            raise RayApiError("POST /api/jobs/: no submission_id in the answer", reached=True)
        return str(answer["submission_id"])

    def info(self, submission_id: str) -> dict[str, Any]:
        answer = self._call("GET", f"/api/jobs/{urllib.parse.quote(submission_id, safe='')}")
        if not isinstance(answer, dict):
            raise RayApiError("GET /api/jobs/ID: unexpected answer", reached=True)
        return answer

    def logs(self, submission_id: str) -> str:
        answer = self._call("GET", f"/api/jobs/{urllib.parse.quote(submission_id, safe='')}/logs")
        return str(answer.get("logs", "")) if isinstance(answer, dict) else ""

    def stop(self, submission_id: str) -> bool:
        answer = self._call("POST", f"/api/jobs/{urllib.parse.quote(submission_id, safe='')}/stop")
        return bool(isinstance(answer, dict) and answer.get("stopped"))

    def submit_uploading(self, body: dict[str, Any]) -> tuple[str, list[str]]:
        """Submit a job whose runtime_env names a local working_dir through Ray's public
        `JobSubmissionClient`: it packs the folder less its excludes (and what .gitignore names),
        uploads the package unless the cluster has it, and posts the body with the package's
        `gcs://_ray_pkg_HASH.zip` URI in its place. The token goes in the same header; Ray's
        client has no request timeout. Returns the submission id and the warnings Ray logged
        meanwhile, for rlcat to report. `RaySdkMissing` without `ray[default]`."""
        sdk = job_submission_client()
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else None
        with _ray_warnings() as warnings:
            try:
                submission_id = str(sdk(self.url, headers=headers).submit_job(**body))
            except Exception as exc:  # what Ray's client raises: RuntimeError for an HTTP error,
                # AuthenticationError, ValueError for a runtime_env it refuses, requests' OSErrors
                reached = not isinstance(exc, OSError) or getattr(exc, "response", None) is not None
                raise RayApiError(f"{type(exc).__name__}: {_tail(str(exc))}", reached=reached) from None
        return submission_id, warnings


@contextlib.contextmanager
def _ray_warnings() -> Iterator[list[str]]:
    """Ray's log records while its client packs and uploads, kept instead of written: Ray writes
    file names as they are (a control character in one would reach the terminal), and narrates at
    INFO what rlcat reports itself. The list fills with the warnings' text on exit, to be reported
    as findings."""
    ray_logger = logging.getLogger("ray")  # Ray's modules log under it; it does not propagate
    kept = logging.handlers.BufferingHandler(capacity=10_000)  # flushing empties it: never, here
    kept.setLevel(logging.WARNING)
    handlers, ray_logger.handlers = ray_logger.handlers, [kept]
    warnings: list[str] = []
    try:
        yield warnings
    finally:
        ray_logger.handlers = handlers
        warnings.extend(record.getMessage() for record in kept.buffer)


class RaySdkMissing(Exception):
    """Ray's job submission client is not installed here (it comes with `ray[default]`)."""


def job_submission_client() -> Any:
    """`ray.job_submission.JobSubmissionClient`, or RaySdkMissing. A bare `pip install ray` has the
    class but not what it sends requests with (requests and aiohttp, from ray[default])."""
    try:
        from ray.job_submission import JobSubmissionClient
    except ImportError:
        raise RaySdkMissing("`ray` is not installed here") from None
    if not all(importlib.util.find_spec(name) for name in ("requests", "aiohttp")):
        raise RaySdkMissing("`ray` is installed without its job submission client (ray[default])")
    return JobSubmissionClient


# Ray's JobSubmissionClient takes its address from these, when set, rather than from its argument
# (ray/dashboard/utils.py get_address_for_submission_client), in this order
SDK_ADDRESS_VARIABLES = ("RAY_API_SERVER_ADDRESS", "RAY_ADDRESS")


def sdk_address_override(url: str) -> tuple[str, str] | None:
    """(name, value) of the variable that would send Ray's JobSubmissionClient to another dashboard
    than `url`, or None. Only an http(s) address names a dashboard; Ray reads any other as the
    cluster's GCS address or a Ray Client address and looks its dashboard up."""
    for name in SDK_ADDRESS_VARIABLES:
        value = os.environ.get(name)
        if not value:
            continue
        try:
            same = value.startswith(("http://", "https://")) and dashboard_url(value) == url
        except ValueError:
            same = False
        return None if same else (name, value)
    return None


def _tail(text: str, limit: int = 2000) -> str:
    """The end of a long error text: the cluster's tracebacks end with what went wrong."""
    text = text.strip()
    return text if len(text) <= limit else "..." + text[-limit:]

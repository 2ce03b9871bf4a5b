"""The Ray Jobs REST API through the standard library: submitting needs no `ray` install (384 MB).

Endpoints (Ray 2.x dashboard, ray/dashboard/modules/job/job_head.py and state/state_head.py):
GET /api/version, GET /api/v0/nodes, POST /api/jobs/, GET /api/jobs/{id}, GET /api/jobs/{id}/logs,
POST /api/jobs/{id}/stop. Token authentication sends `Authorization: Bearer TOKEN`, the token read
as Ray reads it: RAY_AUTH_TOKEN, else the file RAY_AUTH_TOKEN_PATH, else ~/.ray/auth_token.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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


def auth_token() -> str | None:
    """The cluster token as Ray's own clients find it, or None."""
    token = os.environ.get("RAY_AUTH_TOKEN")
    if token:
        return token.strip()
    path = Path(os.environ.get("RAY_AUTH_TOKEN_PATH") or Path.home() / ".ray" / "auth_token")
    try:
        return path.read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


SUBMIT_SECONDS = 120.0


class RayJobsClient:
    """One cluster's job API. Every request is bounded by `timeout` seconds."""

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
            detail = exc.read().decode("utf-8", "replace").strip()[:2000]
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

    def upload_package(self, uri: str, package: bytes) -> None:
        """PUT a working_dir package (`gcs://_ray_pkg_HASH.zip`) as the Ray SDK does."""
        path = "/api/packages/" + uri.replace("://", "/", 1)
        headers = {"Content-Type": "application/octet-stream"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        request = urllib.request.Request(self.url + path, data=package, method="PUT", headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=max(self.timeout, 120)):
                pass
        except urllib.error.HTTPError as exc:
            raise RayApiError(f"upload of {uri}: HTTP {exc.code}", reached=True) from None
        except (urllib.error.URLError, OSError) as exc:
            raise RayApiError(f"upload of {uri}: {getattr(exc, 'reason', exc)}", reached=False) from None

"""The Ray Jobs API. What the documented REST API covers goes through the standard library, so
submitting needs no `ray` install (384 MB); a local working_dir, which that API cannot upload, goes
through Ray's public `ray.job_submission.JobSubmissionClient` (`submit_uploading`).

Documented routes (docs.ray.io, Ray Jobs REST API and its OpenAPI specification): GET /api/version,
POST /api/jobs/, GET /api/jobs/{id}, GET /api/jobs/{id}/logs, POST /api/jobs/{id}/stop. Besides
them, GET /api/v0/nodes is the state API's route (what `ray list nodes` and
`ray.util.state.list_nodes` read: ray/dashboard/modules/state/state_head.py),
GET /api/authentication_mode the dashboard's public answer `{"authentication_mode": "disabled" |
"token"}` (ray/dashboard/http_server_head.py, Ray >= 2.52; older dashboards answer 404 and have no
token authentication), and GET /api/jobs/{id}/logs/tail the websocket Ray's own
`JobSubmissionClient.tail_job_logs` follows a job's log with (job_head.py): the log from its start,
then each chunk as the driver writes it, closed once the job ends. `/logs` has no offset: polling
it downloads the whole log each time. Token authentication sends `Authorization: Bearer TOKEN`, the
token read as Ray reads it: RAY_AUTH_TOKEN, else the file RAY_AUTH_TOKEN_PATH, else
~/.ray/auth_token.
"""

from __future__ import annotations

import base64
import codecs
import contextlib
import hashlib
import http.client
import importlib.util
import json
import logging
import logging.handlers
import os
import socket
import ssl
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
    apart: an unreachable address is bad input (exit 2), a refusal is the cluster's word. `status`
    is the HTTP status of a refusal; `hint` what to try."""

    def __init__(
        self, message: str, *, reached: bool, status: int | None = None, hint: str | None = None
    ) -> None:
        super().__init__(message)
        self.reached, self.status, self.hint = reached, status, hint


NOT_HTTP_HINT = (
    "the address is the dashboard's, http://HEAD:8265 (`ray start --dashboard-port`); the HEAD:6379 "
    "that `ray start --head` prints is the GCS port, for `ray start --address` and ray.init"
)
TOKEN_HINT = (
    "the cluster checks a token: give its token in RAY_AUTH_TOKEN (or the file RAY_AUTH_TOKEN_PATH, or "
    "~/.ray/auth_token) and launch with --ray-auth-mode token"
)


def _not_http(url: str) -> RayApiError:
    """Something answered on the port, but not as an HTTP server (nothing of its bytes is shown)."""
    return RayApiError(f"{url} answered, but not over HTTP", reached=False, hint=NOT_HTTP_HINT)


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
            raise RayApiError(
                f"{method} {path}: HTTP {exc.code} {detail}",
                reached=True,
                status=exc.code,
                hint=TOKEN_HINT if exc.code in (401, 403) else None,
            ) from None
        except http.client.HTTPException:  # BadStatusLine and kin: a port that does not speak HTTP
            raise _not_http(self.url) from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise RayApiError(f"{self.url} did not answer: {reason}", reached=False) from None
        try:
            return json.loads(text) if text.strip() else None
        except json.JSONDecodeError:
            raise RayApiError(
                f"{method} {path}: {self.url} answered, but not as a Ray dashboard (not JSON)",
                reached=True,
                hint=NOT_HTTP_HINT,
            ) from None

    def version(self) -> dict[str, Any]:
        """{"version": API version, "ray_version": ..., ...}: also proves the address is a dashboard."""
        answer = self._call("GET", "/api/version")
        if not isinstance(answer, dict) or "ray_version" not in answer:
            raise RayApiError(f"{self.url} answered, but not as a Ray dashboard", reached=True)
        return answer

    def authentication_mode(self) -> str:
        """The cluster's token authentication as its dashboard reports it: "token" or "disabled"
        (a dashboard older than token authentication, Ray < 2.52, has no such route: "disabled")."""
        try:
            answer = self._call("GET", "/api/authentication_mode")
        except RayApiError as exc:
            if exc.status == 404:
                return "disabled"
            raise
        mode = answer.get("authentication_mode") if isinstance(answer, dict) else None
        if not isinstance(mode, str):
            raise RayApiError(
                f"{self.url} answered, but not as a Ray dashboard", reached=True, hint=NOT_HTTP_HINT
            )
        return mode

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

    def tail(self, submission_id: str) -> LogTail:
        """The job's log, followed: `LogTail` on GET /api/jobs/{id}/logs/tail."""
        path = f"/api/jobs/{urllib.parse.quote(submission_id, safe='')}/logs/tail"
        return LogTail(self.url, path, self.token, self.timeout)

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


WEBSOCKET_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"  # RFC 6455, section 1.3
MAX_FRAME_BYTES = 16 * 2**20  # Ray sends a job's log in chunks of at most 10 lines or 20,000 chars
MAX_HEADER_BYTES = 64 * 1024


def websocket_accept(key: bytes) -> bytes:
    """The Sec-WebSocket-Accept a server answers to Sec-WebSocket-Key `key` (RFC 6455, 4.2.2)."""
    return base64.b64encode(hashlib.sha1(key + WEBSOCKET_GUID).digest())


class LogTail:
    """A websocket client for one route, just what following a job's log takes (RFC 6455: text
    frames in, pings answered, no extensions offered), on the standard library. Each `read` waits
    at most its `wait` seconds, so the caller keeps its own pace (status, --timeout, Ctrl-C).
    Memory and traffic are the log's new text only: nothing is asked for twice."""

    def __init__(self, url: str, path: str, token: str | None, timeout: float) -> None:
        parts = urllib.parse.urlsplit(url)
        host = parts.hostname or ""
        port = parts.port or (443 if parts.scheme == "https" else 80)
        self.closed = False
        self.ended = False  # the server closed the stream itself: the job's log is all sent
        self._buffer = b""
        self._text = codecs.getincrementaldecoder("utf-8")("replace")
        try:
            self._sock: socket.socket = socket.create_connection((host, port), timeout=timeout)
            if parts.scheme == "https":
                self._sock = ssl.create_default_context().wrap_socket(self._sock, server_hostname=host)
            key = base64.b64encode(os.urandom(16))
            lines = [
                f"GET {path} HTTP/1.1",
                f"Host: {parts.netloc}",
                "Upgrade: websocket",
                "Connection: Upgrade",
                f"Sec-WebSocket-Key: {key.decode()}",
                "Sec-WebSocket-Version: 13",
                *([f"Authorization: Bearer {token}"] if token else []),
            ]
            self._sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("utf-8"))
            head = self._handshake()
        except OSError as exc:
            self.close()
            raise RayApiError(f"{url} did not answer: {exc}", reached=False) from None
        status = head.split(b"\r\n", 1)[0].split(b" ")
        if len(status) < 2 or not status[0].startswith(b"HTTP/"):
            self.close()
            raise _not_http(url)
        if status[1] != b"101":
            self.close()
            code = int(status[1]) if status[1].isdigit() else None
            raise RayApiError(
                f"GET {path}: HTTP {status[1].decode('ascii', 'replace')}",
                reached=True,
                status=code,
                hint=TOKEN_HINT if code in (401, 403) else None,
            )
        if b"sec-websocket-accept: " + websocket_accept(key).lower() not in head.lower():
            self.close()
            raise RayApiError(f"GET {path}: not a websocket answer", reached=True)

    def _handshake(self) -> bytes:
        while b"\r\n\r\n" not in self._buffer:
            if len(self._buffer) > MAX_HEADER_BYTES:
                raise OSError("no end to the answer's headers")
            chunk = self._sock.recv(65536)
            if not chunk:
                break
            self._buffer += chunk
        head, _, self._buffer = self._buffer.partition(b"\r\n\r\n")
        return head

    def read(self, wait: float) -> str:
        """The text that arrived within `wait` seconds ("" for none); `closed` once the server
        ended the stream (`ended`: the job ended) or the connection dropped."""
        if self.closed:
            return ""
        try:
            self._sock.settimeout(max(wait, 0.001))  # 0 would make the socket non-blocking
            chunk = self._sock.recv(1 << 20)
            if not chunk:
                self.close()
            self._buffer += chunk
        except TimeoutError:
            pass
        except OSError:
            self.close()
        return self._frames()

    def _frames(self) -> str:
        text = ""
        while len(self._buffer) >= 2:
            first, second = self._buffer[0], self._buffer[1]
            length, start = second & 0x7F, 2
            if length == 126:
                if len(self._buffer) < 4:
                    break
                length, start = int.from_bytes(self._buffer[2:4], "big"), 4
            elif length == 127:
                if len(self._buffer) < 10:
                    break
                length, start = int.from_bytes(self._buffer[2:10], "big"), 10
            mask = b""
            if second & 0x80:
                mask, start = self._buffer[start : start + 4], start + 4
            if length > MAX_FRAME_BYTES:
                self.close()
                break
            if len(self._buffer) < start + length:
                break
            payload = self._buffer[start : start + length]
            self._buffer = self._buffer[start + length :]
            if mask:
                payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
            opcode = first & 0x0F
            if opcode in (0, 1, 2):  # a message's parts, decoded as they come (the decoder keeps
                text += self._text.decode(payload)  # a character cut between two)
            elif opcode == 8:
                self._send(8, payload[:2])
                self.ended = True
                self.close()
                break
            elif opcode == 9:
                self._send(10, payload)
        if self.closed:
            text += self._text.decode(b"", final=True)
        return text

    def _send(self, opcode: int, payload: bytes) -> None:
        """A control frame, masked as a client's must be."""
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        with contextlib.suppress(OSError):
            self._sock.sendall(bytes([0x80 | opcode, 0x80 | len(payload)]) + mask + masked)

    def close(self) -> None:
        self.closed = True
        sock = getattr(self, "_sock", None)
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.close()


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

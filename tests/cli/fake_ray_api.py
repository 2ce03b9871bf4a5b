"""A stand-in of the Ray dashboard's job routes rlcat uses, served on 127.0.0.1 by a thread of the
test: jobs answer from a script of states, nodes from a list of GPU counts. It answers as Ray
2.60's dashboard does (ray/dashboard/modules/job/job_head.py, http_server_head.py), including the
package routes Ray's JobSubmissionClient uploads a working_dir through and, with `token`, the
token check in front of every route but the public /api/authentication_mode. The job's log is
"step N" for each status read so far (or `log`, growing by `chunk` characters per read); it is
served by GET /logs (whole, each time) and by the /logs/tail websocket (each part once, closed
once the job ended), and `log_bytes` counts what both sent."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

JSON = "application/json"
# RFC 6455, section 1.3, as the RFC prints it (the servers here answer as aiohttp, Ray's, does)
WEBSOCKET_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
# Ray's dashboard sends a job's log in parts of at most 10 lines or 20,000 characters
# (ray/dashboard/modules/job/utils.py, file_tail_iterator): the size of each websocket message here
TAIL_CHUNK_CHARS = 20_000


class FakeRay:
    """The dashboard routes rlcat uses, answering from a script of states. `packages` holds what
    was uploaded (URI → zip bytes), `requests` every request as (method, path, Authorization
    header); a body above `max_body` bytes is refused as aiohttp refuses it (Ray: 100 MiB)."""

    def __init__(
        self,
        states: list[str],
        gpus: float = 8.0,
        exit_code: int | None = None,
        node_gpus: list[float] | None = None,
        token: str | None = None,
        max_body: int = 100 * 2**20,
        auth_mode: str | None = None,
        log: str | None = None,
        chunk: int = 0,
        message: str = "done",
        tail: bool = True,
        stops: bool = True,
        drops: int = 0,
    ) -> None:
        self.stops = stops
        self.drops = drops  # tail connections cut (no close frame) after their first part
        self.tails = 0
        self.auth_mode = auth_mode or ("token" if token else "disabled")
        self.log, self.chunk, self.message, self.offers_tail = log, chunk, message, tail
        self.log_bytes = 0
        self.ended = False
        self._log_text: str | None = None
        self.states, self.exit_code, self.token, self.max_body = states, exit_code, token, max_body
        self.node_gpus = [gpus] if node_gpus is None else node_gpus
        self.submitted: list[dict[str, Any]] = []
        self.stopped: list[str] = []
        self.packages: dict[str, bytes] = {}
        self.requests: list[tuple[str, str, str | None]] = []
        self.polls = 0

    def answer(
        self, method: str, path: str, data: bytes, authorization: str | None
    ) -> tuple[int, str, bytes]:
        """(status, content type, body) for one request."""
        self.requests.append((method, path, authorization))
        if path == "/api/authentication_mode":  # public, as Ray's dashboard serves it
            return 200, JSON, json.dumps({"authentication_mode": self.auth_mode}).encode()
        if self.token is not None and not authorization:
            return 401, "text/plain", b"Unauthorized: Missing authentication token"
        if self.token is not None and authorization != f"Bearer {self.token}":
            return 403, "text/plain", b"Forbidden: Invalid authentication token"
        if len(data) > self.max_body:
            message = f"Maximum request body size {self.max_body} exceeded, actual body size {len(data)}"
            return 413, "text/plain", message.encode()
        if path.startswith("/api/packages/"):
            protocol, name = path.removeprefix("/api/packages/").split("/", 1)
            uri = f"{protocol}://{name}"
            if method == "PUT":
                self.packages[uri] = data
                return 200, "application/octet-stream", b""
            if uri in self.packages:
                return 200, "application/octet-stream", b""
            return 404, "text/plain", f"Package {uri} does not exist".encode()
        body = json.loads(data or b"null")
        return 200, JSON, json.dumps(self._jobs(method, path, body)).encode()

    def _jobs(self, method: str, path: str, body: Any) -> Any:
        if path == "/api/version":
            return {"version": "4", "ray_version": "2.60.0"}
        if path.startswith("/api/v0/nodes"):
            nodes = [
                {"node_ip": f"127.0.0.{i + 2}", "state": "ALIVE", "resources_total": {"GPU": gpus, "CPU": 8}}
                for i, gpus in enumerate(self.node_gpus)
            ]
            return {"data": {"result": {"result": nodes}}}
        if method == "POST" and path == "/api/jobs/":
            self.submitted.append(body)
            return {"submission_id": "raysubmit_test", "job_id": "01000000"}
        if path.endswith("/stop"):
            self.stopped.append(path)
            return {"stopped": self.stops}
        if path.endswith("/logs"):
            logs = self.log_so_far()
            self.log_bytes += len(logs.encode())
            return {"logs": logs}
        self.polls += 1
        status = self.states[min(self.polls - 1, len(self.states) - 1)]
        if self.stopped and self.stops:
            status = "STOPPED"
        self.ended = status in ("SUCCEEDED", "FAILED", "STOPPED")
        runtime_env = self.submitted[-1].get("runtime_env") if self.submitted else None
        return {
            "status": status,
            "driver_exit_code": self.exit_code,
            "message": self.message,
            "runtime_env": runtime_env,
        }

    def log_so_far(self, start: int = 0) -> str:
        """The log as far as the job has written it, from `start`; `{entrypoint}` in `log` is the
        submitted one, as Ray's job supervisor echoes it first."""
        if self.log is None:
            return "".join(f"step {i}\n" for i in range(self.polls))[start:]
        if self._log_text is None and self.submitted:
            self._log_text = self.log.replace("{entrypoint}", self.submitted[-1]["entrypoint"])
        log = self._log_text or ""
        return log[start:] if self.ended else log[start : self.chunk * self.polls]


def websocket_frame(opcode: int, payload: bytes) -> bytes:
    """One unmasked frame, as a server sends it (RFC 6455, section 5.2)."""
    size = len(payload)
    if size < 126:
        head = bytes([0x80 | opcode, size])
    elif size < 2**16:
        head = bytes([0x80 | opcode, 126]) + size.to_bytes(2, "big")
    else:
        head = bytes([0x80 | opcode, 127]) + size.to_bytes(8, "big")
    return head + payload


@contextlib.contextmanager
def fake_ray_servers() -> Iterator[Callable[..., tuple[FakeRay, str]]]:
    """`start(states, ...)` serves a FakeRay and returns it with its address; every server started is
    shut down on exit."""
    servers: list[ThreadingHTTPServer] = []
    stopping = threading.Event()

    def start(*args: Any, **kwargs: Any) -> tuple[FakeRay, str]:
        fake = FakeRay(*args, **kwargs)

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path.endswith("/logs/tail"):
                    self._tail() if fake.offers_tail else self._not_found()
                else:
                    self._reply()

            def _not_found(self) -> None:
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def _tail(self) -> None:
                """The websocket as job_head.py serves it: the log from its start, then what it
                gains, closed once the job ended and every part was sent."""
                status, _, body = fake.answer("GET", self.path, b"", self.headers.get("Authorization"))
                if status != 200:
                    self.send_response(status)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                key = self.headers["Sec-WebSocket-Key"].encode()
                accept = base64.b64encode(hashlib.sha1(key + WEBSOCKET_GUID).digest())
                self.send_response(101)
                self.send_header("Upgrade", "websocket")
                self.send_header("Connection", "Upgrade")
                self.send_header("Sec-WebSocket-Accept", accept.decode())
                self.end_headers()
                fake.tails += 1
                with contextlib.suppress(OSError):  # the client went away: nothing to follow
                    self._follow()

            def _follow(self) -> None:
                sent, seen = 0, -1
                while not stopping.is_set():
                    ended = fake.ended
                    if (fake.polls, ended) == (seen, False):  # the log grows with status reads
                        stopping.wait(0.005)  # not time.sleep, which tests replace
                        continue
                    seen = fake.polls
                    new = fake.log_so_far(sent)
                    for at in range(0, len(new), TAIL_CHUNK_CHARS):
                        data = new[at : at + TAIL_CHUNK_CHARS].encode()
                        fake.log_bytes += len(data)
                        self.wfile.write(websocket_frame(1, data))
                    sent += len(new)
                    if new and fake.drops:  # the connection drops, as through a proxy's idle timeout
                        fake.drops -= 1
                        return
                    if ended:
                        self.wfile.write(websocket_frame(8, (1000).to_bytes(2, "big")))
                        return
                    stopping.wait(0.005)  # not time.sleep, which tests replace

            def _reply(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                data = self.rfile.read(length)
                status, content_type, body = fake.answer(
                    self.command, self.path, data, self.headers.get("Authorization")
                )
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_POST = do_PUT = _reply

            def log_message(self, *args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        # a short poll: shutting the server down waits for one
        threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True).start()
        servers.append(server)
        return fake, f"http://127.0.0.1:{server.server_address[1]}"

    try:
        yield start
    finally:
        stopping.set()
        for server in servers:
            server.shutdown()
            server.server_close()

"""A stand-in of the Ray dashboard's job routes rlcat uses, served on 127.0.0.1 by a thread of the
test: jobs answer from a script of states, nodes from a list of GPU counts. It answers as Ray
2.60's dashboard does (ray/dashboard/modules/job/job_head.py, http_server_head.py), including the
package routes Ray's JobSubmissionClient uploads a working_dir through and, with `token`, the
token check in front of every route."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

JSON = "application/json"


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
    ) -> None:
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
            return {"stopped": True}
        if path.endswith("/logs"):
            return {"logs": "".join(f"step {i}\n" for i in range(self.polls))}
        self.polls += 1
        status = self.states[min(self.polls - 1, len(self.states) - 1)]
        runtime_env = self.submitted[-1].get("runtime_env") if self.submitted else None
        return {
            "status": status,
            "driver_exit_code": self.exit_code,
            "message": "done",
            "runtime_env": runtime_env,
        }


@contextlib.contextmanager
def fake_ray_servers() -> Iterator[Callable[..., tuple[FakeRay, str]]]:
    """`start(states, ...)` serves a FakeRay and returns it with its address; every server started is
    shut down on exit."""
    servers: list[ThreadingHTTPServer] = []

    def start(*args: Any, **kwargs: Any) -> tuple[FakeRay, str]:
        fake = FakeRay(*args, **kwargs)

        class Handler(BaseHTTPRequestHandler):
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

            do_GET = do_POST = do_PUT = _reply

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
        for server in servers:
            server.shutdown()
            server.server_close()

"""A stand-in of the Ray Jobs REST API (the endpoints rlcat uses), served on 127.0.0.1 by a thread
of the test: jobs answer from a script of states, nodes from a list of GPU counts."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeRay:
    """The Ray Jobs REST endpoints rlcat uses, answering from a script of states."""

    def __init__(
        self,
        states: list[str],
        gpus: float = 8.0,
        exit_code: int | None = None,
        node_gpus: list[float] | None = None,
    ) -> None:
        self.states, self.exit_code = states, exit_code
        self.node_gpus = [gpus] if node_gpus is None else node_gpus
        self.submitted: list[dict[str, Any]] = []
        self.stopped: list[str] = []
        self.polls = 0

    def answer(self, method: str, path: str, body: Any) -> Any:
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
        return {"status": status, "driver_exit_code": self.exit_code, "message": "done"}


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
                body = json.loads(self.rfile.read(length) or b"null")
                data = json.dumps(fake.answer(self.command, self.path, body)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _reply

            def log_message(self, *args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return fake, f"http://127.0.0.1:{server.server_address[1]}"

    try:
        yield start
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()

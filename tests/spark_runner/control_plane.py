"""A tiny real HTTP server standing in for the control plane's job endpoints.

- ``POST /api/v1/jobs/{id}/metrics``: stores the samples, answers 202;
- ``GET /api/v1/jobs/{id}/control?after_version=N&wait_s=W``: long poll, 200 with the
  newest configuration when its version is above N, else 204 after W seconds;
- ``POST /api/v1/jobs/{id}/control/ack``: records the acknowledged version, 204.

Every request must carry ``Authorization: Bearer <token>`` (401 otherwise), like the real
API's job endpoints. ``publish(config)`` makes a new version available.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


class ControlPlaneServer:
    def __init__(self, token: str = "job-token") -> None:
        self.token = token
        self.samples: list[dict[str, Any]] = []
        self.acks: list[int] = []
        self.polls = 0
        self.config: dict[str, Any] | None = None
        self.published_at: dict[int, float] = {}
        self.delivered_at: dict[int, float] = {}
        self._cond = threading.Condition()
        self._server: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def publish(self, config: dict[str, Any]) -> None:
        with self._cond:
            self.config = config
            self.published_at[config["version"]] = time.time()
            self._cond.notify_all()

    def start(self, port: int = 0) -> None:
        """Listen on ``port`` (0: any free port; a stopped plane restarts on its old one)."""
        plane = self

        class Handler(BaseHTTPRequestHandler):
            def _reply(self, status: int, body: dict[str, Any] | None = None) -> None:
                payload = json.dumps(body).encode() if body is not None else b""
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def _authorized(self) -> bool:
                if self.headers.get("Authorization") == f"Bearer {plane.token}":
                    return True
                self._reply(401, {"detail": "bad token"})
                return False

            def do_GET(self) -> None:
                if not self._authorized():
                    return
                url = urlsplit(self.path)
                if not url.path.endswith("/control"):
                    self._reply(404, {"detail": "no such path"})
                    return
                query = parse_qs(url.query)
                after = int(query.get("after_version", ["0"])[0])
                deadline = time.monotonic() + float(query.get("wait_s", ["0"])[0])
                with plane._cond:
                    plane.polls += 1
                    while not (plane.config and plane.config["version"] > after):
                        left = deadline - time.monotonic()
                        if left <= 0:
                            break
                        plane._cond.wait(left)
                    config = (
                        plane.config if plane.config and plane.config["version"] > after else None
                    )
                    if config is not None:
                        plane.delivered_at.setdefault(config["version"], time.time())
                if config is None:
                    self._reply(204)
                else:
                    self._reply(200, {"job_id": 1, "config": config})

            def do_POST(self) -> None:
                if not self._authorized():
                    return
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                if self.path.endswith("/control/ack"):
                    with plane._cond:
                        plane.acks.append(int(body["version"]))
                    self._reply(204)
                elif self.path.endswith("/metrics"):
                    with plane._cond:
                        plane.samples.extend(body["samples"])
                    self._reply(202, {})
                else:
                    self._reply(404, {"detail": "no such path"})

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._server.daemon_threads = True
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()

    def stop(self) -> None:
        if self._server is not None:
            with self._cond:
                self.config = self.config  # wake long polls
                self._cond.notify_all()
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def samples_of(self, name: str) -> list[dict[str, Any]]:
        with self._cond:
            return [s for s in self.samples if s["class_name"] == name]

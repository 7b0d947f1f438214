"""A real local HTTP server standing in for the control plane's metrics endpoint."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class CaptureServer:
    """Records every POST; answers ``status`` (202 by default) and can be taken down.

    ``stop()`` closes the listening socket, so clients get "connection refused" as from
    a control plane that is down; ``start()`` binds the same port again.
    """

    def __init__(self) -> None:
        self.status = 202
        self.retry_after: str | None = None
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        capture = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                # The live-configuration long poll: never a newer version here.
                self.send_response(204)
                self.end_headers()

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                status = capture.status
                with capture._lock:
                    capture.requests.append(
                        {
                            "path": self.path,
                            "content_type": self.headers.get("Content-Type"),
                            "authorization": self.headers.get("Authorization"),
                            "body": json.loads(body) if body else None,
                            "status": status,
                            "received_at": time.time(),
                        }
                    )
                self.send_response(status)
                if capture.retry_after is not None:
                    self.send_header("Retry-After", capture.retry_after)
                self.send_header("Content-Type", "application/json")
                payload = b'{"detail": "test says no"}' if status >= 400 else b"{}"
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def accepted_samples(self) -> list[dict[str, Any]]:
        """Samples of the requests answered 2xx, in arrival order."""
        with self._lock:
            return [
                s
                for r in self.requests
                if 200 <= r["status"] < 300
                for s in r["body"].get("samples", [])  # acks of live configurations have none
            ]

    def request_count(self) -> int:
        with self._lock:
            return len(self.requests)

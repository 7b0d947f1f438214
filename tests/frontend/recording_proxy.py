"""A pass-through HTTP proxy that records what the dashboard sends to the API.

The dashboard tests check the dashboard's side of the wire (the body a form sends, the
query parameters of a metrics window, the ``Authorization`` and ``Idempotency-Key``
headers, that an invalid form sends nothing), which the API process cannot tell a test.
This proxy sits between the dashboard's client and the real API: every request is
forwarded unchanged and answered with the API's own status, headers and body; it adds
nothing but the record. When the API cannot be reached it answers what a reverse proxy
in front of a dead API answers: ``502`` with a plain-text body. ``delays`` (seconds per
path below ``/api/v1``) holds a request that long before forwarding it, to play an API
slower than the dashboard's refresh intervals.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx

PREFIX = "/api/v1"
BAD_GATEWAY_TEXT = "Bad Gateway: the API behind this proxy does not answer"
# Hop-by-hop headers (RFC 9110 §7.6.1) and the ones httpx sets from the body it sends.
NOT_FORWARDED = frozenset(
    {"host", "connection", "keep-alive", "transfer-encoding", "content-length", "upgrade"}
)
FORWARDED_BACK = ("content-type", "content-disposition", "x-headroom-truncated", "retry-after")


@dataclass
class Recorded:
    """One request as the proxy received it; ``body`` is the parsed JSON (or ``None``)."""

    method: str
    path: str
    query: dict[str, list[str]]
    body: Any
    headers: dict[str, str] = field(default_factory=dict)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"  # keep-alive, as the API itself answers

    def _forward(self) -> None:
        parts = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        headers = {key.lower(): value for key, value in self.headers.items()}
        proxy = self.server.proxy
        proxy.record(
            Recorded(self.command, parts.path, parse_qs(parts.query), _json(raw, headers), headers)
        )
        time.sleep(proxy.delays.get(parts.path.removeprefix(PREFIX), 0.0))
        try:
            answer = proxy.upstream.request(
                self.command,
                self.path,
                content=raw,
                headers={k: v for k, v in headers.items() if k not in NOT_FORWARDED},
            )
        except httpx.TransportError:
            self._reply(502, {"content-type": "text/plain"}, BAD_GATEWAY_TEXT.encode())
            return
        self._reply(
            answer.status_code,
            {k: answer.headers[k] for k in FORWARDED_BACK if k in answer.headers},
            answer.content,
        )

    def _reply(self, status: int, headers: dict[str, str], data: bytes) -> None:
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _forward

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass


def _json(raw: bytes, headers: dict[str, str]) -> Any:
    if not raw or "json" not in headers.get("content-type", ""):
        return None
    return json.loads(raw)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    proxy: RecordingProxy


class RecordingProxy:
    """``with RecordingProxy(api_url) as proxy:`` serves ``proxy.url`` until the block ends."""

    def __init__(self, upstream_url: str) -> None:
        self.upstream = httpx.Client(base_url=upstream_url.rstrip("/"), timeout=30.0)
        self.requests: list[Recorded] = []
        self.delays: dict[str, float] = {}
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.proxy = self
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def record(self, request: Recorded) -> None:
        with self._lock:
            self.requests.append(request)

    def requests_to(self, method: str, path: str) -> list[Recorded]:
        """The recorded requests of ``method`` to ``path`` (below ``/api/v1``), oldest first."""
        with self._lock:
            return [r for r in self.requests if r.method == method and r.path == PREFIX + path]

    def forget(self) -> None:
        with self._lock:
            self.requests.clear()

    def __enter__(self) -> RecordingProxy:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
        self.upstream.close()

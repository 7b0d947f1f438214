"""The job's side of live tuning: long-poll the control plane, acknowledge what applied.

``GET {api}/api/v1/jobs/{id}/control?after_version=N&wait_s=W`` answers 200 with
``{"job_id", "config"}`` as soon as a version newer than N exists (else 204 after W
seconds); ``POST .../control/ack {"version": N}`` reports the version in force. Both carry
the job's bearer token. A thread does both, so neither blocks a micro-batch; when the
control plane is unreachable it retries with a capped backoff and the job keeps
controlling with the configuration it has.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import httpx
from pydantic import ValidationError

from spark_runner.job.control import LiveConfig

log = logging.getLogger(__name__)


class ControlPoller:
    """Delivers newer live configurations to ``offer`` and posts acknowledgements."""

    def __init__(
        self,
        api_url: str,
        job_id: int,
        offer: Callable[[LiveConfig], None],
        *,
        token: str = "",
        after_version: int = 0,
        wait_s: float = 10.0,
        backoff_initial_s: float = 0.5,
        backoff_max_s: float = 10.0,
    ) -> None:
        base = f"{api_url.rstrip('/')}/api/v1/jobs/{job_id}/control"
        self.poll_url, self.ack_url = base, f"{base}/ack"
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._client = httpx.Client(headers=headers, timeout=wait_s + 5.0)
        self._offer = offer
        self._known = after_version
        self._wait_s = wait_s
        self._backoff = (backoff_initial_s, backoff_max_s)
        self._ack: int | None = None
        self._acked = after_version
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self.received: list[int] = []

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="control-poller", daemon=True)
        self._thread.start()

    def ack(self, version: int) -> None:
        """Report ``version`` as applied (sent by the poller thread)."""
        self._ack = max(version, self._ack or 0)
        self._wake.set()

    def close(self, timeout_s: float = 2.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout_s)
        self._send_ack()
        self._client.close()

    def _send_ack(self) -> bool:
        version = self._ack
        if version is None or version <= self._acked:
            return True
        try:
            response = self._client.post(self.ack_url, json={"version": version}, timeout=5.0)
        except httpx.HTTPError as exc:
            log.warning("acknowledging configuration v%d failed (%s); will retry", version, exc)
            return False
        if response.status_code >= 400:
            log.warning("control plane refused ack of v%d: HTTP %d", version, response.status_code)
        self._acked = version
        return True

    def _run(self) -> None:
        failures = 0
        while not self._stop.is_set():
            acked = self._send_ack()
            try:
                response = self._client.get(
                    self.poll_url,
                    params={"after_version": self._known, "wait_s": self._wait_s},
                )
                ok = response.status_code in (200, 204)
                if response.status_code == 200:
                    config = LiveConfig.model_validate(response.json()["config"])
                    self._known = max(self._known, config.version)
                    self.received.append(config.version)
                    log.info("live configuration v%d received", config.version)
                    self._offer(config)
                elif not ok:
                    log.warning("control poll answered HTTP %d", response.status_code)
            except (httpx.HTTPError, ValueError, KeyError, ValidationError) as exc:
                ok = False
                if failures == 0:
                    log.warning("control plane unreachable for live configuration: %s", exc)
            if ok and acked:
                failures = 0
                continue
            failures += 1
            delay = min(self._backoff[0] * 2 ** min(failures - 1, 10), self._backoff[1])
            self._wake.wait(delay)
            self._wake.clear()

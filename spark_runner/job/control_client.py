"""The job's side of live tuning: long-poll the control plane, acknowledge what applied.

``GET {api}/api/v1/jobs/{id}/control?after_version=N&wait_s=W`` answers 200 with
``{"job_id", "config"}`` as soon as a version newer than N exists (else 204 after W
seconds); ``POST .../control/ack {"version": N}`` reports the version in force. Both carry
the job's bearer token. Background threads do both, so neither blocks a micro-batch; when
the control plane is unreachable they retry with a capped backoff and the job keeps
controlling with the configuration it has.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import httpx
from pydantic import ValidationError

from spark_runner.contract.control import LiveConfig

log = logging.getLogger(__name__)


class ControlPoller:
    """Delivers newer live configurations to ``offer`` and acknowledges what it applied.

    ``offer`` puts a configuration in force and returns its version (None: not applied);
    that version is acknowledged at once. Two threads: one long-polls, one acknowledges,
    so an acknowledgement never waits for a long poll to return. The launch configuration
    (``after_version``) is acknowledged at start: the controller was built with it.
    """

    def __init__(
        self,
        api_url: str,
        job_id: int,
        offer: Callable[[LiveConfig], int | None],
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
        self._poll_client = httpx.Client(headers=headers, timeout=wait_s + 5.0)
        self._ack_client = httpx.Client(headers=headers, timeout=5.0)
        self._offer = offer
        self._known = after_version
        self._wait_s = wait_s
        self._backoff = (backoff_initial_s, backoff_max_s)
        self._lock = threading.Lock()
        self._ack: int = after_version
        self._acked = after_version - 1
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._threads: list[threading.Thread] = []
        self.received: list[int] = []

    def start(self) -> None:
        for target, name in ((self._poll, "control-poll"), (self._acknowledge, "control-ack")):
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
            self._threads.append(thread)

    def ack(self, version: int) -> None:
        """Report ``version`` as applied (sent at once by the acknowledging thread)."""
        with self._lock:
            self._ack = max(version, self._ack)
        self._wake.set()

    def close(self, timeout_s: float = 2.0) -> None:
        self._stop.set()
        self._wake.set()
        for thread in self._threads:
            thread.join(timeout_s)
        self._send_ack()
        self._poll_client.close()
        self._ack_client.close()

    def _delay(self, failures: int) -> float:
        return float(min(self._backoff[0] * 2 ** min(failures - 1, 10), self._backoff[1]))

    def _send_ack(self) -> bool:
        with self._lock:
            version = self._ack
        if version <= self._acked:
            return True
        try:
            response = self._ack_client.post(self.ack_url, json={"version": version})
        except httpx.HTTPError as exc:
            log.warning("acknowledging configuration v%d failed (%s); will retry", version, exc)
            return False
        if response.status_code >= 400:
            log.warning("control plane refused ack of v%d: HTTP %d", version, response.status_code)
        self._acked = version
        return True

    def _acknowledge(self) -> None:
        failures = 0
        while not self._stop.is_set():
            if self._send_ack():
                failures = 0
                self._wake.wait()
            else:
                failures += 1
                self._wake.wait(self._delay(failures))
            self._wake.clear()

    def _poll(self) -> None:
        failures = 0
        while not self._stop.is_set():
            try:
                response = self._poll_client.get(
                    self.poll_url,
                    params={"after_version": self._known, "wait_s": self._wait_s},
                )
                ok = response.status_code in (200, 204)
                if response.status_code == 200:
                    config = LiveConfig.model_validate(response.json()["config"])
                    self._known = max(self._known, config.version)
                    self.received.append(config.version)
                    log.info("live configuration v%d received", config.version)
                    applied = self._offer(config)
                    if applied is not None:
                        self.ack(applied)
                elif not ok:
                    log.warning("control poll answered HTTP %d", response.status_code)
            except (httpx.HTTPError, ValueError, KeyError, ValidationError, RuntimeError) as exc:
                if self._stop.is_set():
                    return  # closed under a long poll
                ok = False
                if failures == 0:
                    log.warning("control plane unreachable for live configuration: %s", exc)
            if ok:
                failures = 0
                continue
            failures += 1
            self._stop.wait(self._delay(failures))

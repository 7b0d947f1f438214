"""The job's long poll for live configurations and its acknowledgements, over real HTTP."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from spark_runner.contract.control import ClassControl, LiveConfig
from spark_runner.job.control_client import ControlPoller
from tests.spark_runner.control_plane import ControlPlaneServer
from tests.waiting import wait_until


def wait_for(predicate: Callable[[], bool], timeout_s: float = 10.0) -> bool:
    return wait_until(predicate, timeout_s, 0.02)


@pytest.fixture
def plane() -> Iterator[ControlPlaneServer]:
    server = ControlPlaneServer()
    server.start()
    yield server
    server.stop()


def config(version: int) -> LiveConfig:
    return LiveConfig(
        version=version, classes={"gold": ClassControl(priority=6, delay_target_s=2.0)}
    )


def test_applied_versions_are_acknowledged_at_once(plane: ControlPlaneServer) -> None:
    got: list[LiveConfig] = []

    def offer(config: LiveConfig) -> int | None:
        """Applies every version but 2 (as a controller rejects one its rules refuse)."""
        got.append(config)
        return None if config.version == 2 else config.version

    # A long poll far longer than the deadlines below: acknowledgements must not wait for it.
    poller = ControlPoller(plane.base_url, 1, offer, token=plane.token, wait_s=30.0)
    poller.start()
    try:
        assert wait_for(lambda: plane.acks == [0], timeout_s=2.0)  # the launch configuration
        assert wait_for(lambda: plane.polls >= 1)
        plane.publish(config(1).model_dump(mode="json"))
        assert wait_for(lambda: plane.acks == [0, 1], timeout_s=2.0)
        assert [c.version for c in got] == [1]
        plane.publish(config(2).model_dump(mode="json"))
        assert wait_for(lambda: [c.version for c in got] == [1, 2])
        plane.publish(config(3).model_dump(mode="json"))
        assert wait_for(lambda: plane.acks == [0, 1, 3], timeout_s=2.0)  # 2 never applied
    finally:
        poller.close()


@contextmanager
def refusing(port: int) -> Iterator[Callable[[], int]]:
    """A control plane that is down: accepts each connection on ``port`` and closes it at
    once. Yields the number of attempts so far."""
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(16)
    attempts = 0

    def refuse() -> None:
        nonlocal attempts
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return  # closed
            attempts += 1
            connection.close()

    thread = threading.Thread(target=refuse, daemon=True)
    thread.start()
    try:
        yield lambda: attempts
    finally:
        listener.shutdown(socket.SHUT_RDWR)
        listener.close()
        thread.join(2.0)


def test_an_unreachable_control_plane_is_retried_until_it_answers(
    plane: ControlPlaneServer,
) -> None:
    """Both threads keep trying while the plane is down; once it is back, the launch
    configuration is acknowledged, and a new version arrives and is acknowledged."""
    port = int(plane.base_url.rsplit(":", 1)[1])
    plane.stop()
    got: list[int] = []

    def offer(config: LiveConfig) -> int:
        got.append(config.version)
        return config.version

    poller = ControlPoller(
        f"http://127.0.0.1:{port}",
        1,
        offer,
        token=plane.token,
        wait_s=0.5,
        backoff_initial_s=0.01,
        backoff_max_s=0.05,
    )
    try:
        with refusing(port) as attempts:
            poller.start()
            # A poller that gave up would stop at one attempt per thread.
            assert wait_for(lambda: attempts() >= 6), f"{attempts()} attempts while down"
        assert got == [] and plane.acks == []
        plane.start(port)
        assert wait_for(lambda: plane.acks == [0])  # the launch configuration, late
        assert wait_for(lambda: plane.polls >= 1)
        plane.publish(config(1).model_dump(mode="json"))
        assert wait_for(lambda: got == [1] and plane.acks == [0, 1]), (got, plane.acks)
    finally:
        poller.close(timeout_s=1.0)

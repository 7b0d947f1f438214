"""The job's long poll for live configurations and its acknowledgements, over real HTTP."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest

from spark_runner.engine.control_client import ControlPoller
from spark_runner.job.control import ClassControl, LiveConfig
from tests.waiting import wait_until

from .control_plane import ControlPlaneServer


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


def test_an_unreachable_control_plane_is_retried(plane: ControlPlaneServer) -> None:
    url = plane.base_url
    plane.stop()
    got: list[LiveConfig] = []
    poller = ControlPoller(url, 1, got.append, token="job-token", wait_s=0.5, backoff_max_s=0.2)
    poller.start()
    try:
        time.sleep(0.3)  # several failed attempts while down: the poller keeps trying
        assert got == []
        poller.ack(3)  # an acknowledgement waits until the control plane answers
    finally:
        poller.close(timeout_s=1.0)

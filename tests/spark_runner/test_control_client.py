"""The job's long poll for live configurations and its acknowledgements, over real HTTP."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest

from spark_runner.engine.control_client import ControlPoller
from spark_runner.job.control import ClassControl, LiveConfig

from .control_plane import ControlPlaneServer


def wait_for(predicate: Callable[[], bool], timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


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


def test_newer_versions_are_delivered_and_acknowledged(plane: ControlPlaneServer) -> None:
    got: list[LiveConfig] = []
    # A long poll far longer than the deadlines below: acknowledgements must not wait for it.
    poller = ControlPoller(plane.base_url, 1, got.append, token=plane.token, wait_s=30.0)
    poller.start()
    try:
        assert wait_for(lambda: plane.acks == [0], timeout_s=2.0)  # the launch configuration
        assert wait_for(lambda: plane.polls >= 1)
        plane.publish(config(1).model_dump(mode="json"))
        assert wait_for(lambda: len(got) == 1, timeout_s=2.0)
        assert got[0].version == 1
        poller.ack(1)
        assert wait_for(lambda: plane.acks == [0, 1], timeout_s=1.0)
        plane.publish(config(2).model_dump(mode="json"))
        assert wait_for(lambda: [c.version for c in got] == [1, 2])
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

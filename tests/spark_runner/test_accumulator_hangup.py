"""The JVM closing its accumulator connection to the driver is one log line, not a
traceback on stderr (CI saw one when a job's stop landed in its first batch, and the
job's stderr must carry no traceback)."""

from __future__ import annotations

import logging
import socket
import struct
from typing import cast

import pytest
from pyspark.accumulators import AccumulatorTCPServer
from pyspark.sql import SparkSession

from tests.waiting import wait_until

pytestmark = pytest.mark.spark


def test_a_closed_accumulator_connection_is_logged_in_one_line(
    spark: SparkSession, capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    server = spark.sparkContext._accumulatorServer
    assert isinstance(server, AccumulatorTCPServer) and server.auth_token is not None
    host, port = cast(tuple[str, int], server.server_address)
    caplog.set_level(logging.INFO, logger="spark_runner.job.session")
    # What the JVM does: authenticate, send a batch of updates (none), read the
    # acknowledgement; then hang up, as it does when it stops.
    with socket.create_connection((host, port), timeout=10) as connection:
        connection.sendall(server.auth_token.encode() + struct.pack("!i", 0))
        assert connection.recv(1) == b"\x01"
    closed = "Spark closed its accumulator connection to the driver"
    assert wait_until(lambda: closed in caplog.text, timeout_s=10), caplog.text
    assert "Traceback" not in capfd.readouterr().err

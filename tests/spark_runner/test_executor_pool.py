"""The executor pool on a local master: it says it cannot scale and changes nothing (on
a standalone cluster, ``test_elastic_standalone`` grows and shrinks it)."""

from __future__ import annotations

import pytest
from pyspark.sql import SparkSession

from spark_runner.engine.control.executors import LOCAL_REASON, ExecutorPool

pytestmark = [pytest.mark.spark]


def test_a_local_master_says_it_cannot_scale(spark: SparkSession) -> None:
    pool = ExecutorPool(spark, max_executors=4)
    assert pool.reason == LOCAL_REASON and not pool.elastic
    pool.resize(3)  # nothing to do, nothing raised
    assert pool.serving() == [] and pool.free_executors() == 3

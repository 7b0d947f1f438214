"""The walking skeleton end to end on PostgreSQL+Redis: class → job via a real Celery
worker → real Spark metrics in the database → stop. The embedded defaults (SQLite and the
filesystem broker) go through the same life in ``test_reliability.py``: its restarted job
is checked the same way."""

from __future__ import annotations

import time

import pytest

from tests.e2e.conftest import StackFactory, api_client
from tests.e2e.lifecycle import FIRST_METRIC_DEADLINE_S, see_metrics_then_stop

pytestmark = [pytest.mark.spark, pytest.mark.timeout(300)]


@pytest.mark.services
def test_postgresql_and_redis(
    start_stack: StackFactory, empty_postgres_url: str, redis_url: str
) -> None:
    # a database of its own: the stack commits for real, and the session's shared one
    # holds only rolled-back rows of the API tests
    stack = start_stack(empty_postgres_url, redis_url)
    api = api_client(stack)
    for name, priority, target in (("fraud", 6, 2.0), ("ads", 1, 4.0)):
        created = api.post(
            "/classes", json={"name": name, "priority": priority, "delay_target_s": target}
        )
        assert created.status_code == 201, created.text
    posted_at = time.monotonic()
    response = api.post("/jobs", json={"rate_per_s": 100, "control_period_s": 1.0})
    assert response.status_code == 201, response.text
    first_metric_s = see_metrics_then_stop(stack, api, response.json()["id"], posted_at)
    assert first_metric_s < FIRST_METRIC_DEADLINE_S
    print(
        f"\npostgres+redis: POST /jobs → first stored metric of every class: {first_metric_s:.1f} s"
    )

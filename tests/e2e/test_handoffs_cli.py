"""``headroom handoffs`` against a real API process: two jobs on the streams' Redis started
from the CLI, one holding a class in standby, the class moved between them, and what an
operator reads of the hand-off."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from backend.db import make_engine, make_session_factory, session_scope
from backend.stack import Stack
from tests.e2e.conftest import ADMIN, ADMIN_PASSWORD, api_only
from tests.e2e.test_cli import cli

pytestmark = pytest.mark.services


@pytest.fixture
def stack(tmp_path: Path, redis_url: str) -> Iterator[Stack]:
    env = {"HEADROOM_STREAMS_REDIS_URL": redis_url}
    with api_only(tmp_path, env) as stack:
        yield stack


def test_an_operator_moves_a_class_between_two_jobs_from_the_cli(stack: Stack) -> None:
    from backend.jobs.models import Job

    login = cli(stack, "auth", "login", "--username", ADMIN, "--password", ADMIN_PASSWORD)
    assert login.returncode == 0, login.stderr
    made = cli(stack, "classes", "create", "recs", "--priority", "3", "--delay-target-s", "2")
    assert made.returncode == 0, made.stderr
    for extra in ((), ("--standby", "recs")):
        started = cli(stack, "jobs", "start", "--class-id", "1", "--source", "redis", *extra)
        assert started.returncode == 0, started.stderr
    refused = cli(stack, "jobs", "start", "--class-id", "1", "--standby", "recs")
    assert refused.returncode == 1 and "start the job with source redis" in refused.stderr

    early = cli(stack, "handoffs", "move", "recs", "--from", "1", "--to", "2")
    assert early.returncode == 1 and "a hand-off needs both jobs running" in early.stderr
    engine = make_engine(stack.settings.sqlalchemy_url)
    try:
        with session_scope(make_session_factory(engine)) as session:
            for job_id in (1, 2):  # what the launch records once the process runs
                job = session.get(Job, job_id)
                assert job is not None
                job.status = "running"
    finally:
        engine.dispose()

    moved = cli(stack, "handoffs", "move", "recs", "--from", "1", "--to", "2")
    assert moved.returncode == 0, moved.stderr
    assert re.match(r"hand-off 1: recs from job 1 to job 2 at \d{4}-\d\d-\d\d ", moved.stdout)
    same = cli(stack, "handoffs", "move", "recs", "--from", "2", "--to", "2")
    assert same.returncode == 1 and "must differ from origin_job_id" in same.stderr
    busy = cli(stack, "handoffs", "move", "recs", "--from", "2", "--to", "1")
    assert busy.returncode == 1 and "moving already" in busy.stderr
    listed = cli(stack, "handoffs", "list", "--class", "recs")
    assert listed.returncode == 0, listed.stderr
    header, row = listed.stdout.splitlines()[:2]
    assert header.split()[:5] == ["id", "class_name", "origin_job_id", "target_job_id", "state"]
    assert row.split()[:5] == ["1", "recs", "1", "2", "planned"]
    config = cli(stack, "jobs", "config", "2")
    assert '"from_s"' in config.stdout, config.stdout

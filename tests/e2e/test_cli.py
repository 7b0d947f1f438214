"""The `headroom` CLI against a real API process: login, classes, jobs, users."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from backend.migrate import upgrade
from backend.settings import Settings
from backend.stack import Stack
from tests.browser.harness import issue_ingest_token
from tests.e2e.conftest import ADMIN, ADMIN_PASSWORD, create_admin, free_port


@pytest.fixture
def api_only(tmp_path: Path) -> Iterator[Stack]:
    settings = Settings(data_dir=tmp_path / "data", api_port=free_port())
    settings.data_dir.mkdir()
    upgrade(settings.sqlalchemy_url)
    stack = Stack.from_settings(settings, {"HOME": str(tmp_path / "home")})
    create_admin(stack)
    stack.start_api()
    stack.wait_healthy()
    yield stack
    stack.stop()


def post_scale_out(stack: Stack, job_id: int) -> None:
    """What a running job does when it scales out: post the action with its own token
    (the job recorded as launched, the way the launch task does)."""
    token = issue_ingest_token(stack.settings, job_id)
    action = {"seq": 0, "at_s": time.time(), "kind": "scale_out", "usage": 1.3,
              "threshold": 0.95, "held_s": 10.0, "executors_before": 1,
              "executors_after": 2, "shed_before": 0.2, "shed_after": 0.0}  # fmt: skip
    post_as_job(stack, job_id, token, "actions", {"actions": [action]})


def post_as_job(stack: Stack, job_id: int, token: str, what: str, body: object) -> None:
    """A post of a running job's process to ``/jobs/{job_id}/<what>`` with its token."""
    reply = httpx.post(
        f"{stack.settings.public_api_url}/api/v1/jobs/{job_id}/{what}",
        json=body,
        headers={"Authorization": f"Bearer {token}"},
    )
    assert reply.status_code == 202, reply.text


def post_samples(stack: Stack, job_id: int, class_name: str) -> None:
    """What a running job reports: a warm-up period (a 20 s answer: Spark's start), then
    one at speed (1 s)."""
    token = issue_ingest_token(stack.settings, job_id)
    now = time.time()
    samples = [
        {"class_name": class_name, "seq": seq, "t": now - 2 + seq, "period_s": 1.0,
         "arrived_count": 10, "output_count": 10, "arrival_rate": 10.0,
         "response_time_mean_s": rt, "response_time_max_s": rt, "warmup": seq == 0}
        for seq, rt in ((0, 20.0), (1, 1.0))
    ]  # fmt: skip
    post_as_job(stack, job_id, token, "metrics", {"samples": samples})


def cli(stack: Stack, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "headroom", *args],
        input=stdin,
        env=stack.env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_login_hint_names_a_real_command() -> None:
    """The 401 hint's command exists: ``--help`` of it succeeds and shows its options."""
    from headroom.api_client import LOGIN_COMMAND

    program, *words = LOGIN_COMMAND.split()
    assert program == "headroom"
    shown = subprocess.run(
        [sys.executable, "-m", "headroom", *words, "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert shown.returncode == 0, shown.stderr
    assert "--username" in shown.stdout


def test_an_unreachable_api_is_one_clear_line(tmp_path: Path) -> None:
    """Nothing listens on the port: exit code 1, a message naming the address and what to
    check, and no traceback."""
    url = f"http://127.0.0.1:{free_port()}"
    env = {**os.environ, "HOME": str(tmp_path), "HEADROOM_API_URL": url, "HEADROOM_TOKEN": "t"}
    for args in (("classes", "list"), ("auth", "login", "--username", "a", "--password", "b")):
        result = subprocess.run(
            [sys.executable, "-m", "headroom", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert result.returncode == 1, result
        assert f"error: cannot reach the API at {url}" in result.stderr
        assert "headroom up" in result.stderr and "HEADROOM_API_URL" in result.stderr
        assert "Traceback" not in result.stderr and result.stdout == ""


def test_cli_round_trip(api_only: Stack, tmp_path: Path) -> None:
    denied = cli(api_only, "classes", "list")
    assert denied.returncode == 1 and "HTTP 401" in denied.stderr
    assert "hint: run `headroom auth login`" in denied.stderr

    login = cli(api_only, "auth", "login", "--username", ADMIN, "--password", ADMIN_PASSWORD)
    assert login.returncode == 0, login.stderr
    credentials = tmp_path / "home" / ".config" / "headroom" / "credentials.json"
    assert credentials.stat().st_mode & 0o077 == 0  # owner-only
    assert ADMIN_PASSWORD not in login.stdout + login.stderr

    created = cli(
        api_only, "classes", "create", "fraud", "--priority", "6", "--delay-target-s", "1.5"
    )
    assert created.returncode == 0, created.stderr
    assert '"catch_up": false' in created.stdout
    billing = cli(api_only, "classes", "create", "billing", "--priority", "3",
                  "--delay-target-s", "5", "--catch-up",
                  "--set", "max_shed_fraction=0.2")  # fmt: skip
    assert billing.returncode == 0 and '"catch_up": true' in billing.stdout, billing.stderr
    assert '"max_shed_fraction": 0.2' in billing.stdout
    served = cli(api_only, "classes", "update", "2", "--set", "catch_up=false")
    assert served.returncode == 0 and '"catch_up": false' in served.stdout, served.stderr
    assert cli(api_only, "classes", "delete", "2").returncode == 0
    bad = cli(
        api_only,
        "classes",
        "create",
        "ads",
        "--priority",
        "1",
        "--delay-target-s",
        "3",
        "--tau",
        "0.2",
        "0.4",
        "0.3",
        "0.9",
    )
    assert bad.returncode == 1 and "tau2=0.3 is invalid" in bad.stderr
    listing = cli(api_only, "classes", "list")
    assert "fraud" in listing.stdout and "ads" not in listing.stdout

    columns = '[{"name": "account", "type": "long"}, {"name": "amount"}]'
    stream = cli(api_only, "streams", "add", "--name", "trades", "--columns", columns)
    assert stream.returncode == 0 and '"account"' in stream.stdout, stream.stderr
    twice = cli(api_only, "streams", "add", "--name", "t2", "--columns", columns,
                "--event-time", "amount")  # fmt: skip
    assert twice.returncode == 1
    assert "event_time='amount' is invalid: must name a timestamp column" in twice.stderr
    assert "account" in cli(api_only, "streams", "list").stdout
    statement = "SELECT account, avg(amount) AS mean FROM trades GROUP BY account"
    query = cli(api_only, "queries", "add", "1", "--name", "means", "--source", "trades",
                "--sql", statement)  # fmt: skip
    assert query.returncode == 0 and statement in query.stdout, query.stderr
    refused = cli(api_only, "queries", "add", "1", "--name", "bad", "--source", "trades",
                  "--sql", "SELECT account FROM trades ORDER BY account")  # fmt: skip
    assert refused.returncode == 1 and "uses ORDER at position 28" in refused.stderr
    assert "means" in cli(api_only, "queries", "list", "1").stdout

    started = cli(api_only, "jobs", "start", "--idempotency-key", "k1", "--rate-per-s", "10")
    again = cli(api_only, "jobs", "start", "--idempotency-key", "k1", "--rate-per-s", "10")
    assert started.returncode == again.returncode == 0
    assert started.stdout == again.stdout  # the retried launch is the same job
    tuned = cli(api_only, "jobs", "tune", "1", "--set", "classes.fraud.delay_target_s=2")
    assert tuned.returncode == 0 and "version 1 stored" in tuned.stdout, tuned.stderr
    assert '"delay_target_s": 2.0' in cli(api_only, "jobs", "config", "1").stdout
    empty = cli(api_only, "jobs", "actions", "1")
    assert empty.returncode == 0, empty.stderr
    assert "thresholds tau0 0.2" in empty.stdout and "no control actions yet" in empty.stdout
    post_scale_out(api_only, job_id=1)
    actions = cli(api_only, "jobs", "actions", "1", "--kind", "scale_out")
    assert "scale_out: u 1.30 past τ 0.95 for 10 s" in actions.stdout, actions.stderr
    assert "executors 1 -> 2" in actions.stdout and "pending" in actions.stdout
    post_samples(api_only, job_id=1, class_name="fraud")
    summary = cli(api_only, "jobs", "summary", "1")
    assert summary.returncode == 0, summary.stderr
    header, row = summary.stdout.splitlines()[0], summary.stdout.splitlines()[-1]
    assert "warmup_periods" in header and row.split()[0] == "fraud", summary.stdout
    # the warm-up's 20 s answer is left out of the mean, p95 and max; its period counts apart
    assert row.split()[2:5] == ["1", "1", "1"] and row.split()[-2:] == ["2", "1"], summary.stdout
    preview = cli(api_only, "jobs", "preview", "1", "--set", "classes.fraud.priority=4")
    assert preview.returncode == 0, preview.stderr
    assert "replayed" in preview.stdout and "proposed_loss_fraction" in preview.stdout
    assert "no prediction of a change to priority checked yet" in preview.stdout

    user = cli(
        api_only, "users", "create", "carol", "--role", "viewer", "--password", "carol-pass-1"
    )
    assert user.returncode == 0, user.stderr
    assert "carol" in cli(api_only, "users", "list").stdout
    assert cli(api_only, "auth", "logout").returncode == 0
    assert not credentials.exists()

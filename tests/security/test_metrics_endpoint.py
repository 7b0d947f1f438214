"""Probe: ``GET /metrics`` lists jobs, classes and latencies, and needed no credentials.

It now answers only the scrape token (``HEADROOM_METRICS_TOKEN``); with none configured
it answers 401 to everyone, an admin included.
"""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from backend.settings import Settings
from tests.api_fixtures import login_headers

SCRAPE_TOKEN = "scrape-token-for-tests-0123456789"


@pytest.fixture
def scraped(anonymous: TestClient) -> TestClient:
    """An API whose settings carry a scrape token."""
    app = anonymous.app
    app.state.settings = app.state.settings.model_copy(update={"metrics_token": SCRAPE_TOKEN})  # type: ignore[attr-defined]
    return anonymous


def test_the_scrape_token_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HEADROOM_METRICS_TOKEN", SCRAPE_TOKEN)
    settings = Settings()
    assert settings.metrics_token == SCRAPE_TOKEN
    assert SCRAPE_TOKEN not in repr(settings)


def test_without_a_configured_token_nobody_reads_metrics(anonymous: TestClient) -> None:
    for headers in (
        {},
        login_headers(anonymous, "admin"),
        {"Authorization": f"Bearer {SCRAPE_TOKEN}"},
    ):
        refused = anonymous.get("/metrics", headers=headers)
        assert refused.status_code == 401, refused.text
        assert "HEADROOM_METRICS_TOKEN" in refused.json()["detail"]
        assert "headroom_" not in refused.text


@pytest.mark.parametrize(
    "authorization",
    [None, "Bearer wrong-token", f"Basic {SCRAPE_TOKEN}", f"Bearer {SCRAPE_TOKEN}x", "Bearer "],
)
def test_a_scrape_without_the_token_is_401(scraped: TestClient, authorization: str | None) -> None:
    headers = {} if authorization is None else {"Authorization": authorization}
    refused = scraped.get("/metrics", headers=headers)
    assert refused.status_code == 401, refused.text
    assert refused.headers["WWW-Authenticate"].startswith("Bearer")
    assert "headroom_" not in refused.text
    assert SCRAPE_TOKEN not in refused.text


def test_a_users_login_token_does_not_open_metrics(scraped: TestClient) -> None:
    assert scraped.get("/metrics", headers=login_headers(scraped, "admin")).status_code == 401


def test_the_scrape_token_reads_metrics(scraped: TestClient) -> None:
    answer = scraped.get("/metrics", headers={"Authorization": f"Bearer {SCRAPE_TOKEN}"})
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/plain")
    assert "headroom_http_requests_total" in answer.text

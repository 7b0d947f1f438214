"""The dashboard on an API slower than its refresh intervals still shows what it answers.

Dash drops a callback's answer when the same callback is asked again before the answer
arrives, so a read fed straight by a 1 s interval showed nothing once the API took over a
second (CI saw the live tuning panel stay empty on a loaded machine). Here a second
dashboard talks to the session's API through a proxy that holds the job's configuration
and the job list longer than the intervals that poll them: both must still reach the page.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from selenium.webdriver.common.by import By

from backend.stack import Stack
from tests.browser.harness import OPERATOR, Browser, Product, free_port
from tests.frontend.recording_proxy import RecordingProxy

pytestmark = pytest.mark.browser

# Longer than both polls' intervals: the live page reads the configuration every 1 s
# (CONFIG_INTERVAL_MS), the Jobs page the job list every 1.5 s (REFRESH_INTERVAL_MS); the
# page modules cannot be imported outside the app.
SLOW_S = 2.5


@dataclass
class Slow:
    dashboard_url: str
    proxy: RecordingProxy
    job_id: int


@pytest.fixture(scope="module")
def slow(product: Product, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Slow]:
    with product.api(OPERATOR) as api:
        body = {"name": "slowpoke", "priority": 2, "delay_target_s": 3}
        created = api.post("/classes", json=body)
        created.raise_for_status()
        job = api.post("/jobs", json={"class_ids": [created.json()["id"]], "duration_s": None})
        job.raise_for_status()
    job_id = int(job.json()["id"])
    with RecordingProxy(product.settings.public_api_url) as proxy:
        proxy.delays = {f"/jobs/{job_id}/config": SLOW_S, "/jobs": SLOW_S}
        settings = product.settings.model_copy(
            update={
                "api_url": proxy.url,
                "dashboard_port": free_port(),
                "data_dir": tmp_path_factory.mktemp("slow-dashboard"),
            }
        )
        stack = Stack.from_settings(settings)
        try:
            stack.start_dashboard()
            stack.wait_healthy()
            yield Slow(stack.dashboard_url, proxy, job_id)
        finally:
            stack.stop()


@pytest.fixture
def on_slow(browser: Browser, slow: Slow) -> Iterator[Browser]:
    """The session's browser on the slow dashboard, signed out."""
    here = Browser(browser.driver, slow.dashboard_url)
    here.open("/assets/bootstrap.min.css")
    here.driver.delete_all_cookies()
    yield here


def test_a_configuration_read_slower_than_its_interval_reaches_the_panel(
    on_slow: Browser, slow: Slow
):
    on_slow.timeout_s = 20 * SLOW_S
    on_slow.login(OPERATOR, path=f"/live?job_id={slow.job_id}")
    on_slow.wait_text("tune-status", "In force: version 0 (the launch configuration)")
    on_slow.assert_console_clean()


def test_a_job_list_slower_than_its_interval_reaches_the_table(on_slow: Browser, slow: Slow):
    on_slow.timeout_s = 20 * SLOW_S
    on_slow.login(OPERATOR, path="/jobs")
    on_slow.wait_text("jobs-table", "slowpoke")
    on_slow.assert_console_clean()


def test_a_configuration_read_that_fails_says_so_above_the_panel_and_clears_when_it_works(
    on_slow: Browser, slow: Slow
):
    """A read slower than the dashboard's API timeout fails: the tuning panel says why
    (it used to keep silent); the next read that works clears it."""
    on_slow.timeout_s = 20 * SLOW_S
    route = f"/jobs/{slow.job_id}/config"
    try:
        slow.proxy.delays[route] = 2 * SLOW_S  # over the client's 3 s
        on_slow.login(OPERATOR, path=f"/live?job_id={slow.job_id}")
        alert = on_slow.wait_text("tune-config-alert", "Could not read the live configuration")
        assert "did not answer in time" in alert
        slow.proxy.delays[route] = 0.0
        on_slow.wait_text("tune-status", "In force: version 0 (the launch configuration)")
        on_slow.wait(
            lambda d: d.find_element(By.ID, "tune-config-alert").text == "",
            "the alert stayed after a read that worked",
        )
    finally:
        slow.proxy.delays[route] = SLOW_S
    on_slow.assert_console_clean()

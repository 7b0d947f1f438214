"""Fixtures for the browser tests: one real product (API + dashboard processes over a
SQLite database) and one headless Chromium per session; each test starts signed out
with an empty console log and ends by asserting the console had no errors.

Chromium and ChromeDriver come from Debian (``chromium``, ``chromium-driver``); tools
that download their own browser cannot work here. Without them the tests are skipped,
or fail when ``HEADROOM_REQUIRE_SERVICES=1`` (CI), like the other real-service tests.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser.harness import (
    CHROMEDRIVER,
    CHROMIUM,
    Browser,
    Product,
    new_driver,
    start_product,
)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "browser: drives a real headless Chromium against a real API and dashboard"
    )


@pytest.fixture(scope="session")
def product(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Product]:
    missing = [str(path) for path in (CHROMIUM, CHROMEDRIVER) if not path.exists()]
    if missing:
        message = f"{', '.join(missing)} not installed (apt-get install chromium chromium-driver)"
        pytest.skip(message)  # a failure under HEADROOM_REQUIRE_SERVICES=1 (tests/conftest.py)
    running = start_product(tmp_path_factory.mktemp("browser") / "data")
    yield running
    running.stop()


@pytest.fixture(scope="session")
def chromium(product: Product, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    driver = new_driver(tmp_path_factory.mktemp("chromium-profile"))
    try:
        yield Browser(driver, product.dashboard_url)
    finally:
        driver.quit()


@pytest.fixture
def browser(chromium: Browser, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Browser]:
    """The session's browser, signed out, its console log emptied. A failed test leaves
    a screenshot of the page in the test's temporary directory."""
    # Cookies are deleted on a page of the dashboard's origin that runs no callbacks: a
    # callback answered after the deletion could set the previous session's cookie again.
    chromium.open("/assets/bootstrap.min.css")
    chromium.driver.delete_all_cookies()
    chromium.console_errors()
    yield chromium
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        path = tmp_path / "failure.png"
        chromium.driver.save_screenshot(str(path))
        print(f"screenshot of the failure: {path}")
    chromium.open_blank()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    """Keeps the call's report for the fixtures; a failed test's report carries the tails
    of the logs of every product it used (API, dashboard, worker), for CI's output."""
    report = yield
    if report.when == "call":
        item.rep_call = report  # type: ignore[attr-defined]
        if report.failed:
            for name, value in getattr(item, "funcargs", {}).items():
                if isinstance(value, Product):
                    report.sections.append((f"logs of {name}", value.logs()))
    return report

"""Save screenshots of the dashboard to docs/screenshots/*.png (1400x900).

Runs the real product (API + dashboard processes over a fresh SQLite database, the
same harness as tests/browser), fills it through the API with three classes and a few
jobs, and photographs the pages in headless Debian Chromium:

    .venv/bin/python docs/take_screenshots.py

No Celery worker runs, so a started job stays queued (step 1 of 3, "queued for a
worker"); the failed job is recorded the way the job watcher records a job process
that died (reason, exit code, log file), since starting Spark only to see it fail would
take a minute. Needs the packages chromium and chromium-driver and the Python package
selenium.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.browser.harness import (  # noqa: E402  # after the path is set
    ADMIN,
    OPERATOR,
    VIEWER,
    Browser,
    Product,
    mark_failed,
    new_driver,
    start_product,
)

OUT_DIR = ROOT / "docs" / "screenshots"
CLASSES = (
    {"name": "fraud", "priority": 6, "delay_target_s": 1.5},
    {"name": "payments", "priority": 4, "delay_target_s": 2.0, "tau2": 0.75},
    {"name": "clicks", "priority": 1, "delay_target_s": 5.0, "tau0": 0.1, "tau3": 0.9},
)
FAILED_LOG = [
    "25/11/21 06:40:01 INFO SparkContext: Running Spark version 4.0.1",
    "25/11/21 06:40:03 INFO headroom.job: control period 1.0 s, 3 classes",
    "25/11/21 06:40:09 WARN TaskSetManager: Lost task 3.0 in stage 7.0: ExecutorLostFailure",
    "25/11/21 06:40:09 ERROR Executor: java.lang.OutOfMemoryError: Java heap space",
    "Traceback (most recent call last):",
    '  File "spark_runner/job/main.py", line 88, in run',
    "py4j.protocol.Py4JJavaError: An error occurred while calling o112.awaitTermination.",
]


def seed(product: Product) -> None:
    with product.api(OPERATOR) as api:
        ids = [api.post("/classes", json=body).json()["id"] for body in CLASSES]
        failed = api.post("/jobs", json={"class_ids": ids, "duration_s": 600}).json()
        mark_failed(
            product.settings, failed["id"], "the job process exited with code 1", FAILED_LOG
        )
        api.post(f"/jobs/{failed['id']}/restart").raise_for_status()
        api.post("/jobs", json={"class_ids": ids[:2]}).raise_for_status()


def shoot(browser: Browser, name: str) -> None:
    path = OUT_DIR / f"{name}.png"
    browser.driver.save_screenshot(str(path))
    sys.stdout.write(f"wrote {path.relative_to(ROOT)}\n")


def main() -> None:
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="headroom-screenshots-") as scratch:
        product = start_product(Path(scratch) / "data")
        driver = new_driver(Path(scratch) / "chromium")
        try:
            seed(product)
            browser = Browser(driver, product.dashboard_url)

            browser.open("/")
            browser.wait_text("api-health", "API ok")
            browser.element("login-username")
            shoot(browser, "login")

            browser.login(OPERATOR)
            browser.signed_in_as(OPERATOR, "operator")
            browser.wait_text("classes-table", "clicks")
            browser.wait_text("api-health", "API ok")
            shoot(browser, "classes")

            browser.click("//a[@href='/jobs']")
            browser.wait_text("jobs-table", "queued for a worker")
            browser.wait_text("job-class-ids", "fraud")
            shoot(browser, "jobs")

            browser.click("//tr[@id='job-row-1']//button[text()='Log']")
            browser.wait_text("job-log-lines", "OutOfMemoryError")
            shoot(browser, "job_log")

            browser.open("/assets/bootstrap.min.css")  # runs no callbacks
            driver.delete_all_cookies()
            browser.login(VIEWER)
            browser.wait_text("classes-role-hint", "needs the operator role")
            browser.wait_text("classes-table", "clicks")
            shoot(browser, "classes_viewer")

            browser.open("/assets/bootstrap.min.css")  # runs no callbacks
            driver.delete_all_cookies()
            browser.login(ADMIN, path="/users")
            browser.wait_text("users-table", "vera")
            shoot(browser, "users")
            browser.assert_console_clean()
        finally:
            driver.quit()
            product.stop()


if __name__ == "__main__":
    main()

"""Save screenshots of the dashboard to docs/screenshots/*.png (1400 px wide).

Runs the real product (API, dashboard and a Celery worker over a fresh SQLite database,
the same harness as tests/browser), fills it through the API with a declared stream,
three classes and their continuous queries, and runs two real local Spark jobs started
through the API: one finished run at a lower rate, then a live one that overloads the
machine, so the lowest class sheds. The pictures are taken in headless Debian Chromium
while the live job runs (about 5 minutes in all on 2 cores):

    .venv/bin/python docs/take_screenshots.py

Needs the packages chromium and chromium-driver, a JDK and the Python package selenium.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from selenium.webdriver.support.ui import Select  # noqa: E402

from backend.jobs import launcher  # noqa: E402
from tests.browser.harness import (  # noqa: E402  # after the path is set
    ADMIN,
    OPERATOR,
    VIEWER,
    Browser,
    Product,
    new_driver,
    start_product,
)
from tests.waiting import wait_until  # noqa: E402

OUT_DIR = ROOT / "docs" / "screenshots"
STREAM = {
    "name": "trades",
    "event_time": "ts",
    "columns": [
        {"name": "key", "type": "long", "generator": {"kind": "zipf", "n": 100}},
        {"name": "value", "type": "double", "generator": {"kind": "uniform"}},
        {"name": "ts", "type": "timestamp", "generator": {"kind": "arrival", "lag_max_s": 0.5}},
    ],
}
CLASSES = (
    {"name": "fraud", "priority": 6, "delay_target_s": 2.5},
    {
        "name": "payments",
        "priority": 4,
        "delay_target_s": 3.0,
        "tau2": 0.75,
        "manager_params": {"above_margin": 0.2},
    },
    {
        "name": "clicks",
        "priority": 1,
        "delay_target_s": 6.0,
        "manager": "ctrl",
        "manager_params": {"headroom": 0.6},
        "max_lend_fraction": 0.5,
    },
)
QUERIES = {  # class name → its continuous queries (POST /classes/{id}/queries bodies)
    "fraud": (
        {
            "name": "big-trades",
            "source": "trades",
            "operators": [
                {"kind": "filter", "predicate": "value > 0.9"},
                {
                    "kind": "window_aggregate",
                    "window": {"type": "tumbling", "size_s": 5},
                    "function": "count",
                },
            ],
        },
        {
            "name": "clean-trades",
            "source": "trades",
            "shared": True,
            "operators": [{"kind": "project", "columns": ["key", "value"]}],
        },
    ),
    "payments": (
        {
            "name": "hot-keys",
            "source": "query:clean-trades",
            "operators": [
                {"kind": "filter", "predicate": "key < 10"},
                {"kind": "map", "expression": "value * 2", "output": "value",
                 "cpu_cost_per_tuple_s": 0.0002},
            ],
        },
    ),
    "clicks": (
        {
            "name": "scores",
            "source": "trades",
            "operators": [
                {"kind": "map", "expression": "sqrt(value)", "output": "value",
                 "cpu_cost_per_tuple_s": 0.0006},
                {
                    "kind": "window_aggregate",
                    "window": {"type": "sliding", "size_s": 4, "slide_s": 2},
                    "function": "avg",
                },
            ],
        },
    ),
}  # fmt: skip
# Typed into the editor to show the API's answer: the projection drops the join column.
BAD_QUERY_SPEC = """\
name: trade-clicks
source: trades
operators:
- kind: project
  columns: [value]
- kind: window_join
  right: clicks
  window: {size_s: 2}
  sim: {selectivity: 0.5}
"""
FINISHED_RATE, LIVE_RATE = 500, 1000  # generated tuples/s per class
FINISHED_S = 60  # the finished run's duration
SPARK_S = 180  # time for a job's first metrics, or its end, on a busy machine


def jobs(product: Product) -> dict[int, dict[str, Any]]:
    with product.api() as api:
        return {int(j["id"]): j for j in api.get("/jobs").json()}


def samples_of(product: Product, job_id: int) -> int:
    with product.api() as api:
        response = api.get(f"/jobs/{job_id}/metrics", params={"limit": 1000})
        return len(response.json()["samples"]) if response.status_code == 200 else 0


def seed(product: Product) -> tuple[int, int]:
    """The stream, the classes and their queries; a finished run, then a live one.
    Returns (live job id, finished job id)."""
    with product.api(OPERATOR) as api:
        api.post("/streams", json=STREAM).raise_for_status()
        ids = []
        for body in CLASSES:
            created = api.post("/classes", json=body)
            created.raise_for_status()
            ids.append(created.json()["id"])
            for query in QUERIES.get(str(body["name"]), ()):
                api.post(f"/classes/{ids[-1]}/queries", json=query).raise_for_status()
        body = {"class_ids": ids, "rate_per_s": FINISHED_RATE, "duration_s": FINISHED_S}
        finished = int(api.post("/jobs", json=body).json()["id"])
    if not wait_until(lambda: jobs(product)[finished]["status"] == "stopped", FINISHED_S + SPARK_S):
        raise RuntimeError(f"the finished run did not end: {jobs(product)[finished]}")
    with product.api(OPERATOR) as api:
        body = {"class_ids": ids, "rate_per_s": LIVE_RATE, "policy": "absolute"}
        live = int(api.post("/jobs", json=body).json()["id"])
    if not wait_until(lambda: samples_of(product, live) >= 3 * 60, SPARK_S + 60):
        raise RuntimeError(f"the live run reported no minute of samples: {jobs(product)[live]}")
    return live, finished


def shoot(browser: Browser, name: str) -> None:
    path = OUT_DIR / f"{name}.png"
    browser.driver.save_screenshot(str(path))
    sys.stdout.write(f"wrote {path.relative_to(ROOT)}\n")


def sign_out(browser: Browser) -> None:
    browser.open("/assets/bootstrap.min.css")  # runs no callbacks
    browser.driver.delete_all_cookies()


def stop_jobs(product: Product) -> None:
    """Stop the live job and never leave a Spark JVM behind."""
    for job in jobs(product).values():
        if job["status"] not in ("stopped", "failed"):
            with product.api(OPERATOR) as api:
                api.post(f"/jobs/{job['id']}/stop")
    wait_until(
        lambda: all(j["status"] in ("stopped", "failed") for j in jobs(product).values()), 60
    )
    for job in jobs(product).values():
        if job.get("pid"):
            launcher.kill_group(job["pid"])


def main() -> None:
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="headroom-screenshots-") as scratch:
        product = start_product(Path(scratch) / "data", worker=True)
        driver = new_driver(Path(scratch) / "chromium")
        try:
            live, finished = seed(product)
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

            # A class's queries, and the API's answer to a join on a dropped column.
            browser.page_size(1400, 1100)
            browser.wait_text("queries-table", "big-trades")
            browser.fill("query-spec", BAD_QUERY_SPEC)
            browser.click("//button[@id='query-apply']")
            browser.wait_text("query-operators", "Right input")
            browser.click("//button[@id='query-save']")
            browser.wait_text("query-spec-feedback", "join column")
            browser.driver.execute_script(
                "document.getElementById('queries-section').scrollIntoView();"
            )
            time.sleep(0.5)
            shoot(browser, "class_queries")
            browser.page_size()

            browser.open("/streams")
            browser.wait_text("streams-table", "trades")
            shoot(browser, "streams")

            browser.click("//a[@href='/jobs']")
            browser.wait_text("jobs-table", "running")
            browser.wait_text("job-class-ids", "fraud")
            browser.page_size(1400, 1250)
            shoot(browser, "jobs")
            browser.page_size()

            browser.click(f"//tr[@id='job-row-{live}']//button[text()='Log']")
            browser.wait_text("job-log-lines", "started")
            shoot(browser, "job_log")

            # The live view: every chart full, the tuning panel beside them.
            browser.page_size(1400, 2150)
            browser.open(f"/live?job_id={live}")
            browser.wait_text("live-summary", "newest sample")
            browser.wait_text("tune-status", "In force: version 0")
            time.sleep(4)  # a few periods arrive live
            shoot(browser, "live")

            # The tuning panel: a change under review, then applied by the running job.
            browser.page_size()
            Select(browser.element("tune-class")).select_by_visible_text("clicks")
            browser.wait(
                lambda d: d.find_element("id", "tune-delay_target_s").get_attribute("value") == "6",
                "the form did not show the class",
            )
            browser.fill("tune-delay_target_s", "5")
            browser.fill("tune-tau2", "0.7")
            browser.fill("tune-manager_params", "headroom=0.5")
            browser.click("//button[@id='tune-review']")
            browser.wait_text("tune-changes", "0.8 → 0.7")
            browser.wait_text("tune-prediction", "replayed through the simulator")
            time.sleep(0.5)  # the dialog has faded in
            shoot(browser, "tuning")
            browser.click("//button[@id='tune-confirm']")
            browser.wait_text("tune-status", "In force: version 1 (applied")
            browser.driver.execute_script(
                "document.getElementById('tune-panel').scrollIntoView({block: 'center'});"
            )
            time.sleep(0.5)
            shoot(browser, "tuning_applied")

            # History: the live run against the finished one.
            browser.page_size(1400, 2250)
            browser.open(f"/history?job_id={live}&compare={finished}")
            browser.wait_text("history-a-qos", "fraud")
            browser.wait_text("history-b-qos", "fraud")
            time.sleep(1.5)  # the figures are drawn
            shoot(browser, "history")
            browser.page_size()

            sign_out(browser)
            browser.login(VIEWER)
            browser.wait_text("classes-role-hint", "needs the operator role")
            browser.wait_text("classes-table", "clicks")
            shoot(browser, "classes_viewer")

            sign_out(browser)
            browser.login(ADMIN, path="/users")
            browser.wait_text("users-table", "vera")
            shoot(browser, "users")
            browser.assert_console_clean()
        finally:
            driver.quit()
            stop_jobs(product)
            product.stop()


if __name__ == "__main__":
    main()

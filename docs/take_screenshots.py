"""Save screenshots of the dashboard to docs/screenshots/*.png (1400 px wide).

Runs the real product (API + dashboard processes over a fresh SQLite database, the
same harness as tests/browser), fills it through the API with three classes, their
continuous queries and a few jobs, and photographs the pages in headless Debian
Chromium:

    .venv/bin/python docs/take_screenshots.py

No Celery worker runs, so a started job stays queued (step 1 of 3, "queued for a
worker"); the failed job is recorded the way the job watcher records a job process
that died (reason, exit code, log file), since starting Spark only to see it fail would
take a minute.

The live view, the tuning panel and the history page need a job that reports every
metric; the Spark runner that does is being built, so this script plays such a job:
it records a launch with an ingest token (``issue_ingest_token``) and posts plausible
samples (tests/browser/synthetic.py) with that token, a window of history first and
then one period per second while the pictures are taken. A second, finished run with a
different load gives the history page something to compare. Needs the packages
chromium and chromium-driver and the Python package selenium.
"""

from __future__ import annotations

import sys
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from selenium.webdriver.support.ui import Select  # noqa: E402

from tests.browser.harness import (  # noqa: E402  # after the path is set
    ADMIN,
    OPERATOR,
    VIEWER,
    Browser,
    Product,
    acknowledge,
    issue_ingest_token,
    mark_failed,
    mark_stopped,
    new_driver,
    post_samples,
    start_product,
)
from tests.browser.synthetic import CLASSES as SYNTHETIC_CLASSES  # noqa: E402
from tests.browser.synthetic import synthetic_period  # noqa: E402

OUT_DIR = ROOT / "docs" / "screenshots"
CLASSES = (
    {"name": "fraud", "priority": 6, "delay_target_s": 1.5},
    {
        "name": "payments",
        "priority": 4,
        "delay_target_s": 2.0,
        "tau2": 0.75,
        "manager_params": {"above_margin": 0.2},
    },
    {
        "name": "clicks",
        "priority": 1,
        "delay_target_s": 5.0,
        "tau0": 0.1,
        "tau3": 0.9,
        "manager": "ctrl",
        "manager_params": {"headroom": 0.6},
        "max_lend_fraction": 0.5,
    },
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
            "operators": [{"kind": "filter", "predicate": "key < 10"}],
        },
    ),
}
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
HISTORY_S = 240  # seconds of samples each played run has before the pictures
# The played classes run the managers the classes above are given.
SYNTHETIC = tuple(
    replace(cls, manager=str(body.get("manager", "aloma")))
    for cls, body in zip(SYNTHETIC_CLASSES, CLASSES, strict=True)
)


class PlayedJob:
    """A job whose samples this script posts, as its process would."""

    def __init__(
        self, product: Product, job_id: int, *, offset: int = 0, load_factor: float = 1.0
    ) -> None:
        self.product = product
        self.job_id = job_id
        self.offset = offset
        self.load_factor = load_factor
        self.token = issue_ingest_token(product.settings, job_id)
        self.period = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def backfill(self, seconds: int) -> None:
        """``seconds`` periods that ended up to now."""
        now = time.time()
        samples = []
        for period in range(seconds):
            samples += self._period(period, now - seconds + period)
        post_samples(self.product, self.job_id, self.token, samples)
        self.period = seconds

    def report_every_second(self) -> None:
        def _run() -> None:
            while not self._stop.wait(1.0):
                samples = self._period(self.period, time.time())
                post_samples(self.product, self.job_id, self.token, samples)
                self.period += 1

        self._thread = threading.Thread(target=_run, daemon=True)
        self._thread.start()

    def _period(self, period: int, t: float) -> list[dict[str, object]]:
        return synthetic_period(
            period, t, SYNTHETIC, state_offset=self.offset, load_factor=self.load_factor
        )

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)


def seed(product: Product) -> tuple[PlayedJob, PlayedJob]:
    """Classes, a failed run and its restart, a queued job, a finished run and a live
    one (the last two played by this script). Returns (live, finished)."""
    with product.api(OPERATOR) as api:
        ids = []
        for body in CLASSES:
            created = api.post("/classes", json=body)
            created.raise_for_status()
            ids.append(created.json()["id"])
            for query in QUERIES.get(str(body["name"]), ()):
                api.post(f"/classes/{ids[-1]}/queries", json=query).raise_for_status()
        failed = api.post("/jobs", json={"class_ids": ids, "duration_s": 600}).json()
        mark_failed(
            product.settings, failed["id"], "the job process exited with code 1", FAILED_LOG
        )
        api.post(f"/jobs/{failed['id']}/restart").raise_for_status()
        api.post("/jobs", json={"class_ids": ids[:2]}).raise_for_status()
        earlier = api.post(
            "/jobs", json={"class_ids": ids, "policy": "absolute", "rate_per_s": 400}
        ).json()
        live = api.post("/jobs", json={"class_ids": ids, "rate_per_s": 400}).json()
    finished = PlayedJob(product, earlier["id"], offset=60, load_factor=0.8)
    finished.backfill(HISTORY_S)
    mark_stopped(product.settings, earlier["id"])
    played = PlayedJob(product, live["id"])
    played.backfill(HISTORY_S)
    played.report_every_second()
    # An applied change in the live job's history, as the job would acknowledge it.
    with product.api(OPERATOR) as api:
        api.patch(
            f"/jobs/{live['id']}/config", json={"classes": {"fraud": {"tau2": 0.7}}}
        ).raise_for_status()
    acknowledge(product, live["id"], played.token, 1)
    return played, finished


def shoot(browser: Browser, name: str) -> None:
    path = OUT_DIR / f"{name}.png"
    browser.driver.save_screenshot(str(path))
    sys.stdout.write(f"wrote {path.relative_to(ROOT)}\n")


def sign_out(browser: Browser) -> None:
    browser.open("/assets/bootstrap.min.css")  # runs no callbacks
    browser.driver.delete_all_cookies()


def main() -> None:
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="headroom-screenshots-") as scratch:
        product = start_product(Path(scratch) / "data")
        driver = new_driver(Path(scratch) / "chromium")
        live: PlayedJob | None = None
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

            browser.click("//a[@href='/jobs']")
            browser.wait_text("jobs-table", "queued for a worker")
            browser.wait_text("job-class-ids", "fraud")
            browser.page_size(1400, 1250)
            shoot(browser, "jobs")
            browser.page_size()

            browser.click("//tr[@id='job-row-1']//button[text()='Log']")
            browser.wait_text("job-log-lines", "OutOfMemoryError")
            shoot(browser, "job_log")

            # The live view: every chart full, the tuning panel beside them.
            browser.page_size(1400, 2150)
            browser.open(f"/live?job_id={live.job_id}")
            browser.wait_text("live-summary", "newest sample")
            browser.wait_text("tune-status", "In force: version 1")
            time.sleep(4)  # a few periods arrive live
            shoot(browser, "live")

            # The tuning panel: a change under review.
            browser.page_size()
            Select(browser.element("tune-class")).select_by_visible_text("clicks")
            browser.wait(
                lambda d: d.find_element("id", "tune-delay_target_s").get_attribute("value") == "5",
                "the form did not show the class",
            )
            browser.fill("tune-delay_target_s", "4")
            browser.fill("tune-tau2", "0.7")
            browser.fill("tune-manager_params", "headroom=0.5")
            browser.click("//button[@id='tune-review']")
            browser.wait_text("tune-changes", "0.8 → 0.7")
            time.sleep(0.5)  # the dialog has faded in
            shoot(browser, "tuning")
            browser.click("//button[@id='tune-confirm']")
            browser.wait_text("tune-status", "pending: version 2")
            browser.driver.execute_script(
                "document.getElementById('tune-panel').scrollIntoView({block: 'center'});"
            )
            time.sleep(0.5)
            shoot(browser, "tuning_pending")

            # History: the live run against the finished one.
            browser.page_size(1400, 2250)
            browser.open(f"/history?job_id={live.job_id}&compare={finished.job_id}")
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
            if live is not None:
                live.stop()
            driver.quit()
            product.stop()


if __name__ == "__main__":
    main()

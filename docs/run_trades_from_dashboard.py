"""Start the three-class trades run from the dashboard, as a new user would, and report it.

    .venv/bin/python docs/run_trades_from_dashboard.py [--rate 4000] [--duration 240]

Runs the real product (API, dashboard and a Celery worker over a fresh SQLite database,
the harness of tests/browser), declares the stream and classes of
``scenarios/trades.yaml`` through the API (``trades``: account Zipf over 1,000, amount,
``ts`` up to 1 s late as event time; fraud, recs and ads with their SQL queries and
targets of 1.5 / 2 / 3 s), then, in headless Chromium, signs in as an operator, ticks the
three classes on the Jobs page, types the rate and duration and presses *Start job*. When
the local Spark job has stopped it prints, per class, what the History page shows (the
run summary: mean and p95 response time, periods late, shed) and the periods the class
was flagged infeasible (from the job's samples), saves the History page to
``--screenshot`` and the samples to ``--samples``. Exit 1 if a class missed its target,
lost tuples or was flagged.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from selenium.webdriver.common.by import By  # noqa: E402

from tests.browser.harness import OPERATOR, Browser, Product, new_driver, start_product  # noqa: E402
from tests.waiting import poll_for  # noqa: E402

SCENARIO = ROOT / "scenarios" / "trades.yaml"
START_S = 240.0
"""Time for the job's start-up and stop beyond its duration, on a busy machine."""


def say(line: str) -> None:
    sys.stdout.write(line + "\n")


def declare(product: Product) -> list[str]:
    """The scenario's stream, classes and queries through the API; the class names."""
    doc = yaml.safe_load(SCENARIO.read_text())
    stream = {k: v for k, v in doc["streams"][0].items() if k != "arrival"}
    names = []
    with product.api(OPERATOR) as api:
        api.post("/streams", json=stream).raise_for_status()
        for c in doc["classes"]:
            body = {k: c[k] for k in ("name", "priority", "delay_target_s")}
            created = api.post("/classes", json=body)
            created.raise_for_status()
            for query in c["queries"]:
                api.post(f"/classes/{created.json()['id']}/queries", json=query).raise_for_status()
            names.append(c["name"])
    return names


def start_from_dashboard(browser: Browser, names: list[str], rate: float, duration: float) -> int:
    """Tick the classes, type rate and duration, press Start job: the new job's id."""
    browser.login(OPERATOR, path="/jobs")
    for name in names:
        browser.wait_text("job-class-ids", name)
    for box in browser.driver.find_elements(By.CSS_SELECTOR, "#job-class-ids input"):
        if not box.is_selected():
            browser.driver.execute_script("arguments[0].click();", box)
    browser.fill("job-rate_per_s", f"{rate:g}")
    browser.fill("job-duration_s", f"{duration:g}")
    browser.wait(
        lambda d: d.find_element(By.ID, "job-start-submit").is_enabled(), "Start job stays off"
    )
    browser.click("//button[@id='job-start-submit']")
    alert = browser.wait_text("job-start-alert", "Started job")
    return int(alert.split("Started job ")[1].split(" ")[0])


def wait_for_end(product: Product, job_id: int, timeout_s: float) -> str:
    """The job's final status, read every 2 s on one signed-in client (a sign-in per
    read would spend the cores Spark runs on hashing passwords)."""
    with product.api() as api:

        def ended() -> str | None:
            status = str(api.get(f"/jobs/{job_id}").json()["status"])
            return status if status in ("stopped", "failed") else None

        status = poll_for(ended, timeout_s, 2.0)
        if status is None:
            raise RuntimeError(f"job {job_id} did not end within {timeout_s:.0f} s")
        return str(status)


def report(product: Product, job_id: int, keep: Path) -> bool:
    """Print the run per class and write its samples to ``keep``; whether every class met
    its target, lost nothing and was never flagged."""
    with product.api() as api:
        summary = api.get(f"/jobs/{job_id}/summary").json()
        samples: list[dict[str, Any]] = api.get(
            f"/jobs/{job_id}/metrics", params={"limit": 5000}
        ).json()["samples"]
    keep.parent.mkdir(parents=True, exist_ok=True)
    keep.write_text(json.dumps(samples))
    ok = True
    say("class  target s  mean s  p95 s  late periods  shed  infeasible periods")
    for c in summary["classes"]:
        mine = [s for s in samples if s["class_name"] == c["class_name"] and not s["warmup"]]
        flagged = sum(1 for s in mine if s["manager_state"] == "infeasible")
        say(
            f"{c['class_name']:6} {c['delay_target_s']:8g}  {c['mean_response_time_s']:.3f}  "
            f"{c['p95_response_time_s']:.3f}  {c['late_period_fraction']:.0%} of "
            f"{c['periods'] - c['warmup_periods']}  {c['shed']}  {flagged}"
        )
        ok &= c["mean_response_time_s"] <= c["delay_target_s"] and not c["shed"] and not flagged
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=4000.0, help="rows/s per class")
    parser.add_argument("--duration", type=float, default=240.0, help="seconds")
    parser.add_argument("--screenshot", type=Path, default=Path("var/trades_history.png"))
    parser.add_argument("--samples", type=Path, default=Path("var/trades_samples.json"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="headroom-trades-") as scratch:
        product = start_product(Path(scratch) / "data", worker=True)
        driver = new_driver(Path(scratch) / "chromium")
        try:
            browser = Browser(driver, product.dashboard_url)
            job_id = start_from_dashboard(browser, declare(product), args.rate, args.duration)
            started = time.monotonic()
            status = wait_for_end(product, job_id, args.duration + START_S)
            say(f"job {job_id}: {status} after {time.monotonic() - started:.0f} s")
            ok = report(product, job_id, args.samples)
            browser.page_size(1400, 2250)
            browser.open(f"/history?job_id={job_id}")
            browser.wait_text("history-a-qos", "fraud")
            time.sleep(1.5)  # the figures are drawn
            args.screenshot.parent.mkdir(parents=True, exist_ok=True)
            driver.save_screenshot(str(args.screenshot))
            say(f"History page: {args.screenshot}")
        finally:
            driver.quit()
            product.stop()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

"""Freshness of the live view: from a metric sample leaving the job to its point on screen.

    .venv/bin/python -m bench.bench_dashboard_freshness [--samples 60]

Runs the real product (API and dashboard processes over SQLite, the harness of
tests/browser) and plays a job that reports every field (bench/synthetic_samples.py):
it gets the job's ingest token the way a launch does and posts each period's samples
to ``POST /jobs/{id}/metrics`` with ``t`` = the wall time it sends them. The live view
is open in headless Debian Chromium; for every sample it draws, the page records when
the new points were painted (``window.headroomRendered``: two animation frames after
the data arrived). Freshness = painted − sent, both on this host's clock.

Samples go out at random gaps of 0.5-1.0 s (a job reports once per control period; the
jitter spreads them over the page's refresh phase). The live view long-polls: the API
answers its refresh as soon as a newer sample is stored. Each scenario first fills its
window with history, so every chart has its full number of points to redraw. The
target, for the default view, is p95 <= 1 s; the larger views show how it scales.
Other work on the machine (the load average is printed) slows every step: the page's
poll, the dashboard's callback, the API and the browser's redraw.
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

from selenium.webdriver.support.ui import Select

from bench.common import percentile, print_table
from bench.synthetic_samples import CLASSES, SyntheticClass, synthetic_period
from tests.browser.harness import (
    OPERATOR,
    Browser,
    Product,
    issue_ingest_token,
    new_driver,
    post_samples,
    start_product,
)

TARGET_P95_S = 1.0


@dataclass(frozen=True)
class Scenario:
    label: str
    classes: tuple[SyntheticClass, ...]
    window_s: float


SIX_CLASSES = CLASSES + tuple(
    replace(c, name=f"{c.name}-b", base_share=c.base_share / 2) for c in CLASSES
)
SCENARIOS = (
    Scenario("3 classes, 2-min window (default)", CLASSES, 120.0),
    Scenario("3 classes, 10-min window", CLASSES, 600.0),
    Scenario("6 classes, 2-min window", SIX_CLASSES, 120.0),
)


def run(product: Product, browser: Browser, scenario: Scenario, samples: int) -> list[float]:
    """Freshness in seconds (sent -> painted) of ``samples`` periods posted while the
    live view is open."""
    with product.api(OPERATOR) as api:
        ids = []
        for cls in scenario.classes:
            created = api.post(
                "/classes",
                json={
                    "name": f"{cls.name}-{len(scenario.label)}-{int(scenario.window_s)}",
                    "priority": cls.priority,
                    "delay_target_s": cls.delay_target_s,
                },
            )
            created.raise_for_status()
            ids.append(created.json())
        job = api.post("/jobs", json={"class_ids": [c["id"] for c in ids]}).json()
    classes = tuple(
        replace(c, name=made["name"]) for c, made in zip(scenario.classes, ids, strict=True)
    )
    token = issue_ingest_token(product.settings, job["id"])
    history = int(scenario.window_s)
    now = time.time()
    backlog = []
    for period in range(history):
        backlog += synthetic_period(period, now - history + period, classes)
    post_samples(product, job["id"], token, backlog)

    browser.open(f"/live?job_id={job['id']}")
    Select(browser.element("live-window")).select_by_value(str(scenario.window_s))
    browser.wait(
        lambda d: d.execute_script("return document.getElementById('live-rendered').textContent"),
        "the live view never drew the window",
    )
    time.sleep(2.0)
    browser.driver.execute_script("window.headroomRendered = [];")

    rng = random.Random(7)
    sent: list[float] = []
    for k in range(samples):
        t = time.time()
        post_samples(product, job["id"], token, synthetic_period(history + k, t, classes))
        sent.append(t)
        time.sleep(rng.uniform(0.5, 1.0))
    time.sleep(2.0)
    painted: dict[float, int] = {}
    for t, at_ms in browser.driver.execute_script("return window.headroomRendered || []"):
        painted.setdefault(float(t), int(at_ms))
    missing = [t for t in sent if t not in painted]
    if missing:
        raise RuntimeError(f"{len(missing)} of {len(sent)} samples never reached the screen")
    return [painted[t] / 1000.0 - t for t in sent]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="live view freshness")
    parser.add_argument("--samples", type=int, default=60, help="samples per scenario")
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="headroom-freshness-") as scratch:
        product = start_product(Path(scratch) / "data")
        driver = new_driver(Path(scratch) / "chromium")
        try:
            browser = Browser(driver, product.dashboard_url, timeout_s=30.0)
            browser.login(OPERATOR)
            browser.signed_in_as(OPERATOR, "operator")
            for scenario in SCENARIOS:
                ages = run(product, browser, scenario, args.samples)
                rows.append(
                    (
                        scenario.label,
                        len(ages),
                        percentile(ages, 0.5),
                        percentile(ages, 0.95),
                        max(ages),
                        "yes" if percentile(ages, 0.95) <= TARGET_P95_S else "NO",
                    )
                )
            errors = browser.console_errors()
        finally:
            driver.quit()
            product.stop()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print_table(
        f"Live view freshness: sample sent -> point painted ({os.cpu_count()} CPUs, "
        f"load average {load}; the live view long-polls the API)",
        ("scenario", "samples", "p50 (s)", "p95 (s)", "max (s)", f"p95 <= {TARGET_P95_S:g} s"),
        rows,
    )
    if errors:
        print(f"\nbrowser console errors: {errors}")
    # The target is for the default view (the first row); the others show how it scales.
    return 0 if rows[0][-1] == "yes" and not errors else 1


if __name__ == "__main__":
    raise SystemExit(main())

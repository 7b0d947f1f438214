"""Save a screenshot of the dashboard's Cluster page to docs/screenshots/cluster.png.

Runs the real product (API, dashboard, a Celery worker with beat on a fresh PostgreSQL
database) coordinating a standalone Spark master and two workers it starts here, with
the two elastic jobs of the coordinator's Spark test (``tests/coordinated_jobs.py``):
job B loaded first, then the load moves to job A. The picture is taken in headless
Debian Chromium once the coordinator has moved an executor to A and A serves it (about
five minutes on 2 cores):

    .venv/bin/python docs/take_cluster_screenshot.py

Needs PostgreSQL and Redis on this machine, the packages chromium and chromium-driver,
a JDK and the Python package selenium.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from backend.stack import Stack  # noqa: E402  # after the path is set
from spark_runner.engine.cluster import StandaloneCluster  # noqa: E402
from tests.browser.harness import Browser, new_driver  # noqa: E402
from tests.conftest import REDIS_URL, temporary_postgres_database  # noqa: E402
from tests.coordinated_jobs import (  # noqa: E402
    A_LOADED,
    B_LOADED,
    allocation,
    coordinated_product,
    feeding,
    move_by,
    serving,
    start_jobs,
)
from tests.e2e.conftest import ADMIN, ADMIN_PASSWORD, api_client  # noqa: E402
from tests.waiting import poll_for  # noqa: E402

OUT = ROOT / "docs" / "screenshots" / "cluster.png"
PHASE_TIMEOUT_S = 120.0
AFTER_S = 20.0  # the chart shows A's executor serving a while


def main() -> None:
    with (
        tempfile.TemporaryDirectory(prefix="headroom-cluster-") as scratch,
        StandaloneCluster(Path(scratch) / "cluster", workers=2, cores=2, memory="2g") as cluster,
        temporary_postgres_database() as database_url,
        coordinated_product(
            Path(scratch) / "data", database_url, REDIS_URL, cluster.master_url, dashboard=True
        ) as stack,
    ):
        driver = new_driver(Path(scratch) / "chromium")
        try:
            shoot(stack, Browser(driver, stack.dashboard_url), Path(scratch))
        finally:
            driver.quit()


def shoot(stack: Stack, browser: Browser, scratch: Path) -> None:
    """Run the two phases, then take the Cluster page."""
    master = stack.settings.allowed_spark_masters[0]
    browser.login(ADMIN, ADMIN_PASSWORD)
    api = api_client(stack)
    try:
        a, b = start_jobs(api, master)
        if not poll_for(lambda: len(allocation(api)) == 2, PHASE_TIMEOUT_S):
            raise RuntimeError("the jobs never both ran")
        with feeding(REDIS_URL, scratch, B_LOADED):
            poll_for(lambda: allocation(api) == {str(a): 1, str(b): 2}, PHASE_TIMEOUT_S)
        with feeding(REDIS_URL, scratch, A_LOADED):
            moved = poll_for(lambda: move_by(api, master, a), PHASE_TIMEOUT_S)
            if not moved or not poll_for(
                lambda: serving(api, a, moved["at_s"], 2), PHASE_TIMEOUT_S
            ):
                raise RuntimeError(f"no executor moved to job {a}: {allocation(api)}")
            time.sleep(AFTER_S)
            browser.page_size(1400, 720)
            browser.open("/cluster")
            browser.wait_text("cluster-sections", f"job {a} short")
            time.sleep(1.5)  # the chart is drawn
            OUT.parent.mkdir(parents=True, exist_ok=True)
            browser.driver.save_screenshot(str(OUT))
            sys.stdout.write(f"wrote {OUT.relative_to(ROOT)}\n")
    finally:
        api.close()


if __name__ == "__main__":
    main()

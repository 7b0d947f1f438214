"""A real product for browser tests and screenshots: the API and the dashboard as the
operator runs them (``backend.stack.Stack``), a SQLite database built by the
migrations, users made with the CLI and the API, and a headless Debian Chromium.

By default no Celery worker is started: a job started here stays ``pending`` (queued for
a worker), which is what the Jobs page shows while a deployment waits for one. To show
a failed run without starting Spark, ``mark_failed`` writes what the job watcher writes
when a job process dies (status, reason with the log tail, exit code, log file).

``start_product(..., worker=True)`` also starts a worker, so a started job launches a
real local Spark job. To play a job without Spark (the freshness benchmark),
``issue_ingest_token`` records a launch the way the worker's launch does, without a
process, and returns the job's token for ``post_samples``.
"""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar
from urllib.parse import urlsplit

import httpx
from selenium import webdriver
from selenium.common.exceptions import (
    ElementClickInterceptedException,
    ElementNotInteractableException,
    StaleElementReferenceException,
    TimeoutException,
)
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.chrome.webdriver import WebDriver
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

from backend.migrate import upgrade
from backend.settings import Settings
from backend.stack import Stack
from tests.leftovers import kill_processes_naming

T = TypeVar("T")

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
CHROMIUM_ARGS: tuple[str, ...] = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)
WINDOW = (1400, 900)

ADMIN = "admin"
PASSWORD = "browser-test-pw-1"  # every account made here has it
OPERATOR = "ops"
VIEWER = "vera"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


ROUTINE_SWEEP = re.compile(r"due task sweep-jobs|jobs\.sweep\[\S+\] (received|succeeded)")


def tail(log: Path, chars: int = 4000) -> str:
    """The end of ``log`` without the beat's once-a-second sweep lines, which would fill it."""
    lines = log.read_text(errors="replace").splitlines()
    return "\n".join(line for line in lines if not ROUTINE_SWEEP.search(line))[-chars:]


@dataclass
class Product:
    """A running API and dashboard; ``stop()`` ends both."""

    stack: Stack

    @property
    def settings(self) -> Settings:
        return self.stack.settings

    @property
    def dashboard_url(self) -> str:
        return self.stack.dashboard_url

    @contextmanager
    def api(self, username: str = ADMIN, password: str = PASSWORD) -> Iterator[httpx.Client]:
        """An httpx client for the API, logged in as ``username``."""
        base_url = f"{self.settings.public_api_url}/api/v1"
        with httpx.Client(base_url=base_url, timeout=10) as client:
            login = client.post("/auth/login", json={"username": username, "password": password})
            login.raise_for_status()
            client.headers["Authorization"] = f"Bearer {login.json()['access_token']}"
            yield client

    def logs(self) -> str:
        """The tails of the services' logs and of every job's log."""
        logs = [(s.name, s.log_path) for s in self.stack.services]
        logs += [
            (f"job {p.parent.name}", p) for p in sorted(self.settings.jobs_dir.glob("*/job.log"))
        ]
        return "\n".join(f"--- {name} ---\n{tail(path)}" for name, path in logs)

    def stop(self) -> None:
        self.stack.stop()
        kill_processes_naming(self.settings.data_dir)


def start_product(
    data_dir: Path,
    timeout_s: float = 60.0,
    *,
    worker: bool = False,
    streams_redis_url: str = "",
    streams_prefix: str = "headroom",
) -> Product:
    """API + dashboard on free ports over a fresh SQLite database in ``data_dir``, with
    an admin (made by the CLI), an operator and a viewer (made by the admin); with
    ``worker`` also a Celery worker, which launches real local Spark jobs (reading and
    writing Redis streams on ``streams_redis_url`` under ``streams_prefix``)."""
    settings = Settings(
        data_dir=data_dir,
        database_url=f"sqlite:///{data_dir / 'headroom.db'}",
        api_port=free_port(),
        dashboard_port=free_port(),
        spark_master="local[2]",
        watch_interval_s=0.5,
        streams_redis_url=streams_redis_url,
        streams_prefix=streams_prefix,
    )
    data_dir.mkdir(parents=True, exist_ok=True)
    upgrade(settings.sqlalchemy_url)
    stack = Stack.from_settings(settings)
    create_admin(stack, ADMIN, PASSWORD)
    product = Product(stack)
    try:
        stack.start_api()
        stack.start_dashboard()
        if worker:
            stack.start_worker()
        stack.wait_healthy(timeout_s)
        with product.api() as admin:
            for username, role in ((OPERATOR, "operator"), (VIEWER, "viewer")):
                created = admin.post(
                    "/users", json={"username": username, "password": PASSWORD, "role": role}
                )
                created.raise_for_status()
    except BaseException:
        stack.stop()
        raise
    return product


def create_admin(stack: Stack, username: str, password: str) -> None:
    """The first admin, made the way an operator makes it: with the CLI."""
    result = subprocess.run(
        [sys.executable, "-m", "headroom", "users", "create-admin", username, "--password-stdin"],
        input=password + "\n",
        env=stack.env,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(f"create-admin failed: {result.stderr}")


def new_driver(user_data_dir: Path | None = None) -> WebDriver:
    """Headless Debian Chromium with a fresh profile and the console log captured."""
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in CHROMIUM_ARGS:
        options.add_argument(argument)
    profile = user_data_dir or Path(tempfile.mkdtemp(prefix="headroom-chromium-"))
    options.add_argument(f"--user-data-dir={profile}")
    options.add_argument(f"--window-size={WINDOW[0]},{WINDOW[1]}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    # The page itself (not the window with its frame) is WINDOW: screenshots are that size.
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": WINDOW[0], "height": WINDOW[1], "deviceScaleFactor": 1, "mobile": False},
    )
    return driver


def mark_failed(
    settings: Settings, job_id: int, reason: str, log_lines: list[str], exit_code: int = 1
) -> None:
    """Record job ``job_id`` as failed the way the watcher does when its process dies:
    the reason with the log tail appended, the exit code, and the log file on disk."""
    from backend.db import make_engine, make_session_factory, session_scope, utcnow
    from backend.jobs.models import Job

    log_path = settings.jobs_dir / str(job_id) / "job.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log_path.write_text("\n".join(log_lines) + "\n")
    engine = make_engine(settings.sqlalchemy_url)
    try:
        with session_scope(make_session_factory(engine)) as session:
            job = session.get(Job, job_id)
            assert job is not None, job_id
            job.status = "failed"
            job.log_path = str(log_path)
            job.exit_code = exit_code
            job.started_at = job.started_at or job.created_at
            job.stopped_at = utcnow()
            job.failure_reason = f"{reason}\n--- log tail ---\n" + "\n".join(log_lines[-20:])
    finally:
        engine.dispose()


def issue_ingest_token(settings: Settings, job_id: int) -> str:
    """Record job ``job_id`` as launched (starting, with a fresh ingest token) the way the
    worker's launch does, but without starting a process; returns the token."""
    from backend.db import make_engine, make_session_factory, session_scope, utcnow
    from backend.jobs.models import Job
    from backend.users import security

    token = security.new_token()
    engine = make_engine(settings.sqlalchemy_url)
    try:
        with session_scope(make_session_factory(engine)) as session:
            job = session.get(Job, job_id)
            assert job is not None, job_id
            job.ingest_token_digest = security.token_digest(token)
            job.status = "starting"
            job.started_at = utcnow()
    finally:
        engine.dispose()
    return token


def post_samples(
    product: Product, job_id: int, token: str, samples: Sequence[dict[str, Any]]
) -> None:
    """``POST /jobs/{id}/metrics`` as the job does, with its ingest token."""
    response = httpx.post(
        f"{product.settings.public_api_url}/api/v1/jobs/{job_id}/metrics",
        json={"samples": list(samples)},
        headers={"Authorization": f"Bearer {token}"},
        timeout=10,
    )
    response.raise_for_status()


def attr(element: WebElement, name: str) -> str:
    """The attribute or property ``name`` of ``element``, which must have it (selenium
    answers ``None`` for one it does not have)."""
    value = element.get_attribute(name)
    assert value is not None, f"the element has no {name!r}"
    return value


class Browser:
    """A Chromium window on the dashboard, with waits that poll against a deadline."""

    def __init__(self, driver: WebDriver, base_url: str, timeout_s: float = 15.0) -> None:
        self.driver = driver
        self.base_url = base_url
        self.timeout_s = timeout_s

    def open(self, path: str) -> None:
        self.driver.get(self.base_url + path)

    def open_blank(self) -> None:
        """Leave the dashboard for an empty page: its intervals stop polling (a page left
        open costs CPU beside the tests that follow, and calls a product that stopped)."""
        self.driver.get("about:blank")

    @contextmanager
    def patience(self, timeout_s: float) -> Iterator[None]:
        """Waits inside the block give up after ``timeout_s`` instead."""
        before, self.timeout_s = self.timeout_s, timeout_s
        try:
            yield
        finally:
            self.timeout_s = before

    def wait(self, condition: Callable[[WebDriver], T], message: str = "") -> T:
        wait = WebDriverWait(
            self.driver,
            self.timeout_s,
            poll_frequency=0.1,
            ignored_exceptions=(StaleElementReferenceException,),
        )
        try:
            return wait.until(condition)
        except TimeoutException:
            where = self.driver.current_url.removeprefix(self.base_url)
            raise TimeoutException(f"{message} (after {self.timeout_s:g} s, at {where})") from None

    def element(self, element_id: str) -> WebElement:
        shown = self.wait(
            ec.visibility_of_element_located((By.ID, element_id)), f"#{element_id} is not shown"
        )
        assert shown is not False  # until() returns only a truthy result
        return shown

    def read(self, element_id: str, get: Callable[[WebElement], T]) -> T:
        """``get`` of the shown ``#element_id``, read again where a re-render replaced the
        element between finding and reading it (a stale reference: seen in CI)."""
        locate = ec.visibility_of_element_located((By.ID, element_id))

        def _read(driver: WebDriver) -> tuple[T] | Literal[False]:
            element = locate(driver)
            return (get(element),) if element else False

        read = self.wait(_read, f"#{element_id} is not shown")
        assert read is not False  # until() returns only a truthy result
        return read[0]

    def xpath(self, xpath: str) -> WebElement:
        shown = self.wait(ec.visibility_of_element_located((By.XPATH, xpath)), xpath)
        assert shown is not False  # until() returns only a truthy result
        return shown

    def absent(self, element_id: str) -> bool:
        return not self.driver.find_elements(By.ID, element_id)

    def wait_text(self, element_id: str, text: str) -> str:
        """Wait until ``#element_id`` shows ``text``; returns all its text. A timeout
        says what the element showed instead."""
        try:
            self.wait(
                ec.text_to_be_present_in_element((By.ID, element_id), text),
                f"#{element_id} never showed {text!r}",
            )
        except TimeoutException as err:
            shown = self.driver.find_elements(By.ID, element_id)
            instead = repr(shown[0].text) if shown else "no such element"
            raise TimeoutException(f"{err.msg}; it showed {instead}") from None
        return self.read(element_id, lambda element: element.text)

    def wait_path(self, path: str) -> None:
        """Wait until the address bar shows ``path`` (with its query, if given)."""

        def _at(driver: WebDriver) -> bool:
            current = driver.current_url.removeprefix(self.base_url)
            return current == path

        self.wait(_at, f"never reached {path}")

    def wait_login_page(self) -> None:
        """Wait until the browser shows the login form (any ``?next=``)."""
        self.wait(
            lambda d: urlsplit(d.current_url).path == "/login",
            "never sent to /login",
        )
        self.element("login-form")

    def fill(self, element_id: str, value: str) -> None:
        """Replace the field's text with ``value`` as a user does: select all and delete
        until the field stays empty, then type, and check that the field holds it.
        ``clear()`` fires no input event, so a React field can put its old text back under
        the new keys; and right after a refused change the dashboard re-renders the
        marked field once and can put back the text just deleted (seen in CI: '0.3',
        deleted, then typing 0.7 gave '0.30.7'), which a user sees and deletes again. A
        keystroke the page drops while typing fails here, by name, not steps later."""
        empty_polls = 0

        def _emptied(driver: WebDriver) -> bool:
            nonlocal empty_polls
            field = driver.find_element(By.ID, element_id)
            if field.get_property("value"):
                field.send_keys(Keys.CONTROL, "a")
                field.send_keys(Keys.DELETE)
                empty_polls = 0
                return False
            empty_polls += 1
            return empty_polls >= 3  # empty for three polls (0.2 s) in a row

        self.wait(_emptied, f"#{element_id} never stayed empty")
        field = self.element(element_id)
        field.send_keys(value)
        held = field.get_property("value")
        assert held == value, f"#{element_id} holds {held!r} after typing {value!r}"

    def click(self, xpath: str) -> None:
        """Click, finding the element again if a refresh replaced it meanwhile, and
        trying again while it is disabled (a form waiting for its choices), something
        covers it or it cannot take a click yet (a closing dialog fading out)."""

        def _click(driver: WebDriver) -> bool:
            element = driver.find_element(By.XPATH, xpath)
            if not element.is_enabled():
                return False
            # instant: Bootstrap scrolls smoothly, and a click mid-scroll lands elsewhere
            # (each try would restart the scroll, which then never arrives)
            driver.execute_script(
                "arguments[0].scrollIntoView({block: 'center', behavior: 'instant'});", element
            )
            try:
                element.click()
            except (ElementClickInterceptedException, ElementNotInteractableException):
                return False
            return True

        self.wait(_click, f"could not click {xpath}")

    def login(self, username: str, password: str = PASSWORD, path: str = "/") -> None:
        self.open(path)
        self.fill("login-username", username)
        self.fill("login-password", password)
        self.click("//button[@id='login-submit']")

    def signed_in_as(self, username: str, role: str) -> None:
        self.wait_text("nav-user", username)
        self.wait_text("nav-role", role)

    def allow_downloads(self, directory: Path) -> None:
        """Save downloads into ``directory`` without asking."""
        self.driver.execute_cdp_cmd(
            "Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(directory)}
        )

    def page_size(self, width: int = WINDOW[0], height: int = WINDOW[1]) -> None:
        """Make the page (and so the screenshots) ``width`` x ``height`` pixels."""
        self.driver.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )

    def console_errors(self) -> list[dict[str, object]]:
        """SEVERE console entries since the last call (reading the log empties it)."""
        entries: list[dict[str, object]] = self.driver.get_log("browser")
        return [e for e in entries if e.get("level") == "SEVERE"]

    def assert_console_clean(self) -> None:
        errors = self.console_errors()
        assert errors == [], f"browser console errors: {errors}"

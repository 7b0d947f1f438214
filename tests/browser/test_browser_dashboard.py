"""The dashboard in a real browser against the real API: sign-in, roles, classes, jobs.

Every test ends by asserting that the browser console logged no error.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import httpx
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from tests.browser.harness import (
    ADMIN,
    OPERATOR,
    PASSWORD,
    VIEWER,
    Browser,
    Product,
    attr,
    mark_failed,
)

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]

_names = itertools.count(1)


def unique(prefix: str) -> str:
    return f"{prefix}{next(_names)}"


def class_names(product: Product) -> set[str]:
    with product.api() as api:
        return {c["name"] for c in api.get("/classes").json()}


def add_class(product: Product, name: str) -> dict[str, Any]:
    with product.api() as api:
        response = api.post("/classes", json={"name": name, "priority": 3, "delay_target_s": 2})
        response.raise_for_status()
        created: dict[str, Any] = response.json()
        return created


def add_user(product: Product, username: str, role: str) -> int:
    with product.api() as admin:
        response = admin.post(
            "/users", json={"username": username, "password": PASSWORD, "role": role}
        )
        response.raise_for_status()
        return int(response.json()["id"])


def test_login_wrong_password_then_right_lands_on_classes(browser: Browser):
    browser.open("/jobs")
    browser.wait_path("/login?next=%2Fjobs")

    browser.fill("login-username", OPERATOR)
    browser.fill("login-password", "not-the-password")
    browser.click("//button[@id='login-submit']")
    browser.wait_text("login-error", "username or password is wrong")
    assert browser.element("login-password").get_attribute("value") == ""

    browser.login(OPERATOR)
    browser.wait_path("/")
    browser.wait_text("_pages_content", "Query classes")
    browser.signed_in_as(OPERATOR, "operator")
    # The token lives in an HttpOnly cookie: page scripts cannot read it.
    assert browser.driver.execute_script("return document.cookie") == ""
    cookie = browser.driver.get_cookie("headroom_session")
    assert cookie is not None and cookie["httpOnly"] and cookie["sameSite"] == "Lax"
    assert browser.driver.execute_script("return window.localStorage.length") == 0
    browser.assert_console_clean()


def test_operator_creates_a_class_and_a_bad_threshold_is_refused(
    browser: Browser, product: Product
):
    browser.login(OPERATOR)
    browser.signed_in_as(OPERATOR, "operator")
    good = unique("fraud")
    browser.fill("class-name", good)
    browser.fill("class-priority", "6")
    browser.fill("class-delay_target_s", "1.5")
    browser.click("//form[@id='class-form']//button[@type='submit']")
    browser.wait_text("class-form-alert", f"Created class {good}")
    browser.wait_text("classes-table", good)
    assert good in class_names(product)

    bad = unique("clicks")
    body = {"name": bad, "priority": 1, "delay_target_s": 3, "tau1": 0.5, "tau2": 0.3}
    with product.api() as api:  # what the API itself says about these values
        refused = api.post("/classes", json=body)
    assert refused.status_code == 422
    (api_message,) = [e["msg"] for e in refused.json()["detail"] if e["loc"][-1] == "tau2"]

    browser.fill("class-name", bad)
    browser.fill("class-priority", "1")
    browser.fill("class-delay_target_s", "3")
    browser.fill("class-tau1", "0.5")
    browser.fill("class-tau2", "0.3")
    browser.click("//form[@id='class-form']//button[@type='submit']")
    assert browser.wait_text("class-tau2-feedback", api_message) == api_message
    assert "is-invalid" in attr(browser.element("class-tau2"), "class")
    assert bad not in class_names(product)

    # Edit the good class: another manager with a parameter the core refuses, then one
    # it takes.
    row = browser.xpath(f"//tr[td[text()='{good}']]")
    class_id = attr(row, "id").removeprefix("class-row-")
    browser.click(f"//tr[@id='class-row-{class_id}']//button[text()='Edit']")
    browser.wait_text("class-edit-title", f"Edit class #{class_id}")
    Select(browser.element("class-edit-manager")).select_by_value("ctrl")
    browser.fill("class-edit-manager_params", "headroom=-1")
    browser.click("//button[@id='class-edit-save']")
    browser.wait_text("class-edit-manager_params-feedback", "manager_params.headroom=-1")
    browser.fill("class-edit-manager_params", "headroom=0.5")
    browser.click("//button[@id='class-edit-save']")
    browser.wait_text("classes-alert", f"Updated class {good}")
    assert "headroom=0.5" in browser.wait_text(f"class-params-{class_id}", "headroom=0.5")
    browser.assert_console_clean()


def test_a_viewer_sees_no_change_controls(browser: Browser, product: Product):
    add_class(product, unique("ads"))
    browser.login(VIEWER)
    browser.signed_in_as(VIEWER, "viewer")
    hint = browser.wait_text("classes-role-hint", "needs the operator role")
    assert "you are signed in as viewer" in hint
    browser.xpath("//table[@id='classes-table-grid']//td")
    assert browser.absent("class-form")
    assert not browser.driver.find_elements(By.XPATH, "//button[text()='Delete']")

    browser.click("//a[@href='/jobs']")
    browser.wait_text("jobs-role-hint", "Starting, stopping and restarting jobs")
    assert browser.absent("job-start-form")

    browser.click("//a[@href='/live']")
    browser.wait_text("tune-role-hint", "Tuning a running job needs the operator role")
    assert browser.absent("tune-form")
    assert browser.absent("nav-users") and not browser.driver.find_elements(
        By.XPATH, "//a[@href='/users']"
    )
    browser.assert_console_clean()


def test_an_operator_demoted_meanwhile_gets_the_apis_403(browser: Browser, product: Product):
    olga = unique("olga")
    user_id = add_user(product, olga, "operator")
    browser.login(olga)
    browser.signed_in_as(olga, "operator")
    browser.element("class-form")
    with product.api() as admin:
        admin.patch(f"/users/{user_id}", json={"role": "viewer"}).raise_for_status()

    name = unique("late")
    browser.fill("class-name", name)
    browser.fill("class-priority", "2")
    browser.fill("class-delay_target_s", "2")
    browser.click("//form[@id='class-form']//button[@type='submit']")
    browser.wait_text("class-form-alert", "role='viewer' may not do this: it needs operator")
    assert name not in class_names(product)
    browser.assert_console_clean()


def test_logout_returns_to_login_and_revokes_the_session(browser: Browser):
    browser.login(OPERATOR, path="/jobs")
    browser.wait_path("/jobs")
    browser.signed_in_as(OPERATOR, "operator")
    browser.click("//button[@id='logout-button']")
    browser.wait_login_page()
    assert browser.driver.get_cookie("headroom_session") is None
    browser.open("/jobs")
    browser.wait_path("/login?next=%2Fjobs")
    browser.assert_console_clean()


def test_a_deactivated_account_is_sent_back_to_login(browser: Browser, product: Product):
    tim = unique("tim")
    user_id = add_user(product, tim, "operator")
    browser.login(tim)
    browser.signed_in_as(tim, "operator")
    with product.api() as admin:
        admin.patch(f"/users/{user_id}", json={"active": False}).raise_for_status()
    # The session cookie still holds the token, so the page is served; its first call to
    # the API (the jobs table, or the navbar's check of who is signed in) gets 401.
    browser.open("/jobs")
    browser.wait_login_page()
    assert browser.driver.get_cookie("headroom_session") is None
    browser.assert_console_clean()


def test_jobs_start_with_progress_log_of_a_failure_and_restart(browser: Browser, product: Product):
    add_class(product, unique("jobs"))
    with product.api(OPERATOR) as api:
        failing = api.post("/jobs", json={}).json()
    mark_failed(
        product.settings,
        failing["id"],
        "the job process exited with code 1",
        ["INFO starting Spark", "ERROR py4j: the driver died", "Traceback: OutOfMemoryError"],
    )

    browser.login(OPERATOR, path="/jobs")
    browser.wait_path("/jobs")
    browser.wait_text(f"job-failure-{failing['id']}", "the job process exited with code 1")

    # Start a job: no worker runs here, so it waits, queued, at step 1 of 3.
    browser.click("//form[@id='job-start-form']//button[@type='submit']")
    alert = browser.wait_text("job-start-alert", "Started job")
    started_id = int(alert.split("Started job ")[1].split(" ")[0])
    browser.wait_text(f"job-row-{started_id}", "1/3 queued for a worker")
    browser.element(f"job-progress-{started_id}")

    # The log of the failed job: the reason and its last lines.
    browser.click(f"//tr[@id='job-row-{failing['id']}']//button[text()='Log']")
    browser.wait_text("job-log-failure", "Failed: the job process exited with code 1")
    assert "Traceback: OutOfMemoryError" in browser.wait_text("job-log-lines", "driver died")
    browser.click("//div[@id='job-log-modal']//button[contains(@class, 'btn-close')]")
    browser.wait(lambda d: not d.find_elements(By.ID, "job-log-lines"), "the log stays open")

    browser.click(f"//tr[@id='job-row-{failing['id']}']//button[text()='Restart']")
    alert = browser.wait_text("jobs-alert", f"Restarted job {failing['id']} as job")
    new_id = int(alert.split(" as job ")[1].split(" ")[0])
    browser.wait_text(f"job-row-{new_id}", f"restart of #{failing['id']}")
    with product.api() as api:
        assert api.get(f"/jobs/{new_id}").json()["restart_of"] == failing["id"]
    browser.assert_console_clean()


def test_jobs_start_a_stored_scenario(browser: Browser, product: Product):
    name = unique("scenario")
    demo = (ROOT / "scenarios" / "demo.yaml").read_text().replace("name: demo", f"name: {name}")
    with product.api(OPERATOR) as api:
        scenario = api.post("/scenarios", json={"yaml": demo}).json()

    browser.login(OPERATOR, path="/jobs")
    browser.wait_path("/jobs")
    # Generated streams by default: the class choice and the rate apply.
    browser.wait(lambda d: d.find_element(By.ID, "job-classes-section").is_displayed(), "classes")
    option = f"scenario:{scenario['id']}"
    browser.wait(
        lambda d: d.find_elements(By.CSS_SELECTOR, f"#job-workload option[value='{option}']"),
        "the stored scenario is not offered",
    )
    Select(browser.element("job-workload")).select_by_value(option)
    browser.wait_text("job-workload-hint", f"Runs scenario {name!r}")
    browser.wait_text("job-classes-note", f"The classes of scenario {name!r} run")
    browser.wait(
        lambda d: not d.find_element(By.ID, "job-classes-section").is_displayed(),
        "the class choice is still shown for a scenario",
    )
    assert not browser.element("job-rate_per_s").is_enabled()

    browser.click("//form[@id='job-start-form']//button[@type='submit']")
    alert = browser.wait_text("job-start-alert", "Started job")
    started_id = int(alert.split("Started job ")[1].split(" ")[0])
    browser.wait_text(f"job-row-{started_id}", f"scenario {name} (#{scenario['id']})")
    with product.api() as api:
        launch = api.get(f"/jobs/{started_id}").json()["launch"]
    assert launch["scenario_id"] == scenario["id"] and launch["scenario_name"] == name
    browser.assert_console_clean()


def test_admin_creates_a_user_and_changes_a_role(browser: Browser, product: Product):
    browser.login(ADMIN)
    browser.signed_in_as(ADMIN, "admin")
    browser.click("//a[@href='/users']")
    browser.wait_text("users-table", OPERATOR)

    uma = unique("uma")
    browser.fill("user-username", uma)
    browser.fill("user-password", "short")
    browser.click("//form[@id='user-form']//button[@type='submit']")
    browser.wait_text("user-password-feedback", "at least 8 characters")

    browser.fill("user-password", "long enough password")
    browser.click("//form[@id='user-form']//button[@type='submit']")
    browser.wait_text("user-form-alert", f"Created viewer {uma}")
    row = browser.xpath(f"//tr[td[text()='{uma}']]")
    user_id = attr(row, "id").removeprefix("user-row-")
    browser.click(f"//tr[@id='user-row-{user_id}']//button[contains(., 'Change role')]")
    browser.click(f"//tr[@id='user-row-{user_id}']//*[text()='Make operator']")
    browser.wait_text("users-alert", f"{uma} is now operator")
    with httpx.Client(base_url=product.settings.public_api_url) as client:
        login = client.post(
            "/api/v1/auth/login", json={"username": uma, "password": "long enough password"}
        )
    assert login.json()["role"] == "operator"
    browser.assert_console_clean()

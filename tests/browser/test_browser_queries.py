"""A class's continuous queries in a real browser against the real API: an operator builds
a query in the form, sees the API refuse a join on a column the projection dropped (next
to the join column and under the spec), then an unknown operator kind typed into the
spec, and saves a good spec; a viewer sees the query but no editor.

Ends, like every browser test, by asserting that the console logged no error.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import Select

from frontend.query_editor import KIND_TYPE, dom_id, feedback_id, field_id
from tests.browser.harness import OPERATOR, VIEWER, Browser, Product, attr

pytestmark = pytest.mark.browser

_names = itertools.count(1)
GOOD_SPEC = (
    "name: big-trades\n"
    "source: trades\n"
    "operators:\n"
    "- kind: filter\n"
    "  predicate: value > 0.9\n"
    "- kind: window_aggregate\n"
    "  window: {type: tumbling, size_s: 5}\n"
)


# Dash renders a dict id as its JSON; By.ID cannot take that text, XPath can.
def by_dict_id(browser: Browser, component_id: dict[str, Any]) -> WebElement:
    return browser.xpath(f"//*[@id='{dom_id(component_id)}']")


def kind_select(browser: Browser, row: int) -> Select:
    return Select(by_dict_id(browser, {"type": KIND_TYPE, "index": row}))


def fill_field(browser: Browser, row: int, key: str, value: str) -> None:
    field = by_dict_id(browser, field_id(row, key))
    field.clear()
    field.send_keys(value)


def wait_feedback(browser: Browser, row: int, key: str, text: str) -> str:
    """Wait until the message next to a row's control shows ``text``; returns it."""
    browser.wait(
        lambda _d: text in by_dict_id(browser, feedback_id(row, key)).text,
        f"operator {row}'s {key} never showed {text!r}",
    )
    return str(by_dict_id(browser, feedback_id(row, key)).text)


def spec_text(browser: Browser) -> str:
    return str(browser.element("query-spec").get_attribute("value"))


def wait_spec(browser: Browser, text: str) -> None:
    browser.wait(lambda _d: text in spec_text(browser), f"the spec never showed {text!r}")


def query_names(product: Product, class_id: int) -> set[str]:
    with product.api() as api:
        return {q["name"] for q in api.get(f"/classes/{class_id}/queries").json()}


def test_an_operator_builds_a_query_sees_the_apis_refusals_and_saves_it(
    browser: Browser, product: Product
):
    name = f"trades{next(_names)}"
    with product.api() as api:
        created = api.post("/classes", json={"name": name, "priority": 3, "delay_target_s": 2})
        created.raise_for_status()
        class_id = int(created.json()["id"])

    browser.login(OPERATOR)
    browser.signed_in_as(OPERATOR, "operator")
    browser.wait_text("queries-class", name)
    Select(browser.element("queries-class")).select_by_visible_text(name)
    browser.wait_text("queries-table", "No continuous queries in this class yet")

    # The form: a projection that keeps only value, then a join on key.
    browser.fill("query-name", "joined")
    browser.fill("query-source", "trades")
    kind_select(browser, 0).select_by_value("project")
    fill_field(browser, 0, "columns", "value")
    browser.click("//button[@id='query-add-op']")
    kind_select(browser, 1).select_by_value("window_join")
    fill_field(browser, 1, "right", "clicks")
    fill_field(browser, 1, "window.size_s", "2")
    fill_field(browser, 1, "on_column", "key")
    fill_field(browser, 1, "sim.selectivity", "1")
    wait_spec(browser, "on_column: key")
    for text in ("name: joined", "columns: [value]", "kind: window_join", "size_s: 2"):
        assert text in spec_text(browser)

    browser.click("//button[@id='query-save']")
    message = wait_feedback(browser, 1, "on_column", "join column 'key'")
    assert message.startswith("operators[1].on_column:")
    assert "is-invalid" in str(by_dict_id(browser, field_id(1, "on_column")).get_attribute("class"))
    assert "operators[1].on_column" in browser.wait_text("query-spec-feedback", "join column")
    assert "is-invalid" in attr(browser.element("query-spec"), "class")
    assert query_names(product, class_id) == set()

    # The spec: an operator kind the format does not have.
    browser.fill("query-spec", "name: odd\nsource: trades\noperators: [{kind: explode}]\n")
    browser.click("//button[@id='query-save']")
    wait_feedback(browser, 0, "kind", "'explode' is not one of")
    assert kind_select(browser, 0).first_selected_option.text == "explode (unknown kind)"
    assert query_names(product, class_id) == set()

    # A good spec, into the form and saved.
    browser.fill("query-spec", GOOD_SPEC)
    browser.click("//button[@id='query-apply']")
    browser.wait(
        lambda _d: (
            kind_select(browser, 1).first_selected_option.get_attribute("value")
            == "window_aggregate"
        ),
        "the form never showed the spec's window aggregate",
    )
    assert browser.element("query-name").get_attribute("value") == "big-trades"
    browser.click("//button[@id='query-save']")
    browser.wait_text("query-editor-alert", "Created query big-trades")
    browser.wait_text("query-editor-title", "Editing query big-trades")
    row = browser.wait_text("queries-table", "big-trades")
    assert "filter → window_aggregate" in row
    assert query_names(product, class_id) == {"big-trades"}
    browser.assert_console_clean()

    # A viewer sees the query and its spec, and no editor.
    browser.open("/assets/bootstrap.min.css")
    browser.driver.delete_all_cookies()
    browser.login(VIEWER)
    browser.signed_in_as(VIEWER, "viewer")
    browser.wait_text("queries-role-hint", "needs the operator role")
    browser.wait_text("queries-class", name)
    Select(browser.element("queries-class")).select_by_visible_text(name)
    browser.wait_text("queries-table", "big-trades")
    assert browser.absent("query-editor")
    assert not browser.driver.find_elements("xpath", "//table[@id='queries-table-grid']//button")
    browser.assert_console_clean()

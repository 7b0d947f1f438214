"""Declared streams in a real browser against the real API: an operator opens the Streams
page from the navigation, declares a stream with two columns and an event-time column,
sees it listed, sees the API refuse an event time that names a double column (its words,
under the event-time field), and deletes the first stream.

Ends, like every browser test, by asserting that the console logged no error.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from tests.browser.harness import OPERATOR, Browser, Product, attr

pytestmark = pytest.mark.browser

_names = itertools.count(1)
COLUMNS: list[dict[str, Any]] = [
    {"name": "amount", "type": "double", "generator": {"kind": "normal", "mean": 80, "sd": 30}},
    {"name": "ts", "type": "timestamp", "generator": {"kind": "arrival", "lag_max_s": 2}},
]


def streams(product: Product) -> dict[str, dict[str, Any]]:
    with product.api() as api:
        return {s["name"]: s for s in api.get("/streams").json()}


def declare(browser: Browser, name: str, event_time: str) -> None:
    """Submit the form with ``name`` and ``event_time`` (the columns stay as filled in:
    the form keeps its values after a submit)."""
    browser.fill("stream-name", name)
    browser.fill("stream-event_time", event_time)
    browser.click("//button[@id='stream-submit']")


def test_an_operator_declares_a_stream_sees_a_refusal_and_deletes_it(
    browser: Browser, product: Product
):
    good, bad = f"trades{next(_names)}", f"quotes{next(_names)}"
    browser.login(OPERATOR)
    browser.signed_in_as(OPERATOR, "operator")
    browser.click("//a[@href='/streams']")
    browser.wait_path("/streams")
    browser.fill("stream-columns", json.dumps(COLUMNS))

    declare(browser, good, "ts")
    browser.wait_text("stream-form-alert", f"Declared stream {good} (2 columns)")
    stream_id = streams(product)[good]["id"]
    row = browser.wait_text(f"stream-row-{stream_id}", "amount:double, ts:timestamp")
    assert good in row and "ts" in row

    with product.api() as api:  # what the API itself says about this declaration
        refused = api.post(
            "/streams", json={"name": bad, "columns": COLUMNS, "event_time": "amount"}
        )
    assert refused.status_code == 422
    (api_message,) = [item["msg"] for item in refused.json()["detail"]]
    rule = f"event_time='amount' is invalid: must name a timestamp column of stream '{bad}'"
    assert rule in api_message

    declare(browser, bad, "amount")
    assert browser.wait_text("stream-event_time-feedback", rule) == rule
    assert "is-invalid" in attr(browser.element("stream-event_time"), "class")
    assert "is-invalid" not in attr(browser.element("stream-name"), "class")
    assert bad not in streams(product)

    browser.click(f"//tr[@id='stream-row-{stream_id}']//button[text()='Delete']")
    browser.wait_text("streams-alert", f"Deleted stream #{stream_id}")
    browser.wait(
        lambda _d: browser.absent(f"stream-row-{stream_id}"),
        f"stream #{stream_id} is still listed",
    )
    assert good not in streams(product)
    browser.assert_console_clean()

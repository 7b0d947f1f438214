"""Item 8: the dashboard's session cookie carries no API token, is Secure under TLS, a
logout deletes the server-side session, and ``headroom up``'s dashboard command serves
with a production WSGI server, not Werkzeug's development server.

The tests sign in over HTTP through the real login page callback of the real dashboard
process the browser harness starts (``tests/browser/harness.start_product``: the same
API, CLI-made admin and dashboard command as ``headroom up``), and read the server-side
session store under its data dir.
"""

from __future__ import annotations

import base64
import json
import zlib
from collections.abc import Iterator

import httpx
import pytest

from backend.stack import Stack
from frontend.app import SESSION_COOKIE_NAME
from frontend.session import SESSION_KEY
from frontend.session_store import SessionStore
from tests.browser.harness import (
    ADMIN,
    PASSWORD,
    Product,
    free_port,
    start_product,
)


@pytest.fixture(scope="module")
def product(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Product]:
    running = start_product(tmp_path_factory.mktemp("dashboard-session") / "data")
    yield running
    running.stop()


def _store(product: Product) -> SessionStore:
    """The dashboard process's server-side session store (plain HTTP, no TLS setting)."""
    return SessionStore.under(product.settings.data_dir, max_age_s=product.settings.token_ttl_s)


def _sign_in(product: Product) -> tuple[httpx.Client, httpx.Response]:
    """POST the login form's callback as the browser does; the client (it keeps the
    cookie) and the raw response."""
    return _sign_in_with(httpx.Client(base_url=product.dashboard_url, timeout=10))


def _sign_in_with(client: httpx.Client) -> tuple[httpx.Client, httpx.Response]:
    client.get("/login")
    dependencies = json.loads(client.get("/_dash-dependencies").text)
    output = next(d["output"] for d in dependencies if "login-error.children" in d["output"])
    dep = next(d for d in dependencies if d["output"] == output)
    values = {
        "login-form.n_submit": 1,
        "login-username.value": ADMIN,
        "login-password.value": PASSWORD,
    }
    payload = {
        "output": output,
        "outputs": [
            {"id": part.rsplit(".", 1)[0], "property": part.rsplit(".", 1)[1]}
            for part in output.strip(".").split("...")
        ],
        "inputs": [{**i, "value": values.get(f"{i['id']}.{i['property']}")} for i in dep["inputs"]],
        "state": [{**i, "value": values.get(f"{i['id']}.{i['property']}")} for i in dep["state"]],
        "changedPropIds": ["login-form.n_submit"],
    }
    response = client.post("/_dash-update-component", json=payload)
    assert response.status_code == 200, response.text[:300]
    return client, response


def _cookie_payload(set_cookie: str) -> bytes:
    """The decoded payload of Flask's session cookie (itsdangerous: base64 of JSON,
    zlib-compressed when it starts with a dot; signed, not encrypted)."""
    value = set_cookie.split(";", 1)[0].split("=", 1)[1]
    compressed = value.startswith(".")
    data = value.lstrip(".").split(".")[0]
    raw = base64.urlsafe_b64decode(data + "=" * (-len(data) % 4))
    return zlib.decompress(raw) if compressed else raw


def test_the_cookie_holds_no_token_only_a_session_id(product):
    client, response = _sign_in(product)
    client.close()
    cookie = response.headers["Set-Cookie"]
    payload = json.loads(_cookie_payload(cookie))
    assert list(payload) == [SESSION_KEY]  # nothing but the opaque id
    record = _store(product).load(payload[SESSION_KEY])
    assert record is not None and record["username"] == ADMIN
    token = record["token"]
    assert token not in cookie and token.encode() not in _cookie_payload(cookie)
    assert "Secure" not in cookie  # plain HTTP: a Secure cookie would never come back
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie
    store = _store(product).directory
    assert {oct(f.stat().st_mode & 0o777) for f in store.iterdir()} == {"0o600"}
    assert oct(store.stat().st_mode & 0o777) == "0o700"


def test_the_cookie_is_secure_when_served_over_tls(product, tmp_path):
    """A dashboard process started as ``headroom up`` starts it, with the TLS setting."""
    settings = product.settings.model_copy(
        update={"data_dir": tmp_path, "dashboard_port": free_port()}
    )
    stack = Stack.from_settings(settings, {"HEADROOM_DASHBOARD_SECURE_COOKIES": "1"})
    stack.env["HEADROOM_API_URL"] = product.settings.public_api_url
    stack.start_dashboard()
    try:
        stack.wait_healthy()
        with httpx.Client(base_url=stack.dashboard_url, timeout=10) as client:
            _, response = _sign_in_with(client)
    finally:
        stack.stop()
    cookie = response.headers["Set-Cookie"]
    assert cookie.startswith(f"{SESSION_COOKIE_NAME}=")
    assert "Secure" in cookie and "HttpOnly" in cookie and "SameSite=Lax" in cookie


def test_logout_deletes_the_server_side_session(product):
    client, response = _sign_in(product)
    session_id = json.loads(_cookie_payload(response.headers["Set-Cookie"]))[SESSION_KEY]
    store = _store(product)
    token = store.load(session_id)["token"]  # type: ignore[index]
    body = {
        "output": "logout-button.disabled",
        "outputs": {"id": "logout-button", "property": "disabled"},
        "inputs": [{"id": "logout-button", "property": "n_clicks", "value": 1}],
        "state": [],
        "changedPropIds": ["logout-button.n_clicks"],
    }
    assert client.post("/_dash-update-component", json=body).status_code == 200
    client.close()
    assert store.load(session_id) is None
    assert not store._path(session_id).exists()
    me = httpx.get(
        f"{product.settings.public_api_url}/api/v1/auth/me",
        headers={"Authorization": f"Bearer {token}"},
    )
    assert me.status_code == 401  # the API token was revoked as well


def test_the_dashboard_runs_on_a_production_wsgi_server(product):
    """``Stack.start_dashboard`` (what ``headroom up`` runs) serves with waitress."""
    response = httpx.get(f"{product.dashboard_url}/login", timeout=10)
    assert response.status_code == 200
    server = response.headers.get("server", "")
    assert server == "waitress" and "Werkzeug" not in server
    dashboard = product.stack.service("dashboard")
    log = dashboard.log_path.read_text(errors="replace")
    assert "development server" not in log

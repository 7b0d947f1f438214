"""Sign-in: the role rules, the login redirect, the secret key, the login/logout actions
and the client's token handling (against the real API)."""

from __future__ import annotations

import stat
import threading

import pytest

from backend.settings import Settings
from frontend.actions.auth import check_me, login, logout
from frontend.api import ApiClient, ApiError
from frontend.auth import (
    can_change,
    is_admin,
    login_href,
    login_redirect,
    needs_role_hint,
    role_allows,
    safe_next,
)
from frontend.secret_key import load_or_create_secret_key, secret_key_path
from tests.frontend.frontend_real_api import PASSWORD


@pytest.mark.parametrize(
    ("role", "change", "admin"),
    [("viewer", False, False), ("operator", True, False), ("admin", True, True)],
)
def test_roles_are_ordered(role, change, admin):
    assert can_change(role) is change
    assert is_admin(role) is admin
    assert role_allows(role, "viewer")


@pytest.mark.parametrize("role", [None, "", "root", "ADMIN"])
def test_an_unknown_role_allows_nothing(role):
    assert not role_allows(role, "viewer") and not can_change(role)


def test_role_hint_names_the_role_needed_and_held():
    assert needs_role_hint("operator", "viewer", "Creating classes") == (
        "Creating classes needs the operator role or higher; you are signed in as viewer."
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("/jobs", "/jobs"),
        ("/live?job_id=3", "/live?job_id=3"),
        ("//evil.example/x", "/"),
        ("https://evil.example/", "/"),
        ("/\\evil.example", "/"),
        ("jobs", "/"),
        ("/login", "/"),
        ("/login?next=/jobs", "/"),
        (None, "/"),
        (3, "/"),
        ("/jobs\r\nSet-Cookie: x", "/"),
    ],
)
def test_safe_next_only_allows_local_paths(value, expected):
    assert safe_next(value) == expected


def test_login_href_remembers_the_page():
    assert login_href(None) == "/login"
    assert login_href("/") == "/login"
    assert login_href("/live?job_id=3") == "/login?next=%2Flive%3Fjob_id%3D3"
    assert login_href("//evil.example") == "/login"


@pytest.mark.parametrize(
    ("method", "path", "query", "signed_in", "expected"),
    [
        ("GET", "/jobs", "", False, "/login?next=%2Fjobs"),
        ("GET", "/", "", False, "/login"),
        ("GET", "/live", "job_id=2", False, "/login?next=%2Flive%3Fjob_id%3D2"),
        ("HEAD", "/jobs", "", False, "/login?next=%2Fjobs"),
        ("GET", "/jobs", "", True, None),
        ("GET", "/login", "next=/jobs", False, None),
        ("GET", "/_dash-layout", "", False, None),
        ("GET", "/_dash-component-suites/dash/x.js", "", False, None),
        ("GET", "/assets/bootstrap.min.css", "", False, None),
        ("GET", "/_favicon.ico", "", False, None),
        ("POST", "/_dash-update-component", "", False, None),
    ],
)
def test_login_redirect(method, path, query, signed_in, expected):
    assert login_redirect(method, path, query, signed_in) == expected


# -- the secret key ------------------------------------------------------------------------


def test_a_configured_secret_key_is_used_as_is(tmp_path):
    settings = Settings(data_dir=tmp_path, secret_key="from-the-environment")
    assert load_or_create_secret_key(settings) == "from-the-environment"
    assert not secret_key_path(settings).exists()


def test_an_empty_secret_key_is_generated_once_and_kept_private(tmp_path):
    settings = Settings(data_dir=tmp_path / "new", secret_key="")
    key = load_or_create_secret_key(settings)
    path = secret_key_path(settings)
    assert len(key) == 64
    assert path.read_text().strip() == key
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_or_create_secret_key(settings) == key  # a restart keeps sessions valid
    assert list(path.parent.iterdir()) == [path]  # no temporary file left behind


def test_a_secret_file_readable_by_others_is_narrowed(tmp_path):
    settings = Settings(data_dir=tmp_path, secret_key="")
    path = secret_key_path(settings)
    path.write_text("kept-key\n")
    path.chmod(0o644)
    assert load_or_create_secret_key(settings) == "kept-key"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_an_empty_secret_file_is_replaced(tmp_path):
    settings = Settings(data_dir=tmp_path, secret_key="")
    secret_key_path(settings).touch()
    key = load_or_create_secret_key(settings)
    assert key and secret_key_path(settings).read_text().strip() == key


def test_processes_starting_together_agree_on_one_key(tmp_path):
    settings = Settings(data_dir=tmp_path, secret_key="")
    keys: list[str] = []
    barrier = threading.Barrier(8)

    def start() -> None:
        barrier.wait()
        keys.append(load_or_create_secret_key(settings))

    threads = [threading.Thread(target=start) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(keys)) == 1 and len(keys) == 8


# -- login, logout and the token -----------------------------------------------------------


def test_login_returns_the_token_and_role(anonymous_api):
    outcome = login(anonymous_api, " ops ", PASSWORD)
    assert outcome.error is None and outcome.feedback_by_field == {}
    assert outcome.login is not None
    assert outcome.login["username"] == "ops" and outcome.login["role"] == "operator"
    assert not anonymous_api.unauthorized  # a failed login is not a lost session


def test_wrong_password_shows_the_apis_message_and_is_not_a_lost_session(anonymous_api, real_api):
    outcome = login(anonymous_api, "ops", "wrong")
    assert outcome.login is None
    assert outcome.error == "username or password is wrong"
    assert not anonymous_api.unauthorized


def test_a_throttled_login_shows_the_apis_sentence(anonymous_api, real_api):
    # The API blocks a username after 10 failed logins (for any client), whether or not
    # it exists; the 11th answer is a 429 saying how long to wait.
    for _ in range(10):
        assert login(anonymous_api, "mallory", "guess").error == "username or password is wrong"
    outcome = login(anonymous_api, "mallory", "guess")
    assert outcome.login is None and outcome.error is not None
    assert outcome.error.startswith("too many failed logins for this username")
    assert "try again in" in outcome.error and "HTTP 429" not in outcome.error
    assert not anonymous_api.unauthorized


def test_login_requires_both_fields_before_asking(anonymous_api, real_api):
    outcome = login(anonymous_api, "  ", None)
    assert set(outcome.feedback_by_field) == {"username", "password"}
    assert real_api.requests_to("POST", "/auth/login") == []


def test_login_with_the_api_down(dead_url):
    with ApiClient(dead_url, timeout_s=0.5) as api:
        outcome = login(api, "ops", PASSWORD)
    assert outcome.error is not None and "Could not sign in: Cannot reach the API" in outcome.error


def test_the_token_is_sent_and_never_shown(real_api):
    token = real_api.token_for("viewer")
    with ApiClient(real_api.url, token=token) as api:
        assert api.me()["role"] == "viewer"
        assert token not in repr(api)
    assert real_api.requests[-1].headers["authorization"] == f"Bearer {token}"


def test_a_401_marks_the_client_unauthorized(real_api):
    with ApiClient(real_api.url, token="revoked") as api:
        with pytest.raises(ApiError) as caught:
            api.list_classes()
        assert caught.value.status_code == 401
        assert api.unauthorized
        assert check_me(api) is None


def test_logout_revokes_the_token(real_api):
    token = real_api.token_for("ops")
    with ApiClient(real_api.url, token=token) as api:
        assert logout(api) is None
        assert not real_api.token_valid(token)
        assert logout(api) is None  # already revoked: still signed out


def test_logout_with_the_api_down_says_so(dead_url):
    with ApiClient(dead_url, token="t", timeout_s=0.5) as api:
        message = logout(api)
    assert message is not None and "could not revoke" in message


def test_check_me_sees_a_changed_role(real_api):
    token = real_api.token_for("ops")
    real_api.update_user("ops", role="viewer")
    with ApiClient(real_api.url, token=token) as api:
        me = check_me(api)
    assert me is not None and me["role"] == "viewer"

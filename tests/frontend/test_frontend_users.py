"""frontend.actions.users against the real API (what the Users page callbacks do)."""

from __future__ import annotations

from frontend.actions.users import (
    ACTIVE_BUTTON_TYPE,
    ROLE_ITEM_TYPE,
    change_role,
    create_user,
    load_users_table,
    set_active,
)
from tests.frontend.frontend_tree import find, of_type, prop, text


def test_table_lists_users_with_controls_except_on_my_own_row(admin_api, real_api):
    table, alert = load_users_table(admin_api, me="admin")
    assert alert is None
    admin_row = find(table, "user-row-1")
    assert "you" in text(admin_row) and not of_type(admin_row, "Button")
    ops_row = find(table, "user-row-2")
    assert "operator" in text(ops_row) and "active" in text(ops_row)
    items = [prop(item, "id") for item in of_type(ops_row, "DropdownMenuItem")]
    assert items == [
        {"type": ROLE_ITEM_TYPE, "index": 2, "role": "viewer"},
        {"type": ROLE_ITEM_TYPE, "index": 2, "role": "admin"},
    ]
    assert [prop(b, "id") for b in of_type(ops_row, "Button")] == [
        {"type": ACTIVE_BUTTON_TYPE, "index": 2, "active": 0}
    ]


def test_create_user(admin_api, real_api):
    outcome = create_user(
        admin_api, {"username": " carol ", "password": "long enough", "role": "operator"}
    )
    assert outcome.created is not None and outcome.feedback_by_field == {}
    assert "Created operator carol" in text(outcome.alert)
    assert "long enough" not in text(outcome.alert)
    assert real_api.users["carol"]["role"] == "operator"


def test_create_user_field_errors(admin_api, real_api):
    outcome = create_user(admin_api, {"username": "", "password": None, "role": "root"})
    assert set(outcome.feedback_by_field) == {"username", "password", "role"}
    assert real_api.requests_to("POST", "/users") == []

    short = create_user(admin_api, {"username": "dan", "password": "short", "role": "viewer"})
    assert "at least 8 characters" in short.feedback_by_field["password"]
    assert "short" not in short.feedback_by_field["password"]

    taken = create_user(admin_api, {"username": "ops", "password": "long enough", "role": "viewer"})
    assert taken.feedback_by_field == {
        "username": "username='ops' is taken: usernames must be unique regardless of case"
    }


def test_change_role_and_deactivate(admin_api, real_api):
    assert "ops is now viewer" in text(change_role(admin_api, 2, "viewer"))
    assert real_api.users["ops"]["role"] == "viewer"
    assert "not one of" in text(change_role(admin_api, 2, "root"))
    assert "deactivated" in text(set_active(admin_api, 2, False))
    assert real_api.users["ops"]["active"] is False
    assert "active again" in text(set_active(admin_api, 2, True))
    assert "404" in text(change_role(admin_api, 99, "viewer"))


def test_an_operator_gets_the_apis_403(api):
    _table, alert = load_users_table(api, me="ops")
    assert "needs admin or higher" in text(alert)
    assert "needs admin or higher" in text(change_role(api, 3, "admin"))

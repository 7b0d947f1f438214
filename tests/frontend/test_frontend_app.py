"""The whole Dash app through Flask's test client (no browser): sign-in, the session
cookie, page guards, role-dependent layouts, and callbacks reaching the API.

One app for the module: Dash keeps its page registry and ``dash.callback`` list in
module globals, so a process should build a single pages app. The API behind it is the
session's real API process (emptied once for this module: its tests share one set of data,
as the app's signed-in clients share one app).
"""

from __future__ import annotations

import json
import re

import dash
import pytest
import yaml

from backend.settings import Settings, get_settings
from frontend.app import NAV_LINKS, SESSION_COOKIE_NAME, create_app, resolve_api_url
from frontend.context import API_URL_KEY, AUTH_LOCATION_ID
from frontend.session import SESSION_KEY, store_of
from spark_runner.core.redistribution import DEFAULT_POLICY
from tests.frontend.frontend_real_api import PASSWORD

PAGES = {  # ids each page shows to an operator
    "/": [
        "classes-table",
        "class-form",
        "class-tau2",
        "class-tau2-feedback",
        "class-tau-rule",
        "class-manager",
        "class-manager_params-feedback",
        "class-edit-modal",
        "queries-class",
        "queries-table",
        "query-editor",
        "query-spec",
        "query-spec-feedback",
        "query-operators",
    ],
    "/jobs": [
        "jobs-table",
        "jobs-interval",
        "job-start-form",
        "job-workload",
        "job-workload-feedback",
        "job-classes-section",
        "job-class-ids",
        "job-source",
        "job-source-feedback",
        "job-sink",
        "job-sink-feedback",
        "job-log-modal",
    ],
    "/streams": [
        "streams-table",
        "stream-form",
        "stream-name",
        "stream-event_time",
        "stream-event_time-feedback",
        "stream-columns",
        "stream-columns-feedback",
    ],
    "/live": [
        "live-job",
        "live-interval",
        "live-chart",
        "live-rendered",
        "tune-panel",
        "tune-form",
        "tune-tau2",
        "tune-modal",
    ],
    "/history": [
        "history-run",
        "history-compare",
        "history-range",
        "history-download-button",
        "history-download",
    ],
    "/cluster": ["cluster-sections", "cluster-poll-tick", "cluster-poll-answered"],
    "/login": ["login-form", "login-username", "login-password", "login-next"],
    "/users": ["users-role-hint"],  # an operator is not an admin
}
ROUTER = ".._pages_content.children..._pages_store.data.."
CONTROL = "..jobs-alert.children...jobs-changed.data.."


@pytest.fixture(scope="module")
def served(api_process, tmp_path_factory):
    api_process.reset()
    api_process.add_class("fraud", 6.0, 1.5)
    job = api_process.add_job(["fraud"], status="running")
    api_process.add_sample(job["id"], "fraud", 1_763_700_000.0)
    settings = Settings(data_dir=tmp_path_factory.mktemp("dashboard"), secret_key="")
    app = create_app(api_process.url + "/", settings=settings)
    return app, api_process, job


@pytest.fixture(scope="module")
def dependencies(served):
    app, _, _ = served
    # The first request is anonymous: the validation layout must still be complete.
    response = app.server.test_client().get("/_dash-dependencies")
    assert response.status_code == 200
    return json.loads(response.data)


def dispatch(client, dependencies, output, values, changed, *, raw=False):
    """POST one callback the way the browser does; ``values`` maps "id.prop" → value."""
    dep = next(d for d in dependencies if d["output"] == output)

    def specs(items):
        out = []
        for item in items:
            if isinstance(item["id"], str) and item["id"].startswith("{"):
                # A pattern-matching input (ALL): ``values`` holds its matching components.
                out.append(values.get(f"{item['id']}.{item['property']}", []))
            else:
                out.append({**item, "value": values.get(f"{item['id']}.{item['property']}")})
        return out

    outputs = [
        {"id": part.rsplit(".", 1)[0], "property": part.rsplit(".", 1)[1]}
        for part in output.strip(".").split("...")
    ]
    payload = {
        "output": output,
        "outputs": outputs if output.startswith("..") else outputs[0],
        "inputs": specs(dep["inputs"]),
        "state": specs(dep["state"]),
        "changedPropIds": changed,
    }
    response = client.post(
        "/_dash-update-component", json=payload, headers={"Referer": "http://localhost/jobs"}
    )
    if raw:
        return response
    assert response.status_code == 200, response.data[:500]
    return json.loads(response.data)


def login_output(dependencies):
    return next(d["output"] for d in dependencies if "login-error.children" in d["output"])


def sign_in(app, dependencies, username, password=PASSWORD):
    """A test client signed in through the login form's callback."""
    client = app.server.test_client()
    client.get("/login")
    body = dispatch(
        client,
        dependencies,
        login_output(dependencies),
        {
            "login-form.n_submit": 1,
            "login-username.value": username,
            "login-password.value": password,
            "login-next.data": "/jobs",
        },
        ["login-form.n_submit"],
    )
    return client, body


@pytest.fixture(scope="module")
def ops(served, dependencies):
    app, _, _ = served
    client, _ = sign_in(app, dependencies, "ops")
    return client


def session_record(app, client):
    """The server-side record of ``client``'s session (the cookie holds only its id)."""
    with client.session_transaction() as flask_session:
        session_id = flask_session[SESSION_KEY]
    record = store_of(app.server).load(session_id)
    assert record is not None
    return record


def render(client, dependencies, path, search=""):
    body = dispatch(
        client,
        dependencies,
        ROUTER,
        {"_pages_location.pathname": path, "_pages_location.search": search},
        ["_pages_location.pathname"],
    )
    return json.dumps(body["response"]["_pages_content"]["children"]), body["response"]


def test_the_api_url_is_stored_on_the_app(served):
    app, real, _ = served
    assert app.server.config[API_URL_KEY] == real.url  # trailing slash removed
    assert resolve_api_url(None) == get_settings().public_api_url.rstrip("/")


def test_pages_redirect_to_login_when_signed_out(served):
    app, _, _ = served
    client = app.server.test_client()
    response = client.get("/jobs")
    assert response.status_code == 302
    assert response.headers["Location"] == "/login?next=%2Fjobs"
    assert client.get("/live?job_id=3").headers["Location"] == "/login?next=%2Flive%3Fjob_id%3D3"
    assert client.get("/login").status_code == 200
    assert client.get("/_dash-layout").status_code == 200  # Dash's own plumbing is public


def test_signing_in_sets_an_httponly_lax_cookie_and_goes_on(served, dependencies):
    app, real, _ = served
    client, body = sign_in(app, dependencies, "ops")
    assert body["sideUpdate"] == {AUTH_LOCATION_ID: {"href": "/jobs"}}
    assert body["response"]["login-error"]["children"] is None
    token = session_record(app, client)["token"]
    assert real.token_valid(token)
    # The token is in no response the page's scripts can read.
    assert token not in json.dumps(body)
    assert token not in client.get("/_dash-layout").get_data(as_text=True)


def test_the_cookie_flags(served, dependencies):
    app, _, _ = served
    client = app.server.test_client()
    client.get("/login")
    response = dispatch(
        client,
        dependencies,
        login_output(dependencies),
        {
            "login-form.n_submit": 1,
            "login-username.value": "viewer",
            "login-password.value": PASSWORD,
        },
        ["login-form.n_submit"],
        raw=True,
    )
    cookie = response.headers["Set-Cookie"]
    assert cookie.startswith(f"{SESSION_COOKIE_NAME}=")
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie


def test_a_wrong_password_shows_the_error_and_clears_the_field(served, dependencies):
    app, _, _ = served
    client, body = sign_in(app, dependencies, "ops", "not the password")
    response = body["response"]
    assert "username or password is wrong" in json.dumps(response["login-error"])
    assert response["login-password"]["value"] == ""
    assert "sideUpdate" not in body
    assert client.get("/jobs").status_code == 302  # still signed out


def test_every_page_is_registered_and_served(served, ops):
    assert sorted(page["path"] for page in dash.page_registry.values()) == sorted(PAGES)
    for path in [*PAGES, "/live?job_id=1"]:
        response = ops.get(path)
        assert response.status_code == 200, path
        assert b"<title>headroom" in response.data


def test_classes_path_redirects_to_root(ops):
    response = ops.get("/classes")
    assert response.status_code in (301, 302, 308)
    assert response.headers["Location"].endswith("/")


def navbar(client):
    layout = json.loads(client.get("/_dash-layout").data)
    links, texts = {}, []

    def collect(node):
        if isinstance(node, dict):
            props = node.get("props", {})
            if node.get("type") == "NavLink":
                links[props["children"]] = props["href"]
            if props.get("id") in ("nav-user", "nav-role-badge"):
                texts.append(props.get("children"))
            for value in props.values():
                collect(value)
        elif isinstance(node, list):
            for item in node:
                collect(item)

    collect(layout)
    return links, texts, json.dumps(layout)


def test_navbar_shows_the_user_and_role(served, dependencies, ops):
    app, _, _ = served
    links, texts, layout = navbar(ops)
    assert links == dict(NAV_LINKS)
    assert texts == ["ops", "operator"]
    assert "_pages_content" in layout and '"id": "logout-button"' in layout

    admin, _ = sign_in(app, dependencies, "admin")
    assert navbar(admin)[0] == {**dict(NAV_LINKS), "Users": "/users"}

    anonymous_links, anonymous_texts, _ = navbar(app.server.test_client())
    assert anonymous_links == {} and anonymous_texts == [""]


@pytest.mark.parametrize("path", list(PAGES))
def test_every_page_layout_renders_through_the_router(dependencies, ops, path):
    rendered, response = render(ops, dependencies, path)
    for component_id in PAGES[path]:
        assert f'"id": "{component_id}"' in rendered, component_id
    assert response["_pages_store"]["data"]["title"].startswith("headroom")


def test_a_viewer_gets_hints_instead_of_change_controls(served, dependencies):
    app, _, _ = served
    viewer, _ = sign_in(app, dependencies, "viewer")
    classes, _ = render(viewer, dependencies, "/")
    assert '"id": "class-form"' not in classes and '"id": "classes-role-hint"' in classes
    assert "you are signed in as viewer" in classes
    assert '"id": "query-editor"' not in classes and '"id": "queries-role-hint"' in classes
    assert '"id": "queries-table"' in classes  # queries are for everyone
    jobs, _ = render(viewer, dependencies, "/jobs")
    assert '"id": "job-start-form"' not in jobs and '"id": "jobs-role-hint"' in jobs
    assert '"id": "job-log-modal"' in jobs  # logs are for everyone
    streams, _ = render(viewer, dependencies, "/streams")
    assert '"id": "stream-form"' not in streams and '"id": "streams-role-hint"' in streams
    assert '"id": "streams-table"' in streams  # streams are for everyone

    table = dispatch(
        viewer,
        dependencies,
        "..classes-table.children...classes-load-alert.children..",
        {"classes-created.data": 0, "classes-deleted.data": 0},
        ["classes-created.data"],
    )["response"]
    assert '"fraud"' in json.dumps(table) and "Delete" not in json.dumps(table)


def test_validation_layout_has_every_roles_components(served, dependencies):
    app, _, _ = served
    complete = json.dumps(app.validation_layout.to_plotly_json(), default=str)
    for ids in PAGES.values():
        for component_id in ids:
            if component_id != "users-role-hint":
                assert f"'{component_id}'" in complete or f'"{component_id}"' in complete


def test_live_page_takes_the_job_from_the_query_string(dependencies, ops):
    rendered, _ = render(ops, dependencies, "/live", "?job_id=7")
    assert '"id": "live-requested-job", "data": 7' in rendered


def test_callbacks_reach_the_api_with_the_users_token(served, dependencies, ops):
    _, real, job = served
    shell = dispatch(
        ops,
        dependencies,
        "..api-health.children...nav-role.children..",
        {"api-health-interval.n_intervals": 1},
        ["api-health-interval.n_intervals"],
    )["response"]
    assert "API ok" in json.dumps(shell)
    assert real.requests_to("GET", "/auth/me")[-1].headers["authorization"].startswith("Bearer ")

    classes = dispatch(
        ops,
        dependencies,
        "..classes-table.children...classes-load-alert.children..",
        {"classes-created.data": 0, "classes-deleted.data": 0},
        ["classes-created.data"],
    )["response"]
    assert '"fraud"' in json.dumps(classes["classes-table"])

    output = next(d["output"] for d in dependencies if "live-cursor.data" in d["output"])
    live = dispatch(
        ops,
        dependencies,
        output,
        {"live-job.value": job["id"], "live-interval.n_intervals": 1, "live-window.value": "60.0"},
        ["live-job.value"],
    )["response"]
    names = [trace["name"] for trace in live["live-chart"]["figure"]["data"]]
    assert names[:2] == ["fraud mean", "fraud max"]
    cursor = live["live-cursor"]["data"]
    assert cursor["job_id"] == job["id"] and cursor["newest_t"] == 1_763_700_000.0
    assert live["live-interval"]["disabled"] is False
    assert real.requests_to("GET", f"/jobs/{job['id']}/metrics")[-1].query == {"last_s": ["60.0"]}


def test_a_viewer_sees_the_live_configuration_but_no_tuning_form(served, dependencies):
    app, _, _ = served
    viewer, _ = sign_in(app, dependencies, "viewer")
    live, _ = render(viewer, dependencies, "/live")
    assert '"id": "tune-role-hint"' in live and '"id": "tune-form"' not in live
    assert '"id": "tune-versions"' in live and "Tuning a running job needs the operator" in live


def test_the_tuning_panel_reviews_then_applies_a_change(served, dependencies, ops):
    _, real, _ = served
    job = real.add_job(["fraud"], status="running")
    config = real.job_config(job["id"])
    output = next(d["output"] for d in dependencies if "tune-modal.is_open" in d["output"])
    values = {f"tune-{k}.value": v for k, v in config["config"]["classes"]["fraud"].items()}
    values.update(
        {
            "tune-manager_params.value": "",
            "tune-recommend_only.value": False,
            "tune-policy.value": DEFAULT_POLICY,
            "tune-redistribution_every.value": 10,
            "tune-class.value": "fraud",
            "live-config.data": config,
            "live-job.value": job["id"],
        }
    )
    review = dispatch(
        ops,
        dependencies,
        output,
        {**values, "tune-tau2.value": 0.7, "tune-review.n_clicks": 1},
        ["tune-review.n_clicks"],
    )["response"]
    assert review["tune-modal"]["is_open"] is True
    assert "0.8 → 0.7" in json.dumps(review["tune-modal-body"], ensure_ascii=False)
    plan = review["tune-plan"]["data"]
    assert plan == {"classes": {"fraud": {"tau2": 0.7}}}
    assert real.requests_to("PATCH", f"/jobs/{job['id']}/config") == []

    applied = dispatch(
        ops,
        dependencies,
        output,
        {**values, "tune-plan.data": plan, "tune-confirm.n_clicks": 1},
        ["tune-confirm.n_clicks"],
    )["response"]
    assert real.requests_to("PATCH", f"/jobs/{job['id']}/config")[-1].body == plan
    assert applied["tune-modal"]["is_open"] is False
    assert "pending until the job applies it" in json.dumps(applied["tune-alert"])
    assert applied["live-config"]["data"]["pending_versions"] == [0, 1]


def test_the_csv_download_comes_through_the_dashboard(served, dependencies, ops):
    _, real, job = served
    output = next(d["output"] for d in dependencies if "history-download.data" in d["output"])
    response = dispatch(
        ops,
        dependencies,
        output,
        {
            "history-download-button.n_clicks": 1,
            "history-run.value": job["id"],
            "history-spans.data": [[1_763_700_000.0, 1_763_700_000.0], None],
            "history-range.value": [0, 1],
        },
        ["history-download-button.n_clicks"],
    )["response"]
    download = response["history-download"]["data"]
    assert download["filename"] == f"job-{job['id']}-metrics.csv"
    assert download["content"].startswith("class_name,seq,t,")
    token = session_record(served[0], ops)["token"]
    assert token not in json.dumps(response)
    export = real.requests_to("GET", f"/jobs/{job['id']}/metrics/export")[-1]
    assert export.headers["authorization"] == f"Bearer {token}"


def test_submitting_the_class_form_marks_the_field_the_api_names(dependencies, ops):
    output = next(d["output"] for d in dependencies if "class-tau2.invalid" in d["output"])
    response = dispatch(
        ops,
        dependencies,
        output,
        {
            "class-form.n_submit": 1,
            "class-name.value": "clicks",
            "class-priority.value": 1,
            "class-delay_target_s.value": 3,
            "class-tau2.value": 0.3,
            "classes-created.data": 0,
        },
        ["class-form.n_submit"],
    )["response"]
    assert response["class-tau2"]["invalid"] is True
    assert response["class-name"]["invalid"] is False
    assert response["class-tau2-feedback"]["children"].startswith("tau2=0.3 is invalid")
    assert "classes-created" not in response  # nothing created: the table is not reloaded


def test_the_start_button_waits_for_the_class_choices(dependencies, ops):
    """A click before the classes arrive would be refused for want of a class: the
    button is disabled until they have."""
    page, _ = render(ops, dependencies, "/jobs")
    button = re.search(r'\{[^{}]*"id": "job-start-submit"[^{}]*\}', page)
    assert button is not None and '"disabled": true' in button.group(0)
    output = next(d["output"] for d in dependencies if "job-class-ids.options" in d["output"])
    loaded = dispatch(
        ops, dependencies, output, {"job-classes-reload.data": 0}, ["job-classes-reload.data"]
    )["response"]
    assert loaded["job-class-ids"]["options"]
    assert loaded["job-start-submit"]["disabled"] is False


def test_the_start_form_follows_the_workload_and_starts_a_scenario(served, dependencies, ops):
    _, real, _ = served
    scenario = real.add_scenario("app-nightly")
    output = next(d["output"] for d in dependencies if "job-scenarios.data" in d["output"])
    loaded = dispatch(
        ops,
        dependencies,
        output,
        {"job-classes-reload.data": 0, "job-workload.value": "generated"},
        ["job-classes-reload.data"],
    )["response"]
    chosen = f"scenario:{scenario['id']}"
    assert chosen in [o["value"] for o in loaded["job-workload"]["options"]]
    assert loaded["job-workload"]["value"] == "generated"

    output = next(d["output"] for d in dependencies if "job-classes-section.hidden" in d["output"])
    values = {"job-workload.value": chosen, "job-scenarios.data": loaded["job-scenarios"]["data"]}
    form = dispatch(ops, dependencies, output, values, ["job-workload.value"])["response"]
    assert form["job-classes-section"]["hidden"] is True
    assert form["job-classes-note"]["hidden"] is False
    assert form["job-rate_per_s"]["disabled"] is True
    assert "app-nightly" in form["job-workload-hint"]["children"]

    output = next(d["output"] for d in dependencies if "job-start-key.data" in d["output"])
    submit = {
        "job-start-form.n_submit": 1,
        "job-workload.value": chosen,
        "job-class-ids.value": [],
        "job-rate_per_s.value": 999,
        "job-manager.value": "own",
        "job-policy.value": "default",
        "job-recommend_only.value": False,
        "jobs-started.data": 0,
        "job-start-key.data": "app-scenario-1",
    }
    started = dispatch(ops, dependencies, output, submit, ["job-start-form.n_submit"])["response"]
    assert "Started job" in json.dumps(started["job-start-alert"])
    assert real.requests_to("POST", "/jobs")[-1].body == {
        "scenario_id": scenario["id"],
        "duration_s": None,
    }

    submit.update({"job-workload.value": "scenario:3000000000", "job-start-key.data": "app-2"})
    refused = dispatch(ops, dependencies, output, submit, ["job-start-form.n_submit"])["response"]
    assert refused["job-workload"]["invalid"] is True
    assert refused["job-workload-feedback"]["children"].startswith("scenario_id=3000000000")


def test_the_start_form_sends_the_source_and_marks_the_select_the_api_names(
    served, dependencies, ops
):
    _, real, _ = served
    output = next(d["output"] for d in dependencies if "job-start-key.data" in d["output"])
    submit = {
        "job-start-form.n_submit": 1,
        "job-workload.value": "generated",
        "job-class-ids.value": list(real.classes),
        "job-source.value": "redis",
        "job-sink.value": "parquet",
        "jobs-started.data": 0,
        "job-start-key.data": "app-source-1",
    }
    refused = dispatch(ops, dependencies, output, submit, ["job-start-form.n_submit"])["response"]
    assert refused["job-source"]["invalid"] is True and refused["job-sink"]["invalid"] is False
    assert "HEADROOM_STREAMS_REDIS_URL" in refused["job-source-feedback"]["children"]
    body = real.requests_to("POST", "/jobs")[-1].body
    assert (body["source"], body["sink"]) == ("redis", "parquet")


def click(client, dependencies, button_type, job_id):
    stops, restarts = next(d["inputs"] for d in dependencies if d["output"] == CONTROL)
    button_id = {"index": job_id, "type": button_type}
    pattern = stops if button_type == "job-stop" else restarts
    return dispatch(
        client,
        dependencies,
        CONTROL,
        {
            f"{pattern['id']}.n_clicks": [{"id": button_id, "property": "n_clicks", "value": 1}],
            "jobs-changed.data": 0,
        },
        # The browser names a pattern-matching id by its compact, key-sorted JSON.
        [json.dumps(button_id, separators=(",", ":"), sort_keys=True) + ".n_clicks"],
    )["response"]


def test_a_stop_button_click_stops_that_job_and_restart_starts_a_new_run(served, dependencies, ops):
    _, real, _ = served
    job = real.add_job(["fraud"], status="running")
    response = click(ops, dependencies, "job-stop", job["id"])
    assert "Stopping job" in json.dumps(response["jobs-alert"])
    assert response["jobs-changed"]["data"] == 1
    assert real.jobs[job["id"]]["status"] == "stopping"

    real.set_status(job["id"], "stopped")
    response = click(ops, dependencies, "job-restart", job["id"])
    assert f"Restarted job {job['id']} as job" in json.dumps(response["jobs-alert"])
    assert real.jobs[max(real.jobs)]["restart_of"] == job["id"]


def test_re_rendered_stop_buttons_do_not_stop_anything(served, dependencies, ops):
    _, real, job = served
    button_id = {"index": job["id"], "type": "job-stop"}
    payload = {
        "output": CONTROL,
        "outputs": [
            {"id": "jobs-alert", "property": "children"},
            {"id": "jobs-changed", "property": "data"},
        ],
        "inputs": [[{"id": button_id, "property": "n_clicks", "value": None}], []],
        "state": [{"id": "jobs-changed", "property": "data", "value": 0}],
        "changedPropIds": [
            json.dumps(button_id, separators=(",", ":"), sort_keys=True) + ".n_clicks"
        ],
    }
    before = len(real.requests_to("POST", f"/jobs/{job['id']}/stop"))
    response = ops.post("/_dash-update-component", json=payload)
    assert response.status_code == 204  # PreventUpdate
    assert len(real.requests_to("POST", f"/jobs/{job['id']}/stop")) == before


def test_a_revoked_token_ends_the_session_and_goes_to_login(served, dependencies):
    app, real, _ = served
    client, _ = sign_in(app, dependencies, "ops")
    real.revoke_all_tokens()  # every token revoked (or expired)
    body = dispatch(
        client,
        dependencies,
        "..classes-table.children...classes-load-alert.children..",
        {"classes-created.data": 0, "classes-deleted.data": 0},
        ["classes-created.data"],
    )
    assert body["sideUpdate"] == {AUTH_LOCATION_ID: {"href": "/login?next=%2Fjobs"}}
    with client.session_transaction() as flask_session:
        assert SESSION_KEY not in flask_session
    assert client.get("/jobs").status_code == 302


def test_logout_revokes_the_token_and_goes_to_login(served, dependencies):
    app, real, _ = served
    client, _ = sign_in(app, dependencies, "ops")
    token = session_record(app, client)["token"]
    body = dispatch(
        client,
        dependencies,
        "logout-button.disabled",
        {"logout-button.n_clicks": 1},
        ["logout-button.n_clicks"],
    )
    assert body["sideUpdate"] == {AUTH_LOCATION_ID: {"href": "/login"}}
    assert not real.token_valid(token)
    assert client.get("/").status_code == 302


def test_a_role_changed_by_an_admin_is_picked_up(served, dependencies):
    app, real, _ = served
    client, _ = sign_in(app, dependencies, "ops")
    real.update_user("ops", role="viewer")
    try:
        shell = dispatch(
            client,
            dependencies,
            "..api-health.children...nav-role.children..",
            {"api-health-interval.n_intervals": 2},
            ["api-health-interval.n_intervals"],
        )["response"]
        assert '"viewer"' in json.dumps(shell["nav-role"])
        assert session_record(app, client)["role"] == "viewer"
    finally:
        real.update_user("ops", role="operator")


QUERY_FIELDS = '{"field":["ALL"],"index":["ALL"],"type":"query-op-field"}.value'
QUERY_FIELD_IDS = '{"field":["ALL"],"index":["ALL"],"type":"query-op-field"}.id'
QUERY_KINDS = '{"index":["ALL"],"type":"query-op-kind"}.value'


def _pattern(type_name, index, prop, value, **keys):
    return {"id": {"index": index, "type": type_name, **keys}, "property": prop, "value": value}


def test_the_query_form_writes_the_spec(dependencies, ops):
    output = next(d["output"] for d in dependencies if d["output"].startswith("query-spec.value@"))
    fields = [
        _pattern("query-op-field", 0, "value", "clicks", field="right"),
        _pattern("query-op-field", 0, "value", 2, field="window.size_s"),
        _pattern("query-op-field", 0, "value", "value > 1", field="predicate"),  # hidden
    ]
    response = dispatch(
        ops,
        dependencies,
        output,
        {
            "query-name.value": "hot",
            "query-source.value": "trades",
            "query-shared.value": True,
            QUERY_KINDS: [_pattern("query-op-kind", 0, "value", "window_join")],
            QUERY_FIELDS: fields,
            QUERY_FIELD_IDS: [
                {**field, "property": "id", "value": field["id"]} for field in fields
            ],
            '{"index":["ALL"],"type":"query-op-extra"}.data': [
                _pattern("query-op-extra", 0, "data", {"sim": {"selectivity": 1}})
            ],
        },
        ["query-name.value"],
    )["response"]
    spec = yaml.safe_load(response["query-spec"]["value"])
    assert spec == {
        "name": "hot",
        "source": "trades",
        "shared": True,
        "operators": [
            {
                "kind": "window_join",
                "right": "clicks",
                "window": {"size_s": 2},
                "sim": {"selectivity": 1},
            }
        ],
    }


def test_saving_a_query_spec_marks_the_control_the_api_names(served, dependencies):
    app, real, _ = served
    ops, _ = sign_in(app, dependencies, "ops")  # the module's session may be revoked by now
    fraud = next(c for c in real.classes.values() if c["name"] == "fraud")
    output = next(d["output"] for d in dependencies if "query-spec-feedback" in d["output"])
    spec = (
        "name: joined\nsource: trades\noperators:\n"
        "  - {kind: project, columns: [value]}\n"
        "  - {kind: window_join, right: clicks, window: {size_s: 2}, sim: {selectivity: 1}}\n"
    )
    response = dispatch(
        ops,
        dependencies,
        output,
        {
            "query-save.n_clicks": 1,
            "queries-class.value": str(fraud["id"]),
            "query-spec.value": spec,
            "queries-changed.data": 0,
        },
        ["query-save.n_clicks"],
    )["response"]
    rows = json.dumps(response["query-operators"]["children"])
    assert "operators[1].on_column: join column 'key'" in rows
    assert response["query-spec"]["invalid"] is True
    assert "operators[1].on_column" in json.dumps(response["query-spec-feedback"])
    assert "queries-changed" not in response  # nothing saved: the table is not reloaded
    assert not any(q["name"] == "joined" for q in real.queries.values())


def test_removing_an_operator_row_rewrites_the_rows_and_the_spec(dependencies, ops):
    output = next(d["output"] for d in dependencies if "query-editing.data" in d["output"])
    fields = [
        _pattern("query-op-field", 0, "value", "value > 0.5", field="predicate"),
        _pattern("query-op-field", 1, "value", "key, value", field="columns"),
    ]
    response = dispatch(
        ops,
        dependencies,
        output,
        {
            '{"index":["ALL"],"type":"query-op-remove"}.n_clicks': [
                _pattern("query-op-remove", 0, "n_clicks", 1),
                _pattern("query-op-remove", 1, "n_clicks", None),
            ],
            "query-name.value": "q",
            "query-source.value": "trades",
            QUERY_KINDS: [
                _pattern("query-op-kind", 0, "value", "filter"),
                _pattern("query-op-kind", 1, "value", "project"),
            ],
            QUERY_FIELDS: fields,
            QUERY_FIELD_IDS: [{**f, "property": "id", "value": f["id"]} for f in fields],
            "queries-changed.data": 0,
        },
        ['{"index":0,"type":"query-op-remove"}.n_clicks'],
    )["response"]
    spec = yaml.safe_load(response["query-spec"]["value"])
    assert spec["operators"] == [{"kind": "project", "columns": ["key", "value"]}]
    assert len(response["query-operators"]["children"]) == 1
    assert response["query-editor-title"]["children"] == "New query"

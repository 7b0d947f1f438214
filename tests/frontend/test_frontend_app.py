"""Smoke tests of the whole Dash app through Flask's test client (no browser).

One app for the module: Dash keeps its page registry and ``dash.callback`` list in
module globals, so a process should build a single pages app. The API behind it is the
fake server (the real backend is being written concurrently).
"""

from __future__ import annotations

import json

import dash
import pytest
from frontend_fake_api import RunningFakeApi

from backend.settings import get_settings
from frontend.app import NAV_LINKS, create_app, resolve_api_url
from frontend.context import API_URL_KEY

PAGES = {
    "/": ["classes-table", "class-form", "class-tau2", "class-tau2-feedback", "class-tau-rule"],
    "/jobs": ["jobs-table", "jobs-interval", "job-start-form", "job-class-ids"],
    "/live": ["live-job", "live-interval", "live-response-time", "live-throughput"],
}


@pytest.fixture(scope="module")
def served():
    with RunningFakeApi() as fake:
        fake.add_class("fraud", 6.0, 1.5)
        job = fake.add_job(["fraud"], status="running")
        fake.add_sample(job["id"], "fraud", 1_763_700_000.0)
        app = create_app(fake.url + "/")
        yield app, app.server.test_client(), fake, job


@pytest.fixture(scope="module")
def dependencies(served):
    _, client, _, _ = served
    response = client.get("/_dash-dependencies")
    assert response.status_code == 200
    return json.loads(response.data)


def dispatch(client, dependencies, output, values, changed):
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
    response = client.post("/_dash-update-component", json=payload)
    assert response.status_code == 200, response.data[:500]
    return json.loads(response.data)["response"]


def test_the_api_url_is_stored_on_the_app(served):
    app, _, fake, _ = served
    assert app.server.config[API_URL_KEY] == fake.url  # trailing slash removed
    assert resolve_api_url(None) == get_settings().public_api_url.rstrip("/")


def test_every_page_is_registered_and_served(served):
    _, client, _, _ = served
    assert sorted(page["path"] for page in dash.page_registry.values()) == sorted(PAGES)
    for path in [*PAGES, "/live?job_id=1"]:
        response = client.get(path)
        assert response.status_code == 200, path
        assert b"<title>headroom" in response.data


def test_classes_path_redirects_to_root(served):
    _, client, _, _ = served
    response = client.get("/classes")
    assert response.status_code in (301, 302, 308)
    assert response.headers["Location"].endswith("/")


def test_layout_has_the_navbar_and_page_container(served):
    _, client, _, _ = served
    response = client.get("/_dash-layout")
    assert response.status_code == 200
    links = {}

    def collect(node):
        if isinstance(node, dict):
            props = node.get("props", {})
            if node.get("type") == "NavLink":
                links[props["children"]] = props["href"]
            for value in props.values():
                collect(value)
        elif isinstance(node, list):
            for item in node:
                collect(item)

    layout = json.loads(response.data)
    collect(layout)
    assert links == dict(NAV_LINKS)
    assert "_pages_content" in json.dumps(layout)


@pytest.mark.parametrize("path", list(PAGES))
def test_every_page_layout_renders_through_the_router(served, dependencies, path):
    _, client, _, _ = served
    response = dispatch(
        client,
        dependencies,
        ".._pages_content.children..._pages_store.data..",
        {"_pages_location.pathname": path, "_pages_location.search": ""},
        ["_pages_location.pathname"],
    )
    rendered = json.dumps(response["_pages_content"]["children"])
    for component_id in PAGES[path]:
        assert f'"id": "{component_id}"' in rendered, component_id
    assert response["_pages_store"]["data"]["title"].startswith("headroom")


def test_live_page_takes_the_job_from_the_query_string(served, dependencies):
    _, client, _, _ = served
    response = dispatch(
        client,
        dependencies,
        ".._pages_content.children..._pages_store.data..",
        {"_pages_location.pathname": "/live", "_pages_location.search": "?job_id=7"},
        ["_pages_location.pathname"],
    )
    rendered = json.dumps(response["_pages_content"]["children"])
    assert '"id": "live-requested-job", "data": 7' in rendered


def test_callbacks_reach_the_api_configured_on_the_app(served, dependencies):
    _, client, _, job = served
    health = dispatch(
        client,
        dependencies,
        "api-health.children",
        {"api-health-interval.n_intervals": 1},
        ["api-health-interval.n_intervals"],
    )
    assert "API ok" in json.dumps(health)

    classes = dispatch(
        client,
        dependencies,
        "..classes-table.children...classes-load-alert.children..",
        {"classes-created.data": 0, "classes-deleted.data": 0},
        ["classes-created.data"],
    )
    assert '"fraud"' in json.dumps(classes["classes-table"])

    live = dispatch(
        client,
        dependencies,
        "..live-response-time.figure...live-throughput.figure...live-summary.children"
        "...live-cursor.data...live-interval.disabled..",
        {"live-job.value": job["id"], "live-interval.n_intervals": 1},
        ["live-job.value"],
    )
    names = [trace["name"] for trace in live["live-response-time"]["figure"]["data"]]
    assert names == ["fraud mean", "fraud max", "fraud target 1.5 s"]
    assert live["live-cursor"]["data"] == {"job_id": job["id"], "latest_t": 1_763_700_000.0}
    assert live["live-interval"]["disabled"] is False


def test_submitting_the_class_form_marks_the_field_the_api_names(served, dependencies):
    _, client, _, _ = served
    output = next(d["output"] for d in dependencies if "class-tau2.invalid" in d["output"])
    response = dispatch(
        client,
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
    )
    assert response["class-tau2"]["invalid"] is True
    assert response["class-name"]["invalid"] is False
    assert response["class-tau2-feedback"]["children"].startswith("tau2=0.3 is invalid")
    assert "classes-created" not in response  # nothing created: the table is not reloaded


def test_a_stop_button_click_stops_that_job(served, dependencies):
    _, client, fake, job = served
    output = "..jobs-alert.children...jobs-stopped.data.."
    (stop_buttons,) = next(d["inputs"] for d in dependencies if d["output"] == output)
    button_id = {"index": job["id"], "type": "job-stop"}
    response = dispatch(
        client,
        dependencies,
        output,
        {
            f"{stop_buttons['id']}.n_clicks": [
                {"id": button_id, "property": "n_clicks", "value": 1}
            ],
            "jobs-stopped.data": 0,
        },
        # The browser names a pattern-matching id by its compact, key-sorted JSON.
        [json.dumps(button_id, separators=(",", ":"), sort_keys=True) + ".n_clicks"],
    )
    assert "Stopping job" in json.dumps(response["jobs-alert"])
    assert response["jobs-stopped"]["data"] == 1
    assert fake.jobs[job["id"]]["status"] == "stopping"


def test_re_rendered_stop_buttons_do_not_stop_anything(served, dependencies):
    _, client, fake, job = served
    output = "..jobs-alert.children...jobs-stopped.data.."
    button_id = {"index": job["id"], "type": "job-stop"}
    payload = {
        "output": output,
        "outputs": [
            {"id": "jobs-alert", "property": "children"},
            {"id": "jobs-stopped", "property": "data"},
        ],
        "inputs": [[{"id": button_id, "property": "n_clicks", "value": None}]],
        "state": [{"id": "jobs-stopped", "property": "data", "value": 0}],
        "changedPropIds": [
            json.dumps(button_id, separators=(",", ":"), sort_keys=True) + ".n_clicks"
        ],
    }
    before = len(fake.requests_to("POST", f"/jobs/{job['id']}/stop"))
    response = client.post("/_dash-update-component", json=payload)
    assert response.status_code == 204  # PreventUpdate
    assert len(fake.requests_to("POST", f"/jobs/{job['id']}/stop")) == before

"""The body limits of issue 42, finding 1 (probed in ``test_body_limits.py``) are the
schemas' own maxima: each route's limit is the one its schema derives, each per-item
budget holds the widest item its schema admits, and the largest valid body of each large
route, and of routes under the default limit, still passes.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastapi import APIRouter
from fastapi.testclient import TestClient
from pydantic import BaseModel
from sqlalchemy.orm import Session

from backend.actions.routes import ACTIONS_BODY_BYTES, MAX_ACTION_JSON_BYTES
from backend.api.body_limits import DEFAULT_BODY_BYTES, THREAD_PARSE_BYTES, RouteLimits
from backend.classes.schemas import MAX_CLASS_CHANGE_JSON_BYTES, ClassChange, QueryClassCreate
from backend.jobs.schemas import MAX_JOB_CLASSES
from backend.main import API_PREFIX, ROUTERS
from backend.metrics.schemas import INGEST_BODY_BYTES, MAX_SAMPLE_JSON_BYTES, IngestSample
from backend.queries.schemas import QUERY_BODY_BYTES
from backend.scenarios.schemas import MAX_SCENARIO_CHARS, SCENARIO_BODY_BYTES
from backend.streams.schemas import STREAM_BODY_BYTES
from backend.tuning.schemas import CONFIG_BODY_BYTES
from spark_runner.contract.actions import ControlAction, Verdict
from spark_runner.contract.samples import INT32_MAX, MAX_BATCH_SAMPLES
from spark_runner.core.managers.registry import MANAGER_TYPES, parameter_names
from spark_runner.scenario.models import NAME_MAX_LENGTH
from tests.backend.test_jobs_api import SAMPLE_EPOCH_S, RecordingDispatcher, _job_token
from tests.backend.test_scenarios_api import DEMO

WIDEST_FLOAT = 1.2345678901234567e-300
"""A float as wide as JSON writes one: 17 significant digits and a 3-digit exponent."""
WIDE_FLOAT = 1.2345678901234567e-99
"""One character narrower: a 3-digit exponent sends a body through the guard's full walk
(it may be beyond a double), which would double a test's time."""
ESCAPED = "\u00e9"
"""A character JSON encoders escape (``\\u00e9``: 6 bytes)."""


@pytest.mark.parametrize(
    ("method", "path", "route", "limit"),
    [
        ("POST", "/jobs/7/metrics", "/jobs/{job_id}/metrics", INGEST_BODY_BYTES),
        ("POST", "/jobs/7/actions", "/jobs/{job_id}/actions", ACTIONS_BODY_BYTES),
        ("POST", "/scenarios", "/scenarios", SCENARIO_BODY_BYTES),
        ("PUT", "/scenarios/3", "/scenarios/{scenario_id}", SCENARIO_BODY_BYTES),
        ("POST", "/streams", "/streams", STREAM_BODY_BYTES),
        ("PUT", "/streams/3", "/streams/{stream_id}", STREAM_BODY_BYTES),
        ("POST", "/classes/2/queries", "/classes/{class_id}/queries", QUERY_BODY_BYTES),
        (
            "PUT",
            "/classes/2/queries/5",
            "/classes/{class_id}/queries/{query_id}",
            QUERY_BODY_BYTES,
        ),
        ("PATCH", "/jobs/7/config", "/jobs/{job_id}/config", CONFIG_BODY_BYTES),
        ("POST", "/jobs/7/config/preview", "/jobs/{job_id}/config/preview", CONFIG_BODY_BYTES),
        ("POST", "/auth/login", "/auth/login", DEFAULT_BODY_BYTES),
        ("POST", "/users", "/users", DEFAULT_BODY_BYTES),
        ("POST", "/jobs", "/jobs", DEFAULT_BODY_BYTES),
        ("POST", "/classes", "/classes", DEFAULT_BODY_BYTES),
        ("PATCH", "/classes/2", "/classes/{class_id}", DEFAULT_BODY_BYTES),
        ("POST", "/jobs/7/control/ack", "/jobs/{job_id}/control/ack", DEFAULT_BODY_BYTES),
        ("GET", "/jobs/7/metrics", "/jobs/{job_id}/metrics", DEFAULT_BODY_BYTES),
    ],
)
def test_each_route_takes_the_limit_its_schema_derives(
    method: str, path: str, route: str, limit: int
) -> None:
    limits = RouteLimits.of_routers(ROUTERS, API_PREFIX)
    scope = {"method": method, "path": API_PREFIX + path, "root_path": ""}
    assert limits.of(scope) == (limit, f"{method} {API_PREFIX}{route}")


def test_a_route_taking_large_bodies_hands_fastapi_the_parsed_document() -> None:
    router = APIRouter()

    @router.post("/upload", max_body_size=THREAD_PARSE_BYTES + 1)
    def _upload(body: dict[str, int]) -> None: ...

    with pytest.raises(TypeError, match="ParsedBodyRoute"):
        RouteLimits.of_routers([router])


def _widest(model: type[BaseModel], number: float = WIDEST_FLOAT, **given: Any) -> dict[str, Any]:
    """Every field of ``model`` at its widest in JSON: text at its maximum length, every
    character escaped; integers at 32 bits, other numbers as ``number``; ``given`` as
    given."""
    values: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        longest = next((m.max_length for m in field.metadata if hasattr(m, "max_length")), None)
        kind = str(field.annotation)
        if name in given:
            values[name] = given[name]
        elif "str" in kind and longest:
            values[name] = ESCAPED * longest
        elif "bool" in kind:
            values[name] = False
        elif "int" in kind and "float" not in kind:
            values[name] = INT32_MAX
        else:
            values[name] = number
    return values


def _json_bytes(value: Any) -> int:
    return len(json.dumps(value).encode())


def test_the_widest_sample_fits_its_budget() -> None:
    sample = _widest(IngestSample, t=SAMPLE_EPOCH_S, executors=9_999, executors_requested=9_999)
    IngestSample.model_validate(sample)
    assert _json_bytes(sample) <= MAX_SAMPLE_JSON_BYTES


def test_the_widest_action_fits_its_budget() -> None:
    verdict = _widest(Verdict, outcome="unchanged")
    action = _widest(
        ControlAction,
        kind="scale_out",
        threshold=0.12345678901234567,
        executors_before=9_999,
        executors_after=9_999,
        verdict=verdict,
        origin="job",  # what a job may post: its own actions, with no coordinator's trigger
        trigger=None,
    )
    ControlAction.model_validate(action)
    assert _json_bytes(action) <= MAX_ACTION_JSON_BYTES


def test_the_widest_class_change_fits_its_budget() -> None:
    """Under its class's name, with every parameter of the manager that has the most."""
    kind = max(MANAGER_TYPES, key=lambda k: len(parameter_names(k)))
    params = dict.fromkeys(parameter_names(kind), WIDEST_FLOAT)
    change = _widest(
        ClassChange,
        priority=123456.78901234567,
        delay_target_s=1234.5678901234567,
        manager=ESCAPED * 20,
        manager_params=params,
    )
    ClassChange.model_validate(change)
    assert _json_bytes({ESCAPED * NAME_MAX_LENGTH: change}) <= MAX_CLASS_CHANGE_JSON_BYTES


# --- the largest valid body of each route passes --------------------------------------------


def _full_samples(count: int) -> list[dict[str, Any]]:
    """Samples of class ``fraud`` with every field set, their numbers at their widest."""
    sample = _widest(
        IngestSample,
        WIDE_FLOAT,
        class_name="fraud",
        period_s=1.2345678901234567,
        arrival_rate=123456.78901234567,
        capacity_share=0.12345678901234567,
        shed_fraction=0.12345678901234567,
        oracle_shed_fraction=0.12345678901234567,
        manager="aloma",
        manager_state="normal",
        executors=9_999,
        executors_requested=9_999,
    )
    return [{**sample, "seq": seq, "t": SAMPLE_EPOCH_S + seq * 1e-3} for seq in range(count)]


@pytest.mark.parametrize("migrated_engine", ["sqlite"], indirect=True)
def test_a_batch_of_the_most_samples_passes(client: TestClient, db_session: Session) -> None:
    client.app.state.dispatcher = RecordingDispatcher()  # type: ignore[attr-defined]
    fraud = {"name": "fraud", "priority": 1, "delay_target_s": 1}
    created = client.post("/api/v1/classes", json=fraud)
    assert created.status_code == 201, created.text
    job_id = client.post("/api/v1/jobs", json={}).json()["id"]
    body = json.dumps({"samples": _full_samples(MAX_BATCH_SAMPLES)})
    assert len(body) > INGEST_BODY_BYTES // 2
    response = client.post(
        f"/api/v1/jobs/{job_id}/metrics",
        content=body,
        headers={"Content-Type": "application/json", **_job_token(db_session, job_id)},
    )
    assert response.status_code == 202, response.text[:500]
    assert response.json()["received"] == MAX_BATCH_SAMPLES


@pytest.mark.parametrize("migrated_engine", ["sqlite"], indirect=True)
def test_a_scenario_of_the_most_characters_passes(client: TestClient) -> None:
    """Its comment's characters escaped, as an encoder with ensure_ascii writes them."""
    padding = MAX_SCENARIO_CHARS - len(DEMO) - 4
    document = f"{DEMO}\n# {ESCAPED * padding}\n"
    assert len(document) == MAX_SCENARIO_CHARS
    body = json.dumps({"yaml": document})
    assert len(body) > 0.99 * SCENARIO_BODY_BYTES
    response = client.post(
        "/api/v1/scenarios", content=body, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 201, response.text[:500]


@pytest.mark.parametrize("migrated_engine", ["sqlite"], indirect=True)
def test_bodies_at_their_schemas_maxima_pass_the_default_limit(client: TestClient) -> None:
    aloma = MANAGER_TYPES["aloma"].params_type()
    params = {name: getattr(aloma, name) for name in parameter_names("aloma")}
    query_class = _widest(
        QueryClassCreate,
        name="c" * NAME_MAX_LENGTH,
        priority=1.2345678901234567,
        delay_target_s=1.2345678901234567,
        tau0=0.12345678901234567,
        tau1=0.22345678901234567,
        tau2=0.82345678901234567,
        tau3=0.92345678901234567,
        manager="aloma",
        manager_params=params,
        reserve_fraction=0.052345678901234567,
        max_lend_fraction=0.92345678901234567,
    )
    created = client.post("/api/v1/classes", json=query_class)
    assert created.status_code == 201, created.text
    job = client.post("/api/v1/jobs", json={"class_ids": list(range(1, MAX_JOB_CLASSES + 1))})
    assert job.status_code == 422 and "class_ids" in job.text  # unknown ids: not too large
    login = {"username": ESCAPED * 100, "password": ESCAPED * 1000}
    assert client.post("/api/v1/auth/login", json=login).status_code == 401

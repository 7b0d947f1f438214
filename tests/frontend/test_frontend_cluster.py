"""The Cluster page's hand-offs against the real API: the move form's request, the API's
refusals on the field they name, and the list with each hand-off's progress."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from frontend.actions.cluster import load_handoffs, move_class
from frontend.actions.jobs import build_start_options
from frontend.api import ApiClient
from tests.backend.test_handoffs_api import SCENARIO
from tests.frontend.frontend_real_api import RealApi, running_api
from tests.frontend.frontend_tree import text


@pytest.fixture(scope="module")
def redis_api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealApi]:
    """An API of its own whose jobs may read Redis streams (no job process runs here, so
    none is read)."""
    data_dir = Path(tmp_path_factory.mktemp("cluster")) / "data"
    with running_api(data_dir, streams_redis_url="redis://127.0.0.1:6379/0") as started:
        yield started


@pytest.fixture
def real_api(redis_api: RealApi) -> RealApi:
    redis_api.reset()
    return redis_api


@pytest.fixture
def api(real_api: RealApi) -> Iterator[ApiClient]:
    with ApiClient(real_api.url, token=real_api.token_for("ops"), timeout_s=5.0) as client:
        yield client


def two_jobs(real_api: RealApi) -> tuple[int, int]:
    """A job computing recs and one holding it in standby, both running on Redis."""
    stored = real_api.add_scenario("handoffs", SCENARIO)["id"]
    redis = {"source": "redis"}
    origin = real_api.add_job(scenario_id=stored, options=redis)["id"]
    target = real_api.add_job(scenario_id=stored, options={**redis, "standby": ["recs"]})["id"]
    return origin, target


def test_an_operator_moves_a_class_and_reads_its_progress(
    real_api: RealApi, api: ApiClient
) -> None:
    origin, target = two_jobs(real_api)
    assert text(load_handoffs(api)) == "No class has moved between jobs yet."
    alert, fields = move_class(
        api, {"class_name": "recs", "origin_job_id": origin, "target_job_id": target}
    )
    assert fields == {} and alert is not None
    assert f"Hand-off 1: recs moves from job {origin} to job {target} at " in text(alert)
    listed = text(load_handoffs(api))
    assert f"job {origin} -> job {target}" in listed and "planned" in listed
    assert "both jobs apply their ranges within" in listed
    [sent] = real_api.requests_to("POST", "/handoffs")
    assert sent.body == {"class_name": "recs", "origin_job_id": origin, "target_job_id": target}


def test_a_move_the_api_refuses_shows_on_the_field_it_names(
    real_api: RealApi, api: ApiClient
) -> None:
    origin, target = two_jobs(real_api)
    alert, fields = move_class(api, {"class_name": "", "origin_job_id": origin})
    assert alert is None and set(fields) == {"class_name", "target_job_id"}
    assert real_api.requests_to("POST", "/handoffs") == []
    values = {"class_name": "slide", "origin_job_id": origin, "target_job_id": target}
    alert, fields = move_class(api, values)
    assert alert is None and "sliding window" in fields["class_name"]
    values = {"class_name": "recs", "origin_job_id": origin, "target_job_id": 999}
    alert, fields = move_class(api, values)
    assert fields == {} and alert is not None and "Could not move it" in text(alert)


def test_the_start_form_sends_the_standby_classes_by_name() -> None:
    body, feedback = build_start_options({"standby": " recs, ads ,", "source": "redis"})
    assert body == {"standby": ["recs", "ads"], "source": "redis"} and feedback == {}
    assert build_start_options({"standby": "  "})[0] == {}

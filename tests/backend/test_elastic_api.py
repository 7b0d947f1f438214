"""GET /elastic: a job's elasticity settings, described by the rules the scenario's
validation runs; the thresholds come from the classes."""

from __future__ import annotations

from fastapi.testclient import TestClient

from spark_runner.core.elastic import ScalingParams
from spark_runner.core.params import params_as_dict
from spark_runner.core.thresholds import TAUS


def test_describes_every_elastic_setting_but_the_class_thresholds(client: TestClient) -> None:
    response = client.get("/api/v1/elastic")
    assert response.status_code == 200, response.text
    body = response.json()
    defaults = params_as_dict(ScalingParams())
    params = {p["name"]: p for p in body["parameters"]}
    assert set(params) == set(defaults) - set(TAUS)
    for name, param in params.items():
        assert param["default"] == defaults[name] and param["description"] and param["rules"]
    assert params["hold_in_s"]["rules"] == [
        "must be > 0 seconds",
        "must be within [0, 3600.0]",
        "must be >= hold_out_s",
    ]
    assert params["max_executors"]["minimum"] == 1
    assert params["sizing"]["choices"] == ["load_aware", "one_at_a_time"]
    assert "lowest" in body["thresholds"]

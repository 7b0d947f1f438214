"""Control-plane classes and their queries composed into one scenario document."""

from __future__ import annotations

from spark_runner.contract.control import ClassControl, LiveConfig
from spark_runner.scenario.compose import (
    QueryPart,
    compose,
    generated_query,
    scenario_live_config,
)
from spark_runner.scenario.loader import scenario_from_dict

FILTER = {"kind": "filter", "predicate": "value > 0.5"}


def config(**priorities: float) -> LiveConfig:
    return LiveConfig(
        policy="strict",
        redistribution_every=7,
        classes={
            name: ClassControl.model_validate(
                {"priority": p, "delay_target_s": 2.0, "tau1": 0.5, "manager": "aurora"}
            )
            for name, p in priorities.items()
        },
    )


def test_composed_scenario_is_valid_and_shares_once() -> None:
    clean = QueryPart(
        "clean", "trades", [{"kind": "project", "columns": ["key", "value"]}], shared=True
    )
    hot = QueryPart("hot", "query:clean", [FILTER])
    document = compose(
        config(fraud=6, ads=1, idle=1),
        {"fraud": [hot], "ads": [hot], "idle": []},
        [clean],
        rate_per_s=50,
        period_s=1,
        duration_s=30,
    )
    scenario = scenario_from_dict(document)
    assert [s.name for s in scenario.shared_segments] == ["shared.clean"]
    assert {s.name for s in scenario.streams} == {"trades", "stream.idle"}
    # a class without a query runs the generated one, on its own stream
    idle = scenario.classes[2].queries[0]
    assert idle.source == "stream.idle"
    assert [op.kind for op in idle.operators] == ["filter", "project"]


def test_a_class_runs_with_its_live_parameters_and_the_jobs_settings() -> None:
    document = compose(
        config(fraud=6),
        {"fraud": [generated_query("fraud", 0.25)]},
        rate_per_s=0.0,
        stream_rates={"stream.fraud": 40.0},
        period_s=0.5,
        duration_s=30,
        seed=9,
    )
    scenario = scenario_from_dict(document)
    fraud = scenario.classes[0]
    assert (fraud.priority, fraud.delay_target_s, fraud.manager.kind) == (6, 2.0, "aurora")
    assert fraud.thresholds.tau1 == 0.5
    assert fraud.queries[0].operators[0].predicate == "value < 0.25"  # type: ignore[union-attr]
    assert scenario.stream("stream.fraud").arrival.rate_per_s == 40.0  # type: ignore[union-attr]
    assert (scenario.control.mode, scenario.control.policy) == ("dilos", "strict")
    assert scenario.control.redistribution_every == 7 and scenario.seed == 9


def test_a_class_composed_and_read_back_keeps_its_live_parameters() -> None:
    """Control plane → scenario document → control plane: every class field survives
    (``catch_up`` among them: a billing class that serves its start backlog)."""
    live = config(fraud=6, ads=1)
    billing = live.classes["fraud"].model_copy(update={"catch_up": True})
    live = live.model_copy(update={"classes": {**live.classes, "fraud": billing}})
    queries = {name: [generated_query(name)] for name in live.classes}
    document = compose(live, queries, rate_per_s=10.0, period_s=0.5, duration_s=30)
    scenario = scenario_from_dict(document)
    assert [c.model_dump()["catch_up"] for c in scenario.classes] == [True, False]
    assert scenario_live_config(scenario).classes == live.classes

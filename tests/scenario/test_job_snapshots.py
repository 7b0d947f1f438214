"""A job's snapshot carries each class setting once, in its ``control``, and the job runs
its scenario with exactly those settings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from spark_runner.contract.snapshot import JobSnapshot
from spark_runner.core.class_settings import SETTING_NAMES
from spark_runner.scenario import load_scenario
from spark_runner.scenario.compose import JOB_SETTING_KEYS, SETTING_KEYS, scenario_live_config
from spark_runner.scenario.snapshots import job_scenario, job_snapshot

DEMO = Path(__file__).resolve().parents[2] / "scenarios" / "demo.yaml"


def demo_snapshot(**fields: Any) -> tuple[dict[str, Any], JobSnapshot]:
    loaded = load_scenario(DEMO)
    document = loaded.model_dump(mode="json")
    control = fields.pop("control", scenario_live_config(loaded))
    snapshot = job_snapshot(
        document, control=control, job_id=3, api_url="", checkpoint_dir="/tmp/c", **fields
    )
    return document, snapshot


def count_keys(value: Any, key: str) -> int:
    if isinstance(value, dict):
        return (key in value) + sum(count_keys(v, key) for v in value.values())
    if isinstance(value, list):
        return sum(count_keys(v, key) for v in value)
    return 0


def test_each_class_setting_appears_once_per_class_in_the_stored_snapshot() -> None:
    document, snapshot = demo_snapshot()
    stored = json.loads(snapshot.model_dump_json())
    n = len(document["classes"])
    every_class = [stored["classes"], stored["scenario"]["classes"], stored["control"]["classes"]]
    for setting in SETTING_NAMES:
        assert count_keys(every_class, setting) == n, setting
        assert all(setting in c for c in stored["control"]["classes"].values())
    for c in stored["scenario"]["classes"]:
        assert not set(c) & set(SETTING_KEYS), c
        assert c["queries"]
    assert all(set(c) == {"name", "rate_per_s", "selectivity"} for c in stored["classes"])
    assert not set(stored["scenario"]["control"]) & {*JOB_SETTING_KEYS, "mode"}


def test_the_job_runs_the_scenario_it_was_given() -> None:
    document, snapshot = demo_snapshot()
    assert job_scenario(JobSnapshot.model_validate_json(snapshot.model_dump_json())) == document


def test_the_job_runs_the_settings_of_its_control_not_of_the_scenario_file() -> None:
    loaded = load_scenario(DEMO)
    control = scenario_live_config(loaded)
    first = loaded.classes[0].name
    changed = control.classes[first].model_copy(
        update={"manager": "ctrl", "manager_params": {}, "delay_target_s": 0.75}
    )
    _, snapshot = demo_snapshot(
        control=control.model_copy(update={"classes": {**control.classes, first: changed}})
    )
    ran = {c["name"]: c for c in job_scenario(snapshot)["classes"]}
    assert ran[first]["manager"] == {"kind": "ctrl", "params": {}}
    assert ran[first]["delay_target_s"] == 0.75
    assert snapshot.control.targets()[first] == 0.75


def test_the_job_runs_the_job_settings_of_its_control() -> None:
    """A launch's policy, redistribution and elasticity (over the scenario file's) are
    the ones the job's scenario carries; a mode no live configuration expresses stays."""
    loaded = load_scenario(DEMO)
    control = scenario_live_config(loaded).model_copy(
        update={
            "policy": "strict",
            "redistribution_every": 4,
            "redistribution_enabled": False,
            "elastic": {"max_executors": 3},
        }
    )
    _, snapshot = demo_snapshot(control=control)
    ran = job_scenario(snapshot)["control"]
    assert ran["policy"] == "strict" and ran["redistribution_every"] == 4
    assert ran["mode"] == "per_class"
    assert ran["elastic"] == {"params": {"max_executors": 3}}
    document = load_scenario(DEMO).model_dump(mode="json")
    common = {**document, "control": {**document["control"], "mode": "common"}}
    snapshot = job_snapshot(common, control=control, job_id=3, api_url="", checkpoint_dir="/c")
    assert job_scenario(snapshot)["control"]["mode"] == "common"

"""A job's snapshot from a scenario, and the scenario a job runs from its snapshot (no Spark).

A snapshot carries each setting once, in its ``control`` (the live configuration's
version 0): its scenario's classes keep their name, queries and description only, and
its scenario's ``control`` what no live configuration holds (the control period, a
``none`` or ``common`` mode, ``min_share``, …).
:func:`job_snapshot` is the one way the control plane and ``headroom run`` build a
snapshot; :func:`job_scenario` puts the settings back for the job (and for the what-if
replay of a running job).

A snapshot without a scenario (a job stored before jobs carried one) runs what the walking
skeleton ran: class *k* reads its own generated stream at its ``rate_per_s`` and runs
:func:`~spark_runner.scenario.compose.generated_query` with its ``selectivity``; the
control period, duration and parameters come from the snapshot, through the one converter
of control-plane classes (:mod:`spark_runner.scenario.compose`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from spark_runner.contract.control import LiveConfig
from spark_runner.contract.snapshot import ClassSnapshot, JobSnapshot
from spark_runner.core.errors import ParameterError
from spark_runner.scenario.compose import (
    UNLIMITED_SCHEDULE_S,
    compose,
    control_with_settings,
    control_without_settings,
    generated_query,
    with_settings,
    without_settings,
)


def job_snapshot(
    scenario: Mapping[str, Any],
    *,
    control: LiveConfig,
    job_id: int,
    api_url: str,
    checkpoint_dir: str,
    rate_per_s: float = 0.0,
    **fields: Any,
) -> JobSnapshot:
    """The snapshot of a job running ``scenario`` (a validated document) under
    ``control``. Its ``classes`` are the scenario's, each at ``rate_per_s`` where the job
    generated their streams at one rate (0: the scenario's own workload). ``fields``: the
    snapshot's other fields."""
    document = {
        **scenario,
        "control": control_without_settings(scenario["control"]),
        "classes": [without_settings(c) for c in scenario["classes"]],
    }
    return JobSnapshot(
        job_id=job_id,
        api_url=api_url,
        checkpoint_dir=checkpoint_dir,
        classes=tuple(
            ClassSnapshot(name=c["name"], rate_per_s=rate_per_s) for c in scenario["classes"]
        ),
        scenario=document,
        control=control,
        **fields,
    )


def job_scenario(snapshot: JobSnapshot) -> dict[str, Any]:
    """The scenario document ``snapshot``'s job runs: its scenario with the job's and the
    classes' settings from ``snapshot.control``, or, without a scenario, the generated one.

    Raises ``ParameterError`` when ``control.classes`` names other classes than the
    scenario."""
    if snapshot.scenario is None:
        return _derived_scenario(snapshot)
    document = snapshot.scenario
    classes = snapshot.control.classes
    names = [c["name"] for c in document["classes"]]
    if sorted(names) != sorted(classes):
        missing = sorted(set(names) - set(classes))
        extra = sorted(set(classes) - set(names))
        raise ParameterError(
            "control.classes",
            sorted(classes),
            f"must name the scenario's classes {sorted(names)}"
            + (f"; missing {missing}" if missing else "")
            + (f"; unknown {extra}" if extra else ""),
        )
    return {
        **document,
        "control": control_with_settings(document["control"], snapshot.control),
        "classes": [with_settings(c, classes[c["name"]]) for c in document["classes"]],
    }


def _derived_scenario(snapshot: JobSnapshot) -> dict[str, Any]:
    """The scenario document of ``snapshot.classes``, each on its generated stream."""
    queries = {c.name: [generated_query(c.name, c.selectivity)] for c in snapshot.classes}
    return compose(
        snapshot.control,
        queries,
        rate_per_s=0.0,
        stream_rates={queries[c.name][0].source: c.rate_per_s for c in snapshot.classes},
        period_s=snapshot.control_period_s,
        duration_s=snapshot.duration_s or UNLIMITED_SCHEDULE_S,
        name=f"job-{snapshot.job_id}",
        seed=snapshot.job_id,
    )

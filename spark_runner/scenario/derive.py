"""The scenario of a job launched without one (no Spark).

A snapshot without a scenario (``headroom run`` of registered classes, a job stored before
jobs carried one) runs what the walking skeleton ran: class *k* reads its own generated
stream at its ``rate_per_s`` and runs :func:`~spark_runner.scenario.compose.generated_query`
with its ``selectivity``; the control period, duration and parameters come from the
snapshot, through the one converter of control-plane classes
(:mod:`spark_runner.scenario.compose`).
"""

from __future__ import annotations

from typing import Any

from spark_runner.contract.snapshot import JobSnapshot
from spark_runner.scenario.compose import UNLIMITED_SCHEDULE_S, compose, generated_query


def derived_scenario(snapshot: JobSnapshot) -> dict[str, Any]:
    """The scenario document of ``snapshot.classes`` (a class the snapshot's configuration
    does not name runs with the spec defaults; the job refuses such a configuration by
    name before Spark starts)."""
    control = snapshot.initial_control()
    classes = {**snapshot.default_control().classes, **control.classes}
    queries = {c.name: [generated_query(c.name, c.selectivity)] for c in snapshot.classes}
    return compose(
        control.model_copy(update={"classes": classes}),
        queries,
        rate_per_s=0.0,
        stream_rates={queries[c.name][0].source: c.rate_per_s for c in snapshot.classes},
        period_s=snapshot.control_period_s,
        duration_s=snapshot.duration_s or UNLIMITED_SCHEDULE_S,
        name=f"job-{snapshot.job_id}",
        seed=snapshot.job_id,
    )

"""The processor share a scenario's background jobs take over time."""

from __future__ import annotations

from spark_runner.scenario.arrivals import RateSchedule
from spark_runner.scenario.models import Scenario

MAX_BACKGROUND_SHARE = 0.99


def background_schedule(scenario: Scenario) -> RateSchedule:
    """The processor share taken by background jobs over time (piecewise constant)."""
    duration = scenario.duration_s
    edges: list[tuple[float, float]] = []  # (time, +share/-share)
    for job in scenario.background:
        end = min(job.end_s if job.end_s is not None else duration, duration)
        if job.on_s is None or job.off_s is None:
            edges += [(job.start_s, job.share), (end, -job.share)]
            continue
        t = job.start_s
        while t < end:
            edges += [(t, job.share), (min(t + job.on_s, end), -job.share)]
            t += job.on_s + job.off_s
    edges.sort()
    starts, shares = [0.0], [0.0]
    level = 0.0
    for t, delta in edges:
        level += delta
        value = min(max(level, 0.0), MAX_BACKGROUND_SHARE)
        if t == starts[-1]:
            shares[-1] = value
        else:
            starts.append(t)
            shares.append(value)
    return RateSchedule(tuple(starts), tuple(shares))

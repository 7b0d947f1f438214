"""A scenario as one streaming query per priority tier (``engine.queries: tier``), no Spark.

In one streaming query every class's tuples commit at the same instant, and a batch
carries every class's operators and state stores: the top class answers only when the
lowest class's windows have committed. With a query per priority tier, a tier's batch
carries its own classes only, and the tiers' batches run side by side on the
application's task slots. Spark's FAIR scheduler then gives a free slot to the tier pool
that waits with the fewest running tasks, the top tier first among equals
(:func:`pool_shares`), so a lower tier's batch no longer holds the top tier's commit.

A tier is a priority level; levels whose classes read a shared segment together are one
tier, so a segment is computed once, in one query. Each tier's query has its own
checkpoint, offsets, pace and controller (DILoS among the tier's classes): a lower
tier's controller measures its batches beside the upper tiers' and sheds for what it
measures. The tiers are fixed at launch; a live priority change reorders classes within
their tier.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from spark_runner.contract.control import LiveConfig
from spark_runner.contract.snapshot import one_query_reason
from spark_runner.core.errors import ParameterError
from spark_runner.scenario.models import Query, Scenario, Segment, right_input

POOL_PREFIX = "tier"
"""The FAIR scheduler pool of tier ``i`` is ``tier<i>`` (the top tier is ``tier0``)."""


def tier_classes(scenario: Scenario) -> list[list[str]]:
    """The classes of each tier, the highest priority first (a class's order within its
    tier is the scenario's). Levels from the highest to the lowest that read one shared
    segment are one tier, with every level between them: tiers stay in priority order."""
    levels = sorted({c.priority for c in scenario.classes}, reverse=True)
    level_of = {c.name: levels.index(c.priority) for c in scenario.classes}
    reads = {c.name: _segments_read(scenario, c.name) for c in scenario.classes}
    reaches = list(range(len(levels)))  # the lowest level each level's tier reaches
    for segment in set().union(*reads.values()):
        readers = [level_of[name] for name, read in reads.items() if segment in read]
        reaches[min(readers)] = max(reaches[min(readers)], *readers)
    tiers: list[list[str]] = []
    reach = -1
    for level in range(len(levels)):
        if level > reach:
            tiers.append([])
        reach = max(reach, reaches[level])
        tiers[-1] += [c.name for c in scenario.classes if level_of[c.name] == level]
    return [sorted(t, key=[c.name for c in scenario.classes].index) for t in tiers]


def _segments_read(scenario: Scenario, class_name: str) -> set[str]:
    """The shared segments class ``class_name`` reads, directly or through another."""
    segments = {s.name: s for s in scenario.shared_segments}
    wanted = [
        name
        for q in scenario.query_class(class_name).queries
        for name in (q.source, *(right_input(op) for op in q.operators))
        if name in segments
    ]
    seen: set[str] = set()
    while wanted:
        name = wanted.pop()
        if name in seen:
            continue
        seen.add(name)
        s = segments[name]
        wanted += [n for n in (s.source, *(right_input(op) for op in s.operators)) if n in segments]
    return seen


def tier_scenario(scenario: Scenario, names: Sequence[str], *, top: bool) -> Scenario:
    """``scenario`` with only the classes ``names``, the streams and segments they read,
    and (``top``: the top tier's, so that it runs once) its background load."""
    segments = set().union(*(_segments_read(scenario, n) for n in names))
    kept_segments = [s for s in scenario.shared_segments if s.name in segments]
    classes = [c for c in scenario.classes if c.name in names]
    readers: list[Query | Segment] = [q for c in classes for q in c.queries]
    inputs = {
        name
        for reader in [*readers, *kept_segments]
        for name in (reader.source, *(right_input(op) for op in reader.operators))
        if name is not None
    }
    return scenario.model_copy(
        update={
            "classes": classes,
            "streams": [s for s in scenario.streams if s.name in inputs],
            "shared_segments": kept_segments,
            "background": scenario.background if top else [],
        }
    )


def tier_live(live: LiveConfig, names: Sequence[str]) -> LiveConfig:
    """The part of a live configuration a tier's controller takes: its classes' (a class
    the configuration does not name stays unnamed: the controller refuses it)."""
    return live.model_copy(
        update={
            "classes": {n: live.classes[n] for n in names if n in live.classes},
            "ranges": {n: r for n, r in live.ranges.items() if n in names},
        }
    )


def check_tiers(scenario: Scenario) -> None:
    """Raise ``ParameterError`` when ``scenario`` cannot run as a query per tier."""
    reason = one_query_reason(scenario.model_dump(mode="json"))
    if reason is not None:
        raise ParameterError("engine.queries", "tier", reason)


def tier_sink_path(kind: str, path: str | None, tier: int) -> str | None:
    """Tier ``tier``'s sink: a file sink's ``<path>/tier=<i>`` (``spark.read`` of
    ``<path>`` reads every tier, ``tier`` a column), a Redis sink's ``<key>:tier<i>``."""
    if path is None or kind not in ("parquet", "json", "redis"):
        return path
    return f"{path}:tier{tier}" if kind == "redis" else f"{path}/tier={tier}"


def pool_shares(tiers: int, cores: int) -> list[tuple[str, int, int]]:
    """Each tier's FAIR scheduler pool: (name, minimum share, weight). Spark offers a free
    task slot first to a pool running fewer tasks than its minimum share, then to the pool
    with the fewest running tasks per weight: the top tier's minimum share is every core,
    so it takes each free slot while it has tasks waiting; below it the weights halve per
    tier."""
    return [
        (f"{POOL_PREFIX}{i}", max(cores, 1) if i == 0 else 0, 2 ** (tiers - 1 - i))
        for i in range(tiers)
    ]


def merge_results(parts: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One results document of the tiers' documents (each of its own classes): classes,
    actions and redistributions together, the series in time order (a sample holds its
    tier's classes), the top tier's engine facts with every tier's under ``tiers``."""
    if len(parts) == 1:
        return parts[0]
    top = parts[0]
    classes = {k: v for p in parts for k, v in p["classes"].items()}
    losses = [c["loss_fraction"] for c in classes.values()]
    idle = [p["totals"]["idle_fraction"] for p in parts]
    return {
        **top,
        "classes": classes,
        "totals": {
            "mean_loss_fraction": sum(losses) / len(losses),
            "idle_fraction": min(idle),
            "operator_turns": sum(p["totals"]["operator_turns"] for p in parts),
        },
        "redistributions": sorted(
            (r for p in parts for r in p["redistributions"]), key=lambda r: r["t_s"]
        ),
        "actions": sorted(
            (a for p in parts for a in p["actions"]), key=lambda a: (a["at_s"], a["seq"])
        ),
        "series": sorted((s for p in parts for s in p["series"]), key=lambda s: s["t_s"]),
        "engine": {
            **top["engine"],
            "batches": sum(p["engine"]["batches"] for p in parts),
            "warmup_ended": all(p["engine"]["warmup_ended"] for p in parts),
            "tiers": [{"classes": list(p["classes"]), **p["engine"]} for p in parts],
        },
    }

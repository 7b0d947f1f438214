"""Control-plane classes and their queries → one scenario document, and back (pure).

The one converter between a class the control plane knows (its name and live parameters,
``ClassControl``) and a scenario class: :func:`scenario_class` (and :func:`compose` for a
whole job) one way, :func:`scenario_live_config` for a stored scenario's classes the
other. Used for a job launched from registered classes (``backend/queries``), for a
snapshot that carries no scenario (``spark_runner/job``), to validate a query before it
is stored, and for a job launched from a stored scenario (``backend/jobs``). Streams a
query names are generated at a constant rate (a stored scenario supplies real
workloads); a query reading ``query:<name>`` reads that shared query's output, which
becomes a shared segment owned by the highest-priority reader (spec §4); a class with
no query runs :func:`generated_query`. The job-level settings (DILoS or one manager per
class, policy, redistribution period) come from the same ``LiveConfig``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from spark_runner.contract.control import ClassControl, LiveConfig, elastic_settings
from spark_runner.core.class_settings import SETTING_NAMES
from spark_runner.core.params import ParamValue
from spark_runner.core.thresholds import TAUS
from spark_runner.scenario.models import FORMAT_VERSION, QueryClass, Scenario
from spark_runner.scenario.sql_allowlist import query_shape

QUERY_PREFIX = "query:"
SEGMENT_PREFIX = "shared."
STREAM_PREFIX = "stream."
RESERVED_STREAM_PREFIXES = (SEGMENT_PREFIX, STREAM_PREFIX)
"""A declared stream's name starts with neither (they name derived streams and segments)."""
DECLARED_FIELDS = ("columns", "event_time", "description")
"""What a declared stream gives the scenario's stream of its name (see :func:`compose`)."""
DEFAULT_KEYS = 100
DEFAULT_SELECTIVITY = 0.5
UNLIMITED_SCHEDULE_S = 86_400.0
"""Generated streams of a job without a duration are scheduled for this long (constant
rates hold after)."""


@dataclass(frozen=True)
class QueryPart:
    name: str
    source: str
    operators: list[dict[str, Any]] = field(default_factory=list)
    shared: bool = False


def segment_name(query_name: str) -> str:
    return SEGMENT_PREFIX + query_name


def inputs_of(query: QueryPart) -> list[str]:
    """What ``query`` reads, in order: its source, a window join's right side, the
    streams a SQL statement joins (streams, or ``query:<name>``)."""
    names = [query.source]
    for op in query.operators:
        if op.get("kind") == "window_join" and isinstance(op.get("right"), str):
            names.append(op["right"])
        if op.get("kind") == "sql" and isinstance(op.get("statement"), str):
            names.extend(query_shape(op["statement"])[0][1:])
    return list(dict.fromkeys(names))


def generated_query(class_name: str, selectivity: float = DEFAULT_SELECTIVITY) -> QueryPart:
    """The query of a class that has none: its own generated stream, ``filter value <
    selectivity``, ``project key, value``."""
    return QueryPart(
        "generated",
        STREAM_PREFIX + class_name,
        [
            {"kind": "filter", "predicate": f"value < {selectivity!r}"},
            {"kind": "project", "columns": ["key", "value"]},
        ],
    )


_SCENARIO_PATHS: dict[str, tuple[str, ...]] = {
    **{tau: ("thresholds", tau) for tau in TAUS},
    "manager": ("manager", "kind"),
    "manager_params": ("manager", "params"),
}
"""Where the scenario format keeps a class setting (the others at the class's top level)."""


def scenario_class(
    name: str, control: ClassControl, queries: list[dict[str, Any]]
) -> dict[str, Any]:
    """The scenario class of the control plane's class ``name`` running ``queries``."""
    doc: dict[str, Any] = {"name": name}
    for setting in SETTING_NAMES:
        *parents, key = _SCENARIO_PATHS.get(setting, (setting,))
        target = doc
        for parent in parents:
            target = target.setdefault(parent, {})
        value = getattr(control, setting)
        target[key] = dict(value) if isinstance(value, Mapping) else value
    doc["queries"] = queries
    return doc


SETTING_KEYS = tuple(dict.fromkeys(_SCENARIO_PATHS.get(s, (s,))[0] for s in SETTING_NAMES))
"""The keys of a scenario class that hold its settings (the rest: name, queries, …)."""


def without_settings(document_class: Mapping[str, Any]) -> dict[str, Any]:
    """A scenario class (a document) without its settings: what a job snapshot carries
    beside its ``control``, where the settings are."""
    return {k: v for k, v in document_class.items() if k not in SETTING_KEYS}


def with_settings(document_class: Mapping[str, Any], control: ClassControl) -> dict[str, Any]:
    """A scenario class (a document) with the settings of ``control`` (the inverse of
    :func:`without_settings`)."""
    settings = scenario_class(document_class["name"], control, [])
    del settings["queries"]
    return {**without_settings(document_class), **settings}


JOB_SETTING_KEYS = ("policy", "redistribution_every", "elastic")
"""The keys of a scenario's ``control`` that hold job settings a live configuration
carries; its ``mode`` is one too where it is ``dilos`` or ``per_class`` (the live
configuration's ``redistribution_enabled``)."""
LIVE_MODES = ("dilos", "per_class")


def control_without_settings(control_doc: Mapping[str, Any]) -> dict[str, Any]:
    """A scenario's ``control`` (a document) without the job settings a live configuration
    carries: what a job snapshot keeps beside its ``control``. A ``mode`` of ``none`` or
    ``common``, which no live configuration expresses, stays."""
    kept = {k: v for k, v in control_doc.items() if k not in JOB_SETTING_KEYS}
    if kept.get("mode", LIVE_MODES[0]) in LIVE_MODES:
        kept.pop("mode", None)
    return kept


def control_with_settings(control_doc: Mapping[str, Any], config: LiveConfig) -> dict[str, Any]:
    """A scenario's ``control`` (a document) with the job settings of ``config`` (the
    inverse of :func:`control_without_settings`)."""
    kept = control_without_settings(control_doc)
    return {
        **kept,
        "mode": kept.get("mode") or ("dilos" if config.redistribution_enabled else "per_class"),
        "policy": config.policy,
        "redistribution_every": config.redistribution_every,
        "elastic": {"params": config.elastic} if config.elastic is not None else None,
    }


def class_control(query_class: QueryClass) -> ClassControl:
    """The live settings of a scenario class (the inverse of :func:`scenario_class`)."""
    values: dict[str, Any] = {}
    for setting in SETTING_NAMES:
        value: Any = query_class
        for key in _SCENARIO_PATHS.get(setting, (setting,)):
            value = getattr(value, key)
        values[setting] = dict(value) if isinstance(value, Mapping) else value
    return ClassControl(**values)


def compose(
    config: LiveConfig,
    queries: Mapping[str, Sequence[QueryPart]],
    shared: Sequence[QueryPart] = (),
    *,
    rate_per_s: float,
    period_s: float,
    duration_s: float,
    stream_rates: Mapping[str, float] | None = None,
    declared: Mapping[str, Mapping[str, Any]] | None = None,
    name: str = "registered-classes",
    seed: int = 0,
) -> dict[str, Any]:
    """The scenario document of the classes of ``queries`` (in its order; each with its
    own, non-shared queries, or none) with their parameters from ``config``, reading the
    given ``shared`` queries. The streams they read are generated at ``rate_per_s``, or
    at ``stream_rates[stream]``; a stream in ``declared`` carries its columns and event
    time (:data:`DECLARED_FIELDS`), any other ``key`` and ``value``."""
    streams: dict[str, float] = {}
    rates = stream_rates or {}
    schemas = declared or {}

    def input_name(source: str) -> str:
        if source.startswith(QUERY_PREFIX):
            return segment_name(source.removeprefix(QUERY_PREFIX))
        streams.setdefault(source, rates.get(source, rate_per_s))
        return source

    def operators(ops: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = [dict(op) for op in ops]
        for op in out:
            if op.get("kind") == "window_join" and isinstance(op.get("right"), str):
                op["right"] = input_name(op["right"])
            if op.get("kind") == "sql" and isinstance(op.get("statement"), str):
                for joined in query_shape(op["statement"])[0][1:]:
                    input_name(joined)
        return out

    segments = [
        {
            "name": segment_name(q.name),
            "source": input_name(q.source),
            "operators": operators(q.operators),
        }
        for q in shared
    ]
    classes = []
    for class_name, parts in queries.items():
        own = [q for q in parts if not q.shared] or [generated_query(class_name)]
        docs = [
            {"name": q.name, "source": input_name(q.source), "operators": operators(q.operators)}
            for q in own
        ]
        classes.append(scenario_class(class_name, config.classes[class_name], docs))
    return {
        "version": FORMAT_VERSION,
        "name": name,
        "seed": seed,
        "duration_s": duration_s,
        "control": control_with_settings({"period_s": period_s}, config),
        "streams": [
            {
                "name": s,
                "keys": DEFAULT_KEYS,
                "arrival": {"kind": "constant", "rate_per_s": r},
                **{k: v for k, v in schemas.get(s, {}).items() if k in DECLARED_FIELDS},
            }
            for s, r in streams.items()
        ],
        "shared_segments": segments,
        "classes": classes,
    }


def scenario_live_config(scenario: Scenario) -> LiveConfig:
    """The live configuration a scenario starts with (version 0), as the backend derives it."""
    control = scenario.control
    return LiveConfig(
        policy=control.policy,
        redistribution_every=control.redistribution_every,
        redistribution_enabled=control.mode == "dilos",
        classes={c.name: class_control(c) for c in scenario.classes},
        elastic=_elastic_settings(scenario),
    )


def _elastic_settings(scenario: Scenario) -> dict[str, ParamValue] | None:
    """A scenario's elasticity settings but the thresholds (those are the classes')."""
    elastic = scenario.control.elastic
    return elastic_settings(elastic.params) if elastic is not None else None

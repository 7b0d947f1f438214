"""The scenario format, version 1: typed models of one YAML document (docs/scenario-format.md).

A scenario describes query classes (priority, delay target, load manager), the continuous
queries of each class built from real operator kinds, the input streams and their arrival
patterns, an optional background load, and the control settings (control period, mode,
redistribution cycle), plus a duration and a seed. The same file drives the simulator and
the Spark runner: ``sim`` hints on operators and the ``engine`` section are simulation
inputs the Spark engine ignores (it measures costs and selectivities instead).

Every model forbids unknown fields, so a typo is an error that names its path. Cross
references (a query's source, a join's right input) are checked by
:mod:`spark_runner.scenario.validate`, which the loader runs after these models.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationInfo,
    field_validator,
    model_validator,
)

from spark_runner.contract.settings import setting_field, with_class_settings
from spark_runner.core.class_settings import (
    MANAGER_SETTINGS,
    MAX_DELAY_TARGET_S,
    MIN_DELAY_TARGET_S,
)
from spark_runner.core.elastic import ScalingParams, job_thresholds
from spark_runner.core.errors import ParameterError
from spark_runner.core.params import build_params
from spark_runner.core.redistribution import DEFAULT_POLICY
from spark_runner.core.thresholds import TAUS, Thresholds, validate_thresholds
from spark_runner.scenario.columns import (
    MAX_COLUMNS,
    SQL_ENGINE_COLUMNS,
    ColumnName,
    StreamColumn,
    default_columns,
    engine_column,
    engine_column_rule,
    repeated_name,
)
from spark_runner.scenario.predicates import PredicateError, parse_predicate
from spark_runner.scenario.sql_allowlist import (
    MAX_QUERY_CHARS,
    SqlNotAllowed,
    check_expression,
    query_shape,
)

FORMAT_VERSION = 1
"""The scenario format version this build reads and writes."""

SUPPORTED_VERSIONS = (1,)

NAME_PATTERN = r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$"
NAME_MAX_LENGTH = 100
"""The longest name a user gives (a class, a query, a stream)."""
DERIVED_PREFIX_MAX_LENGTH = 16
"""Room for the prefix of a name the control plane derives from one (``stream.<class>``,
``shared.<query>``)."""
Name = Annotated[
    str,
    StringConstraints(
        pattern=NAME_PATTERN, min_length=1, max_length=NAME_MAX_LENGTH + DERIVED_PREFIX_MAX_LENGTH
    ),
]
"""Names of streams, segments, classes, queries and operators: the one rule the control
plane's classes and queries follow too, so a stored class runs under its own name."""
COLUMN_PATTERN = r"^[A-Za-z_][A-Za-z0-9_.-]*$"
Column = Annotated[str, StringConstraints(pattern=COLUMN_PATTERN, min_length=1, max_length=64)]
"""Names of columns (they appear in SQL expressions: no leading digit)."""

ParamScalar = bool | int | float | str
"""A manager parameter value (numbers, enumerated strings, booleans)."""

# --- bounds --------------------------------------------------------------------------------
# Every number of the format lies in a range a real run can use. A value outside it (1e300
# tuples/s, a 1e-300 s period, a 1e308 s duration) is an error that names the bound, not a
# load that stalls the simulator, the Spark job or the control plane. The backend's class
# and job schemas import these same bounds for the same facts.

MAX_DURATION_S = 7 * 86_400.0
"""Longest run (one week), s; so also the latest instant in a run (``at_s``, ``from_s``,
``start_s``, ``end_s``) and the longest window or on/off phase."""
MIN_PERIOD_S = 0.01
"""Shortest control period or rate-drawing period, s (a Spark micro-batch takes longer)."""
MAX_PERIOD_S = 3_600.0
"""Longest control period or rate-drawing period, s."""
MAX_RATE_PER_S = 1_000_000.0
"""Most tuples per second of one stream (a generated one, or a rate drawn or stepped to)."""
MIN_WINDOW_S = 0.001
"""Shortest window size or slide, s."""
MAX_WINDOWS_PER_ROW = 1_000
"""Most windows a row falls in (a sliding window's size over its slide): Spark copies every
row into each of its windows (a week's window every millisecond made 6·10⁸ copies a row)."""
MAX_COST_PER_TUPLE_S = 1.0
"""Most processing time per tuple of one operator, s (real operators take microseconds)."""
MAX_SELECTIVITY = 1_000.0
"""Most output tuples per input tuple (a join may exceed 1)."""
MIN_SHAPE, MAX_SHAPE = 0.01, 100.0
"""Range of the Pareto index α."""
MIN_SCALE, MAX_SCALE = 0.001, 1_000.0
"""Range of a trace's ``scale`` and ``time_scale``."""
MAX_KEYS = 2**31 - 1
"""Most distinct keys of a stream (a 32-bit integer column)."""
MAX_SEED = 2**63 - 1
"""Largest seed (a 64-bit integer)."""
MAX_REDISTRIBUTION_EVERY = 10_000
"""Most control periods between two DILoS capacity redistributions."""
MIN_ENGINE_STEP_S = 1e-4
"""Shortest simulator time step (tick, scheduler round, run span), s."""
MAX_BATCH_SIZE = 1_000_000
"""Most tuples an operator takes per turn in the simulator."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _require_increasing(starts: Sequence[float], field: str, item: str) -> None:
    """Each ``item``'s start (its ``field``, s) must come after the one before it."""
    for i in range(1, len(starts)):
        if starts[i] <= starts[i - 1]:
            raise ValueError(
                f"{field} must increase from one {item} to the next "
                f"({item} {i} at {starts[i]} s follows {starts[i - 1]} s)"
            )


def _checked(
    text: str, shown: str, check: Callable[[str], object], rejected: type[Exception]
) -> str:
    """``text`` when ``check`` accepts it; else a ``ValueError`` of ``shown`` (the field
    and its value) followed by the ``rejected`` error's reason."""
    try:
        check(text)
    except rejected as exc:
        raise ValueError(f"{shown} {exc}") from None
    return text


# --- arrival patterns ----------------------------------------------------------------------


class ConstantArrival(_Model):
    """A constant rate for the whole run."""

    kind: Literal["constant"]
    rate_per_s: float = Field(ge=0, le=MAX_RATE_PER_S, allow_inf_nan=False, description="tuples/s")


class StepPoint(_Model):
    """From ``at_s`` on (until the next point) the rate is ``rate_per_s``."""

    at_s: float = Field(ge=0, le=MAX_DURATION_S, allow_inf_nan=False)
    rate_per_s: float = Field(ge=0, le=MAX_RATE_PER_S, allow_inf_nan=False)


class StepArrival(_Model):
    """Piecewise-constant rate; 0 tuples/s before the first point."""

    kind: Literal["step"]
    steps: list[StepPoint] = Field(min_length=1)

    @field_validator("steps")
    @classmethod
    def _increasing(cls, steps: list[StepPoint]) -> list[StepPoint]:
        _require_increasing([step.at_s for step in steps], "at_s", "step")
        return steps


class ParetoRange(_Model):
    """From ``from_s`` on, each period's rate is drawn within [min, max]."""

    from_s: float = Field(ge=0, le=MAX_DURATION_S, allow_inf_nan=False)
    min_rate_per_s: float = Field(gt=0, le=MAX_RATE_PER_S, allow_inf_nan=False)
    max_rate_per_s: float = Field(gt=0, le=MAX_RATE_PER_S, allow_inf_nan=False)

    @model_validator(mode="after")
    def _ordered(self) -> ParetoRange:
        if self.max_rate_per_s < self.min_rate_per_s:
            raise ValueError(
                f"max_rate_per_s ({self.max_rate_per_s}) must be >= min_rate_per_s "
                f"({self.min_rate_per_s})"
            )
        return self


class ParetoArrival(_Model):
    """The thesis's SD_p: per period a rate drawn from a bounded Pareto within a range.

    The range may change over time (``ranges`` sorted by ``from_s``, the first at 0).
    ``shape`` is the Pareto index α (the thesis's "skewness 1" is α = 1): most periods
    sit near the minimum, a few reach towards the maximum.
    """

    kind: Literal["pareto"]
    ranges: list[ParetoRange] = Field(min_length=1)
    shape: float = Field(default=1.0, ge=MIN_SHAPE, le=MAX_SHAPE, allow_inf_nan=False)
    period_s: float | None = Field(
        default=None,
        ge=MIN_PERIOD_S,
        le=MAX_PERIOD_S,
        allow_inf_nan=False,
        description="default: the control period",
    )

    @field_validator("ranges")
    @classmethod
    def _sorted(cls, ranges: list[ParetoRange]) -> list[ParetoRange]:
        if ranges[0].from_s != 0:
            raise ValueError("the first range must start at from_s: 0")
        _require_increasing([r.from_s for r in ranges], "from_s", "range")
        return ranges


TRACE_DIR = Path(__file__).resolve().parents[2] / "scenarios" / "traces"
"""The one folder trace files are read from when no scenario file's folder is given: a
scenario stored in the control plane, and the job it launches. Paths there are relative
to this folder and must stay inside it (symlinks resolved first)."""


def confined_trace_path(path: str, trace_dir: Path | None = None) -> Path:
    """``path`` (relative to ``trace_dir``), resolved with its symlinks, if it names a file
    inside ``trace_dir``. Otherwise ``ValueError``, with one message whether the file is
    missing or outside the folder, so an answer reveals nothing about other files.
    ``trace_dir`` defaults to ``TRACE_DIR`` (read when called)."""
    root = (trace_dir or TRACE_DIR).resolve()
    if "\x00" not in path and not Path(path).is_absolute():
        resolved = (root / path).resolve()
        if resolved.is_relative_to(root) and resolved.is_file():
            return resolved
    raise ValueError(
        f"path {path!r} must name an existing file of the trace folder, relative to it "
        "and staying inside it (no absolute path, no '..' or link leading out)"
    )


class TraceArrival(_Model):
    """Replay a rate trace from a CSV file with columns ``time_s,rate_per_s``.

    Each row's rate holds from its ``time_s`` until the next row (the last row holds to
    the end unless ``loop``). ``path`` is relative to the scenario file when one is run
    from disk (validation context ``base_dir``), else relative to ``TRACE_DIR`` and
    confined to it. Rates are multiplied by ``scale``, times by ``time_scale``.
    """

    kind: Literal["trace"]
    path: str = Field(min_length=1)
    scale: float = Field(default=1.0, ge=MIN_SCALE, le=MAX_SCALE, allow_inf_nan=False)
    time_scale: float = Field(default=1.0, ge=MIN_SCALE, le=MAX_SCALE, allow_inf_nan=False)
    loop: bool = False

    @field_validator("path")
    @classmethod
    def _resolve(cls, path: str, info: ValidationInfo) -> str:
        base = (info.context or {}).get("base_dir")
        if base is None:
            return str(confined_trace_path(path))
        # A local scenario file (the command line): its author owns the disk it reads.
        candidate = Path(path)
        if not candidate.is_absolute():
            candidate = Path(base) / candidate
        if not candidate.is_file():
            raise ValueError(f"trace file not found: {candidate}")
        return str(candidate.resolve())


Arrival = Annotated[
    ConstantArrival | StepArrival | ParetoArrival | TraceArrival, Field(discriminator="kind")
]
ARRIVAL_KINDS = ("constant", "step", "pareto", "trace")


def check_schema(stream: str, columns: Sequence[StreamColumn], event_time: str | None) -> None:
    """``ParameterError`` (on ``columns`` or ``event_time``) unless every column name is
    declared once and ``event_time``, if set, names one of the timestamp columns."""
    twice = repeated_name([c.name for c in columns])
    if twice is not None:
        raise ParameterError(
            "columns",
            twice,
            f"column {twice!r} is declared twice in stream {stream!r} (names compare "
            "case-insensitively, as Spark resolves them)",
        )
    if event_time is not None:
        column = next((c for c in columns if c.name == event_time), None)
        if column is None or column.type != "timestamp":
            raise ParameterError(
                "event_time", event_time, f"must name a timestamp column of stream {stream!r}"
            )


class Stream(_Model):
    """An input stream. Tuples carry its ``columns`` (see :mod:`columns`; without them
    ``key``, uniform over ``keys`` integers, and ``value``, uniform in [0, 1)), ``seq`` and
    their arrival instant ``arrival_s``. ``event_time`` names the timestamp column windows
    and joins use (default: the arrival instant)."""

    name: Name
    arrival: Arrival
    keys: int = Field(default=100, ge=1, le=MAX_KEYS)
    columns: list[StreamColumn] | None = Field(default=None, min_length=1, max_length=MAX_COLUMNS)
    event_time: ColumnName | None = None
    description: str = ""

    @model_validator(mode="after")
    def _schema(self) -> Stream:
        check_schema(self.name, self.column_specs, self.event_time)
        return self

    @property
    def column_specs(self) -> tuple[StreamColumn, ...]:
        """The stream's columns (declared, or ``key`` and ``value``)."""
        return tuple(self.columns) if self.columns else default_columns(self.keys)

    @property
    def sql_columns(self) -> frozenset[str]:
        """What a SQL query reads of the stream: its columns, ``arrival_s`` and
        ``event_time`` (a copy of its event-time column, else the arrival instant: the one
        watermarked column, so windows and join bounds on it let Spark drop old state)."""
        return frozenset(c.name for c in self.column_specs) | SQL_ENGINE_COLUMNS


# --- operators ----------------------------------------------------------------------------


class SimHints(_Model):
    """What the simulator needs of an operator; the Spark engine measures these instead.

    Attributes:
        cost_per_tuple_s: processing time per input tuple, s (default: the operator's
            calibrated cost for ``map``, else ``engine.default_cost_per_tuple_s``).
        selectivity: output tuples per input tuple (default: from the predicate for
            ``filter``; 1 for ``project``, ``map`` and ``window_aggregate``; required for
            ``window_join``).
    """

    cost_per_tuple_s: float | None = Field(
        default=None, ge=0, le=MAX_COST_PER_TUPLE_S, allow_inf_nan=False
    )
    selectivity: float | None = Field(default=None, ge=0, le=MAX_SELECTIVITY, allow_inf_nan=False)


class _Operator(_Model):
    name: Name | None = Field(default=None, description="unique id; default derived")
    sim: SimHints = SimHints()


class FilterOp(_Operator):
    """Keep tuples matching ``predicate`` (see :mod:`spark_runner.scenario.predicates`)."""

    kind: Literal["filter"]
    predicate: str

    @field_validator("predicate")
    @classmethod
    def _parses(cls, predicate: str) -> str:
        return _checked(predicate, f"predicate {predicate!r}", parse_predicate, PredicateError)


def _quoted(text: str, limit: int = 80) -> str:
    """``text`` quoted for an error message, cut at ``limit`` characters."""
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


class ProjectOp(_Operator):
    """Keep only ``columns`` (``arrival_s`` is always carried along)."""

    kind: Literal["project"]
    columns: list[Column] = Field(min_length=1)


class MapOp(_Operator):
    """Compute ``output`` from the SQL ``expression`` and burn a calibrated CPU cost."""

    kind: Literal["map"]
    expression: str = Field(
        default="value",
        description="A Spark SQL expression over the tuple's columns; it must pass the "
        "allow-list of spark_runner.scenario.sql_allowlist (no other function runs).",
    )
    output: Column = "value"
    cpu_cost_per_tuple_s: float = Field(ge=0, le=MAX_COST_PER_TUPLE_S, allow_inf_nan=False)

    @field_validator("expression")
    @classmethod
    def _allowed(cls, expression: str) -> str:
        shown = f"expression {_quoted(expression)}"
        return _checked(expression, shown, check_expression, SqlNotAllowed)

    @field_validator("output")
    @classmethod
    def _not_the_engines(cls, output: str) -> str:
        if engine_column(output):
            raise ValueError(f"output {output!r} {engine_column_rule()}")
        return output


def windows_per_row(size_s: float, slide_s: float) -> int:
    """How many windows of ``size_s`` every ``slide_s`` a row falls in (at most)."""
    return math.ceil(round(size_s / slide_s, 9))


class Window(_Model):
    """A time window: ``tumbling`` (size) or ``sliding`` (size and slide <= size)."""

    type: Literal["tumbling", "sliding"] = "tumbling"
    size_s: float = Field(ge=MIN_WINDOW_S, le=MAX_DURATION_S, allow_inf_nan=False)
    slide_s: float | None = Field(
        default=None, ge=MIN_WINDOW_S, le=MAX_DURATION_S, allow_inf_nan=False
    )

    @model_validator(mode="after")
    def _slide(self) -> Window:
        if self.type == "sliding":
            if self.slide_s is None:
                raise ValueError("a sliding window needs slide_s")
            if self.slide_s > self.size_s:
                raise ValueError(f"slide_s ({self.slide_s}) must be <= size_s ({self.size_s})")
            count = windows_per_row(self.size_s, self.slide_s)
            if count > MAX_WINDOWS_PER_ROW:
                raise ValueError(
                    f"size_s / slide_s puts every row in {count} windows; "
                    f"MAX_WINDOWS_PER_ROW is {MAX_WINDOWS_PER_ROW}"
                )
        elif self.slide_s is not None and self.slide_s != self.size_s:
            raise ValueError("a tumbling window has no slide_s (or slide_s equal to size_s)")
        return self


class WindowAggregateOp(_Operator):
    """``function(column)`` per ``group_by`` over a time window."""

    kind: Literal["window_aggregate"]
    window: Window
    function: Literal["count", "sum", "avg", "min", "max"] = "count"
    column: Column = "value"
    group_by: list[Column] = Field(default_factory=lambda: ["key"])


class JoinWindow(_Model):
    """The range window of a window join: tuples at most ``size_s`` apart match."""

    size_s: float = Field(ge=MIN_WINDOW_S, le=MAX_DURATION_S, allow_inf_nan=False)


class WindowJoinOp(_Operator):
    """Join the upstream (left) with ``right`` (a stream or shared segment) on ``on_column``
    (equal values within ``window.size_s`` of each other match)."""

    kind: Literal["window_join"]
    right: Name
    window: JoinWindow
    on_column: Column = "key"


class SqlOp(_Operator):
    """A Spark SQL query: ``SELECT … FROM <the query's source stream> [JOIN <stream> ON …]
    [WHERE …] [GROUP BY …] [HAVING …]``, checked against the query allow-list
    (:func:`~spark_runner.scenario.sql_query.check_query`) when the scenario is
    validated and again when the engine builds it. The only operator of its query."""

    kind: Literal["sql"]
    statement: str = Field(min_length=1, max_length=MAX_QUERY_CHARS)

    @cached_property
    def _shape(self) -> tuple[tuple[str, ...], bool]:
        return query_shape(self.statement)  # parsed once per model

    @property
    def right(self) -> str | None:
        """The stream the statement joins, if any."""
        streams, _ = self._shape
        return streams[1] if len(streams) > 1 else None

    @property
    def stateful(self) -> bool:
        """It aggregates or joins (Spark keeps state for it)."""
        return self._shape[1]


Operator = Annotated[
    FilterOp | ProjectOp | MapOp | WindowAggregateOp | WindowJoinOp | SqlOp,
    Field(discriminator="kind"),
]
OperatorModel = FilterOp | ProjectOp | MapOp | WindowAggregateOp | WindowJoinOp | SqlOp
OPERATOR_KINDS = ("filter", "project", "map", "window_aggregate", "window_join", "sql")


def right_input(op: OperatorModel) -> str | None:
    """The second input of a two-input operator (a join's right side), else None."""
    return op.right if isinstance(op, WindowJoinOp | SqlOp) else None


class Query(_Model):
    """A continuous query: ``source`` (stream or shared segment) → ``operators`` → output."""

    name: Name
    source: Name
    operators: list[Operator] = Field(min_length=1)
    description: str = ""


class Segment(_Model):
    """A shared segment: operators whose output several queries read.

    Used by several classes it belongs to the highest-priority one; the lower classes shed
    at their first operator after it (001 §6.1.4).
    """

    name: Name
    source: Name
    operators: list[Operator] = Field(min_length=1)
    description: str = ""


# --- classes and control ------------------------------------------------------------------


class ManagerSpec(_Model):
    """A load manager: ``kind`` (aloma, seamless, ctrl, aurora, none, linear) and its
    parameters (validated by the core's ``make_manager``; the delay target comes from the
    class)."""

    kind: str = setting_field("manager")
    params: dict[str, ParamScalar] = Field(default_factory=dict)


class ThresholdsSpec(_Model):
    """Utilisation thresholds ``0 < tau0 < tau1 < tau2 < tau3 <= 1`` (spec §5)."""

    tau0: float = setting_field("tau0")
    tau1: float = setting_field("tau1")
    tau2: float = setting_field("tau2")
    tau3: float = setting_field("tau3")

    @model_validator(mode="after")
    def _ordered(self) -> ThresholdsSpec:
        try:
            validate_thresholds(self.tau0, self.tau1, self.tau2, self.tau3)
        except ParameterError as error:
            raise ValueError(f"{error.field}={error.value!r}: {error.rule}") from None
        return self


@with_class_settings(bounded=True, skip=(*TAUS, *MANAGER_SETTINGS))
class QueryClass(_Model):
    """A query class: its priority, delay target, load manager, thresholds, queries and
    a field per other class setting (``with_class_settings``)."""

    name: Name
    priority: float = setting_field("priority", bounded=True, allow_inf_nan=False)
    delay_target_s: float = setting_field("delay_target_s", bounded=True, allow_inf_nan=False)
    manager: ManagerSpec = ManagerSpec()
    thresholds: ThresholdsSpec = ThresholdsSpec()
    queries: list[Query] = Field(min_length=1)
    description: str = ""


class CommonManagerSpec(ManagerSpec):
    """The single manager of ``mode: common``; its delay target defaults to the smallest
    class target."""

    delay_target_s: float | None = Field(
        default=None, ge=MIN_DELAY_TARGET_S, le=MAX_DELAY_TARGET_S, allow_inf_nan=False
    )


class ElasticSpec(_Model):
    """Elastic capacity: the job resizes its executors on a standalone cluster (spec §5).
    ``params`` are the core's :class:`~spark_runner.core.elastic.ScalingParams` but the
    thresholds (hold times, initial and maximum size, executor cores, sizing), validated
    by the core's rules; the thresholds are the lowest of the classes'."""

    params: dict[str, ParamScalar] = Field(default_factory=dict)

    def scaling(self, thresholds: Mapping[str, float] | None = None) -> ScalingParams:
        """The core's settings with the job's ``thresholds`` (``ParameterError`` when a
        rule fails; checked on load)."""
        return build_params(ScalingParams, {**(thresholds or {}), **self.params})


ControlMode = Literal["none", "common", "per_class", "dilos"]
CONTROL_MODES = ("none", "common", "per_class", "dilos")


class Control(_Model):
    """How load is managed.

    Modes: ``none`` (no shedding), ``common`` (one manager for the whole system,
    ``common_manager``), ``per_class`` (each class's own manager, fixed WRR quotas) and
    ``dilos`` (per-class managers plus capacity redistribution every
    ``redistribution_every`` periods under ``policy``).
    """

    period_s: float = Field(ge=MIN_PERIOD_S, le=MAX_PERIOD_S, allow_inf_nan=False)
    mode: ControlMode = "dilos"
    redistribution_every: int = Field(default=10, ge=1, le=MAX_REDISTRIBUTION_EVERY)
    policy: Literal["relative", "absolute", "strict"] = DEFAULT_POLICY
    min_share: float = Field(default=0.0, ge=0, lt=1)
    hold_infeasible: bool = True
    common_manager: CommonManagerSpec = CommonManagerSpec()
    elastic: ElasticSpec | None = None


class Background(_Model):
    """A background job taking ``share`` of the processor from ``start_s`` to ``end_s``.

    With ``on_s``/``off_s`` it comes and goes: present ``on_s``, absent ``off_s``, repeated
    (001 §5.3.2.6). Overlapping jobs add up (capped at 0.99).
    """

    start_s: float = Field(ge=0, le=MAX_DURATION_S, allow_inf_nan=False)
    end_s: float | None = Field(default=None, gt=0, le=MAX_DURATION_S, allow_inf_nan=False)
    share: float = Field(gt=0, lt=1)
    on_s: float | None = Field(default=None, gt=0, le=MAX_DURATION_S, allow_inf_nan=False)
    off_s: float | None = Field(default=None, gt=0, le=MAX_DURATION_S, allow_inf_nan=False)

    @model_validator(mode="after")
    def _window(self) -> Background:
        if self.end_s is not None and self.end_s <= self.start_s:
            raise ValueError(f"end_s ({self.end_s}) must be > start_s ({self.start_s})")
        if (self.on_s is None) != (self.off_s is None):
            raise ValueError("on_s and off_s go together (both or neither)")
        return self


class Engine(_Model):
    """Simulation-only settings of the stream engine (the Spark runner ignores them).

    Attributes:
        scheduler_round_s: length of one weighted-round-robin round; class k gets
            ``quota_k × scheduler_round_s`` of processor per round, s.
        batch_size: most tuples an operator takes per turn (AQSIOS: 50).
        batch_overhead_s: fixed cost of one operator turn, part of its measured cost, s.
        dispatch_overhead_s: scheduler cost per operator turn, measured by nobody, s.
        hidden_overhead_fraction: unmeasured work (statistics, memory management) per
            unit of operator work; the true headroom is about ``1 / (1 + this)``.
        source_cost_per_tuple_s: cost of a class's source operator per tuple read, s.
        default_cost_per_tuple_s: operator cost when ``sim.cost_per_tuple_s`` is absent, s.
        tick_s: arrivals are delivered to the sources at this granularity, s.
        run_span_s: queued tuples are tracked in runs spanning at most this long, s.
        cost_jitter: relative spread (lognormal sigma) of each turn's cost; 0 = exact.
        background_cost_visible: a background job also inflates measured costs (wall-clock
            measurement); false = measured costs are CPU time and only capacity drops.
        stall_rate_per_s: random processor stalls per second (operating-system interrupts,
            other processes' time slices; 001 §5.2.1) — unmeasured, Poisson; 0 = none.
        stall_mean_s: mean length of a stall (exponential), s.
        executor_startup_s: with ``control.elastic``, how long an executor the policy
            asks for takes to serve, s (measured on Spark here: 6-10 s under load).
    """

    scheduler_round_s: float = Field(default=0.01, ge=MIN_ENGINE_STEP_S, le=MAX_PERIOD_S)
    batch_size: int = Field(default=50, ge=1, le=MAX_BATCH_SIZE)
    batch_overhead_s: float = Field(default=1e-4, ge=0, le=MAX_COST_PER_TUPLE_S)
    dispatch_overhead_s: float = Field(default=0.0, ge=0, le=MAX_COST_PER_TUPLE_S)
    hidden_overhead_fraction: float = Field(default=0.0, ge=0, le=100)
    source_cost_per_tuple_s: float = Field(default=1e-5, ge=0, le=MAX_COST_PER_TUPLE_S)
    default_cost_per_tuple_s: float = Field(default=1e-4, ge=0, le=MAX_COST_PER_TUPLE_S)
    tick_s: float = Field(default=0.002, ge=MIN_ENGINE_STEP_S, le=MAX_PERIOD_S)
    run_span_s: float = Field(default=0.01, ge=MIN_ENGINE_STEP_S, le=MAX_PERIOD_S)
    cost_jitter: float = Field(default=0.0, ge=0, le=1)
    background_cost_visible: bool = False
    stall_rate_per_s: float = Field(default=0.0, ge=0, le=1_000)
    stall_mean_s: float = Field(default=0.01, gt=0, le=MAX_PERIOD_S)
    executor_startup_s: float = Field(default=8.0, ge=0, le=MAX_PERIOD_S)


class Scenario(_Model):
    """One scenario document (format version 1)."""

    version: int
    name: Name
    description: str = ""
    seed: int = Field(default=0, ge=0, le=MAX_SEED)
    duration_s: float = Field(gt=0, le=MAX_DURATION_S, allow_inf_nan=False)
    control: Control
    engine: Engine = Engine()
    streams: list[Stream] = Field(min_length=1)
    shared_segments: list[Segment] = Field(default_factory=list)
    classes: list[QueryClass] = Field(min_length=1)
    background: list[Background] = Field(default_factory=list)

    @field_validator("version")
    @classmethod
    def _supported(cls, version: int) -> int:
        if version not in SUPPORTED_VERSIONS:
            supported = ", ".join(str(v) for v in SUPPORTED_VERSIONS)
            raise ValueError(
                f"unsupported scenario version {version}; this build reads {supported}"
            )
        return version

    def scaling(self) -> ScalingParams | None:
        """The job's elastic settings, its thresholds the lowest of its classes' (None:
        the scenario asks no elasticity)."""
        if self.control.elastic is None:
            return None
        per_class = (Thresholds(**c.thresholds.model_dump()) for c in self.classes)
        return self.control.elastic.scaling(job_thresholds(per_class))

    def stream(self, name: str) -> Stream:
        for s in self.streams:
            if s.name == name:
                return s
        raise KeyError(name)

    def segment(self, name: str) -> Segment:
        for s in self.shared_segments:
            if s.name == name:
                return s
        raise KeyError(name)

    def query_class(self, name: str) -> QueryClass:
        for c in self.classes:
            if c.name == name:
                return c
        raise KeyError(name)


def operator_selectivity(
    op: OperatorModel,
    columns: Sequence[StreamColumn],
) -> float:
    """The selectivity the simulator uses for ``op`` reading a stream of ``columns`` (see
    :class:`SimHints`)."""
    if op.sim.selectivity is not None:
        return op.sim.selectivity
    if isinstance(op, FilterOp):
        return parse_predicate(op.predicate).selectivity(columns)
    return 1.0


def operator_cost(op: OperatorModel, engine: Engine) -> float:
    """The cost per tuple the simulator uses for ``op``, s (see :class:`SimHints`)."""
    if op.sim.cost_per_tuple_s is not None:
        return op.sim.cost_per_tuple_s
    if isinstance(op, MapOp):
        return op.cpu_cost_per_tuple_s
    return engine.default_cost_per_tuple_s

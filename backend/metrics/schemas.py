from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from backend.api.body_limits import ENVELOPE_BYTES, KIB
from spark_runner.contract.samples import INT32_MAX, MAX_BATCH_SAMPLES, MetricSample
from spark_runner.scenario.models import MAX_DURATION_S, MAX_PERIOD_S, MAX_RATE_PER_S

MAX_LIMIT = 100_000
# Finer buckets than this would only split samples; far finer ones overflow the bucket
# index (epoch seconds / step).
MIN_STEP_S = 0.001

WINDOW_RULES = (
    "Order of operations: the window (since, until, last_s, class_name) selects samples; "
    "step_s merges them into buckets; limit then keeps at most that many results (buckets "
    "when downsampled). With last_s, limit keeps the NEWEST results (the window's end); "
    "without it, the OLDEST (the window's start), so since + limit pages forward. The "
    "results are always ordered oldest first."
)


class EpochRange(BaseModel):
    """The samples between two epoch times, each optional: a job's or a run's."""

    model_config = ConfigDict(extra="forbid")

    since: float | None = Field(
        default=None, allow_inf_nan=False, description="Only samples with t > since (epoch s)."
    )
    until: float | None = Field(
        default=None, allow_inf_nan=False, description="Only samples with t <= until (epoch s)."
    )


class SeriesQuery(EpochRange):
    """A time window over a job's samples."""

    last_s: float | None = Field(
        default=None,
        gt=0,
        allow_inf_nan=False,
        description="Only the newest last_s seconds of the job's samples (t > newest t − "
        "last_s); limit then keeps the newest results.",
    )
    class_name: str | None = Field(default=None, max_length=100)
    step_s: float | None = Field(
        default=None,
        ge=MIN_STEP_S,
        allow_inf_nan=False,
        description="Downsample into buckets of this many seconds (at least 0.001), per "
        "class; applied before limit (limit counts buckets).",
    )
    limit: int = Field(
        default=10_000,
        ge=1,
        le=MAX_LIMIT,
        description="At most this many results, after downsampling: the newest with "
        "last_s, else the oldest. ``truncated`` says whether any were left out.",
    )


class SeriesPoll(SeriesQuery):
    """A window, and how long to wait for news in it (a live view's long poll)."""

    wait_s: float = Field(
        default=0.0,
        ge=0,
        le=30,
        allow_inf_nan=False,
        description="Wait up to this many seconds until the window holds a sample newer "
        "than newer_than (any sample, without it), then answer the window (as it is, if "
        "none came). A live view asks for its look-back window with newer_than = the "
        "newest t it shows, and gets each new sample as soon as it is stored.",
    )
    newer_than: float | None = Field(
        default=None,
        allow_inf_nan=False,
        description="With wait_s: the news to wait for is a sample with t > newer_than.",
    )

    def has_news(self, samples: Sequence[MetricSample]) -> bool:
        if self.newer_than is None:
            return bool(samples)
        return any(s.t > self.newer_than for s in samples)


class ExportQuery(SeriesQuery):
    """The CSV export's window: without ``limit`` every sample in it is streamed."""

    limit: int | None = Field(  # type: ignore[assignment]
        default=None,
        ge=1,
        le=MAX_LIMIT,
        description="At most this many rows, chosen as for the JSON series (the newest "
        "with last_s, else the oldest); the header X-Headroom-Truncated says whether any "
        "were left out. Default: no limit, every sample of the window is streamed.",
    )


class MetricSeries(BaseModel):
    job_id: int
    samples: list[MetricSample]
    truncated: bool = Field(
        description="More results matched than ``limit``: with last_s the oldest were left "
        "out, else the newest. Narrow the window, raise limit (at most 100000), use step_s, "
        "or export the window as CSV (which streams every sample)."
    )


class IngestResult(BaseModel):
    job_id: int
    received: int


# --- ingest bounds -------------------------------------------------------------------------
# What a real run can report. A sample beyond them (t = 1e308 blanked every last_s window;
# response_time_max_s = 1e308 poisoned the run summary) is refused, naming the bound.

CLOCK_SKEW_S = 5.0
"""How far a sample's ``t`` may lie ahead of the control plane's clock (or before the
job's creation): the clock difference tolerated between the job's host and the API's."""
MAX_RESPONSE_TIME_S = MAX_DURATION_S
"""No tuple can wait longer than the longest run (a week)."""
MAX_ARRIVAL_RATE = 1_000.0 * MAX_RATE_PER_S
"""Arrivals per second of one class: a thousand streams at the largest generated rate."""

_Seconds = Annotated[float, Field(ge=0, le=MAX_RESPONSE_TIME_S, allow_inf_nan=False)]
_Count = Annotated[int, Field(ge=0, le=INT32_MAX)]
_Ratio = Annotated[float, Field(ge=0, allow_inf_nan=False)]


def _described(field: str) -> str | None:
    """What ``MetricSample`` says of ``field``: a field the ingest bounds again keeps it."""
    return MetricSample.model_fields[field].description


class IngestSample(MetricSample):
    """A sample as the ingest endpoint accepts it: every number finite and non-negative,
    every count and time within what a run can reach. (``t`` is further checked against
    the job's creation and the server's clock, see ``metrics.service.ingest``.)"""

    t: float = Field(gt=0, allow_inf_nan=False, description=_described("t"))
    period_s: float = Field(
        gt=0, le=MAX_PERIOD_S, allow_inf_nan=False, description=_described("period_s")
    )
    arrival_rate: float = Field(
        ge=0, le=MAX_ARRIVAL_RATE, allow_inf_nan=False, description=_described("arrival_rate")
    )
    response_time_mean_s: _Seconds | None = None
    response_time_max_s: _Seconds | None = None
    response_time_p50_s: _Seconds | None = None
    response_time_p95_s: _Seconds | None = None
    response_time_p99_s: _Seconds | None = None
    violation_mean_s: _Seconds | None = None
    violation_max_s: _Seconds | None = None
    waiting_count: _Count | None = None
    load: _Ratio | None = None
    headroom: _Ratio | None = None
    capacity_usage: _Ratio | None = None
    capacity_share: float | None = Field(default=None, ge=0, le=1, allow_inf_nan=False)
    shed_fraction: float | None = Field(default=None, ge=0, le=1, allow_inf_nan=False)
    oracle_shed_fraction: float | None = Field(default=None, ge=0, le=1, allow_inf_nan=False)
    floor_s: _Seconds | None = None
    job_usage: _Ratio | None = None


MAX_SAMPLE_JSON_BYTES = 2 * KIB
"""The widest sample as JSON: every field set, every number at its widest (24
characters), ``class_name``, ``manager`` and ``manager_state`` at their maximum lengths
with every character escaped, is 1.95 KB."""
INGEST_BODY_BYTES = MAX_BATCH_SAMPLES * MAX_SAMPLE_JSON_BYTES + ENVELOPE_BYTES
"""The body limit of ``POST /jobs/{job_id}/metrics``: a batch of the widest samples."""


class IngestBatch(BaseModel):
    """A batch of samples, as posted by a job (``MetricBatch`` with the ingest bounds)."""

    max_body_bytes: ClassVar[int] = INGEST_BODY_BYTES

    samples: list[IngestSample] = Field(min_length=1, max_length=MAX_BATCH_SAMPLES)

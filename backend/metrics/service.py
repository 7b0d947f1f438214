"""Metric ingest and queries."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, closing
from dataclasses import dataclass
from typing import Protocol

from sqlalchemy.orm import Session

from backend.bell import bell, metrics_key
from backend.db import after_commit
from backend.errors import Conflict, FieldErrors
from backend.jobs import service as jobs
from backend.jobs.models import Job
from backend.jobs.repository import JobRepository
from backend.jobs.states import TERMINAL, JobStatus
from backend.metrics.downsample import downsample_stream, newest_buckets, oldest_buckets, take
from backend.metrics.models import MetricSampleRow
from backend.metrics.repository import MetricRepository, PageCursor
from backend.metrics.schemas import CLOCK_SKEW_S, MAX_LIMIT, ExportQuery, SeriesQuery
from spark_runner.contract.samples import MetricSample

ReadSessions = Callable[[], AbstractContextManager[Session]]
EXPORT_PAGE_ROWS = 1000  # rows per keyset page (and per short read transaction) of an export
STREAM_PAGE_ROWS = 1000  # samples per read of a live stream


class ConfigTargets(Protocol):
    def targets_by_version(self, session: Session, job_id: int) -> dict[int, dict[str, float]]:
        """Each stored configuration version of the job: its classes' delay targets (live
        tuning's, handed in by ``backend.hooks``)."""
        ...


def ingest(
    session: Session,
    job_id: int,
    samples: Sequence[MetricSample],
    now_s: float,
    configs: ConfigTargets,
) -> dict[str, float]:
    """Store a job's samples; the first samples of a starting job mark it running.

    ``now_s`` is the server's clock (epoch s): every ``t`` must lie between the job's
    creation and ``now_s``, each widened by ``CLOCK_SKEW_S``. Returns the delay target in
    force of each class the samples report (for the live gauges): the target of its
    newest sample's configuration version (the launch's where the sample names none).
    """
    job = reporting_job(
        session,
        job_id,
        ((f"samples[{i}].t", s.t) for i, s in enumerate(samples)),
        (("class_name", name) for name in sorted({s.class_name for s in samples})),
        now_s,
    )
    MetricRepository(session).insert_many(
        [{"job_id": job_id, **sample.model_dump()} for sample in samples]
    )
    if job.state not in TERMINAL:
        jobs.mark_running(job)
    session.flush()
    after_commit(session, lambda: bell.ring(metrics_key(job_id)))  # wakes live streams
    launch, by_version = job.launch_targets(), configs.targets_by_version(session, job_id)
    targets: dict[str, float] = {}
    for sample in sorted(samples, key=lambda s: s.t):
        in_force = by_version.get(sample.config_version or 0, launch)
        if sample.class_name in in_force:
            targets[sample.class_name] = in_force[sample.class_name]
    return targets


def reporting_job(
    session: Session,
    job_id: int,
    times: Iterable[tuple[str, float]],
    classes: Iterable[tuple[str, str]],
    now_s: float,
) -> Job:
    """The job whose report (samples or actions) this is, once every time in it lies
    within the run (:func:`_check_times`) and every class named (``(path, name)``) is one
    of the job's."""
    job = JobRepository(session).require(job_id)
    _check_times(times, job.created_at.timestamp(), now_s)
    known = set(job.launch_targets())
    for path, name in classes:
        if name not in known:
            raise Conflict(f"{path}={name!r} is not a class of job {job_id}")
    return job


def _check_times(times: Iterable[tuple[str, float]], created_s: float, now_s: float) -> None:
    """Every time (``(path, epoch s)``) within the run so far: a sample or an action from
    before the job existed, or from the future, would distort every window and summary
    that includes it."""
    earliest, latest = created_s - CLOCK_SKEW_S, now_s + CLOCK_SKEW_S
    errors = []
    for path, value in times:
        if not earliest <= value <= latest:
            errors.append(
                (
                    path,
                    f"{path.rsplit('.', 1)[-1]}={value!r} must lie between the job's creation "
                    f"({created_s:.3f}) and the server's clock ({now_s:.3f}), each widened by "
                    f"{CLOCK_SKEW_S:g} s (epoch seconds)",
                )
            )
            if len(errors) == 5:  # enough to see the pattern; a batch may hold 10,000
                break
    if errors:
        raise FieldErrors(errors)


def require_job(session: Session, job_id: int) -> None:
    JobRepository(session).require(job_id)


@dataclass(frozen=True)
class Series:
    samples: list[MetricSample]
    truncated: bool  # more results matched than the limit


def series(session: Session, job_id: int, window: SeriesQuery) -> Series:
    """Samples of a job in a time window, optionally downsampled into ``step_s`` buckets,
    at most ``window.limit`` results (see ``WINDOW_RULES``). Memory holds at most
    ``limit`` results plus one open bucket per class."""
    require_job(session, job_id)
    repo = MetricRepository(session)
    since = _window_start(repo, job_id, window)
    limit = window.limit if window.limit is not None else MAX_LIMIT
    newest_first = window.last_s is not None
    rows = repo.iter_window(
        job_id,
        since=since,
        until=window.until,
        class_name=window.class_name,
        newest_first=newest_first,
    )
    with closing(rows):
        samples = (MetricSample.model_validate(row, from_attributes=True) for row in rows)
        if window.step_s is not None:
            pick = newest_buckets if newest_first else oldest_buckets
            kept, truncated = pick(samples, window.step_s, limit)
        else:
            kept, truncated = take(samples, limit)
            if newest_first:
                kept.reverse()
    return Series(kept, truncated)


def export(
    read_sessions: ReadSessions, job_id: int, window: ExportQuery
) -> tuple[Iterable[MetricSample], bool]:
    """``(rows, truncated)`` of a CSV export; a missing job raises before any row is read.

    Without a limit, every sample of the window, streamed (see ``export_samples``): never
    truncated. With one, the same results as the JSON series, held in memory (at most
    ``limit``)."""
    with read_sessions() as session:
        if window.limit is not None:
            result = series(session, job_id, window)
            return result.samples, result.truncated
        require_job(session, job_id)
    return export_samples(read_sessions, job_id, window), False


def export_samples(
    read_sessions: ReadSessions, job_id: int, window: ExportQuery, page_size: int | None = None
) -> Iterator[MetricSample]:
    """Every sample of the window, oldest first (merged into buckets with ``step_s``),
    read in keyset pages of ``page_size``, each page in a short read-only session of its
    own: memory and open transactions stay bounded however long the export runs."""
    with read_sessions() as session:
        since = _window_start(MetricRepository(session), job_id, window)
    samples = _paged(read_sessions, job_id, window, since, page_size or EXPORT_PAGE_ROWS)
    if window.step_s is not None:
        return downsample_stream(samples, window.step_s)
    return samples


def _paged(
    read_sessions: ReadSessions,
    job_id: int,
    window: ExportQuery,
    since: float | None,
    page_size: int,
) -> Iterator[MetricSample]:
    cursor: PageCursor | None = None
    while True:
        with read_sessions() as session:
            rows = MetricRepository(session).page(
                job_id,
                since=since,
                until=window.until,
                class_name=window.class_name,
                after=cursor,
                limit=page_size,
            )
            page = [MetricSample.model_validate(row, from_attributes=True) for row in rows]
            if rows:
                cursor = (rows[-1].t, rows[-1].class_name, rows[-1].id)
        yield from page
        if len(page) < page_size:
            return


def _window_start(repo: MetricRepository, job_id: int, window: SeriesQuery) -> float | None:
    """The window's exclusive lower bound in epoch seconds: ``since``, tightened to the
    newest ``last_s`` seconds of the job's samples."""
    since = window.since
    if window.last_s is not None:
        newest = repo.newest_t(job_id)
        if newest is not None:
            since = max(since if since is not None else -math.inf, newest - window.last_s)
    return since


def stream_batch(
    session: Session, job_id: int, after_id: int
) -> tuple[JobStatus, Sequence[MetricSampleRow]]:
    """For the live stream: the job's status, then its samples after ``after_id`` in
    arrival order (by id), at most ``STREAM_PAGE_ROWS``. Read in that order, so when the
    status is terminal the rows hold every sample the job stored after ``after_id``
    (its ingest token ends with it), up to the page's size."""
    job = JobRepository(session).require(job_id)
    rows = MetricRepository(session).query(job_id, after_id=after_id, limit=STREAM_PAGE_ROWS)
    return job.state, rows

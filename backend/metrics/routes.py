from __future__ import annotations

import csv
import io
import time
from collections.abc import AsyncIterator, Iterable, Iterator
from typing import Annotated

from fastapi import APIRouter, Query, Request, status
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import StreamingResponse

from backend.api.auth import JobCallerDep, ViewerDep
from backend.api.deps import IdPath, ReadSessionsDep, SessionDep
from backend.bell import bell, metrics_key
from backend.metrics import service
from backend.metrics.schemas import (
    WINDOW_RULES,
    ExportQuery,
    IngestBatch,
    IngestResult,
    MetricSeries,
    SeriesPoll,
)
from spark_runner.contract.samples import MetricSample

router = APIRouter(prefix="/jobs/{job_id}/metrics", tags=["metrics"])

RECHECK_S = 0.2
"""A stream or a long poll wakes when this process stores samples of its job (the bell)
and re-reads at least this often, for samples stored by another API process."""
STREAM_HEARTBEAT_S = 10.0
TRUNCATED_HEADER = "X-Headroom-Truncated"


@router.post("", response_model=IngestResult, status_code=status.HTTP_202_ACCEPTED)
def ingest(
    request: Request, session: SessionDep, job: JobCallerDep, body: IngestBatch
) -> IngestResult:
    """Called by the job process with its own token (not a user's), valid until the job
    stops or fails."""
    targets = service.ingest(session, job.job_id, body.samples, time.time())
    request.app.state.monitor.observe_samples(job.job_id, body.samples, targets)
    return IngestResult(job_id=job.job_id, received=len(body.samples))


@router.get(
    "",
    response_model=MetricSeries,
    description="Per-class samples, oldest first; ``last_s`` for the newest window, "
    "``step_s`` to downsample on the server, ``limit`` (after downsampling) to bound the "
    "answer, ``wait_s`` (with ``newer_than``) to wait for a new sample (a long poll). "
    + WINDOW_RULES,
)
async def series(
    read_sessions: ReadSessionsDep,
    _user: ViewerDep,
    job_id: IdPath,
    window: Annotated[SeriesPoll, Query()],
) -> MetricSeries:
    def _read() -> service.Series:
        with read_sessions() as session:
            return service.series(session, job_id, window)

    deadline = time.monotonic() + window.wait_s
    with bell.listen(metrics_key(job_id)) as ingest:
        result = await run_in_threadpool(_read)
        while (
            not window.has_news(result.samples) and (remaining := deadline - time.monotonic()) > 0
        ):
            await ingest.wait(min(RECHECK_S, remaining))
            result = await run_in_threadpool(_read)
    return MetricSeries(job_id=job_id, samples=result.samples, truncated=result.truncated)


@router.get(
    "/export",
    response_class=StreamingResponse,
    description="The samples of the window as CSV: a header row, then one row per class "
    "and period (or bucket, with step_s), oldest first. Without limit every sample of the "
    "window is streamed (nothing is cut). " + WINDOW_RULES,
    responses={
        200: {
            "content": {"text/csv": {}},
            "description": "One row per sample.",
            "headers": {
                TRUNCATED_HEADER: {
                    "description": "true when limit left rows out (only with limit); "
                    "leave limit out to export every row.",
                    "schema": {"type": "string", "enum": ["true", "false"]},
                }
            },
        }
    },
)
def export_csv(
    read_sessions: ReadSessionsDep,
    _user: ViewerDep,
    job_id: IdPath,
    window: Annotated[ExportQuery, Query()],
) -> StreamingResponse:
    rows, truncated = service.export(read_sessions, job_id, window)
    return StreamingResponse(
        _csv_rows(rows),
        media_type="text/csv",
        headers={
            "Content-Disposition": f'attachment; filename="job-{job_id}-metrics.csv"',
            TRUNCATED_HEADER: "true" if truncated else "false",
        },
    )


def _csv_rows(samples: Iterable[MetricSample]) -> Iterator[str]:
    columns = list(MetricSample.model_fields)
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(columns)
    for sample in samples:
        writer.writerow(["" if v is None else v for v in (getattr(sample, c) for c in columns)])
        if buffer.tell() > 64_000:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
    yield buffer.getvalue()


@router.get(
    "/stream",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}}},
)
async def stream(
    request: Request,
    read_sessions: ReadSessionsDep,
    _user: ViewerDep,
    job_id: IdPath,
    after_id: Annotated[
        int, Query(ge=0, le=2**63 - 1, description="Resume after this sample id.")
    ] = 0,
) -> StreamingResponse:
    """Server-sent events: every new sample as an ``event: sample`` with its id, so a
    client reconnecting with ``Last-Event-ID`` (or ``after_id``) misses nothing."""
    resume = request.headers.get("last-event-id", "")
    start = int(resume) if resume.isdigit() and len(resume) < 19 else after_id

    def _fetch(cursor: int) -> list[tuple[int, str]]:
        with read_sessions() as session:
            service.require_job(session, job_id)
            rows = service.rows_after(session, job_id, cursor)
            return [
                (row.id, MetricSample.model_validate(row, from_attributes=True).model_dump_json())
                for row in rows
            ]

    await run_in_threadpool(_fetch, start)  # 404 before the stream starts

    async def _events() -> AsyncIterator[str]:
        cursor = start
        quiet_since = time.monotonic()
        yield "retry: 1000\n\n"
        with bell.listen(metrics_key(job_id)) as ingest:
            while not await request.is_disconnected():
                batch = await run_in_threadpool(_fetch, cursor)
                for row_id, payload in batch:
                    cursor = row_id
                    yield f"id: {row_id}\nevent: sample\ndata: {payload}\n\n"
                now = time.monotonic()
                if batch:
                    quiet_since = now
                elif now - quiet_since >= STREAM_HEARTBEAT_S:
                    quiet_since = now
                    yield ": keep-alive\n\n"
                await ingest.wait(RECHECK_S)

    return StreamingResponse(
        _events(), media_type="text/event-stream", headers={"Cache-Control": "no-cache"}
    )

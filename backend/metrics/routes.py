from __future__ import annotations

import csv
import io
import time
from collections.abc import AsyncIterable, Callable, Iterable, Iterator
from contextlib import ExitStack
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response, status
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from backend.api.auth import TokenDep
from backend.api.body_limits import ParsedBodyRoute
from backend.api.deps import IdPath, ReadSessionsDep, SessionDep, from_app_state
from backend.bell import TOKENS_KEY, bell, metrics_key
from backend.jobs.access import JobCallerDep
from backend.metrics import service
from backend.metrics.live import LiveReaders, MetricStream
from backend.metrics.schemas import (
    WINDOW_RULES,
    ExportQuery,
    IngestBatch,
    IngestResult,
    MetricSeries,
    SeriesPoll,
)
from backend.users.access import ViewerDep
from spark_runner.contract.samples import MetricSample

router = APIRouter(prefix="/jobs/{job_id}/metrics", tags=["metrics"], route_class=ParsedBodyRoute)

TRUNCATED_HEADER = "X-Headroom-Truncated"
LiveReadersDep = Annotated[LiveReaders, from_app_state("live_readers")]
ConfigTargetsDep = Annotated[service.ConfigTargets, from_app_state("hooks")]


@router.post("", response_model=IngestResult, status_code=status.HTTP_202_ACCEPTED)
def ingest(
    request: Request,
    session: SessionDep,
    job: JobCallerDep,
    configs: ConfigTargetsDep,
    body: IngestBatch,
) -> IngestResult:
    """Called by the job process with its own token (not a user's), valid until the job
    stops or fails."""
    targets = service.ingest(session, job.job_id, body.samples, time.time(), configs)
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
    live: LiveReadersDep,
    job_id: IdPath,
    window: Annotated[SeriesPoll, Query()],
) -> MetricSeries:
    """A long poll waits on the process's shared poll (``backend.metrics.live``) and reads
    the window again only when its job has news; it answers at once when the job ended."""

    def _read() -> service.Series:
        with read_sessions() as session:
            return service.series(session, job_id, window)

    deadline = time.monotonic() + window.wait_s
    with bell.listen(metrics_key(job_id)) as news, live.watch.watching(job_id):
        result = await run_in_threadpool(_read)
        while (
            not window.has_news(result.samples)
            and not live.watch.ended(job_id)
            and (remaining := deadline - time.monotonic()) > 0
        ):
            if await live.watch.wait(news, remaining, read_sessions):
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
    responses={
        200: {"content": {"text/event-stream": {}}},
        204: {
            "description": "The job has ended and every sample after the cursor was sent: "
            "nothing more will come (an EventSource stops reconnecting)."
        },
        429: {
            "description": "The user or the API process holds the most streams it may "
            "(HEADROOM_METRICS_STREAMS_PER_USER, HEADROOM_METRICS_STREAMS_TOTAL); the "
            "Retry-After header gives seconds."
        },
    },
)
async def stream(
    request: Request,
    read_sessions: ReadSessionsDep,
    user: ViewerDep,
    token: TokenDep,
    live: LiveReadersDep,
    job_id: IdPath,
    after_id: Annotated[
        int, Query(ge=0, le=2**63 - 1, description="Resume after this sample id.")
    ] = 0,
) -> Response:
    """Server-sent events: every new sample as an ``event: sample`` with its id, so a
    client reconnecting with ``Last-Event-ID`` (or ``after_id``) misses nothing. Once the
    job has ended and its last samples were sent, an ``event: end`` with its status closes
    the stream; once the caller's token is revoked or expired (checked every
    HEADROOM_METRICS_TOKEN_RECHECK_S, and at once when this process revokes one), an
    ``event: end`` with the reason does."""
    resume = request.headers.get("last-event-id", "")
    start = int(resume) if resume.isdigit() and len(resume) < 19 else after_id
    held = ExitStack()  # given back when the response ends, however it ends
    try:
        held.enter_context(live.slots.hold(user.id))
        listener = held.enter_context(bell.listen(metrics_key(job_id), TOKENS_KEY))
        held.enter_context(live.watch.watching(job_id))
        reader = MetricStream(job_id, start, token, read_sessions, live, listener)
        first = await reader.read()  # 404 before the stream starts
    except BaseException:
        held.close()
        raise
    if first.ended and not first.rows:
        held.close()
        return Response(status_code=status.HTTP_204_NO_CONTENT)
    return _HeldStream(
        reader.events(first),
        release=held.close,
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache"},
    )


class _HeldStream(StreamingResponse):
    """A streaming response that gives back what it holds (its place among the capped
    streams, its subscriptions) however it ends: finished, failed, or cancelled by the
    client's disconnect."""

    def __init__(
        self, content: AsyncIterable[str], *, release: Callable[[], Any], **kwargs: Any
    ) -> None:
        super().__init__(content, **kwargs)
        self._release = release

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._release()

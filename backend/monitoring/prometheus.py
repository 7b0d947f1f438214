"""Prometheus metrics of one API process (each app gets its own registry).

Per-class gauges carry the newest sample a job reported; request metrics are recorded by
an ASGI middleware, labelled by the route template (not the raw path, to bound cardinality).

``GET /metrics`` lists jobs, classes and latencies, so it is closed like a Prometheus
target behind ``authorization: {credentials: …}``: it answers only a request carrying
``Authorization: Bearer <HEADROOM_METRICS_TOKEN>``. With no token configured it answers
401 to everyone (closed by default); a user's login token never opens it, so a scraper's
credential grants nothing else and a user's never sits in a scrape config.
"""

from __future__ import annotations

import hmac
import time
from collections.abc import Iterable

from fastapi import FastAPI, Request, Response
from fastapi.responses import JSONResponse
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from backend.api.deps import SettingsDep
from backend.api.middleware import HttpMiddleware
from spark_runner.contract.samples import MetricSample

CLASS_LABELS = ("job", "query_class")


class Monitor:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.response_time = Gauge(
            "headroom_class_response_time_seconds",
            "Response time of the class's outputs in the newest period.",
            [*CLASS_LABELS, "stat"],
            registry=self.registry,
        )
        self.delay_target = self._class_gauge(
            "headroom_class_delay_target_seconds", "Delay target of the class."
        )
        self.headroom = self._class_gauge(
            "headroom_class_headroom", "The load manager's capacity estimate L_C (s/s)."
        )
        self.shed_fraction = self._class_gauge(
            "headroom_class_shed_fraction", "Share of arriving tuples dropped."
        )
        self.capacity_usage = self._class_gauge(
            "headroom_class_capacity_usage", "Load over capacity share (u = L / L_C)."
        )
        self.arrival_rate = self._class_gauge(
            "headroom_class_arrival_rate", "Arriving tuples per second."
        )
        self.samples = Counter(
            "headroom_metric_samples_ingested",
            "Metric samples stored.",
            registry=self.registry,
        )
        self.requests = Counter(
            "headroom_http_requests",
            "API requests.",
            ["method", "route", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "headroom_http_request_duration_seconds",
            "API request latency.",
            ["method", "route"],
            registry=self.registry,
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
        )

    def _class_gauge(self, name: str, documentation: str) -> Gauge:
        """A gauge of this registry with one value per job and class."""
        return Gauge(name, documentation, CLASS_LABELS, registry=self.registry)

    def observe_samples(
        self, job_id: int, samples: Iterable[MetricSample], targets: dict[str, float]
    ) -> None:
        count = 0
        for sample in samples:
            count += 1
            labels = (str(job_id), sample.class_name)
            for stat, value in (
                ("mean", sample.response_time_mean_s),
                ("p95", sample.response_time_p95_s),
                ("max", sample.response_time_max_s),
            ):
                if value is not None:
                    self.response_time.labels(*labels, stat).set(value)
            self.arrival_rate.labels(*labels).set(sample.arrival_rate)
            if sample.class_name in targets:
                self.delay_target.labels(*labels).set(targets[sample.class_name])
            for gauge, value in (
                (self.headroom, sample.headroom),
                (self.shed_fraction, sample.shed_fraction),
                (self.capacity_usage, sample.capacity_usage),
            ):
                if value is not None:
                    gauge.labels(*labels).set(value)
        self.samples.inc(count)

    def exposition(self) -> Response:
        return Response(generate_latest(self.registry), media_type=CONTENT_TYPE_LATEST)


class RequestMetrics(HttpMiddleware):
    """Counts and times every HTTP request by method, route template and status."""

    def __init__(self, app: ASGIApp, monitor: Monitor) -> None:
        super().__init__(app)
        self.monitor = monitor

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = time.perf_counter()
        status = 500  # what the client gets if the app raises before answering

        async def send_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_status)
        finally:
            route = _route_template(scope)
            self.monitor.requests.labels(scope["method"], route, str(status)).inc()
            self.monitor.latency.labels(scope["method"], route).observe(
                time.perf_counter() - started
            )


def install(app: FastAPI, monitor: Monitor) -> None:
    """Count requests and serve ``/metrics`` to holders of the scrape token only
    (``Settings.metrics_token``; empty: to nobody)."""
    app.state.monitor = monitor
    app.add_middleware(RequestMetrics, monitor=monitor)

    @app.get("/metrics", include_in_schema=False)
    def _metrics(request: Request, settings: SettingsDep) -> Response:
        refusal = _scrape_refusal(request.headers.get("authorization"), settings.metrics_token)
        if refusal is not None:
            return JSONResponse(
                status_code=401,
                content={"detail": refusal},
                headers={"WWW-Authenticate": 'Bearer realm="metrics"'},
            )
        return monitor.exposition()


def _scrape_refusal(authorization: str | None, scrape_token: str) -> str | None:
    """Why a scrape is refused, or None when it carries the scrape token."""
    if not scrape_token:
        return "/metrics is disabled: set HEADROOM_METRICS_TOKEN and scrape with it as bearer token"
    scheme, _, presented = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not presented:
        return "Authorization: Bearer <HEADROOM_METRICS_TOKEN> is required"
    if not hmac.compare_digest(presented.strip().encode(), scrape_token.encode()):
        return "the token is not the metrics scrape token"
    return None


def _route_template(scope: Scope) -> str:
    """The path with its parameters put back as ``{name}``: bounded label cardinality."""
    if scope.get("route") is None:
        return "unmatched"
    by_value = {str(value): name for name, value in scope.get("path_params", {}).items()}
    segments = str(scope["path"]).split("/")
    return "/".join(f"{{{by_value[s]}}}" if s in by_value else s for s in segments)

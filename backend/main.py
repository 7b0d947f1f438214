"""The FastAPI application factory: ``uvicorn --factory backend.main:create_app``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio.to_thread
from fastapi import APIRouter, FastAPI
from fastapi.middleware.cors import CORSMiddleware

from backend.actions import routes as actions
from backend.api import health
from backend.api.body_guard import BodyGuard
from backend.api.body_limits import RouteLimits
from backend.api.deps import Dispatcher
from backend.api.sqlite_gate import SQLiteWriteGate
from backend.api.unhandled import UnhandledErrors
from backend.classes import routes as classes
from backend.coordinator import routes as coordinator
from backend.db import make_engine, make_session_factory
from backend.elastic import routes as elastic
from backend.errors import install_error_handlers
from backend.handoffs import routes as handoffs
from backend.history import routes as history
from backend.hooks import Hooks
from backend.jobs import routes as jobs
from backend.managers import routes as managers
from backend.metrics import routes as metrics
from backend.metrics.live import LiveReaders
from backend.monitoring import prometheus
from backend.monitoring.prometheus import Monitor
from backend.queries import routes as queries
from backend.scenarios import routes as scenarios
from backend.settings import Settings, get_settings
from backend.streams import routes as streams
from backend.tuning import routes as tuning
from backend.tuning.previews import Previews
from backend.users import routes as users
from backend.users.login import Logins

API_PREFIX = "/api/v1"
ROUTERS = (
    health.router,
    users.auth_router,
    users.users_router,
    classes.router,
    managers.router,
    elastic.router,
    coordinator.router,
    handoffs.router,
    jobs.router,
    metrics.router,
    actions.router,
    tuning.router,
    history.router,
    scenarios.router,
    queries.router,
    streams.router,
)
"""Every router of the API, mounted under ``API_PREFIX``."""


def create_app(settings: Settings | None = None, dispatcher: Dispatcher | None = None) -> FastAPI:
    """Build the app. The schema is not created here: ``alembic upgrade head`` owns it."""
    settings = settings or get_settings()
    app = FastAPI(
        title="headroom control plane",
        version="0.1.0",
        description="Query classes, jobs and per-class QoS metrics for Spark Structured "
        "Streaming with DILoS/ALoMa load shedding.",
        lifespan=_lifespan,
    )
    app.state.settings = settings
    app.state.engine = make_engine(settings.sqlalchemy_url)
    app.state.session_factory = make_session_factory(app.state.engine)
    app.state.dispatcher = dispatcher or _celery_dispatcher()
    app.state.hooks = Hooks()  # what a change in one domain sets off in those built on it
    # Outermost last: request metrics → unhandled errors → CORS → body guard → SQLite
    # write gate → routes. The guard bounds and reads a body before a writer queues for
    # SQLite's lock, and its 413s and 422s carry CORS headers like every other answer; an
    # unexpected exception is a counted 500 that leaves the connection open.
    if settings.sqlalchemy_url.startswith("sqlite"):
        app.state.sqlite_write_lock = asyncio.Lock()
        app.add_middleware(
            SQLiteWriteGate,
            lock=app.state.sqlite_write_lock,
            self_gated_paths=frozenset({f"{API_PREFIX}{users.LOGIN_PATH}"}),
        )
    app.add_middleware(BodyGuard, limits=RouteLimits.of_routers(ROUTERS, API_PREFIX))
    app.add_middleware(
        CORSMiddleware,
        allow_origins=settings.cors_origins,
        allow_methods=["*"],
        allow_headers=["*"],
    )
    app.add_middleware(UnhandledErrors)
    app.state.logins = Logins.from_settings(settings)
    app.state.previews = Previews.from_settings(settings)
    app.state.live_readers = LiveReaders.from_settings(settings)
    install_error_handlers(app)
    prometheus.install(app, Monitor())
    api = APIRouter(prefix=API_PREFIX)
    for router in ROUTERS:
        api.include_router(router)
    app.include_router(api)
    return app


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    """Shutdown stops the previews' worker processes (started by the first preview)."""
    yield
    await anyio.to_thread.run_sync(app.state.previews.close)


def _celery_dispatcher() -> Dispatcher:
    from backend.jobs.tasks import CeleryDispatcher  # Imports the Celery app only when needed.

    return CeleryDispatcher()

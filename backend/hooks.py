"""Where a change in one domain reaches the domains built on it.

The domains import one way: a domain reads those below it, never those above. Yet a
class's deletion must respect its queries, a class change must reach the live jobs
running it, a stream's change must leave its readers running, and a new run records its
launch configuration with live tuning. Each lower domain declares what it needs as a
protocol of its own (``backend.classes.service.ClassHooks``,
``backend.streams.service.StreamHooks``, ``backend.jobs.service.LaunchConfigs``,
``backend.metrics.service.ConfigTargets``); ``Hooks`` answers them from the queries and
live-tuning domains, and
``backend.main`` hands it to the routes (``app.state.hooks``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy.orm import Session

from backend.classes.models import QueryClass
from backend.jobs.models import Job
from backend.queries import service as queries
from backend.streams.schemas import TypeChange
from backend.tuning import service as tuning
from spark_runner.contract.control import LiveConfig


class Hooks:
    def check_class_delete(self, session: Session, query_class: QueryClass) -> None:
        queries.check_class_delete(session, query_class)

    def class_changed(
        self, session: Session, stored_name: str, changes: dict[str, Any], changed_by: str | None
    ) -> None:
        tuning.propagate_class_change(session, stored_name, changes, changed_by)

    def stream_readers(self, session: Session, stream: str) -> list[str]:
        return [query.name for query in queries.readers(session, stream)]

    def check_stream_readers(
        self, session: Session, stream: str, retyped: Mapping[str, TypeChange]
    ) -> None:
        queries.check_readers(session, stream, retyped=retyped)

    def record_initial(
        self, session: Session, job: Job, config: LiveConfig, created_by: str | None
    ) -> None:
        tuning.record_initial(session, job, config, created_by)

    def latest_config(self, session: Session, job_id: int) -> LiveConfig:
        return tuning.latest_config(session, job_id)

    def targets_by_version(self, session: Session, job_id: int) -> dict[int, dict[str, float]]:
        return tuning.targets_by_version(session, job_id)

"""Every table, imported in one place so Alembic sees the whole metadata."""

from backend.actions.models import ControlActionRow
from backend.classes.models import QueryClass
from backend.coordinator.models import CoordinatorState, ReallocationRow
from backend.db import Base
from backend.handoffs.models import HandoffRow
from backend.jobs.models import Job
from backend.metrics.models import MetricSampleRow
from backend.queries.models import ContinuousQuery
from backend.scenarios.models import StoredScenario
from backend.streams.models import DeclaredStream
from backend.tuning.models import ConfigVersion
from backend.users.models import ApiToken, User

__all__ = [
    "ApiToken",
    "Base",
    "ConfigVersion",
    "ContinuousQuery",
    "ControlActionRow",
    "CoordinatorState",
    "DeclaredStream",
    "HandoffRow",
    "Job",
    "MetricSampleRow",
    "QueryClass",
    "ReallocationRow",
    "StoredScenario",
    "User",
]

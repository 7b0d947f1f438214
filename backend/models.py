"""Every table, imported in one place so Alembic sees the whole metadata."""

from backend.classes.models import QueryClass
from backend.db import Base
from backend.jobs.models import Job
from backend.metrics.models import MetricSampleRow

__all__ = ["Base", "Job", "MetricSampleRow", "QueryClass"]

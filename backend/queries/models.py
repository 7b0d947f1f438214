from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, ForeignKey, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from backend.db import Base, UTCDateTime, utcnow


class ContinuousQuery(Base):
    """``source`` (a stream, or ``query:<name>`` of a shared query) → ``operators``.

    A ``shared`` query's output may be read by queries of other classes; it then runs
    once, owned by the highest-priority class that reads it (spec §4).
    """

    __tablename__ = "continuous_queries"
    __table_args__ = (UniqueConstraint("class_id", "name"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    class_id: Mapped[int] = mapped_column(
        ForeignKey("query_classes.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(100))
    source: Mapped[str] = mapped_column(String(110))
    operators: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    shared: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, onupdate=utcnow)

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from backend.db import Base, UTCDateTime, utcnow


class DeclaredStream(Base):
    """An input stream the operator declared: the columns its tuples carry (and which one
    is their event time). Class queries read it by name; a job generates it at its rate or
    reads it from Redis (``<prefix>:<name>``)."""

    __tablename__ = "streams"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    columns: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    event_time: Mapped[str | None] = mapped_column(String(64), nullable=True)
    description: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, onupdate=utcnow)

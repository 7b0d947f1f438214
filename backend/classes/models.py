from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, Float, String
from sqlalchemy.orm import Mapped, mapped_column
from sqlalchemy.sql.expression import false, true

from backend.db import Base, UTCDateTime, utcnow
from spark_runner.core.class_settings import default_of


class QueryClass(Base):
    """A group of continuous queries sharing a priority and a delay target."""

    __tablename__ = "query_classes"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    priority: Mapped[float] = mapped_column(Float)
    delay_target_s: Mapped[float] = mapped_column(Float)
    tau0: Mapped[float] = mapped_column(Float)
    tau1: Mapped[float] = mapped_column(Float)
    tau2: Mapped[float] = mapped_column(Float)
    tau3: Mapped[float] = mapped_column(Float)
    manager: Mapped[str] = mapped_column(
        String(20), default=default_of("manager"), server_default=default_of("manager")
    )
    manager_params: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict, server_default="{}")
    reserve_fraction: Mapped[float] = mapped_column(
        Float,
        default=default_of("reserve_fraction"),
        server_default=str(default_of("reserve_fraction")),
    )
    max_lend_fraction: Mapped[float] = mapped_column(
        Float,
        default=default_of("max_lend_fraction"),
        server_default=str(default_of("max_lend_fraction")),
    )
    catch_up: Mapped[bool] = mapped_column(
        Boolean,
        default=default_of("catch_up"),
        server_default=true() if default_of("catch_up") else false(),
    )
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, onupdate=utcnow)

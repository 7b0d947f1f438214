from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, Float, String
from sqlalchemy.orm import Mapped, MappedColumn, mapped_column
from sqlalchemy.sql.expression import false, true
from sqlalchemy.types import TypeEngine

from backend.db import Base, UTCDateTime, utcnow
from spark_runner.core.class_settings import CLASS_SETTINGS, ClassSetting


class QueryClass(Base):
    """A group of continuous queries sharing a priority and a delay target: a column per
    class setting (:func:`_setting_column`; those code reads by name are declared)."""

    __tablename__ = "query_classes"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    priority: Mapped[float] = mapped_column(Float)
    delay_target_s: Mapped[float] = mapped_column(Float)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, onupdate=utcnow)


def _setting_column(setting: ClassSetting) -> MappedColumn[Any]:
    """The column of a class setting, its declared default for rows written before the
    setting existed (the API always writes every setting)."""
    if setting.type is dict:
        return mapped_column(JSON, nullable=False, default=dict, server_default="{}")
    column_type: dict[type, TypeEngine[Any]] = {
        float: Float(),
        bool: Boolean(),
        str: String(setting.max_length),
    }
    if setting.required:
        return mapped_column(column_type[setting.type], nullable=False)
    default = setting.default
    server = (true() if default else false()) if setting.type is bool else str(default)
    return mapped_column(
        column_type[setting.type], nullable=False, default=default, server_default=server
    )


for _setting in CLASS_SETTINGS:
    if _setting.name not in QueryClass.__table__.columns:
        setattr(QueryClass, _setting.name, _setting_column(_setting))

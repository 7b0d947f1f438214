"""The manager catalogue: what the core registers, described by the core itself."""

from __future__ import annotations

from backend.classes.schemas import QueryClassCreate
from backend.managers.schemas import ManagerParamRead, ManagerRead
from spark_runner.core.managers.catalogue import describe_managers


def default_manager() -> str:
    """The manager a class gets when its creator names none."""
    return str(QueryClassCreate.model_fields["manager"].default)


def list_managers() -> list[ManagerRead]:
    default = default_manager()
    return [
        ManagerRead(
            kind=info.kind,
            label=info.label,
            summary=info.summary,
            default=info.kind == default,
            parameters=[ManagerParamRead.model_validate(p) for p in info.parameters],
        )
        for info in describe_managers()
    ]

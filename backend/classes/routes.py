from __future__ import annotations

from fastapi import APIRouter, status

from backend.api.auth import OperatorDep, ViewerDep
from backend.api.deps import IdPath, SessionDep
from backend.classes import service
from backend.classes.schemas import (
    ClassSettingRead,
    QueryClassCreate,
    QueryClassRead,
    QueryClassUpdate,
)
from spark_runner.core.class_settings import CLASS_SETTINGS

router = APIRouter(prefix="/classes", tags=["query classes"])


@router.get("", response_model=list[QueryClassRead])
def list_classes(session: SessionDep, _user: ViewerDep) -> list[QueryClassRead]:
    return [QueryClassRead.model_validate(c) for c in service.list_classes(session)]


@router.post("", response_model=QueryClassRead, status_code=status.HTTP_201_CREATED)
def create_class(session: SessionDep, _user: OperatorDep, body: QueryClassCreate) -> QueryClassRead:
    return QueryClassRead.model_validate(service.create_class(session, body))


@router.get("/settings", response_model=list[ClassSettingRead])
def list_class_settings(_user: ViewerDep) -> list[ClassSettingRead]:
    """Every setting of a query class: type, default, bounds, unit, meaning, and whether a
    running job takes a change to it (the rules class creation and live tuning enforce)."""
    return [ClassSettingRead.of(setting) for setting in CLASS_SETTINGS]


@router.get("/{class_id}", response_model=QueryClassRead)
def get_class(session: SessionDep, _user: ViewerDep, class_id: IdPath) -> QueryClassRead:
    return QueryClassRead.model_validate(service.get_class(session, class_id))


@router.patch("/{class_id}", response_model=QueryClassRead)
def update_class(
    session: SessionDep, user: OperatorDep, class_id: IdPath, body: QueryClassUpdate
) -> QueryClassRead:
    query_class = service.update_class(session, class_id, body, user.username)
    return QueryClassRead.model_validate(query_class)


@router.delete("/{class_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_class(session: SessionDep, _user: OperatorDep, class_id: IdPath) -> None:
    service.delete_class(session, class_id)

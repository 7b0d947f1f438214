from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, status

from backend.api.deps import IdPath, SessionDep, from_app_state
from backend.classes import service
from backend.classes.repository import QueryClassRepository
from backend.classes.schemas import (
    ClassSettingRead,
    QueryClassCreate,
    QueryClassRead,
    QueryClassUpdate,
)
from backend.users.access import OperatorDep, ViewerDep
from spark_runner.core.class_settings import CLASS_SETTINGS

router = APIRouter(prefix="/classes", tags=["query classes"])

ClassHooksDep = Annotated[service.ClassHooks, from_app_state("hooks")]


@router.get("", response_model=list[QueryClassRead])
def list_classes(session: SessionDep, _user: ViewerDep) -> list[QueryClassRead]:
    return [QueryClassRead.model_validate(c) for c in QueryClassRepository(session).list_all()]


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
    return QueryClassRead.model_validate(QueryClassRepository(session).require(class_id))


@router.patch("/{class_id}", response_model=QueryClassRead)
def update_class(
    session: SessionDep,
    hooks: ClassHooksDep,
    user: OperatorDep,
    class_id: IdPath,
    body: QueryClassUpdate,
) -> QueryClassRead:
    query_class = service.update_class(session, class_id, body, hooks, user.username)
    return QueryClassRead.model_validate(query_class)


@router.delete("/{class_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_class(
    session: SessionDep, hooks: ClassHooksDep, _user: OperatorDep, class_id: IdPath
) -> None:
    service.delete_class(session, class_id, hooks)

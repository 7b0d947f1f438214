from __future__ import annotations

from fastapi import APIRouter, status

from backend.api.body_limits import ParsedBodyRoute
from backend.api.deps import IdPath, SessionDep
from backend.queries import service
from backend.queries.schemas import QueryRead, QuerySpec
from backend.users.access import OperatorDep, ViewerDep

router = APIRouter(
    prefix="/classes/{class_id}/queries",
    tags=["continuous queries"],
    route_class=ParsedBodyRoute,
)


@router.get("", response_model=list[QueryRead])
def list_queries(session: SessionDep, _user: ViewerDep, class_id: IdPath) -> list[QueryRead]:
    return [QueryRead.model_validate(q) for q in service.list_queries(session, class_id)]


@router.post("", response_model=QueryRead, status_code=status.HTTP_201_CREATED)
def create_query(
    session: SessionDep, _user: OperatorDep, class_id: IdPath, body: QuerySpec
) -> QueryRead:
    """Validated in the scenario format's vocabulary: errors name the path in the spec."""
    return QueryRead.model_validate(service.save(session, class_id, body))


@router.get("/{query_id}", response_model=QueryRead)
def get_query(
    session: SessionDep, _user: ViewerDep, class_id: IdPath, query_id: IdPath
) -> QueryRead:
    return QueryRead.model_validate(service.get_query(session, class_id, query_id))


@router.put("/{query_id}", response_model=QueryRead)
def replace_query(
    session: SessionDep, _user: OperatorDep, class_id: IdPath, query_id: IdPath, body: QuerySpec
) -> QueryRead:
    return QueryRead.model_validate(service.save(session, class_id, body, query_id))


@router.delete("/{query_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_query(
    session: SessionDep, _user: OperatorDep, class_id: IdPath, query_id: IdPath
) -> None:
    service.delete(session, class_id, query_id)

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from backend.api.deps import SessionDep

router = APIRouter(tags=["health"])


class Health(BaseModel):
    status: str
    database: str


@router.get(
    "/health",
    response_model=Health,
    responses={503: {"model": Health, "description": "The database cannot be reached."}},
)
def health(session: SessionDep) -> Health | JSONResponse:
    try:
        session.execute(text("SELECT 1"))
    except SQLAlchemyError:
        body = Health(status="degraded", database="error")
        return JSONResponse(status_code=503, content=body.model_dump())
    return Health(status="ok", database="ok")

from __future__ import annotations

from fastapi import APIRouter

from backend.managers import service
from backend.managers.schemas import ManagerRead
from backend.users.access import ViewerDep

router = APIRouter(prefix="/managers", tags=["load managers"])


@router.get("", response_model=list[ManagerRead])
def list_managers(_user: ViewerDep) -> list[ManagerRead]:
    """The load managers a class may use, with each parameter's type, default, unit and
    rules (the same rules class creation and live tuning enforce), in registry order."""
    return service.list_managers()

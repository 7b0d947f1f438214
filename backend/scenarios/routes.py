from __future__ import annotations

from fastapi import APIRouter, Response, status

from backend.api.body_limits import ParsedBodyRoute
from backend.api.deps import IdPath, SessionDep
from backend.scenarios import service
from backend.scenarios.repository import ScenarioRepository
from backend.scenarios.schemas import (
    ScenarioRead,
    ScenarioSummary,
    ScenarioUpload,
)
from backend.users.access import OperatorDep, ViewerDep

router = APIRouter(prefix="/scenarios", tags=["scenarios"], route_class=ParsedBodyRoute)


@router.get("", response_model=list[ScenarioSummary])
def list_scenarios(session: SessionDep, _user: ViewerDep) -> list[ScenarioSummary]:
    return [ScenarioSummary.model_validate(s) for s in ScenarioRepository(session).list_all()]


@router.post("", response_model=ScenarioRead, status_code=status.HTTP_201_CREATED)
def import_scenario(session: SessionDep, user: OperatorDep, body: ScenarioUpload) -> ScenarioRead:
    """Validate and store a scenario YAML (every broken rule comes back with its path)."""
    return ScenarioRead.model_validate(service.store(session, body.yaml, user.username))


@router.get("/{scenario_id}", response_model=ScenarioRead)
def get_scenario(session: SessionDep, _user: ViewerDep, scenario_id: IdPath) -> ScenarioRead:
    return ScenarioRead.model_validate(ScenarioRepository(session).require(scenario_id))


@router.put("/{scenario_id}", response_model=ScenarioRead)
def replace_scenario(
    session: SessionDep, user: OperatorDep, scenario_id: IdPath, body: ScenarioUpload
) -> ScenarioRead:
    scenario = service.store(session, body.yaml, user.username, replace_id=scenario_id)
    return ScenarioRead.model_validate(scenario)


@router.get(
    "/{scenario_id}/export",
    response_class=Response,
    responses={200: {"content": {"application/yaml": {}}, "description": "The YAML as stored."}},
)
def export_scenario(session: SessionDep, _user: ViewerDep, scenario_id: IdPath) -> Response:
    scenario = ScenarioRepository(session).require(scenario_id)
    return Response(
        scenario.yaml_text,
        media_type="application/yaml",
        headers={"Content-Disposition": f'attachment; filename="{scenario.name}.yaml"'},
    )


@router.delete("/{scenario_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_scenario(session: SessionDep, _user: OperatorDep, scenario_id: IdPath) -> None:
    service.delete(session, scenario_id)

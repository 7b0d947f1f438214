"""``GET /elastic``: a job's elasticity settings, with their types, defaults and rules."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, Field

from backend.managers.schemas import ManagerParamRead
from backend.users.access import ViewerDep
from spark_runner.contract.control import LIVE_ELASTIC
from spark_runner.core.elastic import ScalingParams
from spark_runner.core.managers.catalogue import describe_params
from spark_runner.core.thresholds import TAUS

router = APIRouter(prefix="/elastic", tags=["elastic capacity"])

THRESHOLDS = (
    "The job's usage thresholds are its classes' tau0..tau3 (live-tunable with the class): "
    "it takes the lowest of each, so it adds executors as soon as its usage passes any "
    "class's tau3 and releases them only below every class's tau0."
)


class ElasticRead(BaseModel):
    parameters: list[ManagerParamRead] = Field(
        description="What a scenario's control.elastic.params accepts; defaults apply to "
        "what is left out. A running job takes changes of "
        f"{', '.join(LIVE_ELASTIC)} through PATCH /jobs/{{id}}/config "
        '({"elastic": {...}}); executor_cores is fixed when it starts, and max_executors '
        "cannot rise above its value then."
    )
    thresholds: str = Field(description="Where the thresholds come from.")


@router.get("", response_model=ElasticRead)
def describe_elastic(_user: ViewerDep) -> ElasticRead:
    """The settings of a job's elastic capacity (a scenario's ``control.elastic``), with
    each one's type, default, unit and rules: the ones the scenario's validation runs."""
    return ElasticRead(
        parameters=[
            ManagerParamRead.model_validate(p) for p in describe_params(ScalingParams, TAUS)
        ],
        thresholds=THRESHOLDS,
    )

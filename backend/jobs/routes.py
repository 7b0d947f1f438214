from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header, Query, Response, status

from backend.api.deps import DispatcherDep, IdPath, SessionDep, SettingsDep, from_app_state
from backend.jobs import service
from backend.jobs.repository import JobRepository
from backend.jobs.schemas import JobCreate, JobLog, JobRead
from backend.users.access import OperatorDep, ViewerDep

router = APIRouter(prefix="/jobs", tags=["jobs"])

LaunchConfigsDep = Annotated[service.LaunchConfigs, from_app_state("hooks")]


@router.get("", response_model=list[JobRead])
def list_jobs(session: SessionDep, _user: ViewerDep) -> list[JobRead]:
    return [JobRead.model_validate(job) for job in service.list_jobs(session)]


@router.post("", response_model=JobRead, status_code=status.HTTP_201_CREATED)
def create_job(
    session: SessionDep,
    settings: SettingsDep,
    dispatcher: DispatcherDep,
    configs: LaunchConfigsDep,
    user: OperatorDep,
    body: JobCreate,
    response: Response,
    idempotency_key: Annotated[
        str | None,
        Header(
            min_length=1,
            max_length=200,
            description="Retrying a request with the same key returns the same job.",
        ),
    ] = None,
) -> JobRead:
    job, created = service.create_job(
        session,
        settings,
        body,
        dispatcher.launch,
        configs,
        created_by=user.username,
        idempotency_key=idempotency_key,
    )
    if not created:
        response.status_code = status.HTTP_200_OK
    return JobRead.model_validate(job)


@router.get("/{job_id}", response_model=JobRead)
def get_job(session: SessionDep, _user: ViewerDep, job_id: IdPath) -> JobRead:
    return JobRead.model_validate(JobRepository(session).require(job_id))


@router.post("/{job_id}/stop", response_model=JobRead, status_code=status.HTTP_202_ACCEPTED)
def stop_job(
    session: SessionDep, dispatcher: DispatcherDep, _user: OperatorDep, job_id: IdPath
) -> JobRead:
    return JobRead.model_validate(service.request_stop(session, job_id, dispatcher.stop))


@router.post("/{job_id}/restart", response_model=JobRead, status_code=status.HTTP_201_CREATED)
def restart_job(
    session: SessionDep,
    settings: SettingsDep,
    dispatcher: DispatcherDep,
    configs: LaunchConfigsDep,
    user: OperatorDep,
    job_id: IdPath,
) -> JobRead:
    job = service.restart(
        session, settings, job_id, dispatcher.launch, configs, created_by=user.username
    )
    return JobRead.model_validate(job)


@router.get("/{job_id}/log", response_model=JobLog)
def job_log(
    session: SessionDep,
    _user: ViewerDep,
    job_id: IdPath,
    lines: Annotated[int, Query(ge=1, le=5000)] = 200,
) -> JobLog:
    job = JobRepository(session).require(job_id)
    return JobLog(job_id=job_id, lines=service.read_log(job, lines))

"""The check jobs: ``POST /v1/checks`` (one claim or a batch) stores a job and answers ``202`` with
its id and URL; ``GET /v1/checks/{job_id}`` its status, progress and, once it ended, its reports.
The jobs run in the background on the same runner, behind the synchronous checks, and are kept in
SQLite (:mod:`factscout.serve.jobs`), so a restarted server resumes them."""

from __future__ import annotations

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from factscout.serve.responses import ACCEPTED, ERRORS, ErrorResponse, JobResponse
from factscout.serve.routes.state import CurrentState, authorised
from factscout.serve.schemas import ChecksRequest

router = APIRouter(dependencies=[Depends(authorised)])


@router.post(
    "/v1/checks",
    status_code=202,
    response_model=JobResponse,
    responses={
        **{k: v for k, v in ERRORS.items() if k != 503},
        **ACCEPTED,
    },
)
async def submit_checks(body: ChecksRequest, state: CurrentState) -> JSONResponse:
    """Accept a check job (one claim or a batch) and run it in the background; answers ``202``
    with the job id (and its URL in ``Location``) once the job is stored: it survives a restart."""
    name = state.planner_name(body.planner)
    claims = [
        {"claim_id": c.claim_id, "claim": c.claim, "date": c.date.isoformat() if c.date else None}
        for c in body.claim_list()
    ]
    job_id = state.jobs.create(claims, planner=name, date_filter=body.date_filter)
    state.worker.notify()
    location = f"/v1/checks/{job_id}"
    return JSONResponse(state.jobs.get(job_id), status_code=202, headers={"Location": location})


@router.get(
    "/v1/checks/{job_id}",
    response_model=JobResponse,
    responses={
        401: ERRORS[401],
        404: {"model": ErrorResponse, "description": "no job with this id"},
        500: ERRORS[500],
    },
)
async def check_job(job_id: str, state: CurrentState) -> JSONResponse:
    """A check job's status and progress (claims done of total); its reports once it ended."""
    job = state.jobs.get(job_id)
    if job is None:
        raise StarletteHTTPException(404, f"no check job {job_id!r}")
    return JSONResponse(job)

"""``POST /v1/check``: plan, retrieve, fuse, select, stance and verdict for one claim, answered with
its ``factscout-report/1`` report once the core has checked it (concurrent checks with the same
planner and date rule run together in one core call)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse

from factscout.records import Claim
from factscout.report import Report
from factscout.serve.responses import ERRORS
from factscout.serve.routes.state import CurrentState, authorised
from factscout.serve.schemas import CheckRequest
from factscout.serve.service import CheckJob

router = APIRouter(dependencies=[Depends(authorised)])


@router.post("/v1/check", response_model=Report, responses=ERRORS)
async def check(body: CheckRequest, state: CurrentState) -> JSONResponse:
    """Plan, retrieve, fuse, select evidence sentences, classify stance and judge one claim."""
    job = CheckJob(
        Claim(state.claim_id(body.claim_id), body.claim, body.date), state.planner_name(body.planner), body.date_filter
    )
    result: dict[str, Any] = await state.runner.submit(
        "check", job, group=(job.planner, job.date_filter), uid=job.claim.claim_id
    )
    return JSONResponse(result)

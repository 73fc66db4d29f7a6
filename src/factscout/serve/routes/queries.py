"""The query editor's steps, one at a time: ``POST /v1/search`` (the top k passages for one query,
published before a day when given), ``POST /v1/plan`` (the queries a planner makes for a claim) and
``POST /v1/rewrite`` (one edit action applied to a query, its results, the metric when qrels are
loaded, the rewrite policy's suggested trace)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse

from factscout.records import Claim
from factscout.serve.responses import ERRORS, PlanResponse, RewriteResponse, SearchResponse
from factscout.serve.routes.state import CurrentState, authorised
from factscout.serve.schemas import PlanRequest, RewriteRequest, SearchRequest
from factscout.serve.service import RewriteJob, SearchJob

router = APIRouter(dependencies=[Depends(authorised)])


@router.post("/v1/search", response_model=SearchResponse, responses=ERRORS)
async def search(body: SearchRequest, state: CurrentState) -> JSONResponse:
    """The top k passages for one query (published before ``date`` when given)."""
    job = SearchJob(body.query, body.k, body.date)
    result: dict[str, Any] = await state.runner.submit("search", job, group=(job.k, job.date))
    return JSONResponse(result)  # already plain JSON types: skip FastAPI's recursive encoder


@router.post("/v1/plan", response_model=PlanResponse, responses=ERRORS)
async def plan(body: PlanRequest, state: CurrentState) -> JSONResponse:
    """The search queries a planner makes for a claim (the claim itself first)."""
    claim = Claim(state.claim_id(body.claim_id), body.claim, body.date)
    name = state.planner_name(body.planner)
    service = state.service
    result: dict[str, Any] = await state.runner.run(lambda: service.plan(claim, name))
    return JSONResponse(result)


@router.post("/v1/rewrite", response_model=RewriteResponse, responses=ERRORS)
async def rewrite(body: RewriteRequest, state: CurrentState) -> JSONResponse:
    """Apply one edit action (Kazemi et al.) to a query and search it; valid edits per token."""
    job = RewriteJob(body.query, body.action, body.claim_id, body.k, body.suggest)
    service = state.service
    result: dict[str, Any] = await state.runner.run(lambda: service.rewrite(job))
    return JSONResponse(result)

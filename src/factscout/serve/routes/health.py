"""``GET /v1/health``: liveness, what is loaded (index, planner, models, qrels, fact-check memory)
and the queue figures; open even when the server has a token."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from factscout.serve.responses import HealthResponse
from factscout.serve.routes.state import CurrentState

router = APIRouter()


@router.get("/v1/health", response_model=HealthResponse)
async def health(state: CurrentState) -> JSONResponse:
    """Liveness and what is loaded; queue figures."""
    runner = state.runner
    s = runner.stats
    return JSONResponse(
        {
            "status": "ok",
            **state.service.info(),
            "pending": runner.pending,
            "background_pending": runner.background_pending,
            "max_pending": runner.max_pending,
            "done": s.done,
            "rejected": s.rejected,
            "largest_batch": s.largest_batch,
        }
    )

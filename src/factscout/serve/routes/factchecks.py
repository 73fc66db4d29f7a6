"""``GET /v1/factchecks?q=...&k=&before=``: the published fact-checks of a claim or tweet, matched
in the fact-check memory given to ``serve --factchecks DIR`` (404 when the server has none)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from factscout.serve.responses import ERRORS, ErrorResponse, FactChecksResponse
from factscout.serve.routes.state import CurrentState, authorised
from factscout.serve.schemas import FactChecksQuery
from factscout.serve.service import NoMemory

router = APIRouter(dependencies=[Depends(authorised)])


@router.get(
    "/v1/factchecks",
    response_model=FactChecksResponse,
    responses={**ERRORS, 404: {"model": ErrorResponse, "description": "the server has no fact-check memory"}},
)
async def factchecks(params: Annotated[FactChecksQuery, Query()], state: CurrentState) -> JSONResponse:
    """Published fact-checks of a claim or tweet, from the memory given to ``serve --factchecks``."""
    service = state.service
    try:
        result = await state.runner.run(lambda: service.factchecks(params.q, params.k, params.before))
    except NoMemory as exc:
        raise StarletteHTTPException(404, str(exc)) from None
    return JSONResponse(result)

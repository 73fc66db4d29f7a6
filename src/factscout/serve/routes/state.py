"""What the routers share: one :class:`ServeState` built by ``create_app`` and kept on
``app.state.serve``, read by the :func:`get_state` dependency; :func:`authorised` (the bearer
token check) is the dependency every API router but health's declares."""

from __future__ import annotations

import itertools
import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Annotated, Any

from fastapi import Depends, Request
from starlette.exceptions import HTTPException as StarletteHTTPException

from factscout.serve.examples import Example
from factscout.serve.jobs import JobStore, JobWorker
from factscout.serve.runner import CoreRunner
from factscout.serve.service import Service


@dataclass(frozen=True, slots=True)
class ServeState:
    """The loaded service and what runs it, shared by every request.

    ``service``: the checker and its settings; ``runner``: the core thread's queue (``check``,
    ``search`` and the background ``job`` handler); ``jobs`` and ``worker``: the check jobs'
    store and the task that runs them; ``token``: the bearer token the API requires (``None``:
    open, and the page is on); ``pages``: the Jinja2 environment; ``examples``: the page's
    example claims whose evidence is in the index."""

    service: Service
    runner: CoreRunner
    jobs: JobStore
    worker: JobWorker
    token: str | None
    pages: Any
    examples: list[Example]
    _ids: Iterator[int] = field(default_factory=lambda: itertools.count(1), repr=False)

    def claim_id(self, given: str | None) -> str:
        """``given``, else the next id the server makes up (``c1``, ``c2``, ...)."""
        return given or f"c{next(self._ids)}"

    def planner_name(self, name: str | None) -> str:
        """``name`` (else the checker's planner), checked: an unknown one raises ``UnknownName``
        listing the valid ones."""
        from factscout.plan import PLANNERS

        name = name or self.service.settings.planner
        PLANNERS[name]  # UnknownName lists the valid ones
        return name


async def get_state(request: Request) -> ServeState:
    """The app's :class:`ServeState` (a dependency)."""
    state: ServeState = request.app.state.serve
    return state


CurrentState = Annotated[ServeState, Depends(get_state)]
"""A handler's parameter of this type receives the app's :class:`ServeState`."""


async def authorised(request: Request, state: CurrentState) -> None:
    """Require ``Authorization: Bearer <token>`` when the server has a token (a dependency); 401
    with ``WWW-Authenticate: Bearer`` otherwise."""
    if state.token is None:
        return
    if not bearer_matches(request.headers.get("authorization", ""), state.token):
        raise StarletteHTTPException(401, "missing or wrong bearer token", headers={"WWW-Authenticate": "Bearer"})


def bearer_matches(authorization: str, token: str) -> bool:
    """Whether an ``Authorization`` header value is ``Bearer <token>`` (compared in constant time);
    the API's routers and the MCP endpoint (:mod:`factscout.serve.mcp`) check the same way."""
    scheme, _, given = authorization.partition(" ")
    return scheme.lower() == "bearer" and secrets.compare_digest(given.strip().encode(), token.encode())

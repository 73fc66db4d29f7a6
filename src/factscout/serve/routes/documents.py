"""The document jobs: ``POST /v1/documents`` splits a document into sentences, scores each one for
check-worthiness (on the core thread) and stores a job whose claims are the most check-worthy
sentences with their context; it answers ``202`` with the job's id and URL. ``GET
/v1/documents/{job_id}`` gives its status, its progress (``{checked, total}``) and, once it ended,
the ``factscout-document-report/1`` report. The claims run as the claims of a ``/v1/checks`` job
do (the same store, worker and queue, behind interactive requests), so a restarted server resumes
them. A document the core refuses (a transcript line without a tab, HTML with no text is not one:
it has no sentence) is a job that failed at once, with the reason in ``error``.

The page's side (open, off with a token as the page is): ``GET /documents/{job_id}`` draws the
finished report, the text with its check-worthy sentences highlighted in place and each checked one
linked to its report (:mod:`factscout.render.document`); while the job runs, its progress, which
the page's script polls."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends
from fastapi.responses import HTMLResponse, JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from factscout.claims.check import DocumentPlan
from factscout.errors import InputError
from factscout.serve.jobs import JobStore
from factscout.serve.responses import ACCEPTED, ERRORS, DocumentJobResponse, ErrorResponse
from factscout.serve.routes.state import CurrentState, authorised
from factscout.serve.schemas import MAX_DOCUMENT_CHARS, DocumentRequest
from factscout.serve.service import Service

router = APIRouter(dependencies=[Depends(authorised)])
pages = APIRouter()


def plan(service: Service, body: DocumentRequest) -> DocumentPlan:
    """On the core thread: the document split, every sentence scored, the ones to check chosen."""
    from factscout.claims.check import plan_document
    from factscout.claims.document import parse_document

    document = parse_document(body.text, body.format, max_chars=MAX_DOCUMENT_CHARS)
    return plan_document(document, service.checkworthy, top=body.top, min_score=body.min_score, date=body.date)


def document_job(jobs: JobStore, job_id: str) -> dict[str, Any] | None:
    """A document job's view (:class:`~factscout.serve.responses.DocumentJobResponse`), or ``None``
    when ``job_id`` is no document job: its stored document with the reports of its claims once
    the job ended (the stored reports as they are, in the report's order)."""
    stored, job = jobs.document(job_id), jobs.get(job_id)
    if stored is None or job is None:
        return None
    document, error = stored
    report = None
    if document is not None and job["reports"] is not None:
        claims = [{**c, "report": r} for c, r in zip(document["claims"], job["reports"], strict=True)]
        report = {**document, "claims": claims}
    return {
        "id": job["id"],
        "status": job["status"],
        "progress": {"checked": job["done"], "total": job["total"]},
        "failed": job["failed"],
        "created": job["created"],
        "finished": job["finished"],
        "error": error,
        "errors": job["errors"],
        "report": report,
    }


@router.post(
    "/v1/documents",
    status_code=202,
    response_model=DocumentJobResponse,
    responses={
        **ERRORS,
        **ACCEPTED,
    },
)
async def submit_document(body: DocumentRequest, state: CurrentState) -> JSONResponse:
    """Accept a document: score its sentences for check-worthiness, then check the ``top`` most
    check-worthy at or above the threshold (or ``min_score``) in the background; answers ``202``
    with the job (its id, and its URL in ``Location``) once it is stored: it survives a restart."""
    name = state.planner_name(body.planner)
    try:
        planned: DocumentPlan = await state.runner.run(lambda: plan(state.service, body))
    except InputError as exc:  # what the schema cannot say (a transcript line without a tab): a failed job
        job_id = state.jobs.create_document(None, [], planner=name, date_filter=body.date_filter, error=str(exc))
    else:
        day = body.date.isoformat() if body.date else None
        claims = [{"claim_id": c.claim_id, "claim": c.text, "date": day} for c in planned.claims()]
        skeleton = planned.report([None] * len(claims)).to_dict()  # the reports come from the job's claims
        job_id = state.jobs.create_document(skeleton, claims, planner=name, date_filter=body.date_filter)
        state.worker.notify()
    location = f"/v1/documents/{job_id}"
    return JSONResponse(document_job(state.jobs, job_id), status_code=202, headers={"Location": location})


@router.get(
    "/v1/documents/{job_id}",
    response_model=DocumentJobResponse,
    responses={
        401: ERRORS[401],
        404: {"model": ErrorResponse, "description": "no document job with this id"},
        500: ERRORS[500],
    },
)
async def get_document(job_id: str, state: CurrentState) -> JSONResponse:
    """A document job's status and progress (sentences checked of total); its report once it ended."""
    job = document_job(state.jobs, job_id)
    if job is None:
        raise StarletteHTTPException(404, f"no document job {job_id!r}")
    return JSONResponse(job)


@pages.get("/documents/{job_id}", response_class=HTMLResponse, include_in_schema=False)
async def document_page(job_id: str, state: CurrentState) -> HTMLResponse:
    """The page of a document job: its report, or its progress while it runs (the script polls)."""
    from factscout.render.document import document_view

    if state.token is not None:
        return HTMLResponse(
            state.pages.get_template("off.html").render(), status_code=403, headers={"Cache-Control": "no-store"}
        )
    job = document_job(state.jobs, job_id)
    context: dict[str, Any] = {"job_id": job_id, "job": job, "doc": None, "error": None}
    status = 200
    if job is None:
        status, context["error"] = 404, f"no document job {job_id!r}"
    elif job["error"] is not None:
        status, context["error"] = 400, job["error"]
    elif job["report"] is not None:
        context["doc"] = document_view(job["report"], state.service.store)
    html = state.pages.get_template("document_page.html").render(**context)
    return HTMLResponse(html, status_code=status, headers={"Cache-Control": "no-store"})

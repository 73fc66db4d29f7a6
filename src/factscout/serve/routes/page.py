"""The page: ``GET /`` the claim form; ``GET /?claim=...&date=...`` renders that claim's report (a
shareable link); with ``&job=ID`` the stored report of that check job (the page's script checks
through the job API, shows the progress, then opens that link); ``GET /favicon.ico``. With a token
the page is off (403): a browser cannot send the bearer token. The ``/static`` files it loads are
mounted by the app from :data:`STATIC`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, HTMLResponse
from pydantic import ValidationError

from factscout.errors import FactscoutError
from factscout.records import Claim
from factscout.serve.page import page_context
from factscout.serve.routes.errors import field_detail
from factscout.serve.routes.state import CurrentState
from factscout.serve.runner import Saturated
from factscout.serve.schemas import CheckRequest
from factscout.serve.service import CheckJob

STATIC = Path(__file__).resolve().parents[1] / "static"

router = APIRouter()


@router.get("/favicon.ico", include_in_schema=False)
async def favicon() -> FileResponse:
    return FileResponse(STATIC / "favicon.ico", media_type="image/x-icon")


@router.get("/", response_class=HTMLResponse, include_in_schema=False)
async def page(request: Request, state: CurrentState) -> HTMLResponse:
    pages, service = state.pages, state.service
    if state.token is not None:
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
        "examples": state.examples,
    }
    status = 200
    job_id = params.get("job")
    if job_id:
        stored = state.jobs.get(job_id)
        if stored is None:
            status = 404
            context["error"] = f"no check job {job_id!r}"
        elif stored["status"] in ("queued", "running"):
            context["pending_job"] = job_id  # the page's script goes on polling it
        elif stored["reports"] and stored["reports"][0] is not None:
            context.update(page_context(stored["reports"][0], service.store))
        else:
            status = 400
            context["error"] = stored["errors"][0]["error"] if stored["errors"] else "the job has no report"
    elif form["claim"].strip():
        try:
            body = CheckRequest.model_validate(
                {"claim": form["claim"], "date": form["date"] or None, "claim_id": form["claim_id"] or None}
            )
            job = CheckJob(
                Claim(state.claim_id(body.claim_id), body.claim, body.date),
                service.settings.planner,
                form["evidence"] == "before",
            )
            report = await state.runner.submit(
                "check", job, group=(job.planner, job.date_filter), uid=job.claim.claim_id
            )
            context.update(page_context(report, service.store))
        except ValidationError as exc:
            status = 422
            context["error"] = "; ".join(
                field_detail(e)["field"] + ": " + field_detail(e)["message"] for e in exc.errors()
            )
        except Saturated as exc:
            status = 503
            context["error"] = str(exc)
        except FactscoutError as exc:
            status = 400
            context["error"] = str(exc)
    html = pages.get_template("index.html").render(**context)
    return HTMLResponse(html, status_code=status)

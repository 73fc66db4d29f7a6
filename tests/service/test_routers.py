"""The service's routers (issue 48): each module of ``factscout.serve.routes`` serves its own
endpoints, every API router but health's requires the token, and ``create_app`` puts one
``ServeState`` on ``app.state`` and keeps the operation ids clients generate code from."""

from __future__ import annotations

import pytest
from fastapi.routing import APIRoute

from factscout.serve import create_app
from factscout.serve.routes import check, documents, factchecks, health, jobs, page, queries
from factscout.serve.routes.state import ServeState, authorised

PATHS = {
    health: {("GET", "/v1/health")},
    check: {("POST", "/v1/check")},
    jobs: {("POST", "/v1/checks"), ("GET", "/v1/checks/{job_id}")},
    documents: {("POST", "/v1/documents"), ("GET", "/v1/documents/{job_id}")},
    factchecks: {("GET", "/v1/factchecks")},
    queries: {("POST", "/v1/search"), ("POST", "/v1/plan"), ("POST", "/v1/rewrite")},
    page: {("GET", "/"), ("GET", "/favicon.ico")},
}
OPERATION_IDS = {
    "health_v1_health_get",
    "check_v1_check_post",
    "submit_checks_v1_checks_post",
    "check_job_v1_checks__job_id__get",
    "submit_document_v1_documents_post",
    "get_document_v1_documents__job_id__get",
    "search_v1_search_post",
    "factchecks_v1_factchecks_get",
    "plan_v1_plan_post",
    "rewrite_v1_rewrite_post",
}


def _routes(module) -> set[tuple[str, str]]:
    return {(m, r.path) for r in module.router.routes if isinstance(r, APIRoute) for m in r.methods}


@pytest.mark.parametrize("module", list(PATHS), ids=lambda m: m.__name__.rpartition(".")[2])
def test_each_router_serves_its_own_paths(module):
    assert _routes(module) == PATHS[module]


@pytest.mark.parametrize(
    "module", [check, jobs, documents, factchecks, queries], ids=lambda m: m.__name__.rpartition(".")[2]
)
def test_every_api_router_requires_the_token(module):
    assert [d.dependency for d in module.router.dependencies] == [authorised]


def test_health_and_the_page_are_open():
    assert health.router.dependencies == [] and page.router.dependencies == []
    assert documents.pages.dependencies == []  # the document page (off with a token, as the page is)
    assert {(m, r.path) for r in documents.pages.routes for m in r.methods} == {("GET", "/documents/{job_id}")}


def test_the_app_shares_one_state_and_keeps_the_operation_ids(checker):
    app = create_app(checker, warm_up=False, token="s3cret")
    shared = app.state.serve
    assert isinstance(shared, ServeState) and shared.token == "s3cret"
    assert (app.state.service, app.state.runner, app.state.jobs) == (shared.service, shared.runner, shared.jobs)
    assert shared.claim_id("mine") == "mine" and shared.claim_id(None) == "c1" and shared.claim_id("") == "c2"
    schema = app.openapi()
    assert {op["operationId"] for ops in schema["paths"].values() for op in ops.values()} == OPERATION_IDS
    assert not any("tags" in op for ops in schema["paths"].values() for op in ops.values())

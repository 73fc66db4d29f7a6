"""The response models (issue 19, typed API): real responses validate against them, the JSON is
the same as before the models existed (field names pinned here), and ``/openapi.json`` names a
response schema for every endpoint."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from factscout.report import Report
from factscout.serve import create_app
from factscout.serve.responses import (
    ErrorResponse,
    HealthResponse,
    PlanResponse,
    RewriteResponse,
    SearchResponse,
)

from .conftest import CLAIM_ID

# The top-level fields each endpoint returned before the response models (pinned: a rename breaks clients).
HEALTH = {"status", "passages", "retriever", "index", "planner", "policy", "qrels"}
HEALTH |= {"pending", "background_pending", "max_pending", "done", "rejected", "largest_batch"}
REPORT = {
    "format",
    "claim_id",
    "claim",
    "date",
    "queries",
    "checked_before",
    "evidence",
    "verdict",
    "timeline",
    "leakage",
    "provenance",
}
EVIDENCE = {"passage_id", "doc_id", "title", "url", "published", "days_from_claim", "after_claim", "rank", "score"}
EVIDENCE |= {"found_by", "stance", "sentences"}
SEARCH_HIT = {"rank", "passage_id", "doc_id", "title", "score", "published", "url", "text"}
DATE_FILTER = {"published_before", "undated_policy", "allowed", "excluded_late", "undated_kept", "undated_dropped"}
REWRITE = {"query", "edit", "tokens", "hits", "metric", "policy", "suggestion"}
PLAN = {"claim_id", "claim", "date", "planner", "queries", "planner_error"}


@pytest.fixture(scope="module")
def client(checker, mini):
    with TestClient(create_app(checker, qrels=mini.qrels)) as c:
        yield c


def _same_json(model, body):
    """``body`` validates against ``model`` and dumping the model gives ``body`` back, field for field."""
    parsed = model.model_validate(body)
    assert parsed.model_dump(mode="json", exclude_unset=True) == body
    return parsed


def test_health(client):
    body = client.get("/v1/health").json()
    assert set(body) == HEALTH
    _same_json(HealthResponse, body)


def test_check_report(client, mini):
    claim = next(c for c in mini.claims if c.claim_id == CLAIM_ID)
    body = client.post("/v1/check", json={"claim": claim.text, "date": "2016-06-01"}).json()
    assert set(body) == REPORT and body["evidence"]
    assert all(set(e) == EVIDENCE for e in body["evidence"])
    # issue 38 added the calibrated confidence, the call before abstaining and why it abstained
    assert set(body["verdict"]) == {"label", "method", "reason", "counts", "confidence", "call", "abstention"}
    assert set(body["leakage"]) == {"dated", "after_claim", "share"}
    assert any(e["sentences"] for e in body["evidence"])
    sentence = next(s for e in body["evidence"] for s in e["sentences"])
    assert set(sentence) == {"index", "text", "score", "stance", "counted", "model_label", "probabilities"}
    report = _same_json(Report, body)
    assert report.verdict.label == body["verdict"]["label"]


def test_search_with_and_without_a_date(client):
    body = client.post("/v1/search", json={"query": "folate homocysteine", "k": 3}).json()
    assert set(body) == {"query", "k", "date", "hits"} and all(set(h) == SEARCH_HIT for h in body["hits"])
    _same_json(SearchResponse, body)
    dated = client.post("/v1/search", json={"query": "folate homocysteine", "date": "2013-01-01"}).json()
    assert set(dated) == {"query", "k", "date", "hits", "date_filter"} and set(dated["date_filter"]) == DATE_FILTER
    _same_json(SearchResponse, dated)


def test_plan_and_rewrite(client, mini):
    claim = next(c for c in mini.claims if c.claim_id == CLAIM_ID)
    body = client.post("/v1/plan", json={"claim": claim.text}).json()
    assert set(body) == PLAN
    _same_json(PlanResponse, body)
    body = client.post("/v1/rewrite", json={"query": claim.text, "claim_id": CLAIM_ID, "suggest": True}).json()
    assert set(body) == REWRITE and body["suggestion"] is not None and body["metric"] is not None
    assert all("relevant" in h and "text" not in h for h in body["hits"])
    _same_json(RewriteResponse, body)
    action = body["tokens"][0]["edits"][0]["action"]
    edited = client.post("/v1/rewrite", json={"query": claim.text, "action": action}).json()
    assert edited["edit"] is not None and edited["metric"] is None
    _same_json(RewriteResponse, edited)
    not_applied = client.post("/v1/rewrite", json={"query": "folate", "action": 100}).json()
    assert not_applied["edit"]["applied"] is False
    _same_json(RewriteResponse, not_applied)


def test_errors(client):
    for r in [
        client.post("/v1/check", json={"claim": ""}),
        client.post("/v1/check", json={"claim": "ok", "planner": "nope"}),
        client.post("/v1/rewrite", json={"query": "folate", "action": 128}),
        client.post("/v1/search", json={"query": "folate", "date": ""}),
    ]:
        assert r.status_code in (400, 422)
        _same_json(ErrorResponse, r.json())


def test_a_model_refuses_a_renamed_field():
    with pytest.raises(ValueError, match="Extra inputs"):
        PlanResponse.model_validate(
            {"claim_id": "c", "text": "x", "date": None, "planner": "claim", "queries": [], "planner_error": None}
        )


def test_openapi_names_a_response_schema_for_every_endpoint(client):
    schema = client.get("/openapi.json").json()
    expected = {
        ("/v1/health", "get"): "HealthResponse",
        ("/v1/check", "post"): "Report",
        ("/v1/search", "post"): "SearchResponse",
        ("/v1/plan", "post"): "PlanResponse",
        ("/v1/rewrite", "post"): "RewriteResponse",
        ("/v1/checks", "post"): "JobResponse",
        ("/v1/checks/{job_id}", "get"): "JobResponse",
    }
    for (path, method), name in expected.items():
        answers = schema["paths"][path][method]["responses"]
        ok = answers["202" if path == "/v1/checks" else "200"]["content"]["application/json"]["schema"]
        assert ok == {"$ref": f"#/components/schemas/{name}"}
        if method == "post":
            bad = schema["paths"][path][method]["responses"]["422"]["content"]["application/json"]["schema"]
            assert bad == {"$ref": "#/components/schemas/ErrorResponse"}
    report = schema["components"]["schemas"]["Report"]
    assert set(report["properties"]) == REPORT and report["additionalProperties"] is False

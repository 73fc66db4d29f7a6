"""Document jobs (issue 49, item 3): ``POST /v1/documents`` -> 202 and a job id, ``GET
/v1/documents/{id}`` -> progress ``{checked, total}`` and the factscout-document-report/1 report; the
claims run as a job's claims (same store, worker and queue: a restarted server resumes them); the
page ``/documents/{id}`` draws the text with its check-worthy sentences highlighted and linked."""

from __future__ import annotations

import json
import re
import time

import pytest
from fastapi.testclient import TestClient

from factscout.claims.check import check_document, plan_document
from factscout.claims.document import parse_document
from factscout.claims.report import DocumentReport
from factscout.serve import create_app
from factscout.serve.jobs import JobStore
from factscout.serve.responses import DocumentJobResponse
from factscout.serve.schemas import MAX_DOCUMENT_CHARS, MAX_DOCUMENT_CLAIMS

from .conftest import FOLATE_CLAIM, HOSTILE_SCRIPT

# a statistic (check-worthy), an opinion, a sentence leaning on the one before it, a hostile line
DOCUMENT = (
    "The minister spoke on Tuesday about school meals.\n"
    "I think it was a lovely speech.\n"
    f"{FOLATE_CLAIM}\n"
    "Folic acid supplements lowered homocysteine levels by 25 percent in the 2005 trial, she said.\n"
    f"{HOSTILE_SCRIPT} The end.\n"
)


def wait_for(client, location: str, timeout: float = 90) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        job = client.get(location).json()
        if job["status"] in ("done", "failed"):
            return job
        assert time.monotonic() < deadline, f"job not finished after {timeout} s: {job}"
        time.sleep(0.05)


def documented(answer: dict) -> None:
    """The answer is what DocumentJobResponse documents, field for field."""
    assert DocumentJobResponse.model_validate(answer).model_dump(mode="json", exclude_unset=True) == answer


@pytest.fixture(scope="module")
def client(checker, tmp_path_factory):
    app = create_app(checker, warm_up=False, state=tmp_path_factory.mktemp("documents"))
    with TestClient(app) as c:
        yield c


@pytest.fixture(scope="module")
def finished(client):
    r = client.post("/v1/documents", json={"text": DOCUMENT, "top": 2, "date": "2016-06-01"})
    assert r.status_code == 202, r.text
    return r, wait_for(client, r.headers["location"])


def test_a_document_job_answers_202_then_gives_the_document_report(client, finished, checker):
    r, job = finished
    accepted = r.json()
    assert r.headers["location"] == f"/v1/documents/{accepted['id']}"
    assert accepted["status"] == "queued" and accepted["report"] is None  # stored before the answer, not yet run
    total = accepted["progress"]["total"]
    assert 1 <= total <= 2 and accepted["error"] is None
    assert job["status"] == "done" and job["progress"] == {"checked": total, "total": total}
    assert job["failed"] == 0 and job["errors"] == [] and job["finished"] >= job["created"]
    for answer in (accepted, job):
        documented(answer)
    report = DocumentReport.from_dict(job["report"])
    assert report.text == DOCUMENT and report.date.isoformat() == "2016-06-01" and len(report.claims) == total
    for c in report.claims:  # every claim keeps its span; its report is a full check of the text with context
        assert DOCUMENT[c.start : c.end] == c.sentence and c.report.claim == c.claim
        assert c.report.claim_id == c.sentence_id and c.report.checked_before is not None
    assert "I think it was a lovely speech." not in [c.sentence for c in report.claims]
    # the same core as `factscout check --document`: the same sentences, texts and verdicts
    service = client.app.state.service
    local = check_document(checker, parse_document(DOCUMENT), top=2, date=report.date, model=service.checkworthy)
    assert [(c.sentence_id, c.claim) for c in local.claims] == [(c.sentence_id, c.claim) for c in report.claims]
    assert [c.report.verdict.label for c in local.claims] == [c.report.verdict.label for c in report.claims]
    assert local.sentences == report.sentences


def test_the_page_highlights_the_sentences_in_place_and_links_each_to_its_report(client, finished):
    _, job = finished
    page = client.get(f"/documents/{job['id']}")
    assert page.status_code == 200 and page.headers["cache-control"] == "no-store"
    html = page.text
    for c in job["report"]["claims"]:
        sid = c["sentence_id"]
        assert f'href="#claim-{sid}"' in html and f'id="claim-{sid}"' in html and f'href="#sentence-{sid}"' in html
    assert 'class="document-text"' in html and 'data-section="verdict"' in html
    assert HOSTILE_SCRIPT not in html and "&lt;script&gt;" in html  # escaped, never markup
    assert "<script>" not in html.replace('<script src="/static/documents.js" defer></script>', "")
    assert re.search(r'<link rel="stylesheet" href="/static/document.css">', html)
    assert client.get("/static/document.css").status_code == 200
    assert client.get("/static/documents.js").status_code == 200


def test_the_page_of_a_running_job_polls_it_and_an_unknown_one_is_404(checker, tmp_path):
    app = create_app(checker, warm_up=False, state=tmp_path)
    plan = plan_document(parse_document(DOCUMENT), app.state.service.checkworthy, top=1)
    claims = [{"claim_id": c.claim_id, "claim": c.text} for c in plan.claims()]
    job_id = app.state.jobs.create_document(plan.report([None]).to_dict(), claims, planner="claim", date_filter=True)
    c = TestClient(app)  # no lifespan: no worker runs the job
    page = c.get(f"/documents/{job_id}")
    assert page.status_code == 200 and f'data-job="{job_id}"' in page.text and "0/1 sentences checked" in page.text
    assert c.get("/documents/0123456789abcdef").status_code == 404
    job = c.get(f"/v1/documents/{job_id}").json()
    assert job["status"] == "queued" and job["progress"] == {"checked": 0, "total": 1} and job["report"] is None
    documented(job)


def test_a_restarted_server_resumes_a_document_job(checker, tmp_path):
    first = create_app(checker, warm_up=False, state=tmp_path)
    plan = plan_document(parse_document(DOCUMENT), first.state.service.checkworthy, top=2)
    claims = [{"claim_id": c.claim_id, "claim": c.text} for c in plan.claims()]
    job_id = first.state.jobs.create_document(
        plan.report([None] * len(claims)).to_dict(), claims, planner="claim", date_filter=True
    )
    first.state.jobs.close()  # the server stops before checking anything
    store = JobStore(tmp_path)
    assert [t.claim_id for t in store.pending(10)] == [c["claim_id"] for c in claims]
    store.close()
    with TestClient(create_app(checker, warm_up=False, state=tmp_path)) as again:
        job = wait_for(again, f"/v1/documents/{job_id}")
    assert job["status"] == "done" and job["progress"]["checked"] == len(claims) > 0
    assert [c["sentence_id"] for c in job["report"]["claims"]] == [r.sentence.sentence_id for r in plan.chosen]


def test_a_document_with_nothing_to_check_is_done_at_once(client):
    r = client.post("/v1/documents", json={"text": DOCUMENT, "min_score": 1.0})
    assert r.status_code == 202
    job = r.json()
    assert job["status"] == "done" and job["progress"] == {"checked": 0, "total": 0} and job["finished"]
    assert job["report"]["claims"] == [] and len(job["report"]["sentences"]) == 5
    documented(job)
    blank = client.post("/v1/documents", json={"text": " \n "}).json()
    assert blank["status"] == "done" and blank["report"]["sentences"] == []


def test_a_document_the_core_refuses_is_a_failed_job_with_the_reason(client):
    r = client.post("/v1/documents", json={"text": "no tab on this line", "format": "transcript"})
    assert r.status_code == 202
    job = r.json()
    assert job["status"] == "failed" and job["report"] is None and "expected 'line_number<TAB>" in job["error"]
    assert client.get(r.headers["location"]).json() == job
    documented(job)
    assert client.get(f"/documents/{job['id']}").status_code == 400


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        ({"text": ""}, "text", "at least 1 character"),
        ({"text": "x" * (MAX_DOCUMENT_CHARS + 1)}, "text", f"at most {MAX_DOCUMENT_CHARS} characters"),
        ({"text": "PK\u0000\u0003binary"}, "text", "a NUL byte (binary data)"),
        ({"text": "bell \u0007"}, "text", "the control character U+0007"),
        ({"text": "bad \ud800 text"}, "text", "unicode"),
        ({"text": "ok", "format": "pdf"}, "format", "'text', 'markdown', 'html' or 'transcript'"),
        ({"text": "ok", "top": 0}, "top", "greater than or equal to 1"),
        ({"text": "ok", "top": MAX_DOCUMENT_CLAIMS + 1}, "top", f"less than or equal to {MAX_DOCUMENT_CLAIMS}"),
        ({"text": "ok", "top": "5"}, "top", "must be an integer"),
        ({"text": "ok", "min_score": 1.5}, "min_score", "less than or equal to 1"),
        ({"text": "ok", "min_score": "0.5"}, "min_score", "valid number"),
        ({"text": "ok", "date": "2019/06/01"}, "date", "ISO date"),
        ({"text": "ok", "colour": "red"}, "colour", "Extra inputs"),
        ({}, "text", "Field required"),
    ],
)
def test_bad_input_is_422_naming_the_field_and_makes_no_job(client, body, field, message):
    before = client.app.state.jobs.unfinished(), len(client.app.state.jobs.attempts())
    r = client.post("/v1/documents", content=json.dumps(body), headers={"content-type": "application/json"})
    assert r.status_code == 422, r.text
    assert any(d["field"] == field and message in d["message"] for d in r.json()["details"]), r.json()
    assert (client.app.state.jobs.unfinished(), len(client.app.state.jobs.attempts())) == before


def test_an_unknown_job_is_404_and_a_check_job_is_no_document_job(client):
    r = client.get("/v1/documents/0123456789abcdef")
    assert r.status_code == 404 and r.json() == {"error": "no document job '0123456789abcdef'", "status": 404}
    check = client.post("/v1/checks", json={"claim": FOLATE_CLAIM}).json()
    assert client.get(f"/v1/documents/{check['id']}").status_code == 404


def test_the_token_is_required_and_the_page_is_off(checker, tmp_path):
    app = create_app(checker, warm_up=False, token="s3cret", state=tmp_path)
    c = TestClient(app)
    for answer in (c.post("/v1/documents", json={"text": DOCUMENT}), c.get("/v1/documents/abc")):
        assert answer.status_code == 401 and answer.headers["www-authenticate"] == "Bearer"
    wrong = c.post("/v1/documents", json={"text": DOCUMENT}, headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401
    ok = c.post("/v1/documents", json={"text": DOCUMENT, "min_score": 1.0}, headers={"Authorization": "Bearer s3cret"})
    assert ok.status_code == 202 and ok.json()["status"] == "done"
    assert c.get(f"/documents/{ok.json()['id']}").status_code == 403


def test_the_openapi_schema_documents_the_document_endpoints(client):
    schema = client.get("/openapi.json").json()
    post = schema["paths"]["/v1/documents"]["post"]
    assert "Location" in post["responses"]["202"]["headers"] and {"401", "422", "503"} <= set(post["responses"])
    assert post["responses"]["202"]["content"]["application/json"]["schema"]["$ref"].endswith("/DocumentJobResponse")
    request = schema["components"]["schemas"]["DocumentRequest"]["properties"]
    assert request["text"]["maxLength"] == MAX_DOCUMENT_CHARS and request["text"]["examples"]
    assert request["format"]["enum"] == ["text", "markdown", "html", "transcript"]
    assert {"200", "404"} <= set(schema["paths"]["/v1/documents/{job_id}"]["get"]["responses"])
    assert "/documents/{job_id}" not in schema["paths"]  # the page is not part of the API


def test_the_main_page_has_the_paste_a_text_mode(client):
    html = client.get("/").text
    assert 'id="document-form" hidden' in html and 'id="mode" class="mode" hidden' in html
    assert f'maxlength="{MAX_DOCUMENT_CHARS}"' in html and f'max="{MAX_DOCUMENT_CLAIMS}"' in html
    assert '<script src="/static/documents.js" defer></script>' in html
    assert '<label for="document-text">' in html and 'id="document-text" name="text"' in html

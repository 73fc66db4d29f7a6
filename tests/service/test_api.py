"""The HTTP API over the scifact_mini index: results, validation (4xx JSON), token, 503, headers."""

from __future__ import annotations

import asyncio
import threading

import httpx
import pytest
from fastapi.testclient import TestClient

from factscout.report import FORMAT, VERDICTS
from factscout.rewrite.io import make_policy, policy_for_index
from factscout.serve import create_app
from factscout.serve.app import CSP

from .conftest import CLAIM_ID, HOSTILE_IMG, HOSTILE_SCRIPT


@pytest.fixture(scope="module")
def client(checker, mini):
    app = create_app(checker, qrels=mini.qrels)
    with TestClient(app) as c:
        yield c


def test_health_says_what_is_loaded(client, mini):
    r = client.get("/v1/health")
    assert r.status_code == 200
    body = r.json()
    assert body["status"] == "ok" and body["passages"] == len(mini.corpus) + 3
    assert body["planner"] == "claim" and body["qrels"] == len(mini.qrels)


def test_check_returns_the_report(client, mini):
    claim = next(c for c in mini.claims if c.claim_id == CLAIM_ID)
    r = client.post("/v1/check", json={"claim": claim.text, "date": "2016-06-01", "claim_id": "mine"})
    assert r.status_code == 200, r.text
    report = r.json()
    assert report["format"] == FORMAT and report["claim_id"] == "mine" and report["date"] == "2016-06-01"
    assert report["verdict"]["label"] in VERDICTS
    ids = [e["passage_id"] for e in report["evidence"]]
    assert "hostile" in ids  # dated before the claim
    assert "late-folate" not in ids  # published after the claim date: filtered out
    everything = client.post("/v1/check", json={"claim": claim.text, "date": "2016-06-01", "date_filter": False})
    late = [e for e in everything.json()["evidence"] if e["passage_id"] == "late-folate"]
    assert late and late[0]["after_claim"] is True


def test_concurrent_checks_are_batched_and_each_gets_its_own_report(checker, mini):
    app = create_app(checker, warm_up=False)
    claims = [c.text for c in mini.claims[:4]]

    async def go():
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as ac:
            return await asyncio.gather(*(ac.post("/v1/check", json={"claim": c}) for c in claims))

    responses = asyncio.run(go())
    assert [r.status_code for r in responses] == [200] * 4
    assert [r.json()["claim"] for r in responses] == claims
    assert len({r.json()["claim_id"] for r in responses}) == 4
    assert app.state.runner.stats.largest_batch > 1


def test_search_plan_and_rewrite(client, mini):
    claim = next(c for c in mini.claims if c.claim_id == CLAIM_ID)
    r = client.post("/v1/search", json={"query": claim.text, "k": 3})
    assert r.status_code == 200 and len(r.json()["hits"]) == 3
    assert r.json()["hits"][0]["rank"] == 1 and "text" in r.json()["hits"][0]
    dated = client.post("/v1/search", json={"query": "folate homocysteine", "k": 50, "date": "2013-01-01"}).json()
    assert "hostile" not in [h["passage_id"] for h in dated["hits"]]  # published 2015
    assert dated["date_filter"]["published_before"] == "2013-01-01"
    r = client.post("/v1/plan", json={"claim": claim.text})
    assert r.status_code == 200 and r.json()["queries"][0]["text"] == claim.text
    r = client.post("/v1/rewrite", json={"query": claim.text, "claim_id": CLAIM_ID, "suggest": True})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["metric"]["measure"] == "AP@50" and 0.0 <= body["metric"]["value"] <= 1.0
    # the editor suggests with the shipped policy made for the index's retriever (issue 17)
    made_for = policy_for_index(client.app.state.service.retriever.name, None)
    assert body["suggestion"]["original"] == claim.text and body["policy"] == make_policy(made_for).name
    remove = next(e for t in body["tokens"] for e in t["edits"] if e["kind"] == "remove")
    edited = client.post("/v1/rewrite", json={"query": claim.text, "action": remove["action"], "claim_id": CLAIM_ID})
    assert edited.status_code == 200
    assert edited.json()["edit"]["description"] == remove["description"] and edited.json()["edit"]["applied"]
    assert edited.json()["query"] != claim.text and len(edited.json()["tokens"]) == len(body["tokens"]) - 1


@pytest.mark.parametrize(
    ("path", "body", "field", "message"),
    [
        ("/v1/check", {"claim": ""}, "claim", "1 to 2000 characters"),
        ("/v1/check", {"claim": "   "}, "claim", "1 to 2000 characters"),
        ("/v1/check", {"claim": "x" * 2001}, "claim", "1 to 2000 characters"),
        ("/v1/check", {"claim": 5}, "claim", "must be a string"),
        ("/v1/check", {}, "claim", "Field required"),
        ("/v1/check", {"claim": "ok", "date": "2019/06/01"}, "date", "ISO date"),
        ("/v1/check", {"claim": "ok", "date": "2019-02-30"}, "date", "ISO date"),
        ("/v1/check", {"claim": "ok", "date": 1700000000}, "date", "ISO date"),
        ("/v1/check", {"claim": "ok", "colour": "red"}, "colour", "Extra inputs"),
        ("/v1/check", {"claim": "ok", "claim_id": "a b<"}, "claim_id", "pattern"),
        ("/v1/search", {"query": "ok", "k": 0}, "k", "greater than or equal to 1"),
        ("/v1/search", {"query": "ok", "k": 101}, "k", "less than or equal to 100"),
        ("/v1/search", {"query": "ok", "k": "ten"}, "k", "integer"),
        ("/v1/rewrite", {"query": "ok", "action": 128}, "action", "less than or equal to 127"),
        # what the schema calls invalid the server refuses (as schemathesis checks)
        ("/v1/check", {"claim": "ok", "date_filter": 0}, "date_filter", "valid boolean"),
        ("/v1/rewrite", {"query": "ok", "suggest": "yes"}, "suggest", "valid boolean"),
        ("/v1/search", {"query": "ok", "k": "5"}, "k", "integer"),
        ("/v1/search", {"query": "ok", "k": True}, "k", "integer"),
        ("/v1/plan", {"claim": "ok", "date": ""}, "date", "ISO date"),
        ("/v1/search", {"query": "ok", "date": ""}, "date", "ISO date"),
        ("/v1/search", {"query": "ok", "date": "2019-W01-1"}, "date", "ISO date"),
        ("/v1/search", {"query": "ok", "date": "0000-01-01"}, "date", "ISO date"),
    ],
)
def test_malformed_requests_are_422_json_naming_the_field(client, path, body, field, message):
    r = client.post(path, json=body)
    assert r.status_code == 422, r.text
    assert r.headers["content-type"] == "application/json"
    error = r.json()
    assert error["status"] == 422 and message in error["error"]
    assert any(d["field"] == field and message in d["message"] for d in error["details"])


def test_an_action_the_query_does_not_allow_leaves_it_unchanged(client):
    """A valid action id that does not apply to this query is answered, not refused (the schema
    cannot say which actions a query allows): the query stays, and ``edit`` says why."""
    r = client.post("/v1/rewrite", json={"query": "folate", "action": 100})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["query"] == "folate" and body["edit"]["applied"] is False and body["edit"]["action"] == 100
    assert "not valid on a 1-token query" in body["edit"]["description"]


def test_what_the_schema_calls_valid_is_accepted(client):
    assert client.post("/v1/search", json={"query": "folate", "k": 5.0}).status_code == 200  # a JSON integer
    r = client.post("/v1/checks", json={"claim": None, "claims": [{"claim": "Folate lowers homocysteine."}]})
    assert r.status_code == 202, r.text


def test_the_schema_states_the_servers_rules(client):
    from factscout.plan import PLANNERS

    schemas = client.get("/openapi.json").json()["components"]["schemas"]
    assert schemas["ClaimText"]["pattern"].startswith("^")
    assert schemas["SearchRequest"]["properties"]["query"]["$ref"] == "#/components/schemas/ClaimText"
    planner = schemas["CheckRequest"]["properties"]["planner"]["anyOf"][0]
    assert planner == {"type": "string", "enum": sorted(PLANNERS)}
    assert [form["required"] for form in schemas["ChecksRequest"]["oneOf"]] == [["claim"], ["claims"]]
    assert schemas["PlanRequest"]["properties"]["date"]["anyOf"][0]["format"] == "date"


def test_unknown_names_bad_json_and_oversized_bodies_are_4xx_json(client):
    r = client.post("/v1/check", json={"claim": "ok", "planner": "decompse"})
    assert r.status_code == 422 and "no planner 'decompse'; known: claim" in r.json()["error"]
    assert "decompose" in r.json()["known"]
    r = client.post("/v1/plan", json={"claim": "ok", "planner": "nope"})
    assert r.status_code == 422 and "qgen" in r.json()["known"]
    r = client.post("/v1/plan", json={"claim": "ok", "planner": " claim "})  # a name, as the schema's enum
    assert r.status_code == 422 and "no planner ' claim '" in r.json()["error"]
    r = client.post("/v1/check", content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["error"] == "the request body is not valid JSON"
    r = client.post("/v1/check", content=b"[1, 2]", headers={"content-type": "application/json"})
    assert r.status_code == 422
    r = client.post("/v1/check", content=b"x" * 70_000, headers={"content-type": "application/json"})
    assert r.status_code == 413 and "body over" in r.json()["error"]
    assert client.get("/v1/nothing").status_code == 404 and client.get("/v1/nothing").json()["status"] == 404
    assert client.get("/v1/check").status_code == 405


def test_openapi_schema_lists_the_endpoints(client):
    schema = client.get("/openapi.json").json()
    assert {"/v1/check", "/v1/search", "/v1/plan", "/v1/rewrite", "/v1/health"} <= set(schema["paths"])
    check = schema["components"]["schemas"]["CheckRequest"]["properties"]
    assert {"claim", "date", "planner", "date_filter", "claim_id"} <= set(check)


def test_bearer_token(checker):
    app = create_app(checker, token="s3cret", warm_up=False)
    with TestClient(app) as c:
        assert c.get("/v1/health").status_code == 200
        r = c.post("/v1/search", json={"query": "folate"})
        assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
        assert r.json()["error"] == "missing or wrong bearer token"
        bad = c.post("/v1/search", json={"query": "folate"}, headers={"Authorization": "Bearer nope"})
        assert bad.status_code == 401
        good = c.post("/v1/search", json={"query": "folate"}, headers={"Authorization": "Bearer s3cret"})
        assert good.status_code == 200
        assert c.get("/").status_code == 403  # a browser cannot send the token: the page is off


def test_a_full_queue_answers_503_with_retry_after(checker):
    app = create_app(checker, max_pending=2, warm_up=False)
    release = threading.Event()
    runner = app.state.runner

    def blocked(items):
        release.wait(10)
        return [{"query": i.query} for i in items]

    runner.handlers["search"] = blocked

    async def go():
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as ac:
            first = [asyncio.create_task(ac.post("/v1/search", json={"query": f"q{i}"})) for i in range(2)]
            await asyncio.sleep(0.2)
            refused = await ac.post("/v1/search", json={"query": "one too many"})
            release.set()
            return refused, await asyncio.gather(*first)

    refused, served = asyncio.run(go())
    assert refused.status_code == 503 and refused.headers["retry-after"] == "2"
    assert "busy" in refused.json()["error"]
    assert [r.status_code for r in served] == [200, 200]
    assert runner.stats.rejected == 1


def test_page_escapes_hostile_passages_and_sends_a_csp(client, mini):
    claim = next(c for c in mini.claims if c.claim_id == CLAIM_ID)
    r = client.get("/", params={"claim": claim.text, "date": "2016-06-01"})
    assert r.status_code == 200
    assert r.headers["content-security-policy"] == CSP and "script-src 'self'" in CSP
    html = r.text
    assert 'data-passage-id="hostile"' in html
    assert HOSTILE_SCRIPT not in html and HOSTILE_IMG not in html
    assert "&lt;script&gt;window.__pwned = &#39;text&#39;" in html
    assert html.count("<script") == 3 and '<script src="/static/editor.js" defer></script>' in html
    assert '<script src="/static/checks.js" defer></script>' in html
    assert '<script src="/static/documents.js" defer></script>' in html  # the "paste a text" mode
    assert "javascript:" not in html.split("<main>")[1].split('id="editor"')[0]  # the URL is not a link


def test_page_form_errors_are_shown_not_raised(client):
    r = client.get("/", params={"claim": "ok", "date": "yesterday"})
    assert r.status_code == 422 and "must be an ISO date" in r.text
    assert client.get("/").status_code == 200

"""Check jobs (issue 19, item 2): ``POST /v1/checks`` -> 202 and a job id, ``GET /v1/checks/{id}``
-> status, progress and the reports; kept in SQLite so a killed and restarted ``factscout serve``
finishes every accepted job, each claim's report stored exactly once."""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

import factscout
from factscout.errors import InputError
from factscout.serve import create_app
from factscout.serve.jobs import DATABASE_NAME, ClaimTask, JobStore
from factscout.serve.responses import JobResponse
from factscout.serve.schemas import MAX_JOB_CLAIMS

from .conftest import CLAIM_ID


def wait_for(client, location: str, timeout: float = 60) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        job = client.get(location).json()
        if job["status"] in ("done", "failed"):
            return job
        assert time.monotonic() < deadline, f"job not finished after {timeout} s: {job}"
        time.sleep(0.05)


@pytest.fixture(scope="module")
def state(tmp_path_factory):
    return tmp_path_factory.mktemp("state")


@pytest.fixture(scope="module")
def client(checker, state):
    app = create_app(checker, warm_up=False, state=state)
    with TestClient(app) as c:
        yield c


def test_a_job_answers_202_then_gives_the_report_of_v1_check(client, mini, state):
    claim = next(c for c in mini.claims if c.claim_id == CLAIM_ID)
    body = {"claim": claim.text, "date": "2016-06-01", "claim_id": "mine"}
    r = client.post("/v1/checks", json=body)
    assert r.status_code == 202, r.text
    accepted = r.json()
    assert r.headers["location"] == f"/v1/checks/{accepted['id']}"
    assert accepted["status"] in ("queued", "running") and accepted["total"] == 1 and accepted["reports"] is None
    job = wait_for(client, r.headers["location"])
    assert job["status"] == "done" and job["done"] == 1 and job["failed"] == 0 and job["errors"] == []
    assert job["finished"] >= job["created"]
    assert job["reports"] == [client.post("/v1/check", json=body).json()]
    for answer in (accepted, job):  # the documented model describes both answers field for field
        assert JobResponse.model_validate(answer).model_dump(mode="json", exclude_unset=True) == answer
    assert (state / DATABASE_NAME).is_file()


def test_a_batch_job_keeps_the_claims_order_and_ids(client, mini):
    claims = mini.claims[:3]
    body = {
        "claims": [
            {"claim": claims[0].text, "claim_id": "first"},
            {"claim": claims[1].text, "date": "2016-06-01"},
            {"claim": claims[2].text},
        ],
        "date_filter": False,
    }
    r = client.post("/v1/checks", json=body)
    assert r.status_code == 202 and r.json()["total"] == 3
    job = wait_for(client, r.headers["location"])
    assert job["status"] == "done" and job["done"] == 3
    reports = job["reports"]
    assert [rep["claim"] for rep in reports] == [c.text for c in claims]
    assert [rep["claim_id"] for rep in reports] == ["first", f"{job['id']}-2", f"{job['id']}-3"]
    assert reports[1]["date"] == "2016-06-01" and reports[0]["date"] is None
    alone = client.post("/v1/check", json={"claim": claims[2].text, "claim_id": f"{job['id']}-3", "date_filter": False})
    assert reports[2] == alone.json()


def test_an_unknown_job_is_404(client):
    r = client.get("/v1/checks/0123456789abcdef")
    assert r.status_code == 404 and r.json() == {"error": "no check job '0123456789abcdef'", "status": 404}
    page = client.get("/", params={"job": "nope"})
    assert page.status_code == 404 and "no check job" in page.text


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        ({"claim": ""}, "claim", "1 to 2000 characters"),
        ({"claim": "\u200b"}, "claim", "it is empty"),
        ({"claim": "bad \ud800 text"}, "claim", "lone surrogate"),
        ({"claim": "ok", "date": "2019/06/01"}, "date", "ISO date"),
        ({"claim": "ok", "colour": "red"}, "colour", "Extra inputs"),
        ({}, "body", "give either `claim`"),
        ({"claim": "a", "claims": [{"claim": "b"}]}, "body", "not both"),
        ({"claims": []}, "claims", "at least 1 item"),
        ({"claims": [{"claim": "x"}] * (MAX_JOB_CLAIMS + 1)}, "claims", f"at most {MAX_JOB_CLAIMS} items"),
        ({"claims": [{"claim": "ok"}, {"claim": "ok", "date": "June"}]}, "claims.1.date", "ISO date"),
        ({"claims": [{"claim": "ok"}], "claim_id": "x"}, "body", "inside each entry"),
    ],
)
def test_bad_input_is_422_naming_the_field_and_makes_no_job(client, body, field, message):
    # json.dumps escapes a lone surrogate as \ud800, as any JSON client may send it
    claims_before = len(client.app.state.jobs.attempts())
    r = client.post("/v1/checks", content=json.dumps(body), headers={"content-type": "application/json"})
    assert r.status_code == 422, r.text
    error = r.json()
    assert any(d["field"] == field and message in d["message"] for d in error["details"]), error
    assert len(client.app.state.jobs.attempts()) == claims_before


def test_an_unknown_planner_is_422_before_a_job_is_made(client):
    claims_before = len(client.app.state.jobs.attempts())
    r = client.post("/v1/checks", json={"claim": "ok", "planner": "decompse"})
    assert r.status_code == 422 and "decompose" in r.json()["known"]
    assert len(client.app.state.jobs.attempts()) == claims_before


def test_a_claim_the_core_refuses_fails_alone(checker, tmp_path):
    app = create_app(checker, warm_up=False, state=tmp_path)
    check = app.state.runner.handlers["job"]

    def picky(tasks):
        if any("refuse" in t.claim for t in tasks):
            raise InputError("the core refused this claim")
        return check(tasks)

    app.state.runner.handlers["job"] = picky
    with TestClient(app) as c:
        r = c.post("/v1/checks", json={"claims": [{"claim": "Folate lowers homocysteine"}, {"claim": "refuse me"}]})
        job = wait_for(c, r.headers["location"])
    assert job["status"] == "failed" and job["done"] == 2 and job["failed"] == 1
    assert job["errors"] == [{"position": 1, "claim_id": f"{job['id']}-2", "error": "the core refused this claim"}]
    assert job["reports"][0]["claim"] == "Folate lowers homocysteine" and job["reports"][1] is None


def test_the_page_shows_a_finished_jobs_stored_report(client, mini):
    claim = next(c for c in mini.claims if c.claim_id == CLAIM_ID)
    r = client.post("/v1/checks", json={"claim": claim.text, "date": "2016-06-01"})
    job = wait_for(client, r.headers["location"])
    page = client.get("/", params={"claim": claim.text, "date": "2016-06-01", "job": job["id"]})
    assert page.status_code == 200
    assert f'id="verdict-label" class="verdict-label">{job["reports"][0]["verdict"]["label"]}<' in page.text
    assert 'data-passage-id="hostile"' in page.text


def test_the_page_of_an_unfinished_job_goes_on_polling_it(checker, tmp_path):
    app = create_app(checker, warm_up=False, state=tmp_path)
    job_id = app.state.jobs.create([{"claim": "Folate lowers homocysteine"}], planner="claim", date_filter=True)
    page = TestClient(app).get("/", params={"claim": "Folate lowers homocysteine", "job": job_id})  # no worker
    assert (
        page.status_code == 200 and f'id="progress" class="muted" aria-live="polite" data-job="{job_id}"' in page.text
    )
    assert 'id="verdict"' not in page.text and '<script src="/static/checks.js" defer></script>' in page.text


def test_the_openapi_schema_documents_the_job_endpoints(client):
    schema = client.get("/openapi.json").json()
    post = schema["paths"]["/v1/checks"]["post"]
    assert "Location" in post["responses"]["202"]["headers"]
    assert post["responses"]["202"]["content"]["application/json"]["schema"]["$ref"].endswith("/JobResponse")
    get = schema["paths"]["/v1/checks/{job_id}"]["get"]
    assert {"200", "404"} <= set(get["responses"])
    job = schema["components"]["schemas"]["JobResponse"]["properties"]
    assert {"id", "status", "total", "done", "reports", "errors"} <= set(job)


# ---------------------------------------------------------------------- the store alone


def test_the_store_resumes_what_has_no_outcome_and_stores_each_outcome_once(tmp_path):
    store = JobStore(tmp_path)
    first = store.create(
        [{"claim": "a"}, {"claim": "b", "claim_id": "B", "date": "2020-01-02"}], planner="claim", date_filter=True
    )
    second = store.create([{"claim": "c"}], planner="decompose", date_filter=False)
    tasks = store.pending(10)
    assert [(t.job_id, t.position, t.claim_id) for t in tasks] == [
        (first, 0, f"{first}-1"),
        (first, 1, "B"),
        (second, 0, f"{second}-1"),
    ]
    assert tasks[1].date == "2020-01-02" and tasks[2].planner == "decompose" and tasks[2].date_filter is False
    store.count_attempts(tasks[:2])
    assert store.get(first)["status"] == "running" and store.get(second)["status"] == "queued"
    store.finish(tasks[0], report={"claim": "a"})
    with pytest.raises(RuntimeError, match="already has an outcome"):
        store.finish(tasks[0], report={"claim": "a"})
    assert store.pending(10, skip={tasks[1].key}) == [tasks[2]]
    store.close()

    again = JobStore(tmp_path)  # a restart: only the claims without an outcome are left
    assert again.pending(10) == tasks[1:]
    assert again.get(first)["done"] == 1 and again.get(first)["reports"] is None
    with pytest.raises(InputError, match="2 reports for 1 claims"):
        again.finish_reports(tasks[1:2], [{}, {}])
    again.finish_reports(tasks[1:2], [{"claim": "b"}])
    again.finish(tasks[2], error="refused")
    assert again.get(first)["status"] == "done" and again.get(first)["reports"] == [{"claim": "a"}, {"claim": "b"}]
    assert again.get(second)["status"] == "failed" and again.get(second)["errors"][0]["error"] == "refused"
    assert again.pending(10) == [] and again.unfinished() == 0
    assert again.attempts() == {(first, 0): 1, (first, 1): 1, (second, 0): 0}
    assert again.get("missing") is None
    with pytest.raises(InputError, match="report or an error"):
        again.finish(ClaimTask(second, 0, "x", "c", None, "claim", True))


def test_an_unwritable_state_folder_is_a_clear_error(tmp_path):
    from factscout.serve.jobs import JobStateError

    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(JobStateError, match="choose a writable folder with --state"):
        JobStore(blocker / "state")


# ---------------------------------------------------------------------- kill -9 and restart


JOBS = 20
CLAIMS_PER_JOB = 3
RESTART_TIMEOUT = 180  # seconds for the resumed jobs (generous: the test machine may be shared)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(command: list[str], port: int, log: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(Path(factscout.__file__).resolve().parents[1])}
    process = subprocess.Popen(command, stdout=log.open("ab"), stderr=subprocess.STDOUT, env=env)
    deadline = time.monotonic() + 90
    while True:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/v1/health", timeout=1).status_code == 200:
                return process
        except httpx.HTTPError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"factscout serve did not start:\n{log.read_text()[-3000:]}")
        time.sleep(0.1)


def _claims_table(db: Path) -> dict[tuple[str, int], tuple[int, bool]]:
    """(job id, position) -> (attempts, has an outcome), read from the server's database."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        rows = conn.execute("SELECT job_id, position, attempts, report IS NOT NULL OR error IS NOT NULL FROM claims")
        return {(j, p): (n, bool(done)) for j, p, n, done in rows}


@pytest.mark.slow
def test_kill_9_with_20_jobs_in_flight_then_restart_finishes_each_claim_exactly_once(served_index, mini, tmp_path):
    state, port, log = tmp_path / "state", _free_port(), tmp_path / "serve.log"
    command = [
        sys.executable,
        "-c",
        "from factscout.cli.main import app; app()",
        "serve",
        *("--index", str(served_index), "--state", str(state), "--port", str(port)),
        # the fastest models to load and run: two starts and 60 claims fit in about a minute
        *("--planner", "claim", "--stance", "head", "--passages", "1"),
    ]
    base = f"http://127.0.0.1:{port}"
    started = time.monotonic()
    server = _start(command, port, log)
    try:
        ids = []
        for j in range(JOBS):
            picked = [mini.claims[(j * CLAIMS_PER_JOB + i) % len(mini.claims)] for i in range(CLAIMS_PER_JOB)]
            body = {"claims": [{"claim": c.text, "claim_id": f"j{j}-{c.claim_id}"} for c in picked]}
            r = httpx.post(f"{base}/v1/checks", json=body, timeout=10)
            assert r.status_code == 202, r.text
            ids.append(r.json()["id"])
        # kill -9 once some claims are stored and most jobs are still in flight
        db = state / DATABASE_NAME
        deadline = time.monotonic() + 60
        while sum(done for _, done in _claims_table(db).values()) < JOBS * CLAIMS_PER_JOB // 4:
            assert time.monotonic() < deadline, "no claims were checked"
            time.sleep(0.01)
        os.kill(server.pid, signal.SIGKILL)
        server.wait(10)
        at_kill = _claims_table(db)
    finally:
        if server.poll() is None:
            server.kill()
    stored_at_kill = sum(done for _, done in at_kill.values())
    in_flight = [k for k, (n, done) in at_kill.items() if n > 0 and not done]
    unfinished = {j for (j, _), (_, done) in at_kill.items() if not done}
    assert len(at_kill) == JOBS * CLAIMS_PER_JOB
    assert 0 < stored_at_kill < len(at_kill) and len(unfinished) >= JOBS // 2

    killed = time.monotonic()
    server = _start(command, port, log)  # the same command resumes
    try:
        deadline = time.monotonic() + RESTART_TIMEOUT
        jobs = {}
        for job_id in ids:
            while True:
                job = httpx.get(f"{base}/v1/checks/{job_id}", timeout=10).json()
                if job["status"] in ("done", "failed"):
                    jobs[job_id] = job
                    break
                assert time.monotonic() < deadline, f"job {job_id} not finished after the restart: {job}"
                time.sleep(0.05)
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()

    # every accepted job is done with one report per claim, in order
    assert [jobs[i]["status"] for i in ids] == ["done"] * JOBS
    for j, job_id in enumerate(ids):
        job = jobs[job_id]
        assert job["done"] == job["total"] == CLAIMS_PER_JOB and len(job["reports"]) == CLAIMS_PER_JOB
        picked = [mini.claims[(j * CLAIMS_PER_JOB + i) % len(mini.claims)] for i in range(CLAIMS_PER_JOB)]
        assert [r["claim_id"] for r in job["reports"]] == [f"j{j}-{c.claim_id}" for c in picked]
        assert [r["claim"] for r in job["reports"]] == [c.text for c in picked]
    # no claim was checked twice: a claim stored before the kill was not run again, a claim not yet
    # begun ran once, and only the claims in the core at the moment of the kill ran a second time
    final = _claims_table(state / DATABASE_NAME)
    assert all(done for _, done in final.values())
    for key, (attempts, _) in final.items():
        before, done_before = at_kill[key]
        assert attempts == (before if done_before else before + 1 if before else 1), key
    extra = sum(n for n, _ in final.values()) - len(final)
    assert extra == len(in_flight)
    print(
        json.dumps(
            {
                "jobs": JOBS,
                "claims": len(final),
                "stored_at_kill": stored_at_kill,
                "in_flight_at_kill": len(in_flight),
                "unfinished_jobs_at_kill": len(unfinished),
                "checks_run_again": extra,
                "seconds_to_kill": round(killed - started, 1),
                "seconds_after_kill": round(time.monotonic() - killed, 1),
            }
        )
    )

"""``factscout mcp``: the tools through the official SDK's client against a real server process, over
stdio (list, call each, bad calls answered as tool errors while the server keeps answering) and over
streamable HTTP (the API's bearer token; one queue with the HTTP API)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

import factscout
from factscout.claims.report import DocumentReport
from factscout.report import Report
from factscout.serve.responses import FactChecksResponse, SearchResponse

from .conftest import CLAIM_DATE, FOLATE_CLAIM

pytestmark = pytest.mark.encoder  # the server process loads the sentence encoder and the stance model

TOOLS = {"check_claim", "search_evidence", "find_fact_checks", "check_document"}
# a statistic (check-worthy), an opinion, a statement of fact, and markup read as plain text
DOCUMENT = (
    "The minister spoke on Tuesday about school meals.\n"
    "I think it was a lovely speech.\n"
    "Folic acid supplements lowered homocysteine levels by 25 percent in the 2005 trial, she said.\n"
    "<script>alert('xss')</script>"
)
TIMEOUT = 120  # seconds for one answer (generous: the test machine may be shared)
# the models quickest to load and run (the int8 cross-encoder would be quantised into the test session's
# fresh cache first: half a minute)
FAST = ("--planner", "claim", "--stance", "head", "--passages", "3")


def _command(*args: str) -> list[str]:
    return [sys.executable, "-c", "from factscout.cli.main import app; app()", "mcp", *args]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(Path(factscout.__file__).resolve().parents[1])}


def over_stdio(args: list[str], log: Path, talk: Callable[[ClientSession], Awaitable[None]]) -> None:
    """Start ``factscout mcp ARGS`` and run ``talk`` with a client session over its stdin and stdout."""
    command = _command(*args)
    params = StdioServerParameters(command=command[0], args=command[1:], env=_env())

    async def main() -> None:
        with log.open("w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                await talk(session)

    try:
        anyio.run(main)
    except BaseException:
        print(log.read_text()[-3000:], file=sys.stderr)
        raise


async def call(session: ClientSession, tool: str, **arguments: Any) -> Any:
    return await session.call_tool(tool, arguments, read_timeout_seconds=TIMEOUT)


def test_every_tool_answers_over_stdio_and_bad_calls_are_tool_errors(served_index, factchecks_dir, tmp_path):
    seen: dict[str, Any] = {}

    async def talk(session: ClientSession) -> None:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert set(tools) == TOOLS
        assert all(t.description and t.output_schema for t in tools.values())
        # the report's schema as written: the computed timeline and leakage are in it
        assert {"verdict", "evidence", "timeline", "leakage"} <= set(tools["check_claim"].output_schema["properties"])
        assert tools["check_claim"].input_schema["required"] == ["claim"]

        checked = await call(session, "check_claim", claim=FOLATE_CLAIM, date=CLAIM_DATE.isoformat())
        assert not checked.is_error, checked.content
        seen["report"] = checked.structured_content
        seen["summary"] = checked.content[0].text

        found = await call(session, "search_evidence", query="folate homocysteine", k=3, before="2016-01-01")
        assert not found.is_error, found.content
        seen["search"], seen["search_text"] = found.structured_content, found.content[0].text

        matched = await call(session, "find_fact_checks", text=FOLATE_CLAIM, k=2)
        assert not matched.is_error, matched.content
        seen["factchecks"], seen["factchecks_text"] = matched.structured_content, matched.content[0].text

        document = await call(session, "check_document", text=DOCUMENT, top=2, date="2016-06-01")
        assert not document.is_error, document.content
        seen["document"], seen["document_text"] = document.structured_content, document.content[0].text

        bad = {
            "empty claim": ("check_claim", {"claim": " \u200b "}, "claim: must be 1 to 2000 characters"),
            "bad date": ("check_claim", {"claim": FOLATE_CLAIM, "date": "2016-02-30"}, "date: must be an ISO date"),
            "date form": ("check_claim", {"claim": FOLATE_CLAIM, "date": "01/06/2016"}, "date: must be an ISO date"),
            "k of 0": ("search_evidence", {"query": "folate", "k": 0}, "k: Input should be greater than or equal to 1"),
            "k of 101": ("search_evidence", {"query": "folate", "k": 101}, "k: Input should be less than or equal"),
            "bad before": ("search_evidence", {"query": "folate", "before": "2016"}, "before: must be an ISO date"),
            "too long": ("find_fact_checks", {"text": "folate " * 400}, "text: must be 1 to 2000 characters"),
            "k of 51": ("find_fact_checks", {"text": "folate", "k": 51}, "k: Input should be less than or equal to 50"),
            "control": ("check_claim", {"claim": "folate\x00"}, "claim: contains the control character U+0000"),
            "no claim": ("check_claim", {}, "claim"),
            "binary": ("check_document", {"text": "PK\x00\x00\x03\x04"}, "a NUL byte (binary data)"),
            "long document": ("check_document", {"text": "Folate. " * 7000}, "text: String should have at most 50000"),
            "no sentence": ("check_document", {"text": " \n\t "}, "text: the document holds no sentence"),
            "top of 21": ("check_document", {"text": DOCUMENT, "top": 21}, "top: Input should be less than or equal"),
            "not a number": ("search_evidence", {"query": "folate", "k": "many"}, "k"),
        }
        for name, (tool, arguments, reason) in bad.items():
            answer = await session.call_tool(tool, arguments, read_timeout_seconds=TIMEOUT)
            assert answer.is_error, name
            assert reason in answer.content[0].text, (name, answer.content[0].text)
            assert answer.structured_content is None, name
        again = await call(session, "check_claim", claim=FOLATE_CLAIM)  # the server still answers
        assert not again.is_error and again.structured_content["date"] is None

    over_stdio(["--index", str(served_index), "--factchecks", str(factchecks_dir), *FAST], tmp_path / "log", talk)

    report = Report.from_dict(seen["report"])  # the published factscout-report/1 layout
    assert report.claim == FOLATE_CLAIM and report.date == CLAIM_DATE and report.evidence
    assert all(e.published is None or e.published < CLAIM_DATE for e in report.evidence)
    assert seen["report"] == report.to_dict()
    assert report.checked_before is not None
    assert [m.fact_check_id for m in report.checked_before.matches] == ["fc-folate"]  # the later one is filtered
    summary = seen["summary"]
    assert f"Verdict: {report.verdict.label}" in summary and FOLATE_CLAIM in summary
    assert "Checked before" in summary and "Example Checks" in summary
    for side, title in (("supports", "Supporting evidence:"), ("refutes", "Refuting evidence:")):
        counted = [e for e in report.evidence for s in e.sentences if s.stance == side]
        assert (title in summary) == bool(counted)
        for e in counted[:1]:
            assert f"passage {e.passage_id}" in summary  # a quoted sentence names its source

    search = SearchResponse.model_validate(seen["search"])
    assert 1 <= len(search.hits) <= 3 and search.date == "2016-01-01"
    assert all(h.published is None or h.published < "2016-01-01" for h in search.hits)  # strictly before the day
    assert "late-folate" not in {h.passage_id for h in search.hits}
    assert all(f"[{h.passage_id}]" in seen["search_text"] for h in search.hits)

    fact_checks = FactChecksResponse.model_validate(seen["factchecks"])
    assert fact_checks.matches[0].claim == FOLATE_CLAIM and fact_checks.matches[0].shown
    assert "fc-wall" not in {m.fact_check_id for m in fact_checks.matches}
    assert "Example Checks" in seen["factchecks_text"]

    checked = seen["document"]  # one document report: the check-worthy sentence, its span, its report
    assert DocumentReport.from_dict(checked).to_dict() == checked  # the published document report layout
    assert checked["format"] == "factscout-document-report/1" and checked["document_format"] == "text"
    assert len(checked["sentences"]) == 4 and 1 <= len(checked["claims"]) <= 2 and checked["text"] == DOCUMENT
    first = checked["claims"][0]
    assert first["sentence"].startswith("Folic acid supplements lowered homocysteine levels by 25 percent")
    assert DOCUMENT[first["start"] : first["end"]] == first["sentence"] and first["score"] >= checked["threshold"]
    report = Report.from_dict(first["report"])
    assert report.claim == first["claim"] and report.date == CLAIM_DATE
    assert "I think it was a lovely speech." not in [c["sentence"] for c in checked["claims"]]
    assert f"1. {first['sentence_id']} (check-worthiness" in seen["document_text"]
    assert f"Verdict: {report.verdict.label}" in seen["document_text"]


def test_a_withheld_verdict_is_summarised_with_the_reason():
    from factscout.serve.mcp_text import report_summary

    report = {
        "format": "factscout-report/1",
        "claim_id": "c1",
        "claim": "Vitamin D prevents falls.",
        "date": None,
        "queries": [{"query_id": "q0", "text": "Vitamin D prevents falls.", "origin": "claim"}],
        "evidence": [],
        "verdict": {
            "label": "not enough evidence",
            "method": "quin+ count rule",
            "reason": "2 supporting",
            "counts": {"supporting": 2, "refuting": 0, "neutral": 1},
            "confidence": 0.41,
            "call": "supported",
            "abstention": "low confidence 0.41 (< 0.55): would have been supported",
        },
    }
    text = report_summary(report)
    assert "Verdict: not enough evidence: the call 'supported' was withheld (low confidence 0.41 (< 0.55)" in text
    assert "No evidence sentence was counted" in text and "Checked before" not in text


def test_without_a_memory_find_fact_checks_says_how_to_load_one(served_index, tmp_path):
    async def talk(session: ClientSession) -> None:
        answer = await call(session, "find_fact_checks", text=FOLATE_CLAIM)
        assert answer.is_error and "--factchecks DIR" in answer.content[0].text
        found = await call(session, "search_evidence", query="folate", k=1)
        assert not found.is_error and len(found.structured_content["hits"]) == 1

    over_stdio(["--index", str(served_index), *FAST], tmp_path / "log", talk)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_over_http_the_api_token_is_required_and_the_api_queue_is_shared(served_index, tmp_path):
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    port, token, log = _free_port(), "s3cret-token", tmp_path / "log"
    base = f"http://127.0.0.1:{port}"
    args = ["--index", str(served_index), *FAST, "--http", "--port", str(port), "--token", token]
    server = subprocess.Popen(_command(*args), stdout=log.open("wb"), stderr=subprocess.STDOUT, env=_env())
    try:
        deadline = time.monotonic() + TIMEOUT
        while True:
            try:
                if httpx.get(f"{base}/v1/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"factscout mcp --http did not start:\n{log.read_text()[-3000:]}")
            time.sleep(0.1)
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": token}):
            refused = httpx.post(f"{base}/mcp", json=ping, headers=headers, timeout=10)
            assert refused.status_code == 401 and refused.headers["www-authenticate"] == "Bearer"
        assert httpx.post(f"{base}/v1/search", json={"query": "folate"}, timeout=10).status_code == 401
        done = httpx.get(f"{base}/v1/health", timeout=10).json()["done"]

        async def talk() -> None:
            async with (
                create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http,
                streamable_http_client(f"{base}/mcp", http_client=http) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                assert {t.name for t in (await session.list_tools()).tools} == TOOLS
                found = await call(session, "search_evidence", query="folate homocysteine", k=2)
                assert not found.is_error and len(found.structured_content["hits"]) == 2

        anyio.run(talk)
        # the MCP call ran on the HTTP API's core runner: its health counts it
        assert httpx.get(f"{base}/v1/health", timeout=10).json()["done"] == done + 1
    finally:
        server.terminate()
        server.wait(30)

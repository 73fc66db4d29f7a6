"""``factscout check --server URL``: claims sent to a running ``factscout serve`` (here the app in a
TestClient), printed and written as a local check's would be; the server's settings apply."""

from __future__ import annotations

import json

import httpx
import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from factscout.cli.main import app as cli
from factscout.serve import create_app


@pytest.fixture()
def server(checker, monkeypatch):
    """``httpx.Client`` opened by the CLI talks to the app, under a bearer token."""
    web = create_app(checker, token="s3cret", warm_up=False)
    client = TestClient(web)

    def connect(*, base_url: str, headers: dict, timeout: float) -> TestClient:
        assert base_url == "http://factscout.test"
        client.headers.update(headers)
        return client

    monkeypatch.setattr(httpx, "Client", connect)
    monkeypatch.setenv("FACTSCOUT_TOKEN", "s3cret")
    return "http://factscout.test/"


def test_a_claim_checked_on_the_server(server, checker, tmp_path):
    claim = "Folate lowers plasma homocysteine."
    result = CliRunner().invoke(cli, ["check", claim, "--server", server, "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["claim"] == claim and report["verdict"]["label"] in {"supported", "refuted", "not enough evidence"}
    assert report["verdict"]["label"] == checker.check_many([_claim(claim)])[0].verdict.label


def test_a_claims_file_checked_on_the_server(server, tmp_path):
    claims = tmp_path / "claims.jsonl"
    claims.write_text(
        '{"_id": "c1", "text": "Folate lowers homocysteine.", "date": "2013-01-01"}\n{"_id": "c2", "text": "x"}\n'
    )
    out = tmp_path / "reports.jsonl"
    result = CliRunner().invoke(cli, ["check", "-i", str(claims), "-o", str(out), "--server", server])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["claim_id"] for r in rows] == ["c1", "c2"] and rows[0]["date"] == "2013-01-01"


def test_local_settings_are_refused_with_a_server(server):
    result = CliRunner().invoke(cli, ["check", "a claim", "--server", server, "--passages", "9", "--stance", "head"])
    assert result.exit_code == 2
    assert "--passages" in result.output and "--stance" in result.output


def test_a_server_that_refuses_says_why(server, monkeypatch):
    monkeypatch.setenv("FACTSCOUT_TOKEN", "wrong")
    result = CliRunner().invoke(cli, ["check", "a claim", "--server", server])
    assert result.exit_code == 2 and "401" in result.output and "bearer token" in result.output


def test_no_server_there():
    result = CliRunner().invoke(cli, ["check", "a claim", "--server", "http://127.0.0.1:9"])
    assert result.exit_code == 2 and "is `factscout serve` running there?" in result.output


def _claim(text: str):
    from factscout.records import Claim

    return Claim("claim", text)

"""The "Checked before" section: published fact-checks matched in a memory, shown above the evidence
in the report JSON, the API, the page and the HTML report; only those published before a dated
claim; never used by the verdict."""

from __future__ import annotations

import datetime as dt

import pytest
from fastapi.testclient import TestClient

from factscout.check import Checker, CheckSettings
from factscout.records import Claim
from factscout.render.html import render_html
from factscout.report import INDEPENDENT, Report
from factscout.serve import create_app
from factscout.serve.responses import FactChecksResponse

from .conftest import CLAIM_DATE, FOLATE_CLAIM, HOSTILE_FC_PUBLISHER, HOSTILE_FC_TITLE


@pytest.fixture(scope="module")
def client(checker):
    with TestClient(create_app(checker)) as c:
        yield c


def _ids(report: dict) -> list[str]:
    return [m["fact_check_id"] for m in report["checked_before"]["matches"]]


def test_a_dated_claim_shows_only_the_fact_checks_published_before_it(checker):
    report = checker.check(Claim("c", FOLATE_CLAIM, CLAIM_DATE)).to_dict()
    section = report["checked_before"]
    assert _ids(report) == ["fc-folate"]  # fc-folate-late (2017) is after the claim; fc-wall does not match
    assert section["published_before"] == CLAIM_DATE.isoformat() and section["note"] == INDEPENDENT
    match = section["matches"][0]
    assert match["score"] >= section["threshold"] and match["date"] == "2014-05-01"
    assert match["publisher"] == HOSTILE_FC_PUBLISHER and match["normalised_verdict"] == "supported"
    assert report["provenance"]["factchecks"]["n_records"] == 3
    assert Report.from_dict(report).to_dict() == report  # round trip


def test_undated_or_unfiltered_claims_see_every_match_best_first(served_index, factchecks_dir, encoder):
    settings = CheckSettings(planner="claim", passages=5, factchecks=str(factchecks_dir), date_filter=False)
    unfiltered = Checker.from_index(served_index, settings, encoder=encoder)
    report = unfiltered.check(Claim("c", FOLATE_CLAIM, CLAIM_DATE)).to_dict()
    assert sorted(_ids(report)) == ["fc-folate", "fc-folate-late"]
    scores = [m["score"] for m in report["checked_before"]["matches"]]
    assert scores == sorted(scores, reverse=True) and report["checked_before"]["published_before"] is None


def test_the_verdict_is_computed_from_the_evidence_alone(checker, served_index, encoder):
    plain = Checker.from_index(served_index, CheckSettings(planner="claim", passages=5), encoder=encoder)
    claim = Claim("c", FOLATE_CLAIM, CLAIM_DATE)
    with_memory, without = checker.check(claim).to_dict(), plain.check(claim).to_dict()
    assert without["checked_before"] is None and with_memory["checked_before"]["matches"]
    assert with_memory["verdict"] == without["verdict"] and with_memory["evidence"] == without["evidence"]


def test_an_unrelated_claim_shows_an_empty_section(checker):
    report = checker.check(Claim("c", "Cats sleep for most of the day.", None)).to_dict()
    assert report["checked_before"]["matches"] == []


def test_the_api_carries_the_section(client):
    body = client.post("/v1/check", json={"claim": FOLATE_CLAIM, "date": CLAIM_DATE.isoformat()}).json()
    assert _ids(body) == ["fc-folate"]
    job = client.post("/v1/checks", json={"claims": [{"claim": FOLATE_CLAIM, "date": "2016-06-01"}]}).json()
    for _ in range(600):
        done = client.get(f"/v1/checks/{job['id']}").json()
        if done["status"] in ("done", "failed"):
            break
    assert done["status"] == "done" and _ids(done["reports"][0]) == ["fc-folate"]


def test_the_page_shows_it_first_escaped_and_without_unsafe_links(client):
    html = client.get("/", params={"claim": FOLATE_CLAIM, "date": CLAIM_DATE.isoformat()}).text
    assert 'id="checked-before"' in html and html.index('id="checked-before"') < html.index('id="verdict"')
    assert "<img src=x" not in html and "&lt;img src=x onerror=" in html
    assert "<script>window.__pwned" not in html and "javascript:" not in html
    assert "Later Checks" not in html  # published after the claim


def test_the_html_report_shows_it_escaped(checker):
    report = checker.check(Claim("c", FOLATE_CLAIM, CLAIM_DATE))
    html = render_html([report])
    assert 'class="checked-before"' in html and "Checked before" in html
    assert html.index('class="checked-before"') < html.index('class="evidence"')
    assert HOSTILE_FC_TITLE not in html and "javascript:" not in html


def test_no_memory_no_section(served_index, encoder):
    plain = Checker.from_index(served_index, CheckSettings(planner="claim", passages=5), encoder=encoder)
    report = plain.check(Claim("c", FOLATE_CLAIM, dt.date(2016, 6, 1)))
    assert report.checked_before is None and "Checked before" not in render_html([report])


def test_the_memory_is_searched_through_the_api(client):
    body = client.get("/v1/factchecks", params={"q": FOLATE_CLAIM, "k": 3}).json()
    FactChecksResponse.model_validate(body)
    ids = [m["fact_check_id"] for m in body["matches"]]
    assert sorted(ids[:2]) == ["fc-folate", "fc-folate-late"] and all(m["shown"] for m in body["matches"][:2])
    assert [m["score"] for m in body["matches"]] == sorted((m["score"] for m in body["matches"]), reverse=True)
    dated = client.get("/v1/factchecks", params={"q": FOLATE_CLAIM, "before": "2016-06-01"}).json()
    assert [m["fact_check_id"] for m in dated["matches"] if m["shown"]] == ["fc-folate"]
    assert dated["before"] == "2016-06-01"
    for bad in ({"q": ""}, {"q": FOLATE_CLAIM, "k": 0}, {"q": FOLATE_CLAIM, "before": "June 2016"}, {}):
        r = client.get("/v1/factchecks", params=bad)
        assert r.status_code == 422 and r.json()["error"], bad


def test_a_server_without_a_memory_says_so(served_index, encoder):
    plain = Checker.from_index(served_index, CheckSettings(planner="claim", passages=5), encoder=encoder)
    with TestClient(create_app(plain)) as c:
        r = c.get("/v1/factchecks", params={"q": FOLATE_CLAIM})
    assert r.status_code == 404 and "--factchecks" in r.json()["error"]


def test_every_served_variant_shares_the_one_loaded_memory(checker):
    service = create_app(checker).state.service
    assert service.checker_for("decompose", False).factchecks is checker.factchecks is not None


def test_every_served_variant_reads_the_index_s_stored_sentence_vectors(served_index, encoder, tmp_path):
    """A served request once embedded every sentence it read although the index stored them: the
    variants the service makes per planner and date filter did not carry the sentence data."""
    from factscout.datasets import load_dataset
    from factscout.retrieve import build_index

    build_index(load_dataset("scifact_mini").corpus, tmp_path / "idx", "bm25", sentences=True)
    stored = Checker.from_index(tmp_path / "idx", CheckSettings(planner="claim", passages=5))
    assert stored.sentences is not None
    service = create_app(stored, warm_up=False).state.service
    for planner, date_filter in (("claim", True), ("decompose", False)):
        variant = service.checker_for(planner, date_filter)
        assert variant.sentences is stored.sentences and variant.provenance["sentence_vectors"] == "stored"
    # `serve`'s encoder (model_threads) is the one the vectors were stored with, so a report reads them
    from factscout.serve.app import model_threads
    from factscout.serve.service import CheckJob, Service

    served = Service(Checker.from_index(tmp_path / "idx", CheckSettings(planner="claim"), encoder=model_threads(1)))
    claim = load_dataset("scifact_mini").claims[0]
    [report] = served.check_batch([CheckJob(claim, "claim", True)])
    assert report["provenance"]["sentence_vectors"] == "stored"
    other = Service(Checker.from_index(tmp_path / "idx", CheckSettings(planner="claim"), encoder=encoder))
    [report] = other.check_batch([CheckJob(claim, "claim", True)])
    assert report["provenance"]["sentence_vectors"] == "per-claim", "vectors of another encoder are not read"


@pytest.mark.parametrize(("day", "shown"), [(dt.date(2014, 5, 1), False), (dt.date(2014, 5, 2), True)])
def test_one_date_rule_on_the_boundary_day_for_check_serve_and_factchecks_search(
    checker, factchecks_dir, tmp_path, day, shown
):
    """fc-folate was published on 2014-05-01: a claim made that very day does not see it (published
    strictly before the claim's date), one made the next day does, in all three places."""
    import json

    from typer.testing import CliRunner

    from factscout.cli.main import app

    [section] = checker.checked_before([Claim("c", FOLATE_CLAIM, day)])
    assert ("fc-folate" in {m.fact_check_id for m in section.matches}) is shown
    with TestClient(create_app(checker, warm_up=False)) as c:
        body = c.get("/v1/factchecks", params={"q": FOLATE_CLAIM, "before": day.isoformat(), "k": 5}).json()
    assert ("fc-folate" in {m["fact_check_id"] for m in body["matches"]}) is shown
    queries, run = tmp_path / "q.jsonl", tmp_path / "run.trec"
    queries.write_text(json.dumps({"_id": "q1", "text": FOLATE_CLAIM, "date": day.isoformat()}) + "\n")
    done = CliRunner().invoke(
        app, ["factchecks", "search", "--index", str(factchecks_dir), "-i", str(queries), "-o", str(run), "--k", "5"]
    )
    assert done.exit_code == 0, done.output
    assert ("fc-folate" in {line.split()[2] for line in run.read_text().splitlines()}) is shown


def test_the_terminal_report_shows_the_checked_before_section_and_each_sentence_s_probabilities(checker):
    from factscout.cli import common

    report = checker.check(Claim("folate", FOLATE_CLAIM, dt.date(2016, 6, 1)))
    assert report.checked_before is not None and report.checked_before.matches
    with common.out.capture() as captured:
        common.print_report(report)
    text = " ".join(captured.get().split())
    assert "Checked before" in text and "published before 2016-06-01" in text
    assert "True (supported)" in text and "2014-05-01" in text, "the folate fact-check with its rating and day"
    assert "these published fact-checks are shown, not used" in text
    if any(e.sentences for e in report.evidence):
        assert "S 0." in text and "R 0." in text and "N 0." in text, "each sentence's probabilities"

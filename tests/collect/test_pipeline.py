"""The whole collection pipeline against the fake web on loopback: decisions, outputs, replay
with the server shut down (byte-identical, no network), drift between live runs, each
provider's shape, and ``factscout collect`` -> ``factscout index`` -> ``factscout search``."""

from __future__ import annotations

import dataclasses
import json
import socket
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from factscout.cli.main import app
from factscout.collect import CollectSettings, collect
from factscout.collect.crawl import CrawlSettings
from factscout.collect.snapshot import SnapshotMiss
from factscout.formats.beir import read_corpus, read_qrels, read_queries, write_claims
from factscout.records import Claim

from .conftest import CLAIMS, FakeWeb, populate, word_embed

OUTPUTS = [
    "corpus.jsonl",
    "qrels.tsv",
    "subqrels.tsv",
    "queries.jsonl",
    "subqueries.jsonl",
    "records.jsonl",
    "snapshot/manifest.json",
]
FAST_CRAWL = CrawlSettings(host_interval=0.0, timeout=5.0)


@pytest.fixture(autouse=True)
def _keys(monkeypatch):
    for variable in (
        "SERPAPI_API_KEY",
        "BRAVE_SEARCH_API_KEY",
        "BING_SEARCH_V7_SUBSCRIPTION_KEY",
        "GOOGLE_CSE_API_KEY",
        "GOOGLE_CSE_ID",
    ):
        monkeypatch.setenv(variable, "test-key")


def settings(web: FakeWeb, **changes: Any) -> CollectSettings:
    base = CollectSettings(
        provider="serpapi",
        planner="decompose",
        base_url=web.base,
        allow_hosts=("127.0.0.1",),
        min_interval=0.0,
        crawler=FAST_CRAWL,
    )
    return dataclasses.replace(base, **changes)


def records(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]


def decision_of(out: Path, url_part: str) -> set[str]:
    """What happened to the results whose URL contains ``url_part``, leaving out the sub-queries
    they were not relevant to (every result is scored against every sub-query that found it)."""
    found = {r["decision"] for r in records(out) if "url" in r and url_part in r["url"]}
    assert found, f"no result for {url_part}"
    return found - {"not relevant"} or found


@pytest.fixture(scope="module")
def live(tmp_path_factory) -> dict[str, Any]:
    """One live run with the real planner (decompose), MMR filter and MiniLM relevance filter."""
    web = FakeWeb()
    mp = pytest.MonkeyPatch()
    mp.setenv("SERPAPI_API_KEY", "test-key")
    try:
        urls = populate(web)
        out = tmp_path_factory.mktemp("live")
        sleeps: list[float] = []
        report = collect(CLAIMS, out, settings(web), sleep=sleeps.append)
        return {
            "web": web,
            "urls": urls,
            "out": out,
            "report": report,
            "sleeps": sleeps,
            "requests": list(web.requests),
        }
    finally:
        web.stop()
        mp.undo()


@pytest.mark.slow
def test_relevant_pages_are_judged_for_their_claim(live):
    out, urls = live["out"], live["urls"]
    corpus = {p.url: p for p in read_corpus(out / "corpus.jsonl")}
    qrels = read_qrels(out / "qrels.tsv")
    jobs, energy = corpus[urls["jobs"]], corpus[urls["energy"]]
    assert qrels["c1"][jobs.passage_id] == 1 and qrels["c2"][energy.passage_id] == 1
    subqrels = read_qrels(out / "subqrels.tsv")
    assert jobs.passage_id in {d for qid, docs in subqrels.items() if qid.startswith("c1#") for d in docs}
    assert jobs.passage_id.startswith("web-") and jobs.published.isoformat() == "2019-05-03"
    assert "lowest level since December 1969" in jobs.text and "Copyright" not in jobs.text
    assert jobs.title.startswith("Unemployment falls to 3.6 percent")
    assert urls["flaky"] in corpus  # fetched after a 429 and its Retry-After
    assert 3.0 in live["sleeps"]


@pytest.mark.slow
def test_leaks_late_pages_and_unsafe_or_unusable_pages_are_dropped(live):
    out = live["out"]
    assert decision_of(out, "snopes.com") == {"fact-check site: snopes.com"}
    assert decision_of(out, "reuters.com/fact-check") == {"fact-check site: reuters.com/fact-check"}
    assert decision_of(out, "may-2019") == {"published on or after the claim date (search result date)"}
    assert decision_of(out, "jobs-revision") == {"published on or after the claim date (page date)"}
    assert all(d.startswith("page skipped: blocked") for d in decision_of(out, "169.254.169.254"))
    assert all(d.startswith("page skipped: blocked") and "10.0.0.7" in d for d in decision_of(out, "/redirect?to="))
    assert decision_of(out, "/private/") == {"page skipped: robots.txt disallows it"}
    assert decision_of(out, "unemployment-analysis") == {"page skipped: paywalled (isAccessibleForFree: false)"}
    assert decision_of(out, "/forbidden/") == {"page skipped: forbidden (HTTP 403)"}
    assert decision_of(out, ".pdf") == {"page skipped: content type application/pdf is not HTML"}
    corpus_urls = {p.url for p in read_corpus(out / "corpus.jsonl")}
    assert not any(
        bad in u for u in corpus_urls for bad in ("snopes", "reuters", "169.254", "10.0.0.7", "private", "may-2019")
    )
    paths = [r["path"] for r in live["requests"]]
    assert not any("may-2019" in p or "snopes" in p for p in paths)  # dropped before any fetch


@pytest.mark.slow
def test_distractors_come_from_the_verbatim_claim_and_are_unjudged(live):
    out, urls = live["out"], live["urls"]
    corpus = {p.url: p.passage_id for p in read_corpus(out / "corpus.jsonl")}
    judged = {d for docs in read_qrels(out / "qrels.tsv").values() for d in docs}
    assert corpus[urls["stocks"]] not in judged and corpus[urls["solar"]] not in judged
    claim_rows = [r for r in records(out) if r["role"] == "claim"]
    assert {r["decision"] for r in claim_rows if r["url"] == urls["jobs"]} == {"already relevant"}
    assert {r["decision"] for r in claim_rows if r["url"] == urls["stocks"]} == {"distractor"}
    assert live["report"].distractors == 2


@pytest.mark.slow
def test_searches_are_restricted_to_before_the_claim_date(live):
    searches = [r for r in live["requests"] if r["path"] == "/search.json"]
    by_query = {r["params"]["q"]: r["params"] for r in searches}
    assert by_query[CLAIMS[0].text]["tbs"] == "cdr:1,cd_min:1/1/1990,cd_max:5/9/2019"
    assert by_query[CLAIMS[1].text]["tbs"] == "cdr:1,cd_min:1/1/1990,cd_max:1/14/2019"
    assert all(r["params"]["api_key"] == "test-key" for r in searches)
    sub = list(read_queries(live["out"] / "subqueries.jsonl"))
    assert {q.claim_id for q in sub} == {"c1", "c2"} and {q.origin for q in sub} >= {"decompose"}
    assert len(searches) == live["report"].searches == live["report"].sub_queries + 2
    assert "test-key" not in (live["out"] / "snapshot" / "manifest.json").read_text()


@pytest.mark.slow
def test_outputs_are_what_factscout_reads(live):
    out = live["out"]
    queries = list(read_queries(out / "queries.jsonl"))
    assert [(q.query_id, q.date) for q in queries] == [(c.claim_id, c.date) for c in CLAIMS]
    summary = json.loads((out / "collect.json").read_text())
    assert summary["report"]["planner"] == "decompose" and summary["settings"]["threshold"] == 0.45
    assert summary["report"]["documents"] == len(list(read_corpus(out / "corpus.jsonl")))


@pytest.mark.slow
def test_replay_with_the_server_down_is_byte_identical_and_offline(live, tmp_path, monkeypatch):
    def no_network(*args, **kwargs):
        raise AssertionError("a replay must not touch the network")

    monkeypatch.setattr(socket, "getaddrinfo", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(httpx.Client, "send", no_network)
    monkeypatch.delenv("SERPAPI_API_KEY", raising=False)  # replay needs no key either
    web = live["web"]  # stopped: its port answers nothing now
    report = collect(CLAIMS, tmp_path / "replay", settings(web), replay=live["out"])
    for name in OUTPUTS:
        assert (tmp_path / "replay" / name).read_bytes() == (live["out"] / name).read_bytes(), name
    assert report.replayed_from == str(live["out"])


@pytest.mark.slow
def test_replay_can_refilter_offline(live, tmp_path):
    strict = collect(CLAIMS, tmp_path / "strict", settings(live["web"], threshold=0.99), replay=live["out"])
    assert strict.relevant < live["report"].relevant


@pytest.mark.slow
def test_replay_of_other_claims_is_a_miss(live, tmp_path):
    other = [Claim("c9", "The moon is made of cheese.")]
    with pytest.raises(SnapshotMiss, match="plan entry"):
        collect(other, tmp_path / "miss", settings(live["web"]), replay=live["out"])


@pytest.mark.parametrize("provider", ["brave", "bing", "google"])
def test_each_provider_shape_through_the_pipeline(web, tmp_path, provider):
    urls = populate(web)
    report = collect(
        CLAIMS, tmp_path / provider, settings(web, provider=provider, planner="claim", mmr=False, distractors=0),
        embed=word_embed, sleep=lambda s: None,
    )  # fmt: skip
    corpus = {p.url for p in read_corpus(tmp_path / provider / "corpus.jsonl")}
    assert urls["jobs"] in corpus and urls["energy"] in corpus
    assert report.relevant >= 2
    assert decision_of(tmp_path / provider, "may-2019") == {"published on or after the claim date (search result date)"}
    date_param = {"brave": "freshness", "bing": "freshness", "google": "sort"}[provider]
    assert {r["params"][date_param] for r in web.searches()} == {
        {"brave": "1990-01-01to2019-05-09", "bing": "1990-01-01..2019-05-09", "google": "date:r:19900101:20190509"}[
            provider
        ],
        {"brave": "1990-01-01to2019-01-14", "bing": "1990-01-01..2019-01-14", "google": "date:r:19900101:20190114"}[
            provider
        ],
    }


def test_snippets_only_mode_crawls_nothing(web, tmp_path):
    populate(web)
    collect(CLAIMS, tmp_path / "s", settings(web, planner="claim", mmr=False, crawl=False), embed=word_embed)
    assert not any(r["path"].startswith(("/pages/", "/robots.txt")) for r in web.requests)
    texts = [p.text for p in read_corpus(tmp_path / "s" / "corpus.jsonl")]
    assert "The unemployment rate fell to 3.6 percent in April 2019, the lowest level since December 1969." in texts


def test_drift_between_two_live_runs(web, tmp_path):
    urls = populate(web)
    options = {"planner": "claim", "mmr": False}
    collect(CLAIMS, tmp_path / "first", settings(web, **options), embed=word_embed, sleep=lambda s: None)
    serp = web.serp[CLAIMS[0].text]
    web.serp[CLAIMS[0].text] = [serp[0], 1, *serp[2:]]  # the search engine now ranks the 1969 page, not stocks
    path = "/pages/germany-renewables-2018.html"
    status, kind, body = web.pages[path]
    web.pages[path] = (status, kind, body.replace(b"Wind power", b"Onshore wind power"))
    report = collect(
        CLAIMS,
        tmp_path / "second",
        settings(web, **options),
        embed=word_embed,
        drift_from=tmp_path / "first",
        sleep=lambda s: None,
    )
    drift = report.drift
    assert drift is not None and not drift.unchanged
    (changed,) = [s for s in drift.searches if s.added or s.removed]
    assert changed.request["query"] == CLAIMS[0].text
    assert (changed.added, changed.removed) == ((urls["history"],), (urls["stocks"],))
    assert urls["energy"] in drift.pages_changed
    saved = json.loads((tmp_path / "second" / "drift.json").read_text())
    assert urls["energy"] in saved["pages_changed"]
    web.serp[CLAIMS[0].text] = serp  # back to the first answer; rerun into the first run's own folder
    again = collect(
        CLAIMS,
        tmp_path / "first",
        settings(web, **options),
        embed=word_embed,
        drift_from=tmp_path / "first",
        sleep=lambda s: None,
    )
    assert again.drift is not None and not any(s.added or s.removed for s in again.drift.searches)
    assert urls["energy"] in again.drift.pages_changed


@pytest.mark.slow
def test_cli_collect_index_search(web, tmp_path, monkeypatch):
    """``factscout collect`` against the loopback server, then ``index`` and ``search`` find a
    collected page; then a replay through the CLI."""
    urls = populate(web)
    web.script.clear()
    claims = tmp_path / "claims.jsonl"
    write_claims(claims, CLAIMS)
    runner = CliRunner()
    common = ["--claims", claims, "--provider", "serpapi", "--planner", "claim", "--base-url", web.base]
    args = [
        *common,
        "--out",
        tmp_path / "out",
        "--allow-host",
        "127.0.0.1",
        "--min-interval",
        "0",
        "--host-interval",
        "0",
    ]
    result = runner.invoke(app, ["collect", *map(str, args)])
    assert result.exit_code == 0, result.output
    assert "relevant" in result.output and "snapshot" in result.output
    result = runner.invoke(
        app, ["index", "--corpus", str(tmp_path / "out" / "corpus.jsonl"), "--index", str(tmp_path / "idx")]
    )
    assert result.exit_code == 0, result.output
    result = runner.invoke(
        app, ["search", "--index", str(tmp_path / "idx"), "--query", "Germany renewable electricity 2018", "--k", "1"]
    )
    assert result.exit_code == 0, result.output
    energy_id = next(p.passage_id for p in read_corpus(tmp_path / "out" / "corpus.jsonl") if p.url == urls["energy"])
    assert energy_id in result.output
    web.stop()
    result = runner.invoke(
        app, ["collect", *map(str, [*common, "--out", tmp_path / "again", "--replay", tmp_path / "out"])]
    )
    assert result.exit_code == 0, result.output
    assert (tmp_path / "again" / "corpus.jsonl").read_bytes() == (tmp_path / "out" / "corpus.jsonl").read_bytes()


def test_cli_names_a_bad_provider(tmp_path):
    claims = tmp_path / "claims.jsonl"
    write_claims(claims, CLAIMS)
    result = CliRunner().invoke(
        app, ["collect", "--claims", str(claims), "--provider", "altavista", "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 2
    assert "no search provider 'altavista'; known: bing, brave, google, serpapi" in result.output

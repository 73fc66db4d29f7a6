"""Each provider's request construction and the parsing of its documented JSON answer, and the
shared search runner (retries, refused keys, snapshot replay) against the loopback server."""

from __future__ import annotations

import datetime as dt
import json

import httpx
import pytest

from factscout.collect.providers import PROVIDERS, ProviderError, SearchRequest, SearchResult, make_provider
from factscout.collect.search import WebSearcher
from factscout.collect.snapshot import Session, Snapshot
from factscout.collect.throttle import RetryPolicy
from factscout.errors import InputError, UnknownName

from .conftest import FakeWeb

D = dt.date
REQ = SearchRequest("unemployment rate April 2019", 10, D(2019, 5, 10))


def params(request: httpx.Request) -> dict[str, str]:
    return dict(request.url.params)


def test_registry_lists_the_four_providers():
    assert PROVIDERS.names() == ["bing", "brave", "google", "serpapi"]
    with pytest.raises(UnknownName, match="known: bing, brave, google, serpapi"):
        make_provider("duckduckgo")


def test_search_request_validation():
    assert REQ.last_day == D(2019, 5, 9)
    assert REQ.to_dict() == {"query": "unemployment rate April 2019", "count": 10, "before": "2019-05-10"}
    for bad in [("", 10, None), ("q", 0, None), ("q", 10, dt.datetime(2019, 1, 1))]:
        with pytest.raises(InputError):
            SearchRequest(*bad)


# request construction ------------------------------------------------------------------------


def test_serpapi_request(monkeypatch):
    monkeypatch.setenv("SERPAPI_API_KEY", "serp-key")
    r = make_provider("serpapi").request(REQ)
    assert (r.method, r.url.scheme, r.url.host, r.url.path) == ("GET", "https", "serpapi.com", "/search.json")
    assert params(r) == {
        "engine": "google",
        "q": "unemployment rate April 2019",
        "num": "10",
        "tbs": "cdr:1,cd_min:1/1/1990,cd_max:5/9/2019",
        "api_key": "serp-key",
    }


def test_brave_request(monkeypatch):
    monkeypatch.setenv("BRAVE_SEARCH_API_KEY", "brave-key")
    r = make_provider("brave").request(REQ)
    assert str(r.url).startswith("https://api.search.brave.com/res/v1/web/search?")
    assert params(r) == {"q": "unemployment rate April 2019", "count": "10", "freshness": "1990-01-01to2019-05-09"}
    assert r.headers["X-Subscription-Token"] == "brave-key"
    assert r.headers["Accept"] == "application/json"


def test_bing_request(monkeypatch):
    monkeypatch.setenv("BING_SEARCH_V7_SUBSCRIPTION_KEY", "bing-key")
    r = make_provider("bing", market="en-US").request(REQ)
    assert str(r.url).startswith("https://api.bing.microsoft.com/v7.0/search?")
    assert params(r) == {
        "q": "unemployment rate April 2019",
        "count": "10",
        "responseFilter": "Webpages",
        "textDecorations": "false",
        "mkt": "en-US",
        "freshness": "1990-01-01..2019-05-09",
    }
    assert r.headers["Ocp-Apim-Subscription-Key"] == "bing-key"


def test_google_request(monkeypatch):
    monkeypatch.setenv("GOOGLE_CSE_API_KEY", "g-key")
    monkeypatch.setenv("GOOGLE_CSE_ID", "017576662512468239146:omuauf_lfve")
    r = make_provider("google").request(REQ)
    assert str(r.url).startswith("https://www.googleapis.com/customsearch/v1?")
    assert params(r) == {
        "cx": "017576662512468239146:omuauf_lfve",
        "q": "unemployment rate April 2019",
        "num": "10",
        "sort": "date:r:19900101:20190509",
        "key": "g-key",
    }


def test_no_date_limit_sends_no_date_parameter(monkeypatch):
    monkeypatch.setenv("BRAVE_SEARCH_API_KEY", "k")
    assert "freshness" not in params(make_provider("brave").request(SearchRequest("q", 5)))


@pytest.mark.parametrize(
    ("name", "variable"),
    [
        ("serpapi", "SERPAPI_API_KEY"),
        ("brave", "BRAVE_SEARCH_API_KEY"),
        ("bing", "BING_SEARCH_V7_SUBSCRIPTION_KEY"),
        ("google", "GOOGLE_CSE_API_KEY"),
    ],
)
def test_missing_key_names_the_variable(monkeypatch, name, variable):
    for var in (
        "SERPAPI_API_KEY",
        "BRAVE_SEARCH_API_KEY",
        "BING_SEARCH_V7_SUBSCRIPTION_KEY",
        "GOOGLE_CSE_API_KEY",
        "GOOGLE_CSE_ID",
    ):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(InputError, match=variable):
        make_provider(name).request(REQ)


def test_google_needs_the_engine_id_too(monkeypatch):
    monkeypatch.delenv("GOOGLE_CSE_ID", raising=False)
    with pytest.raises(InputError, match="GOOGLE_CSE_ID"):
        make_provider("google", api_key="k").request(REQ)


@pytest.mark.parametrize(("name", "maximum"), [("serpapi", 100), ("brave", 20), ("bing", 50), ("google", 10)])
def test_result_count_above_the_api_maximum_is_refused(name, maximum):
    provider = make_provider(name, api_key="k", **({"engine_id": "cx"} if name == "google" else {}))
    provider.request(SearchRequest("q", maximum))
    with pytest.raises(InputError, match=f"at most {maximum}"):
        provider.request(SearchRequest("q", maximum + 1))


def test_base_url_override_and_validation():
    r = make_provider("brave", api_key="k", base_url="http://127.0.0.1:8080/").request(REQ)
    assert str(r.url).startswith("http://127.0.0.1:8080/res/v1/web/search?")
    with pytest.raises(InputError, match="base_url"):
        make_provider("bing", base_url="ftp://x")


# documented answers ---------------------------------------------------------------------------

FETCHED = D(2019, 5, 10)


def test_serpapi_parses_organic_results():
    payload = {
        "search_metadata": {"id": "x", "status": "Success"},
        "search_parameters": {"engine": "google", "q": "unemployment"},
        "organic_results": [
            {"position": 1, "title": "Jobs report", "link": "https://example.org/jobs", "displayed_link": "example.org",
             "snippet": "Unemployment fell to 3.6 percent.", "date": "May 3, 2019"},
            {"position": 2, "title": "Recent", "link": "https://example.org/recent", "snippet": "x", "date": "3 days ago"},
            {"position": 3, "title": "Lead date", "link": "https://example.org/lead", "snippet": "Apr 2, 2019 ... rate fell"},
            {"position": 4, "title": "No link"},
            {"position": 5, "title": "Undated", "link": "https://example.org/undated", "snippet": "text"},
        ],
    }  # fmt: skip
    results = make_provider("serpapi").parse(payload, fetched=FETCHED)
    assert results == [
        SearchResult(1, "https://example.org/jobs", "Jobs report", "Unemployment fell to 3.6 percent.", D(2019, 5, 3)),
        SearchResult(2, "https://example.org/recent", "Recent", "x", D(2019, 5, 7)),
        SearchResult(3, "https://example.org/lead", "Lead date", "Apr 2, 2019 ... rate fell", D(2019, 4, 2)),
        SearchResult(4, "https://example.org/undated", "Undated", "text", None),
    ]


def test_serpapi_errors():
    provider = make_provider("serpapi")
    assert provider.parse({"error": "Google hasn't returned any results for this query."}) == []
    with pytest.raises(ProviderError, match="Invalid API key"):
        provider.parse({"error": "Invalid API key. Your API key should be here: https://serpapi.com/manage-api-key"})
    with pytest.raises(ProviderError):
        provider.parse(["not", "an", "object"])


def test_brave_parses_web_results():
    payload = {
        "type": "search",
        "query": {"original": "unemployment"},
        "web": {
            "type": "search",
            "results": [
                {"title": "Jobs &amp; wages", "url": "https://example.org/jobs", "description": "The rate fell to 3.6 <strong>percent</strong>.",
                 "page_age": "2019-05-03T10:00:00", "age": "May 3, 2019", "meta_url": {"hostname": "example.org"}},
                {"title": "Age only", "url": "https://example.org/age", "description": "d", "age": "2 weeks ago"},
            ],
        },
    }  # fmt: skip
    results = make_provider("brave").parse(payload, fetched=FETCHED)
    assert results[0] == SearchResult(
        1, "https://example.org/jobs", "Jobs & wages", "The rate fell to 3.6 percent.", D(2019, 5, 3)
    )
    assert results[1].published == D(2019, 4, 26)
    assert make_provider("brave").parse({"type": "search"}) == []
    with pytest.raises(ProviderError, match="SUBSCRIPTION_TOKEN_INVALID"):
        make_provider("brave").parse(
            {"type": "ErrorResponse", "error": {"code": "SUBSCRIPTION_TOKEN_INVALID", "status": 401}}
        )


def test_bing_parses_web_pages():
    payload = {
        "_type": "SearchResponse",
        "queryContext": {"originalQuery": "unemployment"},
        "webPages": {
            "webSearchUrl": "https://www.bing.com/search?q=unemployment",
            "totalEstimatedMatches": 1000,
            "value": [
                {"id": "https://api.bing.microsoft.com/api/v7/#WebPages.0", "name": "Jobs report", "url": "https://example.org/jobs",
                 "snippet": "Unemployment fell.", "datePublished": "2019-05-03T00:00:00.0000000", "dateLastCrawled": "2024-01-01T10:00:00.0000000Z"},
                {"id": "https://api.bing.microsoft.com/api/v7/#WebPages.1", "name": "Crawled only", "url": "https://example.org/c",
                 "snippet": "s", "dateLastCrawled": "2024-01-01T10:00:00.0000000Z"},
            ],
        },
    }  # fmt: skip
    results = make_provider("bing").parse(payload)
    assert results[0] == SearchResult(1, "https://example.org/jobs", "Jobs report", "Unemployment fell.", D(2019, 5, 3))
    assert results[1].published is None  # the crawl date is not a publication date
    with pytest.raises(ProviderError, match="Access denied"):
        make_provider("bing").parse(
            {"error": {"code": "401", "message": "Access denied due to invalid subscription key."}}
        )
    with pytest.raises(ProviderError, match="Parameter has invalid value"):
        make_provider("bing").parse(
            {
                "_type": "ErrorResponse",
                "errors": [{"code": "InvalidRequest", "message": "Parameter has invalid value."}],
            }
        )


def test_google_parses_items_and_pagemap_dates():
    payload = {
        "kind": "customsearch#search",
        "searchInformation": {"totalResults": "2"},
        "items": [
            {"kind": "customsearch#result", "title": "Jobs report", "link": "https://example.org/jobs", "snippet": "Unemployment fell.",
             "pagemap": {"metatags": [{"og:title": "Jobs", "article:published_time": "2019-05-03T09:00:00Z"}]}},
            {"kind": "customsearch#result", "title": "News", "link": "https://example.org/news", "snippet": "s",
             "pagemap": {"newsarticle": [{"datepublished": "2019-04-01"}]}},
            {"kind": "customsearch#result", "title": "Lead", "link": "https://example.org/lead", "snippet": "Mar 13, 2018 ... rate"},
        ],
    }  # fmt: skip
    results = make_provider("google").parse(payload)
    assert [r.published for r in results] == [D(2019, 5, 3), D(2019, 4, 1), D(2018, 3, 13)]
    assert (
        make_provider("google").parse({"kind": "customsearch#search", "searchInformation": {"totalResults": "0"}}) == []
    )
    with pytest.raises(ProviderError, match="API key not valid"):
        make_provider("google").parse(
            {"error": {"code": 400, "message": "API key not valid. Please pass a valid API key."}}
        )


# the shared runner against the loopback server -------------------------------------------------


def _searcher(web: FakeWeb, tmp_path, name: str = "serpapi", **options) -> tuple[WebSearcher, list[float]]:
    sleeps: list[float] = []
    extra = {"engine_id": "cx"} if name == "google" else {}
    provider = make_provider(name, api_key="test-key", base_url=web.base, **extra)
    session = Session(Snapshot(tmp_path / "snap"))
    return WebSearcher(provider, session, min_interval=0, sleep=sleeps.append, **options), sleeps


def _one_page(web: FakeWeb) -> None:
    web.index.append(
        {
            "url": "https://example.org/jobs",
            "title": "Jobs report April 2019",
            "snippet": "Unemployment rate fell.",
            "date": "2019-05-03",
        }
    )


@pytest.mark.parametrize("name", ["serpapi", "brave", "bing", "google"])
def test_live_search_against_the_provider_shape(web, tmp_path, name):
    _one_page(web)
    searcher, _ = _searcher(web, tmp_path, name)
    outcome = searcher.search(REQ)
    assert outcome.error is None
    assert [(r.url, r.published) for r in outcome.results] == [("https://example.org/jobs", D(2019, 5, 3))]
    assert outcome.entry.meta["urls"] == ["https://example.org/jobs"]
    assert "test-key" not in json.dumps(outcome.entry.to_dict())  # keys never reach the snapshot


def test_429_then_200_honours_retry_after(web, tmp_path):
    _one_page(web)
    web.script["/search.json"] = [429]
    web.retry_after = "4"
    searcher, sleeps = _searcher(web, tmp_path)
    outcome = searcher.search(REQ)
    assert outcome.error is None and len(outcome.results) == 1
    assert sleeps == [4.0]
    assert len(web.searches()) == 2


def test_refused_key_stops_the_run(web, tmp_path):
    web.script["/search.json"] = [401]
    searcher, _ = _searcher(web, tmp_path)
    with pytest.raises(ProviderError, match="SERPAPI_API_KEY"):
        searcher.search(REQ)


def test_server_errors_after_the_retries_are_recorded_not_raised(web, tmp_path):
    web.script["/search.json"] = [503, 503, 503, 503]
    searcher, sleeps = _searcher(web, tmp_path, retry=RetryPolicy(max_retries=3))
    outcome = searcher.search(REQ)
    assert outcome.results == () and outcome.error == "HTTP 503"
    assert len(sleeps) == 3


def test_replay_answers_from_the_snapshot_without_a_client(web, tmp_path):
    _one_page(web)
    searcher, _ = _searcher(web, tmp_path)
    live = searcher.search(REQ)
    searcher.session.out.write_manifest()

    class NoNetwork(httpx.Client):
        def send(self, *args, **kwargs):
            raise AssertionError("replay must not send anything")

    replayer = WebSearcher(
        make_provider("serpapi"),
        Session(Snapshot(tmp_path / "again"), Snapshot.open(tmp_path / "snap")),
        client=NoNetwork(),
    )
    assert replayer.search(REQ).results == live.results

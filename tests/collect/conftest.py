"""A small fake web on loopback: SERP-shaped endpoints of the four providers and saved pages.

``FakeWeb`` answers:

* the search endpoints of SerpAPI (``/search.json``), Brave (``/res/v1/web/search``), Bing
  (``/v7.0/search``) and Google Programmable Search (``/customsearch/v1``), each in its provider's
  documented JSON shape, from ``index``: a query listed in ``serp`` gets those entries; any other
  query gets the entries sharing most words with it (entries marked ``claim_only`` excepted);
* ``/robots.txt`` (``/private/`` disallowed), the pages in ``pages``, ``/redirect?to=URL``
  (302), ``/loop`` (an endless redirect), ``/forbidden/...`` (403), per-path scripted
  statuses (``script["/x"] = [429]`` answers 429 with ``Retry-After`` once, then the page) and
  per-path delays before answering (``delays["/x"] = 2.0``).

It never applies the date restriction itself, so the pipeline's post-filter is what removes late
results. Every request is logged in ``requests``.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import threading
from collections.abc import Iterator, Sequence
from typing import Any
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest
from helpers import LoopbackHandler, LoopbackServer

from factscout.records import Claim

STOP = {"the", "and", "for", "from", "its", "more", "than", "since", "with", "was", "are", "has", "that", "this"}


def words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9][a-z0-9.]*", text.lower()) if len(w) >= 3 and w not in STOP}


def word_embed(texts: Sequence[str]) -> np.ndarray:
    """A deterministic bag-of-words embedding (hashed words, L2-normalised) for fast tests."""
    out = np.zeros((len(texts), 512), dtype=np.float32)
    for i, text in enumerate(texts):
        for w in words(text):
            out[i, int(hashlib.md5(w.encode()).hexdigest(), 16) % 512] += 1.0
    norms = np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
    return out / norms


def article(title: str, published: str | None, paragraphs: Sequence[str], *, paywalled: bool = False) -> bytes:
    meta = f'<meta property="article:published_time" content="{published}T09:00:00Z">' if published else ""
    ld = '<script type="application/ld+json">{"@type": "NewsArticle", "isAccessibleForFree": false}</script>'
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    return (
        f"<!DOCTYPE html><html><head><title>{title} | Example News</title>{meta}{ld if paywalled else ''}</head>"
        f"<body><nav><a href='/'>Home</a> | <a href='/economy'>Economy</a> | <a href='/world'>World</a></nav>"
        f"<article><h1>{title}</h1>{body}</article>"
        f"<footer>Copyright Example News. All rights reserved. Subscribe to our newsletter.</footer></body></html>"
    ).encode()


FILLER = (
    "Analysts said the figures were in line with what most forecasters had expected, and that the "
    "trend had been visible in the survey data for several months before the official release."
)


class _Handler(LoopbackHandler):
    server: FakeWeb
    content_type = "text/html; charset=utf-8"

    def do_GET(self) -> None:
        web = self.server
        parts = urlsplit(self.path)
        params = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        with web.lock:
            web.requests.append({"path": parts.path, "params": params, "headers": dict(self.headers)})
            scripted = web.script.get(parts.path)
            status = scripted.pop(0) if scripted else None
        if parts.path in web.delays:
            web.release.wait(web.delays[parts.path])
        if status is not None:
            self._send(status, b"try again later", "text/plain", retry_after=web.retry_after)
            return
        if parts.path in SHAPES:
            self._send(200, json.dumps(web.answer(parts.path, params)).encode(), "application/json")
        elif parts.path == "/redirect":
            self._send(302, b"", location=params["to"])
        elif parts.path == "/loop":
            self._send(302, b"", location="/loop")
        elif parts.path.startswith("/forbidden/"):
            self._send(403, b"<html><body>Subscribers only</body></html>")
        elif parts.path == "/robots.txt":
            self._send(200, web.robots.encode(), "text/plain")
        elif parts.path in web.pages:
            status, content_type, body = web.pages[parts.path]
            self._send(status, body, content_type)
        else:
            self._send(404, b"<html><body>not found</body></html>")


def _serpapi(entries: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "search_metadata": {"status": "Success"},
        "organic_results": [
            {"position": i, "title": e["title"], "link": e["url"], "snippet": e["snippet"]}
            | ({"date": dt.date.fromisoformat(e["date"]).strftime("%b %-d, %Y")} if e.get("date") else {})
            for i, e in enumerate(entries, 1)
        ],
    }


def _brave(entries: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "type": "search",
        "web": {
            "type": "search",
            "results": [
                {
                    "title": e["title"],
                    "url": e["url"],
                    "description": e["snippet"].replace("percent", "<strong>percent</strong>"),
                }
                | ({"page_age": e["date"] + "T10:00:00", "age": e["date"]} if e.get("date") else {})
                for e in entries
            ],
        },
    }


def _bing(entries: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "_type": "SearchResponse",
        "webPages": {
            "value": [
                {
                    "id": f"https://api.bing.microsoft.com/api/v7/#WebPages.{i}",
                    "name": e["title"],
                    "url": e["url"],
                    "snippet": e["snippet"],
                    "dateLastCrawled": "2026-01-01T00:00:00.0000000Z",
                }
                | ({"datePublished": e["date"] + "T00:00:00.0000000"} if e.get("date") else {})
                for i, e in enumerate(entries)
            ]
        },
    }


def _google(entries: list[dict[str, Any]]) -> dict[str, Any]:
    items = []
    for e in entries:
        item: dict[str, Any] = {
            "kind": "customsearch#result",
            "title": e["title"],
            "link": e["url"],
            "snippet": e["snippet"],
        }
        if e.get("date"):
            item["pagemap"] = {
                "metatags": [{"og:title": e["title"], "article:published_time": e["date"] + "T09:00:00Z"}]
            }
        items.append(item)
    return {"kind": "customsearch#search", **({"items": items} if items else {})}


SHAPES = {"/search.json": _serpapi, "/res/v1/web/search": _brave, "/v7.0/search": _bing, "/customsearch/v1": _google}


class FakeWeb(LoopbackServer):
    def __init__(self, host: str = "127.0.0.1") -> None:
        super().__init__(_Handler, host)
        self.lock = threading.Lock()
        self.script: dict[str, list[int]] = {}
        self.delays: dict[str, float] = {}
        self.retry_after = "3"
        self.robots = "User-agent: *\nDisallow: /private/\n"
        self.pages: dict[str, tuple[int, str, bytes]] = {}
        self.index: list[dict[str, Any]] = []
        self.serp: dict[str, list[int]] = {}

    def page(self, path: str, body: bytes, content_type: str = "text/html; charset=utf-8", status: int = 200) -> str:
        self.pages[path] = (status, content_type, body)
        return self.base + path

    def answer(self, path: str, params: dict[str, str]) -> dict[str, Any]:
        query = params.get("q", "")
        count = int(params.get("num") or params.get("count") or 10)
        if query in self.serp:
            chosen = [self.index[i] for i in self.serp[query]]
        else:
            q = words(query)
            scored = [
                (len(q & words(e["title"] + " " + e["snippet"])), i)
                for i, e in enumerate(self.index)
                if not e.get("claim_only")
            ]
            chosen = [self.index[i] for s, i in sorted(scored, key=lambda t: (-t[0], t[1])) if s > 0]
        entries = [e | {"url": e["url"].replace("{base}", self.base)} for e in chosen[:count]]
        return SHAPES[path](entries)

    def searches(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["path"] in SHAPES]


@pytest.fixture
def web() -> Iterator[FakeWeb]:
    server = FakeWeb()
    try:
        yield server
    finally:
        server.stop()


# the two-claim world of the pipeline tests ------------------------------------------------------

CLAIMS = [
    Claim(
        "c1",
        "The unemployment rate fell to 3.6 percent in April 2019, the lowest level since 1969.",
        dt.date(2019, 5, 10),
        {"justification": "The Bureau of Labor Statistics reported 3.6 percent unemployment for April 2019."},
    ),
    Claim(
        "c2",
        "Germany generated more than 40 percent of its electricity from renewable sources in 2018.",
        dt.date(2019, 1, 15),
    ),
]


def populate(web: FakeWeb) -> dict[str, str]:
    """Fill ``web`` with the pages and search index of the two claims; returns name -> URL."""
    urls: dict[str, str] = {}
    jobs = [
        "The unemployment rate fell to 3.6 percent in April 2019, the lowest level since December 1969, "
        "the Labor Department said on Friday.",
        "Employers added 263,000 jobs in April, well above the 190,000 economists had forecast. " + FILLER,
    ]
    urls["jobs"] = web.page(
        "/pages/jobs-april-2019.html",
        article("Unemployment falls to 3.6 percent, lowest since 1969", "2019-05-03", jobs),
    )
    urls["history"] = web.page(
        "/pages/jobs-1969.html",
        article("The unemployment rate in 1969", "2009-12-01", [
            "In December 1969 the unemployment rate stood at 3.5 percent, the lowest level of the decade.",
            "Economists still cite 1969 as the benchmark for a tight labor market. " + FILLER,
        ]),
    )  # fmt: skip
    urls["revision"] = web.page(
        "/pages/jobs-revision.html",
        article("Jobs figures revised", "2019-07-01", [
            "Revised figures confirm the unemployment rate fell to 3.6 percent in April 2019.", FILLER, FILLER,
        ]),
    )  # fmt: skip
    urls["paywalled"] = web.page(
        "/pages/unemployment-analysis.html",
        article("Unemployment at 3.6 percent: analysis", "2019-05-04", [
            "The unemployment rate fell to 3.6 percent in April 2019, the lowest since 1969.", FILLER, FILLER,
        ], paywalled=True),
    )  # fmt: skip
    urls["stocks"] = web.page(
        "/pages/stocks-april-2019.html",
        article("Stocks climb in April", "2019-04-30", [
            "Stock markets rose through April 2019 as investors cheered strong company earnings.", FILLER, FILLER,
        ]),
    )  # fmt: skip
    urls["private"] = web.page(
        "/private/unemployment-april-2019.html", article("Internal memo", "2019-05-03", [FILLER] * 3)
    )
    energy = [
        "Renewable sources generated more than 40 percent of Germany's electricity in 2018, "
        "overtaking coal for the first time, according to the Fraunhofer institute.",
        "Wind power was the largest renewable source, followed by solar and biomass. " + FILLER,
    ]
    urls["energy"] = web.page(
        "/pages/germany-renewables-2018.html",
        article("Renewables supplied 40 percent of Germany's electricity in 2018", "2019-01-03", energy),
    )
    urls["flaky"] = web.page(
        "/flaky/germany-electricity-2018.html",
        article("Germany's electricity generation in 2018", "2018-12-20", [
            "Germany generated 40 percent of its electricity from renewable sources in 2018, grid data show.", FILLER, FILLER,
        ]),
    )  # fmt: skip
    web.script["/flaky/germany-electricity-2018.html"] = [429]
    urls["pdf"] = web.page("/docs/germany-energy-2018.pdf", b"%PDF-1.4 not html", "application/pdf")
    urls["solar"] = web.page(
        "/pages/solar-panels-guide.html",
        article("A guide to rooftop solar panels", "2018-06-01", [
            "Rooftop solar panels can cut a household's electricity bill by a third. " + FILLER, FILLER,
        ]),
    )  # fmt: skip

    def entry(url: str, title: str, snippet: str, date: str | None, **extra: Any) -> int:
        web.index.append(
            {"url": url.replace(web.base, "{base}"), "title": title, "snippet": snippet, "date": date, **extra}
        )
        return len(web.index) - 1

    c1_claim = [
        entry(urls["jobs"], "Unemployment falls to 3.6 percent, lowest since 1969",
              "The unemployment rate fell to 3.6 percent in April 2019, the lowest level since December 1969.", "2019-05-03"),
        entry(urls["history"], "The unemployment rate in 1969",
              "In December 1969 the unemployment rate stood at 3.5 percent, the lowest level of the decade.", "2009-12-01"),
        entry(urls["revision"], "Jobs figures revised",
              "Revised figures confirm the unemployment rate fell to 3.6 percent in April 2019.", None),
        entry(urls["jobs"].replace("april-2019", "may-2019"), "May jobs report: unemployment rate holds at 3.6 percent",
              "The unemployment rate held at 3.6 percent in May 2019, the lowest level since 1969.", "2019-06-07"),
        entry("https://www.snopes.com/fact-check/unemployment-lowest-since-1969/", "Is unemployment at its lowest level since 1969?",
              "Fact check: the unemployment rate fell to 3.6 percent in April 2019, the lowest level since 1969.", "2019-05-06"),
        entry("http://169.254.169.254/latest/meta-data/unemployment-rate", "Unemployment rate April 2019",
              "The unemployment rate fell to 3.6 percent in April 2019, the lowest level since 1969.", None),
        entry(f"{web.base}/redirect?to=http://10.0.0.7/unemployment-rate-april-2019", "Unemployment rate 3.6 percent",
              "The unemployment rate fell to 3.6 percent in April 2019, the lowest level since 1969.", None),
        entry(urls["private"], "Unemployment rate April 2019 memo",
              "The unemployment rate fell to 3.6 percent in April 2019, the lowest since 1969.", None),
        entry(urls["paywalled"], "Unemployment at 3.6 percent: analysis",
              "The unemployment rate fell to 3.6 percent in April 2019, the lowest since 1969.", "2019-05-04"),
        entry(f"{web.base}/forbidden/unemployment-3-6-percent.html", "Unemployment 3.6 percent (subscribers)",
              "The unemployment rate fell to 3.6 percent in April 2019, the lowest since 1969.", None),
    ]  # fmt: skip
    stocks = entry(
        urls["stocks"], "Stocks climb in April", "Stock markets rose through April 2019.", "2019-04-30", claim_only=True
    )
    web.serp[CLAIMS[0].text] = [c1_claim[0], stocks, c1_claim[4], c1_claim[3]]
    c2_claim = [
        entry(urls["energy"], "Renewables supplied 40 percent of Germany's electricity in 2018",
              "Renewable sources generated more than 40 percent of Germany's electricity in 2018.", "2019-01-03"),
        entry(urls["flaky"], "Germany's electricity generation in 2018",
              "Germany generated 40 percent of its electricity from renewable sources in 2018.", "2018-12-20"),
        entry(urls["pdf"], "Germany energy 2018 (PDF)",
              "Germany generated 40 percent of its electricity from renewable sources in 2018.", None),
        entry("https://www.reuters.com/fact-check/germany-renewables-2018-idUSL1N2", "Fact check: Germany renewables 2018",
              "Germany generated more than 40 percent of its electricity from renewable sources in 2018.", "2019-01-20"),
    ]  # fmt: skip
    solar = entry(
        urls["solar"],
        "A guide to rooftop solar panels",
        "Rooftop solar panels cut electricity bills.",
        "2018-06-01",
        claim_only=True,
    )
    web.serp[CLAIMS[1].text] = [c2_claim[0], solar, c2_claim[3]]
    return urls


@pytest.fixture
def fixed_now():
    return lambda: dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)

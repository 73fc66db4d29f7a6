"""Google Programmable Search Engine, Custom Search JSON API (https://developers.google.com/custom-search/v1/reference/rest/v1/cse/list).

Request: ``GET {base_url}/customsearch/v1?key=KEY&cx=ENGINE&q=...&num=N`` (``num`` up to 10).
The date limit is the documented date-range restriction ``sort=date:r:YYYYMMDD:YYYYMMDD`` (results
dated by Google inside the range; the order stays by relevance).
Answer: ``items`` (``title``, ``link``, ``snippet``, ``pagemap``). The publication date is read
from ``pagemap.metatags`` (``article:published_time``, ``og:published_time``, ``datePublished``,
``pubdate``, ``date``, ``dc.date``...), then ``pagemap.newsarticle`` / ``article``
``datepublished``, then a date leading the snippet (``"Mar 3, 2019 ... "``). A missing ``items``
is an empty answer; ``error`` (``{"code", "message"}``) reports a refusal.
Keys: ``GOOGLE_CSE_API_KEY`` (the API key) and ``GOOGLE_CSE_ID`` (the engine id, ``cx``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

import httpx

from factscout.collect.providers.base import (
    EARLIEST,
    PROVIDERS,
    ProviderError,
    SearchRequest,
    SearchResult,
    as_dict,
    as_list,
    check_base_url,
    check_count,
    env_value,
    json_object,
    require,
    result_date,
    results_from,
)
from factscout.temporal.timestamps import snippet_date

ENV_KEY = "GOOGLE_CSE_API_KEY"
ENV_ENGINE = "GOOGLE_CSE_ID"
DEFAULT_BASE_URL = "https://www.googleapis.com"
META_DATE_KEYS = (
    "article:published_time",
    "og:published_time",
    "datepublished",
    "pubdate",
    "publishdate",
    "date",
    "dc.date",
    "dc.date.issued",
    "dcterms.date",
    "citation_publication_date",
)


@PROVIDERS.register("google")
class GoogleCseProvider:
    name: str = "google"
    max_count: int = 10
    key_env: tuple[str, ...] = (ENV_KEY, ENV_ENGINE)

    def __init__(
        self, api_key: str | None = None, *, engine_id: str | None = None, base_url: str | None = None
    ) -> None:
        self._api_key = api_key
        self._engine_id = engine_id
        self.base_url = check_base_url(base_url, DEFAULT_BASE_URL)

    def request(self, search: SearchRequest) -> httpx.Request:
        key = require(env_value(self._api_key, ENV_KEY), "an API key", ENV_KEY, self.name)
        engine = require(env_value(self._engine_id, ENV_ENGINE), "a search engine id (cx)", ENV_ENGINE, self.name)
        params: dict[str, str | int] = {
            "cx": engine,
            "q": search.query,
            "num": check_count(search, self.name, self.max_count),
        }
        if search.last_day is not None:
            params["sort"] = f"date:r:{EARLIEST:%Y%m%d}:{search.last_day:%Y%m%d}"
        params["key"] = key
        return httpx.Request(
            "GET", f"{self.base_url}/customsearch/v1", params=params, headers={"Accept": "application/json"}
        )

    def parse(self, payload: Any, *, fetched: dt.date | None = None) -> list[SearchResult]:
        data = json_object(payload, self.name)
        if isinstance(data.get("error"), dict):
            error = data["error"]
            raise ProviderError(f"google refused the search: {str(error.get('message') or error.get('code'))[:300]}")

        def date_of(item: Mapping[str, Any]) -> dt.date | None:
            pagemap = as_dict(item.get("pagemap"))
            for tags in as_list(pagemap.get("metatags")):
                lowered = {str(k).lower(): v for k, v in as_dict(tags).items()}
                for name in META_DATE_KEYS:
                    if found := result_date(lowered.get(name), fetched=fetched):
                        return found
            for kind in ("newsarticle", "article", "blogposting"):
                for obj in as_list(pagemap.get(kind)):
                    if found := result_date(as_dict(obj).get("datepublished"), fetched=fetched):
                        return found
            return snippet_date(item.get("snippet"), reference=fetched)

        return results_from(as_list(data.get("items")), "link", "title", "snippet", date_of)

"""SerpAPI: Google web results as JSON (https://serpapi.com/search-api).

Request: ``GET {base_url}/search.json?engine=google&q=...&num=N&api_key=KEY`` (``num`` up to
100). The date limit is Google's custom date range, ``tbs=cdr:1,cd_min:M/D/YYYY,cd_max:M/D/YYYY``.
Answer: ``organic_results`` (``position``, ``title``, ``link``, ``snippet``, and ``date`` such as
``"Mar 3, 2019"`` or ``"3 days ago"`` when Google shows one); an ``error`` field reports a
refused request, except "Google hasn't returned any results", which is an empty answer.
Key: ``SERPAPI_API_KEY``.
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

ENV_KEY = "SERPAPI_API_KEY"
DEFAULT_BASE_URL = "https://serpapi.com"


def _mdy(day: dt.date) -> str:
    return f"{day.month}/{day.day}/{day.year}"


@PROVIDERS.register("serpapi")
class SerpApiProvider:
    name: str = "serpapi"
    max_count: int = 100
    key_env: tuple[str, ...] = (ENV_KEY,)

    def __init__(self, api_key: str | None = None, *, base_url: str | None = None, engine: str = "google") -> None:
        self._api_key = api_key
        self.base_url = check_base_url(base_url, DEFAULT_BASE_URL)
        self.engine = engine

    def request(self, search: SearchRequest) -> httpx.Request:
        key = require(env_value(self._api_key, ENV_KEY), "an API key", ENV_KEY, self.name)
        params: dict[str, str | int] = {
            "engine": self.engine,
            "q": search.query,
            "num": check_count(search, self.name, self.max_count),
        }
        if search.last_day is not None:
            params["tbs"] = f"cdr:1,cd_min:{_mdy(EARLIEST)},cd_max:{_mdy(search.last_day)}"
        params["api_key"] = key
        return httpx.Request(
            "GET", f"{self.base_url}/search.json", params=params, headers={"Accept": "application/json"}
        )

    def parse(self, payload: Any, *, fetched: dt.date | None = None) -> list[SearchResult]:
        data = json_object(payload, self.name)
        error = data.get("error")
        if isinstance(error, str) and error.strip():
            if "hasn't returned any results" in error:
                return []
            raise ProviderError(f"serpapi refused the search: {error.strip()[:300]}")

        def date_of(item: Mapping[str, Any]) -> dt.date | None:
            return result_date(item.get("date"), fetched=fetched) or snippet_date(
                item.get("snippet"), reference=fetched
            )

        return results_from(as_list(data.get("organic_results")), "link", "title", "snippet", date_of)

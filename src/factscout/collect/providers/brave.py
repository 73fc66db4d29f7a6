"""Brave Search API, web results (https://api-dashboard.search.brave.com/app/documentation/web-search).

Request: ``GET {base_url}/res/v1/web/search?q=...&count=N`` with the key in the
``X-Subscription-Token`` header (``count`` up to 20). The date limit is ``freshness`` as a custom
range, ``YYYY-MM-DDtoYYYY-MM-DD``.
Answer: ``web.results`` (``url``, ``title``, ``description`` with ``<strong>`` around query words,
``page_age`` an ISO timestamp of the page, ``age`` a display date such as ``"March 3, 2019"``);
an ``error`` object (``{"type": "ErrorResponse", "error": {"detail": ...}}``) reports a refusal.
Key: ``BRAVE_SEARCH_API_KEY``.
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

ENV_KEY = "BRAVE_SEARCH_API_KEY"
DEFAULT_BASE_URL = "https://api.search.brave.com"


@PROVIDERS.register("brave")
class BraveProvider:
    name: str = "brave"
    max_count: int = 20
    key_env: tuple[str, ...] = (ENV_KEY,)

    def __init__(self, api_key: str | None = None, *, base_url: str | None = None) -> None:
        self._api_key = api_key
        self.base_url = check_base_url(base_url, DEFAULT_BASE_URL)

    def request(self, search: SearchRequest) -> httpx.Request:
        key = require(env_value(self._api_key, ENV_KEY), "an API key", ENV_KEY, self.name)
        params: dict[str, str | int] = {"q": search.query, "count": check_count(search, self.name, self.max_count)}
        if search.last_day is not None:
            params["freshness"] = f"{EARLIEST.isoformat()}to{search.last_day.isoformat()}"
        headers = {"Accept": "application/json", "X-Subscription-Token": key}
        return httpx.Request("GET", f"{self.base_url}/res/v1/web/search", params=params, headers=headers)

    def parse(self, payload: Any, *, fetched: dt.date | None = None) -> list[SearchResult]:
        data = json_object(payload, self.name)
        if data.get("type") == "ErrorResponse" or isinstance(data.get("error"), dict):
            error = as_dict(data.get("error"))
            detail = error.get("detail") or error.get("code") or data.get("error")
            raise ProviderError(f"brave refused the search: {str(detail)[:300]}")

        def date_of(item: Mapping[str, Any]) -> dt.date | None:
            return result_date(item.get("page_age"), fetched=fetched) or result_date(item.get("age"), fetched=fetched)

        return results_from(as_list(as_dict(data.get("web")).get("results")), "url", "title", "description", date_of)

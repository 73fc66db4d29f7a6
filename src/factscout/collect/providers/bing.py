"""Bing Web Search API v7 (https://learn.microsoft.com/en-us/rest/api/cognitiveservices-bingsearch/bing-web-api-v7-reference).

Request: ``GET {base_url}/v7.0/search?q=...&count=N&responseFilter=Webpages&textDecorations=false``
with the key in the ``Ocp-Apim-Subscription-Key`` header (``count`` up to 50). The date limit is
``freshness`` as a date range, ``YYYY-MM-DD..YYYY-MM-DD``.
Answer: ``webPages.value`` (``name``, ``url``, ``snippet``, ``datePublished`` when Bing knows it;
``dateLastCrawled`` is when Bing crawled the page, not a publication date, and is not used);
``error`` / ``errors`` report a refusal.
Key: ``BING_SEARCH_V7_SUBSCRIPTION_KEY``. Microsoft has retired the public Bing Search APIs
for new customers; the provider is kept for existing keys and for compatible endpoints
(``base_url``).
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

ENV_KEY = "BING_SEARCH_V7_SUBSCRIPTION_KEY"
DEFAULT_BASE_URL = "https://api.bing.microsoft.com"


@PROVIDERS.register("bing")
class BingProvider:
    name: str = "bing"
    max_count: int = 50
    key_env: tuple[str, ...] = (ENV_KEY,)

    def __init__(self, api_key: str | None = None, *, base_url: str | None = None, market: str | None = None) -> None:
        self._api_key = api_key
        self.base_url = check_base_url(base_url, DEFAULT_BASE_URL)
        self.market = market

    def request(self, search: SearchRequest) -> httpx.Request:
        key = require(env_value(self._api_key, ENV_KEY), "a subscription key", ENV_KEY, self.name)
        params: dict[str, str | int] = {
            "q": search.query,
            "count": check_count(search, self.name, self.max_count),
            "responseFilter": "Webpages",
            "textDecorations": "false",
        }
        if self.market:
            params["mkt"] = self.market
        if search.last_day is not None:
            params["freshness"] = f"{EARLIEST.isoformat()}..{search.last_day.isoformat()}"
        headers = {"Accept": "application/json", "Ocp-Apim-Subscription-Key": key}
        return httpx.Request("GET", f"{self.base_url}/v7.0/search", params=params, headers=headers)

    def parse(self, payload: Any, *, fetched: dt.date | None = None) -> list[SearchResult]:
        data = json_object(payload, self.name)
        errors = as_list(data.get("errors")) or ([data["error"]] if isinstance(data.get("error"), dict) else [])
        if errors or data.get("_type") == "ErrorResponse":
            first = as_dict(errors[0]) if errors else {}
            raise ProviderError(
                f"bing refused the search: {str(first.get('message') or first.get('code') or data)[:300]}"
            )

        def date_of(item: Mapping[str, Any]) -> dt.date | None:
            return result_date(item.get("datePublished"), fetched=fetched)

        return results_from(as_list(as_dict(data.get("webPages")).get("value")), "url", "name", "snippet", date_of)

"""The search-provider contract: build a provider's HTTP request, read its JSON answer.

A provider knows its API and nothing else: how a query, a result count and a date limit become
an HTTP request (URL, parameters, the API-key header or parameter) and how its documented JSON
answer becomes :class:`SearchResult` records (URL, title, snippet, publication date when the
API gives one). Sending, rate limiting, retries and snapshots are shared by all providers
(:mod:`factscout.collect.search`), so each provider is a small pure module that its tests can
check against the documented formats without any network.

Date limits: :class:`SearchRequest` ``before`` is exclusive, like ``published_before`` in
:mod:`factscout.retrieve.base` (a page from the claim's own day may already be its
fact-check), so providers ask for the range ``EARLIEST .. before - 1 day`` in their own syntax.
Every API dates results its own way and some results come back undated or misdated, so the
pipeline also drops results whose returned date is on or after the limit (the post-filter).

API keys come from the environment (each provider names its variable) or an argument; a
missing key is reported when the first live request is built, so replaying a snapshot needs
no key. Each provider's ``base_url`` can be overridden (a compatible proxy, or a local server
in tests).
"""

from __future__ import annotations

import datetime as dt
import html
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import httpx

from factscout.dates import parse_date
from factscout.errors import FactscoutError, InputError
from factscout.registry import Registry
from factscout.temporal.timestamps import extract_date

EARLIEST = dt.date(1990, 1, 1)
"""Start of the date range for APIs that need both ends (before the web had dated pages)."""

_TAG = re.compile(r"<[^>]+>")


class ProviderError(FactscoutError):
    """A search provider refused the request (bad key, no quota) or answered unusable JSON."""


@dataclass(frozen=True, slots=True)
class SearchRequest:
    """A web search: the query, how many results, and the exclusive date limit."""

    query: str
    count: int = 10
    before: dt.date | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.query, str) or not self.query.strip():
            raise InputError(f"search query must be non-empty text, got {self.query!r}")
        if not isinstance(self.count, int) or isinstance(self.count, bool) or self.count < 1:
            raise InputError(f"search result count must be a positive integer, got {self.count!r}")
        if self.before is not None and (not isinstance(self.before, dt.date) or isinstance(self.before, dt.datetime)):
            raise InputError(f"search date limit must be a datetime.date or None, got {self.before!r}")

    @property
    def last_day(self) -> dt.date | None:
        """The last day a result may be published on (the day before ``before``)."""
        return self.before - dt.timedelta(days=1) if self.before is not None else None

    def to_dict(self) -> dict[str, Any]:
        return {"query": self.query, "count": self.count, "before": self.before.isoformat() if self.before else None}


@dataclass(frozen=True, slots=True)
class SearchResult:
    """One search result in the provider's rank order (1-based)."""

    rank: int
    url: str
    title: str
    snippet: str
    published: dt.date | None = None


@runtime_checkable
class SearchProvider(Protocol):
    """Builds a web-search API request and reads its answer."""

    name: str
    max_count: int
    key_env: tuple[str, ...]

    def request(self, search: SearchRequest) -> httpx.Request: ...

    def parse(self, payload: Any, *, fetched: dt.date | None = None) -> list[SearchResult]: ...


PROVIDERS: Registry[Callable[..., SearchProvider]] = Registry("search provider")


def make_provider(name: str, **options: Any) -> SearchProvider:
    """Instantiate the provider registered as ``name`` (unknown names list the known ones)."""
    return PROVIDERS[name](**options)


def env_value(value: str | None, variable: str) -> str | None:
    """``value`` when given, else the environment variable's (stripped), else None."""
    if value:
        return value
    found = os.environ.get(variable, "").strip()
    return found or None


def require(value: str | None, what: str, variable: str, provider: str) -> str:
    if not value:
        raise InputError(f"search provider {provider} needs {what}: set {variable} (or pass it to the provider)")
    return value


def check_base_url(value: str | None, default: str) -> str:
    url = (value or default).strip().rstrip("/")
    if not re.match(r"^https?://\S+$", url):
        raise InputError(f"search provider base_url must be an http(s) URL, got {value!r}")
    return url


def check_count(search: SearchRequest, provider: str, maximum: int) -> int:
    if search.count > maximum:
        raise InputError(
            f"search provider {provider} returns at most {maximum} results per request, asked for {search.count}"
        )
    return search.count


def clean_text(value: object) -> str:
    """Result text without HTML tags (some APIs mark query words with ``<strong>``) or entities."""
    if not isinstance(value, str):
        return ""
    return " ".join(html.unescape(_TAG.sub("", value)).split())


def result_date(value: object, *, fetched: dt.date | None = None) -> dt.date | None:
    """A result date as APIs write them: ISO (``2019-03-03T10:00:00``, ``2019-03-03T00:00:00.0000000``),
    ``Mar 3, 2019``, ``3 March 2019`` or relative (``3 days ago``, counted back from the day the
    answer was fetched). None when absent or unreadable: a result without a date is kept."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    if re.match(r"^\d{4}-\d{1,2}-\d{1,2}", text):
        try:
            return parse_date(text[:10])
        except InputError:
            return None
    return extract_date(text, reference=fetched, use_dateparser=False)


def as_list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def as_dict(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def json_object(payload: object, provider: str) -> Mapping[str, Any]:
    """A provider's answer as a JSON object; :class:`ProviderError` when it is anything else."""
    data = as_dict(payload)
    if not data:
        raise ProviderError(f"{provider} answered something that is not a JSON object")
    return data


def results_from(
    items: list[Any],
    url_key: str,
    title_key: str,
    snippet_key: str,
    date_of: Callable[[Mapping[str, Any]], dt.date | None],
) -> list[SearchResult]:
    """Results from a list of item objects; items without an http(s) URL are skipped, ranks are
    1-based positions among the kept items."""
    results: list[SearchResult] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        url = item.get(url_key)
        if not isinstance(url, str) or not re.match(r"^https?://", url.strip(), re.IGNORECASE):
            continue
        results.append(
            SearchResult(
                rank=len(results) + 1,
                url=url.strip(),
                title=clean_text(item.get(title_key)),
                snippet=clean_text(item.get(snippet_key)),
                published=date_of(item),
            )
        )
    return results

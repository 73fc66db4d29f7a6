"""Run web searches through a provider: rate limit, retries, snapshot, date post-filter.

:class:`WebSearcher` is what every provider shares. Live, a search waits for the provider's
rate limit, sends the provider's request with retries (429/5xx/timeouts, ``Retry-After``
honoured), and records the raw answer in the snapshot with the result URLs; in replay it reads
the recorded answer instead. Either way the stored bytes are parsed by the provider, so live and
replayed runs see the same results.

A refused key (HTTP 401/403) stops the run with :class:`ProviderError`: every later query would
fail the same way. Any other failure (5xx after the retries, a timeout, unusable JSON) is
recorded as that search's outcome and the run goes on with no results for it.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

import httpx

from factscout.collect.providers.base import ProviderError, SearchProvider, SearchRequest, SearchResult
from factscout.collect.snapshot import Capture, Entry, Session, stamp, utc_now
from factscout.collect.throttle import RateLimiter, RetryPolicy, with_retries

log = logging.getLogger(__name__)


def fetched_day(entry: Entry) -> dt.date | None:
    """The UTC day an entry was fetched (relative result dates count back from it)."""
    value = str(entry.meta.get("fetched") or "")
    try:
        return dt.date.fromisoformat(value[:10]) if value else None
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class SearchOutcome:
    """The results of one search (empty when it failed) and its snapshot entry."""

    request: SearchRequest
    results: tuple[SearchResult, ...]
    entry: Entry

    @property
    def error(self) -> str | None:
        return None if self.entry.outcome == "ok" else self.entry.reason or self.entry.outcome


class WebSearcher:
    """Searches with one provider, live or from a snapshot (see the module docstring)."""

    def __init__(
        self,
        provider: SearchProvider,
        session: Session,
        *,
        client: httpx.Client | None = None,
        min_interval: float = 1.0,
        retry: RetryPolicy | None = None,
        timeout: float = 20.0,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        now: Callable[[], dt.datetime] = utc_now,
    ) -> None:
        self.provider = provider
        self.session = session
        self._client = client
        self._timeout = timeout
        self.limiter = RateLimiter(min_interval, clock=clock, sleep=sleep)
        self.retry = retry or RetryPolicy()
        self._sleep = sleep
        self._now = now

    @property
    def client(self) -> httpx.Client:
        if self._client is None:
            self._client = httpx.Client(timeout=self._timeout, follow_redirects=False)
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()

    def search(self, request: SearchRequest) -> SearchOutcome:
        key = {"provider": self.provider.name, **request.to_dict()}
        entry, body = self.session.get("search", key, lambda: self._fetch(request))
        results: list[SearchResult] = []
        if entry.outcome == "ok" and body is not None:
            results = self.provider.parse(json.loads(body), fetched=fetched_day(entry))
        return SearchOutcome(request, tuple(results), entry)

    def _fetch(self, request: SearchRequest) -> Capture:
        prepared = self.provider.request(request)  # raises on a missing key before anything is sent
        fetched = stamp(self._now())
        what = f"{self.provider.name} search {request.query!r}"
        self.limiter.wait(self.provider.name)
        try:
            response = with_retries(lambda: self.client.send(prepared), self.retry, sleep=self._sleep, what=what)
        except httpx.TransportError as exc:
            log.warning("%s failed: %s", what, type(exc).__name__)
            return Capture(
                None, {"fetched": fetched, "outcome": "error", "reason": f"no answer ({type(exc).__name__})"}
            )
        meta: dict[str, object] = {"fetched": fetched, "status": response.status_code}
        body = response.content
        if response.status_code in (401, 403):
            detail = body[:300].decode("utf-8", "replace")
            raise ProviderError(
                f"{self.provider.name} refused the API key (HTTP {response.status_code}): {detail}; "
                f"check {' and '.join(self.provider.key_env)}"
            )
        if response.status_code >= 400:
            log.warning("%s: HTTP %d", what, response.status_code)
            return Capture(body, {**meta, "outcome": "error", "reason": f"HTTP {response.status_code}"})
        try:
            results = self.provider.parse(json.loads(body), fetched=dt.date.fromisoformat(fetched[:10]))
        except (ValueError, ProviderError) as exc:
            reason = str(exc) if isinstance(exc, ProviderError) else "the answer is not JSON"
            log.warning("%s: %s", what, reason)
            return Capture(body, {**meta, "outcome": "error", "reason": reason[:300]})
        return Capture(body, {**meta, "outcome": "ok", "urls": [r.url for r in results]})

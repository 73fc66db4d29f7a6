"""Politeness and resilience for web requests: a per-key rate limit and retries with backoff.

:class:`RateLimiter` keeps at least ``min_interval`` seconds between two requests with the same
key (one search provider, or one crawled host). :func:`with_retries` repeats a request on
timeouts, connection errors, HTTP 429 and 5xx, waiting ``backoff * 2**attempt`` seconds (capped)
or what the server's ``Retry-After`` asks (seconds or an HTTP date), and hands back the last
answer when the retries are spent, so the caller decides what a final 503 means.

The clock and ``sleep`` are injectable: tests drive both and never wait.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol, TypeVar

import httpx

from factscout.errors import InputError

log = logging.getLogger(__name__)

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


class HasStatus(Protocol):
    @property
    def status_code(self) -> int: ...

    @property
    def headers(self) -> Mapping[str, str]: ...


R = TypeVar("R", bound=HasStatus)


class RateLimiter:
    """At most one request per ``min_interval`` seconds for each key."""

    def __init__(
        self,
        min_interval: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not min_interval >= 0:
            raise InputError(f"rate limit interval must be >= 0 seconds, got {min_interval!r}")
        self.min_interval = float(min_interval)
        self._clock, self._sleep = clock, sleep
        self._last: dict[str, float] = {}

    def wait(self, key: str) -> float:
        """Sleep until a request for ``key`` is allowed; returns the seconds slept."""
        now = self._clock()
        last = self._last.get(key)
        delay = 0.0 if last is None else max(0.0, last + self.min_interval - now)
        if delay > 0:
            self._sleep(delay)
            now = self._clock()
        # the slot taken is never earlier than the one promised, even if the clock lags the sleep
        self._last[key] = now if last is None else max(now, last + self.min_interval)
        return delay


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how long to retry: ``max_retries`` more attempts, exponential backoff."""

    max_retries: int = 3
    backoff: float = 1.0
    max_backoff: float = 60.0

    def __post_init__(self) -> None:
        if not isinstance(self.max_retries, int) or self.max_retries < 0:
            raise InputError(f"max_retries must be an integer >= 0, got {self.max_retries!r}")
        if not (self.backoff >= 0 and self.max_backoff >= 0):
            raise InputError(f"backoff must be >= 0 seconds, got {self.backoff!r}, {self.max_backoff!r}")

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number ``attempt + 1`` (``Retry-After`` wins, capped)."""
        wanted = retry_after if retry_after is not None else self.backoff * 2**attempt
        return min(max(wanted, 0.0), self.max_backoff)


def retry_after_seconds(headers: Mapping[str, str], now: dt.datetime | None = None) -> float | None:
    """The ``Retry-After`` header in seconds (delta-seconds or an HTTP date), or None."""
    value = headers.get("retry-after") or headers.get("Retry-After")
    if value is None:
        return None
    value = value.strip()
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.timezone.utc)
    now = now or dt.datetime.now(dt.timezone.utc)
    return max((when - now).total_seconds(), 0.0)


def with_retries(
    send: Callable[[], R],
    policy: RetryPolicy,
    *,
    sleep: Callable[[float], None] = time.sleep,
    what: str = "request",
) -> R:
    """Call ``send`` until it answers something other than 429/5xx or the retries are spent.

    Timeouts and transport errors are retried too; when the last attempt still fails that way,
    the error propagates. The last 429/5xx answer is returned, not raised.
    """
    for attempt in range(policy.max_retries + 1):
        last = attempt == policy.max_retries
        try:
            response = send()
        except httpx.TransportError as exc:
            if last:
                raise
            wait = policy.delay(attempt)
            log.info("%s: %s; retry %d/%d in %.1f s", what, type(exc).__name__, attempt + 1, policy.max_retries, wait)
            sleep(wait)
            continue
        if response.status_code not in RETRY_STATUSES or last:
            return response
        wait = policy.delay(attempt, retry_after_seconds(response.headers))
        log.info(
            "%s: HTTP %d; retry %d/%d in %.1f s", what, response.status_code, attempt + 1, policy.max_retries, wait
        )
        sleep(wait)
    raise AssertionError("unreachable")  # pragma: no cover

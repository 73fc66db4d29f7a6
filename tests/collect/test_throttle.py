"""Rate limiting and retries with backoff, on an injected clock (no real waiting)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

import httpx
import pytest

from factscout.collect.throttle import RateLimiter, RetryPolicy, retry_after_seconds, with_retries
from factscout.errors import InputError


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def test_rate_limiter_spaces_requests_per_key():
    clock = FakeClock()
    limiter = RateLimiter(2.0, clock=clock, sleep=clock.sleep)
    assert limiter.wait("a") == 0.0
    assert limiter.wait("b") == 0.0  # another key is independent
    clock.now += 0.5
    assert limiter.wait("a") == pytest.approx(1.5)
    assert limiter.wait("a") == pytest.approx(2.0)
    clock.now += 10
    assert limiter.wait("a") == 0.0
    assert clock.sleeps == pytest.approx([1.5, 2.0])


def test_rate_limiter_keeps_its_promise_when_the_clock_lags_the_sleep():
    clock = FakeClock()
    limiter = RateLimiter(1.0, clock=clock, sleep=lambda s: None)  # sleeping does not move the clock
    limiter.wait("a")
    limiter.wait("a")
    assert limiter.wait("a") == pytest.approx(2.0)  # the third slot is 2 s after the first


def test_rate_limiter_rejects_negative_intervals():
    with pytest.raises(InputError):
        RateLimiter(-1)


@pytest.mark.parametrize(
    ("value", "expected"),
    [("7", 7.0), ("0", 0.0), ("-3", 0.0), ("Fri, 02 Jan 2026 03:04:15 GMT", 10.0), ("soon", None)],
)
def test_retry_after_seconds_or_http_date(value, expected):
    now = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)
    assert retry_after_seconds({"retry-after": value}, now) == expected
    assert retry_after_seconds({}, now) is None


@dataclass
class Answer:
    status_code: int
    headers: dict[str, str] = field(default_factory=dict)


def test_429_then_200_waits_what_retry_after_asks():
    answers = [Answer(429, {"retry-after": "7"}), Answer(503), Answer(200)]
    sleeps: list[float] = []
    got = with_retries(lambda: answers.pop(0), RetryPolicy(max_retries=3, backoff=0.5), sleep=sleeps.append)
    assert got.status_code == 200
    assert sleeps == [7.0, 1.0]  # Retry-After, then backoff * 2**1


def test_spent_retries_return_the_last_answer():
    sleeps: list[float] = []
    got = with_retries(lambda: Answer(503), RetryPolicy(max_retries=2, backoff=1.0), sleep=sleeps.append)
    assert got.status_code == 503
    assert sleeps == [1.0, 2.0]


def test_backoff_is_capped():
    policy = RetryPolicy(max_retries=10, backoff=1.0, max_backoff=5.0)
    assert [policy.delay(a) for a in range(5)] == [1.0, 2.0, 4.0, 5.0, 5.0]
    assert policy.delay(0, retry_after=3600) == 5.0


def test_transport_errors_are_retried_then_raised():
    calls = []

    def send() -> Answer:
        calls.append(1)
        raise httpx.ConnectTimeout("slow")

    sleeps: list[float] = []
    with pytest.raises(httpx.ConnectTimeout):
        with_retries(send, RetryPolicy(max_retries=2, backoff=0.1), sleep=sleeps.append)
    assert len(calls) == 3
    assert sleeps == pytest.approx([0.1, 0.2])


def test_other_client_errors_are_not_retried():
    answers = [Answer(404), Answer(200)]
    assert with_retries(lambda: answers.pop(0), RetryPolicy(), sleep=lambda s: None).status_code == 404


@pytest.mark.parametrize("bad", [{"max_retries": -1}, {"backoff": -1.0}])
def test_bad_retry_policies(bad):
    with pytest.raises(InputError):
        RetryPolicy(**bad)

"""Fetch result pages politely and safely, and read their main text and publication date.

Fetching (:class:`Crawler`, live runs only) does, for each URL:

1. refuse anything but http(s), and any address :mod:`factscout.collect.netguard` refuses
   (private, loopback, link-local... unless allow-listed), on every connection: the page,
   each redirect hop and ``robots.txt``;
2. obey ``robots.txt`` for the page and for each redirect target (``urllib.robotparser`` over a
   file fetched through the same guarded client; 401/403 means nothing may be fetched, as
   ``urllib.robotparser`` reads it, another 4xx means everything may, and a 5xx or no answer
   means the site is skipped, as RFC 9309 asks for an unreachable robots.txt);
3. wait for the host's rate limit, GET with retries on 429/5xx (``Retry-After`` honoured),
   follow at most ``max_redirects`` redirects by hand;
4. skip and log: 401/402/403/451 (forbidden or paywalled), other 4xx/5xx, a content type that is
   not HTML, a body over ``max_bytes`` (the download stops there) or slower than ``deadline``
   seconds in all.

What it learned goes into the snapshot as the page's outcome (``ok`` with the HTML, or
``skipped`` with the reason). Reading (:func:`read_page`, live and replay alike) takes the stored
HTML: pages that declare themselves paywalled (schema.org ``isAccessibleForFree: false``) are
skipped; the main text and title come from trafilatura (Barbaresi 2021), boilerplate
(navigation, footers, comments) left out; the publication date from htmldate (the original
date, never later than the day the page was fetched); a page with less than ``min_chars`` of
main text is skipped.
"""

from __future__ import annotations

import datetime as dt
import functools
import logging
import re
import time
import urllib.robotparser
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from factscout.collect.netguard import AddressPolicy, BlockedAddress, guarded_client
from factscout.collect.snapshot import Capture, stamp, utc_now
from factscout.collect.throttle import RateLimiter, RetryPolicy, with_retries
from factscout.errors import InputError, MissingDependency

log = logging.getLogger(__name__)

USER_AGENT = "factscout/0.1 (evidence collection for fact-checking research; honours robots.txt)"
ROBOTS_AGENT = "factscout"
HTML_TYPES = ("text/html", "application/xhtml+xml")
_FORBIDDEN = {401: "forbidden", 402: "paywalled", 403: "forbidden", 451: "unavailable for legal reasons"}
_REDIRECTS = {301, 302, 303, 307, 308}
_PAYWALL = re.compile(  # schema.org, as JSON-LD or as microdata
    rb"isAccessibleForFree[\"']?\s*(?::\s*[\"']?|[\"']?\s+content\s*=\s*[\"'])false", re.IGNORECASE
)
_HTML_START = re.compile(rb"^\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body)", re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True)
class CrawlSettings:
    """Limits and manners of the crawler."""

    user_agent: str = USER_AGENT
    robots_agent: str = ROBOTS_AGENT
    timeout: float = 10.0
    deadline: float = 30.0
    max_bytes: int = 5_000_000
    max_redirects: int = 5
    content_types: tuple[str, ...] = HTML_TYPES
    host_interval: float = 1.0
    retry: RetryPolicy = field(default_factory=lambda: RetryPolicy(max_retries=2))
    min_chars: int = 200

    def __post_init__(self) -> None:
        for name in ("timeout", "deadline"):
            if not getattr(self, name) > 0:
                raise InputError(f"crawl {name} must be > 0 seconds, got {getattr(self, name)!r}")
        if not isinstance(self.max_bytes, int) or self.max_bytes < 1:
            raise InputError(f"crawl max_bytes must be a positive integer, got {self.max_bytes!r}")
        if not isinstance(self.max_redirects, int) or self.max_redirects < 0:
            raise InputError(f"crawl max_redirects must be an integer >= 0, got {self.max_redirects!r}")


@dataclass(frozen=True)
class _Answer:
    """One HTTP exchange, read within the limits."""

    status_code: int
    headers: httpx.Headers
    url: str
    body: bytes | None = None
    problem: str | None = None


def _skip(fetched: str, reason: str, **meta: Any) -> Capture:
    return Capture(None, {"fetched": fetched, "outcome": "skipped", "reason": reason, **meta})


class Crawler:
    """Fetches pages for the snapshot (see the module docstring); one instance per run."""

    def __init__(
        self,
        policy: AddressPolicy | None = None,
        settings: CrawlSettings | None = None,
        *,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        now: Callable[[], dt.datetime] | None = None,
    ) -> None:
        self.policy = policy or AddressPolicy()
        self.settings = settings or CrawlSettings()
        self.limiter = RateLimiter(self.settings.host_interval, clock=clock, sleep=sleep)
        self._sleep, self._clock = sleep, clock
        self._now = now or utc_now
        timeout = httpx.Timeout(self.settings.timeout)
        self.client = guarded_client(self.policy, timeout=timeout, headers={"User-Agent": self.settings.user_agent})
        self._robots: dict[str, urllib.robotparser.RobotFileParser | str] = {}

    def close(self) -> None:
        self.client.close()

    def __enter__(self) -> Crawler:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # one exchange ----------------------------------------------------------------------------

    def _exchange(self, url: str) -> _Answer:
        """GET ``url`` once (no redirect following), reading at most ``max_bytes`` within ``deadline``."""
        start = self._clock()
        with self.client.stream("GET", url) as r:
            if r.status_code in _REDIRECTS or r.status_code >= 400:
                return _Answer(r.status_code, r.headers, str(r.url))
            declared = r.headers.get("content-length")
            if declared and declared.isdigit() and int(declared) > self.settings.max_bytes:
                return _Answer(r.status_code, r.headers, str(r.url), problem=f"too large ({declared} bytes)")
            chunks: list[bytes] = []
            size = 0
            for chunk in r.iter_bytes():
                size += len(chunk)
                if size > self.settings.max_bytes:
                    return _Answer(
                        r.status_code,
                        r.headers,
                        str(r.url),
                        problem=f"too large (over {self.settings.max_bytes} bytes)",
                    )
                if self._clock() - start > self.settings.deadline:
                    return _Answer(
                        r.status_code, r.headers, str(r.url), problem=f"too slow (over {self.settings.deadline:g} s)"
                    )
                chunks.append(chunk)
            return _Answer(r.status_code, r.headers, str(r.url), b"".join(chunks))

    def _get(self, url: str, *, obey_robots: bool = True) -> tuple[_Answer, list[str]]:
        """GET with retries and redirects followed by hand; every hop is checked (address, and
        robots.txt unless fetching robots.txt itself) before it is requested. Returns the final
        answer and the URLs redirected from."""
        hops: list[str] = []
        current = url
        for _ in range(self.settings.max_redirects + 1):
            self.policy.check_url(current)
            if obey_robots:
                self._require_robots(current, "robots.txt of the redirect target" if hops else "robots.txt")
            self.limiter.wait(httpx.URL(current).host)
            send = functools.partial(self._exchange, current)
            answer = with_retries(send, self.settings.retry, sleep=self._sleep, what=f"GET {current}")
            location = answer.headers.get("location")
            if answer.status_code not in _REDIRECTS or not location:
                return answer, hops
            hops.append(current)
            current = str(httpx.URL(current).join(location).copy_with(fragment=None))
        raise _Skip(f"more than {self.settings.max_redirects} redirects")

    # robots.txt ------------------------------------------------------------------------------

    def _robots_for(self, url: str) -> urllib.robotparser.RobotFileParser | str:
        """The parsed robots.txt of ``url``'s site, or why it could not be read (cached per site)."""
        parsed = httpx.URL(url)
        origin = f"{parsed.scheme}://{parsed.netloc.decode('ascii')}"
        if origin not in self._robots:
            parser = urllib.robotparser.RobotFileParser(f"{origin}/robots.txt")
            try:
                answer, _ = self._get(f"{origin}/robots.txt", obey_robots=False)
            except (httpx.TransportError, _Skip) as exc:
                self._robots[origin] = f"robots.txt unreachable ({type(exc).__name__})"
                return self._robots[origin]
            if answer.status_code in (401, 403):
                parser.parse(["User-agent: *", "Disallow: /"])
            elif 400 <= answer.status_code < 500:
                parser.parse([])  # no robots.txt: everything may be fetched
            elif answer.status_code >= 500 or answer.body is None:
                self._robots[origin] = f"robots.txt unavailable (HTTP {answer.status_code})"
                return self._robots[origin]
            else:
                parser.parse(answer.body.decode("utf-8", "replace").splitlines())
            self._robots[origin] = parser
        return self._robots[origin]

    def _require_robots(self, url: str, whose: str) -> None:
        robots = self._robots_for(url)
        if isinstance(robots, str):
            raise _Skip(robots)
        if not robots.can_fetch(self.settings.robots_agent, url):
            raise _Skip(f"{whose} disallows it")

    # a page ----------------------------------------------------------------------------------

    def fetch(self, url: str) -> Capture:
        """Fetch ``url`` for the snapshot: ``ok`` with the HTML, or ``skipped`` with the reason."""
        fetched = stamp(self._now())
        try:
            answer, _ = self._get(url)
        except BlockedAddress as exc:
            return self._log_skip(url, fetched, f"blocked: {exc}")
        except _Skip as exc:
            return self._log_skip(url, fetched, str(exc))
        except httpx.TimeoutException:
            return self._log_skip(url, fetched, "timeout")
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            return self._log_skip(url, fetched, f"no answer ({type(exc).__name__})")
        meta: dict[str, Any] = {"status": answer.status_code}
        if answer.url != url:
            meta["final_url"] = answer.url
        if answer.status_code in _FORBIDDEN:
            return self._log_skip(url, fetched, f"{_FORBIDDEN[answer.status_code]} (HTTP {answer.status_code})", **meta)
        if answer.status_code >= 400:
            return self._log_skip(url, fetched, f"HTTP {answer.status_code}", **meta)
        if answer.problem is not None:
            return self._log_skip(url, fetched, answer.problem, **meta)
        body = answer.body or b""
        content_type = answer.headers.get("content-type", "").split(";")[0].strip().lower()
        meta["content_type"] = content_type
        sniffed_html = not content_type and _HTML_START.match(body[:1024])
        if content_type not in self.settings.content_types and not sniffed_html:
            return self._log_skip(url, fetched, f"content type {content_type or 'missing'} is not HTML", **meta)
        return Capture(body, {"fetched": fetched, "outcome": "ok", **meta})

    def _log_skip(self, url: str, fetched: str, reason: str, **meta: Any) -> Capture:
        log.info("skipped %s: %s", url, reason)
        return _skip(fetched, reason, **meta)


class _Skip(Exception):
    """A page is not fetched; the message says why (robots.txt, too many redirects)."""


# reading a stored page ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PageText:
    """The readable part of a fetched page."""

    title: str
    text: str
    published: dt.date | None


def read_page(html: bytes, url: str, *, fetched: dt.date | None = None, min_chars: int = 200) -> PageText | str:
    """The main text, title and publication date of a stored page, or the reason it is unusable
    (paywalled, no main text). Deterministic: the same bytes always give the same answer."""
    try:
        import htmldate
        import trafilatura
        from trafilatura.settings import Document
    except ImportError:
        raise MissingDependency(
            "reading web pages needs trafilatura and htmldate: pip install 'factscout[collect]'"
        ) from None
    if _PAYWALL.search(html[:500_000]):
        return "paywalled (isAccessibleForFree: false)"
    doc = trafilatura.bare_extraction(html, url=url, with_metadata=True, include_comments=False, include_tables=True)
    if not isinstance(doc, Document):  # None: nothing extracted (a dict only with as_dict=True)
        doc = Document()
    text = (doc.text or "").strip()
    if len(text) < min_chars:
        return f"no main text (under {min_chars} characters)"
    title = " ".join((doc.title or "").split())
    published: dt.date | None = None
    try:
        found = htmldate.find_date(
            html,
            url=url,
            original_date=True,
            outputformat="%Y-%m-%d",
            max_date=fetched.isoformat() if fetched else None,
        )
        published = dt.date.fromisoformat(found) if found else None
    except Exception:  # htmldate reads arbitrary HTML; a failure only means undated
        log.debug("htmldate failed on %s", url)
    return PageText(title, text, published)

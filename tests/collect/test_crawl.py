"""The crawler against loopback servers: SSRF on redirects, robots.txt, limits, skipped pages,
retries; and reading main text and dates from stored HTML."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

import pytest

from factscout.collect.crawl import Crawler, CrawlSettings, PageText, read_page
from factscout.collect.netguard import AddressPolicy
from factscout.collect.throttle import RetryPolicy

from .conftest import FILLER, FakeWeb, article


@pytest.fixture
def site() -> Iterator[FakeWeb]:
    """A site on 127.0.0.2, the only allow-listed address: 127.0.0.1 stays forbidden."""
    server = FakeWeb("127.0.0.2")
    try:
        yield server
    finally:
        server.stop()


def crawler(*, sleeps: list[float] | None = None, **settings) -> Crawler:
    options = {"host_interval": 0.0, "timeout": 5.0} | settings
    sink = sleeps if sleeps is not None else []
    return Crawler(AddressPolicy.allowing(["127.0.0.2"]), CrawlSettings(**options), sleep=sink.append)


def test_a_page_is_fetched_after_robots_txt(site):
    url = site.page("/pages/a.html", article("A", "2019-05-03", ["text " * 60]))
    with crawler() as c:
        capture = c.fetch(url)
    assert capture.meta["outcome"] == "ok" and capture.meta["status"] == 200
    assert capture.meta["content_type"] == "text/html"
    assert capture.body == site.pages["/pages/a.html"][2]
    assert [r["path"] for r in site.requests] == ["/robots.txt", "/pages/a.html"]
    assert site.requests[1]["headers"]["User-Agent"].startswith("factscout/")


@pytest.mark.parametrize(
    ("target", "reason"),
    [
        ("http://127.0.0.1:{port}/admin", "loopback"),
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://10.0.0.7/intranet", "private"),
        ("http://[::ffff:127.0.0.1]:{port}/", "loopback"),
        ("http://localhost:{port}/", "loopback"),
    ],
)
def test_redirects_to_private_addresses_are_refused(site, web, target, reason):
    """``web`` listens on 127.0.0.1: it must never see a request."""
    to = target.format(port=web.server_address[1])
    with crawler() as c:
        capture = c.fetch(f"{site.base}/redirect?to={to}")
    assert capture.meta["outcome"] == "skipped"
    assert capture.meta["reason"].startswith("blocked: ") and reason in capture.meta["reason"]
    assert capture.body is None
    assert web.requests == []


def test_private_result_urls_are_refused_before_any_request(site):
    with crawler() as c:
        for url in ["http://169.254.169.254/latest/meta-data/", "http://10.1.2.3/", "http://127.0.0.1/"]:
            assert "blocked" in c.fetch(url).meta["reason"]
    assert site.requests == []


def test_robots_txt_is_obeyed(site):
    url = site.page("/private/memo.html", article("Memo", None, [FILLER] * 3))
    with crawler() as c:
        assert c.fetch(url).meta["reason"] == "robots.txt disallows it"
    assert [r["path"] for r in site.requests] == ["/robots.txt"]


def test_robots_txt_for_another_user_agent_does_not_apply(site):
    site.robots = "User-agent: OtherBot\nDisallow: /\n"
    url = site.page("/pages/b.html", article("B", None, [FILLER] * 3))
    with crawler() as c:
        assert c.fetch(url).meta["outcome"] == "ok"


@pytest.mark.parametrize(
    ("status", "expected"), [(403, "robots.txt disallows it"), (503, "robots.txt unavailable (HTTP 503)")]
)
def test_robots_txt_errors(site, status, expected):
    site.script["/robots.txt"] = [status] * 5
    url = site.page("/pages/c.html", article("C", None, [FILLER] * 3))
    with crawler(retry=RetryPolicy(max_retries=0)) as c:
        assert c.fetch(url).meta["reason"] == expected


def test_no_robots_txt_means_allowed(site):
    site.script["/robots.txt"] = [404]
    url = site.page("/pages/d.html", article("D", None, [FILLER] * 3))
    with crawler() as c:
        assert c.fetch(url).meta["outcome"] == "ok"


@pytest.mark.parametrize(
    ("path", "status", "content_type", "reason"),
    [
        ("/forbidden/x.html", None, None, "forbidden (HTTP 403)"),
        ("/pay.html", 402, "text/html", "paywalled (HTTP 402)"),
        ("/gone.html", 404, "text/html", "HTTP 404"),
        ("/doc.pdf", 200, "application/pdf", "content type application/pdf is not HTML"),
    ],
)
def test_unusable_pages_are_skipped_with_the_reason(site, path, status, content_type, reason):
    if status is not None and status != 404:
        site.page(path, b"%PDF-1.4" if status == 200 else b"<html>pay</html>", content_type, status)
    with crawler() as c:
        capture = c.fetch(site.base + path)
    assert (capture.meta["outcome"], capture.meta["reason"]) == ("skipped", reason)


def test_size_limit_stops_the_download(site):
    url = site.page("/big.html", b"<html><body>" + b"x" * 50_000 + b"</body></html>")
    with crawler(max_bytes=10_000) as c:
        assert c.fetch(url).meta["reason"].startswith("too large")


def test_a_silent_server_times_out(site):
    url = site.page("/slow.html", article("Slow", None, [FILLER] * 3))
    site.delays["/slow.html"] = 5.0
    with crawler(timeout=0.2, retry=RetryPolicy(max_retries=0)) as c:
        assert c.fetch(url).meta["reason"] == "timeout"


def test_retry_after_429_then_the_page(site):
    url = site.page("/flaky.html", article("Flaky", None, [FILLER] * 3))
    site.script["/flaky.html"] = [429]
    site.retry_after = "2"
    sleeps: list[float] = []
    with crawler(sleeps=sleeps) as c:
        assert c.fetch(url).meta["outcome"] == "ok"
    assert sleeps == [2.0]


def test_redirect_loops_end(site):
    with crawler(max_redirects=3) as c:
        assert c.fetch(site.base + "/loop").meta["reason"] == "more than 3 redirects"
    assert len([r for r in site.requests if r["path"] == "/loop"]) == 4


def test_redirects_within_allowed_hosts_are_followed(site):
    target = site.page("/pages/final.html", article("Final", None, [FILLER] * 3))
    with crawler() as c:
        capture = c.fetch(f"{site.base}/redirect?to=/pages/final.html")
    assert capture.meta["outcome"] == "ok" and capture.meta["final_url"] == target


def test_redirects_into_a_disallowed_path_are_not_followed(site):
    site.page("/private/memo.html", article("Memo", None, [FILLER] * 3))
    with crawler() as c:
        capture = c.fetch(f"{site.base}/redirect?to=/private/memo.html")
    assert capture.meta["reason"] == "robots.txt of the redirect target disallows it"
    assert "/private/memo.html" not in [r["path"] for r in site.requests]


def test_unreachable_host_is_skipped():
    with crawler(retry=RetryPolicy(max_retries=0)) as c:
        # 127.0.0.2 is allowed, but nothing listens on port 9 (discard)
        assert c.fetch("http://127.0.0.2:9/x.html").meta["reason"].startswith("robots.txt unreachable")


# reading -------------------------------------------------------------------------------------

PAGE = article(
    "Unemployment falls to 3.6 percent",
    "2019-05-03",
    ["The unemployment rate fell to 3.6 percent in April 2019, the lowest level since 1969.", FILLER],
)


def test_read_page_keeps_the_article_not_the_boilerplate():
    page = read_page(PAGE, "https://example.org/jobs", fetched=dt.date(2026, 1, 2))
    assert isinstance(page, PageText)
    assert "3.6 percent in April 2019" in page.text
    assert "Copyright" not in page.text and "Home" not in page.text
    assert page.title.startswith("Unemployment falls to 3.6 percent")
    assert page.published == dt.date(2019, 5, 3)


def test_read_page_is_deterministic():
    assert read_page(PAGE, "https://example.org/jobs") == read_page(PAGE, "https://example.org/jobs")


def test_read_page_never_dates_a_page_after_it_was_fetched():
    page = read_page(PAGE, "https://example.org/jobs", fetched=dt.date(2019, 5, 1))
    assert isinstance(page, PageText) and page.published != dt.date(2019, 5, 3)


def test_read_page_skips_paywalls_and_empty_pages():
    paywalled = article("Analysis", "2019-05-04", [FILLER, FILLER], paywalled=True)
    assert read_page(paywalled, "https://example.org/a") == "paywalled (isAccessibleForFree: false)"
    microdata = PAGE.replace(b"<article>", b'<article><meta itemprop="isAccessibleForFree" content="False">')
    assert read_page(microdata, "https://example.org/m") == "paywalled (isAccessibleForFree: false)"
    free = PAGE.replace(
        b"<article>", b'<script type="application/ld+json">{"isAccessibleForFree": true}</script><article>'
    )
    assert isinstance(read_page(free, "https://example.org/f"), PageText)
    assert read_page(b"<html><body><p>Too short.</p></body></html>", "https://example.org/b").startswith("no main text")

"""``check --html`` output in a real browser (Playwright driving the system Chromium, as
test_browser.py does): opened from a file with no server, it renders every claim, logs no console
error, requests nothing but itself, and the hostile passage's markup never runs."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from factscout.cli.main import app
from factscout.report import VERDICTS

from .conftest import CLAIM_ID, HOSTILE_IMG, HOSTILE_SCRIPT
from .live import chromium


@pytest.fixture(scope="module")
def browser():
    with chromium() as b:  # skips when FACTSCOUT_NO_BROWSER=1, as the page's browser test does
        yield b


@pytest.fixture(scope="module")
def report_file(served_index, mini, tmp_path_factory):
    """The CLI's --html page for the hostile claim (dated, filter off) and three more claims."""
    folder = tmp_path_factory.mktemp("html")
    claims = folder / "claims.jsonl"
    chosen = [next(c for c in mini.claims if c.claim_id == CLAIM_ID), *mini.claims[:3]]
    rows = [{"_id": c.claim_id, "text": c.text, "date": "2016-06-01"} for c in chosen]
    claims.write_text("".join(json.dumps(r) + "\n" for r in rows))
    path = folder / "report.html"
    args = ["check", "--claims", str(claims), "--index", str(served_index), "--planner", "claim"]
    result = CliRunner().invoke(app, [*args, "--no-date-filter", "--html", str(path)])
    assert result.exit_code == 0, result.output
    return path, len(rows)


def test_the_html_report_opens_in_chromium_without_errors_or_requests(browser, report_file):
    path, n = report_file
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    console, errors, dialogs, requests = [], [], [], []
    page.on("console", lambda m: console.append(f"{m.type}: {m.text}"))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.on("request", lambda r: requests.append(r.url))
    page.goto(path.as_uri())
    page.wait_for_load_state("load")

    assert [m for m in console if m.startswith("error")] == [] and errors == []
    assert requests == [path.as_uri()]  # nothing but the file itself: no asset, no network
    assert page.locator("article.claim-report").count() == n
    assert page.locator("#contents li").count() == n
    labels = page.locator(".claim-report .verdict-label").all_inner_texts()
    assert len(labels) == n and set(labels) <= set(VERDICTS)
    # the page's stylesheet applies: the header is the served page's dark bar, groups sit in 3 columns
    assert page.evaluate("() => getComputedStyle(document.querySelector('header')).backgroundColor") == (
        "rgb(32, 51, 63)"
    )
    first = page.locator("article.claim-report").first
    assert first.locator(".group").count() == 3
    assert first.locator(".sent.hl").count() >= 1
    assert first.locator("svg circle.dot.after").count() == 1  # the late passage, flagged on the timeline

    hostile = first.locator('article[data-passage-id="hostile"]')
    text = hostile.inner_text()
    assert HOSTILE_SCRIPT in text and HOSTILE_IMG in text  # shown as text
    assert page.locator("script, img, iframe").count() == 0 and hostile.locator("a").count() == 0
    assert page.evaluate("() => typeof window.__pwned") == "undefined" and dialogs == []

    page.locator("#contents a").nth(n - 1).click()  # the contents links jump to each claim
    assert page.url.endswith(f"#claim-{n}")
    context.close()


def test_axe_finds_no_serious_accessibility_violation_in_the_html_report(browser, report_file):
    from .axe import axe_source, describe, violations

    source = axe_source()
    path, _ = report_file
    context = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)  # to add axe's script
    page = context.new_page()
    page.goto(path.as_uri())
    found = violations(page, source)
    context.close()
    assert found == [], "axe-core, serious or critical:\n" + describe(found)

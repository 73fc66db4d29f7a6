"""The web page in a real browser: Playwright driving Debian's headless Chromium against the app
served by uvicorn on loopback. Submits a claim, reads the evidence, timeline and verdict, uses the
query editor, and checks that a passage with ``<script>`` and ``<img onerror>`` is shown as text
and never runs. Writes a screenshot to pytest's tmp dir (and to ``$FACTSCOUT_SCREENSHOT``). axe-core
(``tests/service/axe.py``) finds no serious or critical accessibility violation on the empty page
or on a report.

Chromium comes from the system (``tests/service/live.py``).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from factscout.report import VERDICTS
from factscout.serve import create_app

from .conftest import CLAIM_ID, HOSTILE_IMG, HOSTILE_SCRIPT
from .live import chromium, served


@pytest.fixture(scope="module")
def server(checker, mini):
    with served(create_app(checker, qrels=mini.qrels)) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    with chromium() as b:
        yield b


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = context.new_page()
    pg.dialogs = []  # type: ignore[attr-defined]
    pg.errors = []  # type: ignore[attr-defined]
    pg.on("dialog", lambda d: (pg.dialogs.append(d.message), d.dismiss()))  # type: ignore[attr-defined]
    pg.on("pageerror", lambda e: pg.errors.append(str(e)))  # type: ignore[attr-defined]
    pg.set_default_timeout(30_000)
    yield pg
    context.close()


def _no_script_ran(page) -> None:
    assert page.evaluate("() => typeof window.__pwned") == "undefined"
    assert page.dialogs == []


def test_check_a_claim_edit_its_query_and_take_a_screenshot(server, page, mini, tmp_path):
    claim = next(c for c in mini.claims if c.claim_id == CLAIM_ID)
    response = page.goto(server + "/")
    assert response.status == 200 and "script-src 'self'" in response.headers["content-security-policy"]
    # an example claim fills the claim box (and checks nothing yet)
    example = page.locator("#examples a.example").first
    example.click()
    assert page.input_value("#claim") == example.inner_text() and page.url == server + "/"
    page.fill("#claim", claim.text)
    page.fill("#date", "2016-06-01")
    page.select_option("#evidence-dates", "all")
    assert not page.is_visible("#claim-id")  # a researcher's field, under Advanced
    page.click("#claim-form details.advanced summary")
    page.fill("#claim-id", CLAIM_ID)
    # the check goes through the job API; its first three polls are answered "running 0/1" here so
    # the progress line can be seen however fast the check is
    polls: list[str] = []

    def slow_poll(route):
        polls.append(route.request.url)
        if len(polls) <= 3:
            body = {"id": route.request.url.rsplit("/", 1)[1], "status": "running", "done": 0, "total": 1}
            route.fulfill(status=200, content_type="application/json", body=json.dumps(body))
        else:
            route.continue_()

    page.route("**/v1/checks/*", slow_poll)
    page.click("#check")
    page.wait_for_function("() => document.getElementById('progress').textContent === 'checking… 0/1'")
    page.wait_for_selector("#verdict")
    page.unroute("**/v1/checks/*")
    assert len(polls) >= 4

    # the report is the job's stored report, and the shareable link carries the claim
    assert "claim=" in page.url and "date=2016-06-01" in page.url and "job=" in page.url
    # verdict with counts
    assert page.inner_text("#verdict-label") in VERDICTS
    for side in ("supporting", "refuting", "neutral"):
        assert page.inner_text(f"#count-{side}").split()[0].isdigit()
    # planned queries, evidence grouped with highlighted sentences, source, date and finding query
    assert claim.text in page.inner_text("#queries")
    assert page.locator("#evidence .group").count() == 3
    assert page.locator("#evidence article.passage").count() == 5
    assert page.locator("#evidence .sent.hl").count() >= 1
    # each highlighted sentence says, in words, the side the rule counted it for (or "not counted" and the
    # model's own label) and a probability, under a legend
    assert page.is_visible("#legend") and "supports" in page.inner_text("#legend")
    tags = page.locator("#evidence .group .stance-tag").all_inner_texts()
    assert len(tags) == page.locator("#evidence .sent.hl").count()
    said = [t.rsplit(" ", 1)[0].removeprefix("not counted · ").removeprefix("model: ") for t in tags]
    assert all(s in ("supports", "refutes", "not enough info") for s in said)
    assert all(0.0 <= float(t.rsplit(" ", 1)[1]) <= 1.0 for t in tags)
    hostile = page.locator('article[data-passage-id="hostile"]')
    assert "2015-03-02" in hostile.inner_text() and not hostile.locator(".found-by").first.is_visible()
    hostile.locator("details.advanced summary").click()  # which query found it: under Advanced
    assert claim.text in hostile.locator(".found-by").first.inner_text()
    # the late passage is on the timeline and marked as published after the claim date
    late = page.locator('article[data-passage-id="late-folate"]')
    assert "after the claim date" in late.inner_text()
    assert page.locator("#timeline circle.dot.after").count() == 1
    assert page.locator("#timeline circle.dot").count() >= 3
    assert "claim 2016-06-01" in (page.text_content("#timeline svg") or "")

    # hostile markup is visible as literal text and never ran
    text = hostile.inner_text()
    assert HOSTILE_SCRIPT in text and HOSTILE_IMG in text
    assert hostile.locator("script, img").count() == 0
    assert hostile.locator("a").count() == 0  # its javascript: URL is not made a link
    _no_script_ran(page)

    # the query editor: tokens with edit buttons, results with the metric, the policy's trace
    page.wait_for_selector('#editor[data-ready="true"]')
    assert page.locator("#editor-tokens .token").count() >= 8
    assert page.inner_text("#editor-metric").startswith("AP@50 ")
    assert page.locator("#editor-hits li").count() == 5
    assert page.locator("#editor-suggestion li").count() >= 1
    before_query = page.inner_text("#editor-query")
    first_word = page.locator("#editor-tokens .token .token-text").first.inner_text()
    page.locator("#editor-tokens .token").first.locator("button.remove").click()
    page.wait_for_function("() => document.querySelectorAll('#editor-history li').length === 2")
    after_query = page.inner_text("#editor-query")
    assert after_query != before_query and not after_query.startswith(first_word + " ")
    assert f"remove '{first_word}' at 0" in page.inner_text("#editor-history")
    assert "(" in page.inner_text("#editor-metric")  # the metric's change is shown
    swap = page.locator("#editor-tokens button.swap_synonym").first
    if swap.count():
        swap.click()
        page.wait_for_function("() => document.querySelectorAll('#editor-history li').length === 3")
    page.click("#editor-reset")
    page.wait_for_function("() => document.querySelectorAll('#editor-history li').length === 1")
    assert page.inner_text("#editor-query") == claim.text
    page.locator("#editor-tokens .token").first.locator("button.remove").click()  # leave one edit for the picture
    page.wait_for_function("() => document.querySelectorAll('#editor-history li').length === 2")
    _no_script_ran(page)
    assert page.errors == []

    shot = tmp_path / "factscout-page.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 20_000
    target = os.environ.get("FACTSCOUT_SCREENSHOT")
    if target:
        Path(target).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, target)


def test_a_shared_link_renders_without_the_form(server, page, mini):
    claim = next(c for c in mini.claims if c.claim_id == CLAIM_ID)
    from urllib.parse import urlencode

    response = page.goto(server + "/?" + urlencode({"claim": claim.text, "date": "2016-06-01"}))
    assert response.status == 200
    assert page.inner_text("#verdict-label") in VERDICTS
    assert page.locator('article[data-passage-id="late-folate"]').count() == 0  # after the claim: filtered
    assert page.input_value("#claim") == claim.text


def test_a_hostile_claim_is_text_too(server, page):
    from urllib.parse import urlencode

    hostile = f"Folate {HOSTILE_SCRIPT} {HOSTILE_IMG} homocysteine"
    page.goto(server + "/?" + urlencode({"claim": hostile}))
    page.wait_for_selector('#editor[data-ready="true"]')
    assert page.input_value("#claim") == hostile
    assert HOSTILE_SCRIPT in page.inner_text("#queries")
    assert page.locator("main img").count() == 0
    _no_script_ran(page)


@pytest.mark.parametrize("shown", ["empty", "report"])
def test_axe_finds_no_serious_accessibility_violation(server, browser, shown):
    from urllib.parse import urlencode

    from .axe import axe_source, describe, violations

    source = axe_source()
    context = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)  # to add axe's script
    page = context.new_page()
    if shown == "report":
        claim = "A deficiency of folate increases blood levels of homocysteine."
        page.goto(
            server + "/?" + urlencode({"claim": claim, "date": "2016-06-01", "evidence": "all", "claim_id": CLAIM_ID})
        )
        page.wait_for_selector('#editor[data-ready="true"]')
    else:
        page.goto(server + "/")
    found = violations(page, source)
    context.close()
    assert found == [], "axe-core, serious or critical:\n" + describe(found)


def test_checked_before_is_shown_first_and_a_hostile_fact_check_stays_text(server, page):
    from urllib.parse import urlencode

    from .conftest import FOLATE_CLAIM, HOSTILE_FC_TITLE

    page.goto(server + "/?" + urlencode({"claim": FOLATE_CLAIM, "date": "2016-06-01"}))
    section = page.locator("#checked-before")
    assert section.is_visible() and "Checked before" in section.inner_text()
    assert HOSTILE_FC_TITLE in section.inner_text()  # the title as text, not markup
    assert section.locator("img, script, a").count() == 0  # its javascript: url is no link
    assert section.bounding_box()["y"] < page.locator("#evidence").bounding_box()["y"]
    assert "Later Checks" not in section.inner_text()  # published after the claim date
    _no_script_ran(page)

"""The page's "paste a text" mode in a real browser (Debian's headless Chromium through Playwright, as
``test_browser.py``): switched to with the keyboard, a text with a ``<script>`` line posted to
``/v1/documents``, its job polled with the progress shown, then its page: the text with the check-worthy
sentences highlighted in place, each checked one a link to its verdict and evidence; the script never
runs; axe-core finds no serious or critical violation on the form or the report."""

from __future__ import annotations

import json

import pytest

from factscout.serve import create_app

from .conftest import FOLATE_CLAIM, HOSTILE_IMG, HOSTILE_SCRIPT
from .live import chromium, served

TEXT = (
    "The minister spoke on Tuesday about school meals.\n"
    "I think it was a lovely speech.\n"
    f"{FOLATE_CLAIM}\n"
    f"{HOSTILE_SCRIPT} {HOSTILE_IMG} Folic acid lowered homocysteine by 25 percent in the 2005 trial.\n"
)


@pytest.fixture(scope="module")
def server(checker):
    with served(create_app(checker)) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    with chromium() as b:
        yield b


@pytest.fixture(scope="module")
def checked(server, browser):
    """The text checked through the page; the page on its report, and what was seen on the way."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(90_000)
    seen: dict = {"dialogs": [], "errors": [], "polls": 0}
    page.on("dialog", lambda d: (seen["dialogs"].append(d.message), d.dismiss()))
    page.on("pageerror", lambda e: seen["errors"].append(str(e)))
    page.goto(server + "/")
    assert page.is_visible("#mode") and page.is_visible("#claim-form") and not page.is_visible("#document-form")
    page.focus('#mode input[value="claim"]')
    page.keyboard.press("ArrowDown")  # a radio group: the arrow key moves to "a text" and selects it
    assert page.is_checked('#mode input[value="document"]')
    assert page.is_visible("#document-form") and not page.is_visible("#claim-form")
    page.fill("#document-text", TEXT)
    page.fill("#document-date", "2016-06-01")
    page.fill("#document-top", "2")

    def slow_poll(route):  # the first polls are answered "running" so the progress line can be seen
        seen["polls"] += 1
        if seen["polls"] <= 2:
            body = {"status": "running", "progress": {"checked": 0, "total": 2}}
            route.fulfill(status=200, content_type="application/json", body=json.dumps(body))
        else:
            route.continue_()

    page.route("**/v1/documents/*", slow_poll)
    page.click("#check-document")
    page.wait_for_function(
        "() => document.getElementById('document-status').textContent === 'checking… 0/2 sentences checked'"
    )
    page.wait_for_url("**/documents/*")
    page.wait_for_selector(".document-text")
    seen["page"], seen["context"] = page, context
    yield seen
    context.close()


def test_the_text_is_shown_with_its_checked_sentences_linked_to_their_reports(checked):
    page = checked["page"]
    text = page.inner_text(".document-text")
    assert "I think it was a lovely speech." in text and HOSTILE_SCRIPT in text and HOSTILE_IMG in text
    links = page.locator(".document-text a.cw")
    assert 1 <= links.count() <= 2 and FOLATE_CLAIM in links.all_inner_texts()
    tags = page.locator(".document-text .cw-tag").all_inner_texts()
    assert len(tags) == links.count() and all(t.split(": ", 1)[0].isdigit() for t in tags)
    first = links.first
    target = first.get_attribute("href")
    first.focus()
    page.keyboard.press("Enter")  # a link: the keyboard opens it
    assert page.url.endswith(target)
    claim = page.locator(target)
    assert claim.is_visible() and claim.locator('[data-section="verdict"]').count() == 1
    assert claim.locator('[data-section="evidence"] article.passage').count() >= 1
    assert page.locator("main script, main img").count() == 0  # the hostile line stayed text
    assert page.evaluate("() => typeof window.__pwned") == "undefined" and checked["dialogs"] == []
    assert checked["errors"] == [] and checked["polls"] >= 3


def test_axe_finds_no_serious_accessibility_violation_in_the_text_mode_or_its_report(server, browser, checked):
    from .axe import axe_source, describe, violations

    source = axe_source()
    context = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)  # to add axe's script
    page = context.new_page()
    page.goto(server + "/?mode=document")
    page.wait_for_selector("#document-form:not([hidden])")
    found = violations(page, source)
    page.goto(checked["page"].url.split("#")[0])
    page.wait_for_selector(".document-text")
    found += violations(page, source)
    context.close()
    assert found == [], "axe-core, serious or critical:\n" + describe(found)

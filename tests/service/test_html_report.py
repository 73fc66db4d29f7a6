"""Shareable HTML reports (``factscout check --html``): one self-contained file, nothing external,
hostile passage text escaped, many claims on one page; through the library and the CLI."""

from __future__ import annotations

import json
import re
from html import unescape
from html.parser import HTMLParser

import pytest
from typer.testing import CliRunner

from factscout.cli.main import app
from factscout.errors import InputError
from factscout.records import Claim
from factscout.render.html import CSS, render_html, write_html
from factscout.report import VERDICTS

from .conftest import CLAIM_DATE, CLAIM_ID, HOSTILE_IMG, HOSTILE_SCRIPT, HOSTILE_TITLE


class Elements(HTMLParser):
    """Every start tag with its attributes, and the text of <style> elements."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.styles: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_style = tag == "style"

    def handle_endtag(self, tag):
        self._in_style = False

    def handle_data(self, data):
        if self._in_style:
            self.styles.append(data)


def parsed(html: str) -> Elements:
    p = Elements()
    p.feed(html)
    return p


def assert_self_contained(html: str) -> None:
    p = parsed(html)
    names = [tag for tag, _ in p.tags]
    assert "script" not in names and "img" not in names and "link" not in names and "iframe" not in names
    for tag, attrs in p.tags:
        for name, value in attrs.items():
            assert not name.startswith("on"), (tag, name)  # no event handler attributes
            if name in ("src", "srcset", "data", "poster", "action", "formaction"):
                raise AssertionError(f"<{tag} {name}={value!r}> loads something")
            if name == "href" and tag != "a":
                raise AssertionError(f"<{tag} href={value!r}> loads something")
    css = "\n".join(p.styles)
    assert CSS.read_text(encoding="utf-8").strip()[:200] in css  # the served page's stylesheet, inlined
    assert not re.search(r"url\(|@import", css)
    assert not re.search(r"(?:src|@import)[^>]*https?://", html)
    csp = next(a["content"] for t, a in p.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy")
    assert "default-src 'none'" in csp and "script-src" not in csp


@pytest.fixture(scope="module")
def reports(checker, mini):
    claim = next(c for c in mini.claims if c.claim_id == CLAIM_ID)
    from factscout.serve.service import Service

    undated_filter = Service(checker).checker_for(checker.settings.planner, False)  # show the late passage
    first = undated_filter.check(Claim(CLAIM_ID, claim.text, CLAIM_DATE))
    others = [checker.check(c) for c in mini.claims[:3] if c.claim_id != CLAIM_ID]
    return [first, *others]


def test_one_claim_is_one_self_contained_page_with_its_evidence(reports, checker, tmp_path):
    report = reports[0]
    path = write_html(tmp_path / "one.html", [report], checker.store)
    assert [p.name for p in tmp_path.iterdir()] == ["one.html"]  # one file, nothing beside it
    html = path.read_text(encoding="utf-8")
    assert_self_contained(html)
    d = report.to_dict()
    assert f'<span class="verdict-label">{d["verdict"]["label"]}</span>' in html
    assert html.count('class="passage') == len(d["evidence"]) == 5
    highlighted = sum(len(e["sentences"]) for e in d["evidence"])
    assert highlighted >= 1 and html.count('class="sent hl ') == highlighted
    for q in d["queries"]:
        assert f'<q class="found-by">{q["text"]}</q>' in html or q["query_id"] not in {
            f for e in d["evidence"] for f in e["found_by"]
        }
    assert html.count('<circle cx="') == len(d["timeline"]) >= 3  # the dated evidence on the timeline
    assert "claim 2016-06-01" in html and "after the claim date" in html  # late-folate, flagged
    assert "Provenance" in html and '"planner": "claim"' in unescape(html)  # the settings it ran with
    assert 'href="https://example.org/late"' in html  # a source link is an anchor, not an asset


def test_hostile_passage_text_is_escaped(reports, checker):
    html = render_html([reports[0]], checker.store)
    assert 'data-passage-id="hostile"' in html
    for raw in (HOSTILE_SCRIPT, HOSTILE_IMG, HOSTILE_TITLE):
        assert raw not in html
    assert "&lt;script&gt;window.__pwned = &#39;text&#39;; alert(&#39;xss&#39;)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=" in html
    assert "javascript:" not in html.split("<main>")[1].split('data-passage-id="hostile"')[1].split("</article>")[0]
    assert_self_contained(html)


def test_a_hostile_claim_and_provenance_are_escaped_too(reports):
    d = reports[1].to_dict()
    d["claim"] = f"Folate {HOSTILE_SCRIPT}"
    d["provenance"] = {"note": "</pre><script>alert(1)</script>"}
    html = render_html([d])
    assert HOSTILE_SCRIPT not in html and "<script>alert(1)" not in html
    assert "&lt;/pre&gt;&lt;script&gt;alert(1)" in html
    assert_self_contained(html)


def test_many_claims_render_with_contents_and_totals(reports, checker):
    html = render_html(reports, checker.store)
    assert_self_contained(html)
    assert html.count('<article class="claim-report"') == len(reports) == 4
    for i, r in enumerate(reports, 1):
        assert f'id="claim-{i}"' in html and f'href="#claim-{i}"' in html
        assert f'data-claim-id="{r.claim_id}"' in html
    total = sum(int(n) for n in re.findall(r'<span class="total [^"]+">(\d+) ', html))
    assert total == len(reports)
    tags = re.findall(r'class="verdict-tag [^"]+">([^<]+)<', html)
    assert tags == [r.verdict.label for r in reports] and set(tags) <= set(VERDICTS)


def test_without_the_store_the_highlighted_sentences_still_show(reports):
    d = reports[0].to_dict()
    html = render_html([json.loads(json.dumps(d))])  # as read back from --out JSON lines
    assert html.count('class="sent hl ') == sum(len(e["sentences"]) for e in d["evidence"])


def test_bad_input_is_a_clear_error(reports, tmp_path):
    with pytest.raises(InputError, match="no reports"):
        render_html([])
    with pytest.raises(InputError, match="not a factscout-report/1 record"):
        render_html([{"claim": "x"}])
    with pytest.raises(InputError, match="not a factscout report"):
        render_html(["a string"])  # type: ignore[list-item]
    with pytest.raises(InputError, match="is a directory"):
        write_html(tmp_path, [reports[0]])


def test_cli_check_html_for_one_claim_and_for_a_claims_file(served_index, mini, tmp_path):
    runner = CliRunner()
    claim = next(c for c in mini.claims if c.claim_id == CLAIM_ID)
    one = tmp_path / "one.html"
    args = ["check", claim.text, "--index", str(served_index), "--planner", "claim", "--html", str(one)]
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    html = one.read_text(encoding="utf-8")
    assert_self_contained(html)
    assert html.count('<article class="claim-report"') == 1 and HOSTILE_SCRIPT not in html

    claims = tmp_path / "claims.jsonl"
    claims.write_text("".join(json.dumps({"_id": c.claim_id, "text": c.text}) + "\n" for c in mini.claims[:4]))
    many, jsonl = tmp_path / "many.html", tmp_path / "reports.jsonl"
    base = ["check", "--claims", str(claims), "--index", str(served_index), "--planner", "claim"]
    r = runner.invoke(app, [*base, "--html", str(many)])  # --out is optional with --html
    assert r.exit_code == 0, r.output
    assert many.read_text(encoding="utf-8").count('<article class="claim-report"') == 4
    r = runner.invoke(app, [*base, "--html", str(many), "--out", str(jsonl)])  # both
    assert r.exit_code == 0, r.output
    assert len(jsonl.read_text().splitlines()) == 4
    r = runner.invoke(app, base)
    assert r.exit_code != 0 and "--out" in r.output and "--html" in r.output


CALIBRATED = {
    "verdict_confidence": {"method": "platt", "calibrated": True, "dev_ece": {"before": 0.175, "after": 0.117}}
}


def _verdict_report(provenance=CALIBRATED, **verdict):
    from factscout.report import Report, VerdictCounts, VerdictSummary

    counts = VerdictCounts(supporting=1, refuting=0, neutral=0)
    summary = VerdictSummary(method="quin+ count rule", reason="r", counts=counts, **verdict)
    return Report(claim_id="c1", claim="Vitamin D prevents falls.", date=None, queries=(), evidence=(), verdict=summary,
                  provenance=provenance)  # fmt: skip


def test_the_report_shows_why_a_call_was_withheld_and_a_definite_calls_confidence():
    why = "low confidence 0.41 (< 0.55): would have been supported"
    withheld = _verdict_report(label="not enough evidence", confidence=0.41, call="supported", abstention=why)
    sure = _verdict_report(label="supported", confidence=0.8, call="supported")
    none = _verdict_report(label="not enough evidence", abstention="no evidence found")
    html = render_html([withheld, sure, none])
    assert_self_contained(html)
    text = " ".join(unescape(re.sub(r"<[^>]+>", "", html)).split())
    assert f"Why not a definite call: {why}" in text
    assert "Confidence 0.80: calibrated probability that this call is right (dev ECE 0.175 -> 0.117)" in text
    assert "Why not a definite call: no evidence found" in text
    assert text.count("Confidence 0.") == 1  # a withheld call's confidence is in its reason, not shown as trust


def test_a_confidence_is_called_calibrated_only_when_calibration_helped_on_dev():
    worse = {"verdict_confidence": {"calibrated": False, "dev_ece": {"before": 0.196, "after": 0.242}}}
    for provenance, said in (
        (CALIBRATED, "calibrated probability"),
        (worse, "not calibrated: on dev it did not lower the calibration error (dev ECE 0.196 -> 0.242)"),
        ({}, "its calibration on dev is not recorded"),
    ):
        html = render_html([_verdict_report(provenance, label="supported", confidence=0.8, call="supported")])
        text = " ".join(unescape(re.sub(r"<[^>]+>", "", html)).split())
        assert said in text
        assert ("calibrated probability" in text) == (provenance is CALIBRATED)


def test_the_served_page_draws_the_same_trust_view():
    from factscout.serve.page import templates

    macro = templates().from_string('{% import "_views.html" as views %}{{ views.trust_view(v) }}')
    shown = " ".join(
        macro.render(
            v={"label": "refuted", "call": "refuted", "confidence": 0.9, "abstention": None, "confidence_words": "w"}
        ).split()
    )
    assert 'Confidence <strong class="confidence-value">0.90</strong>' in shown
    from factscout.render.html import TEMPLATES
    from factscout.serve.page import TEMPLATES as PAGE

    views = (TEMPLATES / "_views.html").read_text()
    assert "{{ trust_view(v) }}" in views and "{{ verdict_view(v, report.claim_id, page=page) }}" in views
    for file in (PAGE / "index.html", TEMPLATES / "report.html"):  # both draw every section with one macro
        assert "views.report_sections(" in file.read_text()

"""One renderer for every view of a report (issue 48): each section of the report schema is shown
by the terminal, the HTML file and the served page, and the parts a reader needs to audit a
verdict (why it was withheld, each sentence's model label and whether the rule counted it, the
shards that did not answer) are in all three."""

from __future__ import annotations

import datetime as dt
import re
from html import unescape

from rich.console import Console

from factscout.render.html import render_html
from factscout.render.terminal import print_report
from factscout.render.view import SECTIONS, report_view
from factscout.report import (
    CheckedBefore,
    Evidence,
    EvidenceSentence,
    PlannedQuery,
    PriorCheck,
    Report,
    VerdictCounts,
    VerdictSummary,
)
from factscout.serve.page import page_context, templates

WHY = "low confidence 0.41 (< 0.55): would have been supported"


def full_report() -> Report:
    """A report with every section filled: a withheld call, a counted and an uncounted sentence,
    a fact-check, a dated passage after the claim, missing shards, a failed planner, a warning."""
    counted = EvidenceSentence(index=0, text="Folate lowers homocysteine.", score=0.8, stance="supports",
                               probabilities=(0.81, 0.09, 0.10))  # fmt: skip
    leaning = EvidenceSentence(index=1, text="No effect was seen in the elderly.", score=0.7,
                               stance="not enough info", probabilities=(0.21, 0.39, 0.40))  # fmt: skip
    wavering = EvidenceSentence(index=2, text="Results varied by dose.", score=0.6, stance="not enough info",
                                probabilities=(0.30, 0.45, 0.25))  # fmt: skip
    evidence = Evidence(passage_id="p1", doc_id="d1", title="Folate trial", url="https://example.org/a",
                        published=dt.date(2016, 7, 1), days_from_claim=30, rank=1, score=12.5, found_by=("q0",),
                        stance="supports", sentences=(counted, leaning, wavering))  # fmt: skip
    prior = PriorCheck(fact_check_id="f1", claim="Folate cuts homocysteine", publisher="Example Check",
                       verdict="True", normalised_verdict="supported", url="https://check.example/f1",
                       date=dt.date(2014, 5, 1), score=0.91)  # fmt: skip
    verdict = VerdictSummary(label="not enough evidence", method="quin+ count rule", reason=f"{WHY}; 1 supporting",
                             counts=VerdictCounts(supporting=1, refuting=0, neutral=2), confidence=0.41,
                             call="supported", abstention=WHY)  # fmt: skip
    return Report(
        claim_id="c1",
        claim="Folate deficiency raises homocysteine.",
        date=dt.date(2016, 6, 1),
        queries=(PlannedQuery(query_id="q0", text="folate homocysteine", origin="claim"),),
        checked_before=CheckedBefore(
            matches=(prior,), threshold=0.8, published_before=dt.date(2016, 6, 1), memory="memory-dir"
        ),
        evidence=(evidence,),
        verdict=verdict,
        provenance={
            "missing_shards": ["shard-2", "shard-5"],
            "planner_error": "RuntimeError: no model",
            "warnings": ["a model fitted on other settings"],
            "settings": {"stance": "cross"},
        },
    )


def _terminal(report: Report) -> str:
    console = Console(width=400, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    print_report(report, console)
    return " ".join(console.export_text().split())


def _text(html: str) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


def _page(report: Report) -> str:
    return str(templates().get_template("index.html").render(**page_context(report.to_dict(), {}), info={}, form={}))


def test_every_key_of_the_report_schema_belongs_to_a_section():
    keys = set(Report.model_json_schema(mode="serialization")["properties"])
    covered = {key for s in SECTIONS for key in s.keys}
    assert keys == covered, (
        f"not in any section: {sorted(keys - covered)}; no longer in the schema: {sorted(covered - keys)}"
    )
    assert set(report_view(full_report())["shown"]) == {s.name for s in SECTIONS}


def test_every_section_is_in_every_view():
    report = full_report()
    terminal = _terminal(report)
    html = render_html([report])
    page = _page(report)
    for section in SECTIONS:
        if section.name != "claim":
            assert section.title in terminal, f"the terminal has no {section.title!r} section"
        for name, view in (("HTML report", html), ("page", page)):
            assert re.search(rf'data-section="[^"]*\b{section.name}\b', view), f"the {name} has no {section.name}"


def test_the_audit_details_are_in_every_view():
    report = full_report()
    views = {"terminal": _terminal(report), "HTML report": _text(render_html([report])), "page": _text(_page(report))}
    for name, text in views.items():
        assert f"Why not a definite call: {WHY}" in text or f"why not a definite call: {WHY}" in text, name
        assert "shard-2, shard-5 did not answer" in text, name
        assert "the query planner failed (RuntimeError: no model)" in text, name
        assert "a model fitted on other settings" in text, name
        assert "Example Check" in text and "2014-05-01" in text, name
        # the counted sentence with its side; the leaning one as not counted, with the model's own label
        assert "Folate lowers homocysteine." in text and "not counted" in text, name
        assert "model: refutes 0.45" in text, f"{name}: the model's label of an uncounted sentence"
        assert "1 published on or after the claim date" in text, name


def test_a_classifier_verdict_says_its_counts_are_the_rules():
    report = full_report()
    verdict = report.verdict.model_copy(update={"method": "quantemp++ classifier", "abstention": None,
                                                "label": "supported", "confidence": None})  # fmt: skip
    classified = report.model_copy(update={"verdict": verdict})
    for text in (_terminal(classified), _text(render_html([classified]))):
        assert "counted by the quin+ count rule for reference; the label is the quantemp++ classifier's" in text

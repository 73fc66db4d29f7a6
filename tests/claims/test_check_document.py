"""Checking a document end to end (issue 49, item 3): the top check-worthy sentences checked with their
context, one document report that keeps every sentence's and every claim's span, each claim's full
factscout-report/1 report with its "checked before" matches; the plan and the report it makes apart
(as the HTTP API and the MCP server use them)."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from factscout.check import Checker, CheckSettings
from factscout.claims.check import check_document, plan_document
from factscout.claims.checkworthy import CheckworthyScore
from factscout.claims.document import parse_document
from factscout.claims.report import FORMAT, DocumentReport
from factscout.datasets import load_dataset
from factscout.errors import InputError
from factscout.factchecks import FactCheck
from factscout.report import Report
from factscout.retrieve import build_index

FOLATE = "A deficiency of folate increases blood levels of homocysteine."
DAY = dt.date(2016, 6, 1)
# a statistic, an opinion, a sentence that leans on the one before it, markup read as plain text
DOCUMENT = (
    "The minister spoke on Tuesday about school meals.\r\n"
    "I think it was a lovely speech.\n"
    f"{FOLATE}\n"
    "It rose by 25 percent in the 2005 trial, she said.\n"
    "<script>alert('xss')</script> Café owners said nothing.\n"
)


class KeywordModel:
    """Check-worthiness from keywords (a test double with the model's interface): deterministic,
    whatever model is shipped."""

    threshold = 0.5
    labels = ("not check-worthy", "check-worthy")

    def __init__(self) -> None:
        self.scored: list[str] = []

    def score(self, texts):
        self.scored += texts
        out = []
        for t in texts:
            p = 0.9 if "folate" in t else 0.7 if "percent" in t else 0.4 if "Café" in t else 0.1
            out.append(CheckworthyScore(p, self.labels[p >= self.threshold], {"check-worthy": p}))
        return out

    def probabilities(self, texts):  # pragma: no cover - not used here
        raise NotImplementedError


@pytest.fixture(scope="module")
def checker(tmp_path_factory):
    from factscout.factchecks import FactCheckMemory, MatchModel
    from factscout.text.onnx_encoder import OnnxEncoder

    root = tmp_path_factory.mktemp("document")
    build_index(load_dataset("scifact_mini").corpus, root / "idx", "bm25", show_progress=False)
    encoder = OnnxEncoder(threads=1)

    class Cached:  # the encoder with the corpus-cache method a memory build calls
        def encode(self, texts):
            return encoder.encode(texts)

        def encode_cached(self, texts, **_):
            return encoder.encode(texts)

    checks = [FactCheck("fc-folate", FOLATE, "Example Checks", verdict="True", normalised_verdict="supported",
                        date=dt.date(2014, 5, 1), sources=("test",), licenses=("CC0",))]  # fmt: skip
    FactCheckMemory.build(checks, model=MatchModel.load(), encoder=Cached()).save(root / "memory")
    settings = CheckSettings(planner="claim", passages=3, stance="head", factchecks=str(root / "memory"))
    return Checker.from_index(root / "idx", settings, encoder=encoder)


@pytest.fixture(scope="module")
def checked(checker):
    steps = []
    report = check_document(
        checker,
        parse_document(DOCUMENT),
        top=2,
        date=DAY,
        model=KeywordModel(),
        progress=lambda *step: steps.append(step),
    )
    return report, steps


def test_the_top_checkworthy_sentences_are_checked_with_their_context(checked):
    report, _ = checked
    assert report.format == FORMAT and report.document_format == "text"
    assert report.text == DOCUMENT and report.chars == len(DOCUMENT) and report.date == DAY
    assert (report.threshold, report.min_score, report.top, report.checkworthy) == (0.5, None, 2, 2)
    assert [c.sentence_id for c in report.claims] == ["s3", "s4"]  # most check-worthy first
    folate, rose = report.claims
    assert (folate.rank, folate.score, folate.label, folate.claim) == (1, 0.9, "check-worthy", FOLATE)
    # "It" needs the sentences before it (up to two)
    assert (
        rose.context_ids == ("s2", "s3") and rose.claim == f"I think it was a lovely speech. {FOLATE} {rose.sentence}"
    )
    for c in report.claims:
        assert isinstance(c.report, Report) and c.report.claim == c.claim and c.report.date == DAY
        assert c.report.claim_id == c.sentence_id
        assert all(e.published is None or e.published < DAY for e in c.report.evidence)
    # the full report, "checked before" included: the published fact-check of the claim
    assert [m.fact_check_id for m in folate.report.checked_before.matches] == ["fc-folate"]


def test_every_sentence_and_every_claim_keeps_its_span(checked):
    report, _ = checked
    assert [s.sentence_id for s in report.sentences] == [f"s{i}" for i in range(1, 6)]
    for s in report.sentences:
        assert report.text[s.start : s.end] == s.text
    for c in report.claims:
        assert report.text[c.start : c.end] == c.sentence == report.sentence(c.sentence_id).text
    assert sorted(s.rank for s in report.sentences) == list(range(1, 6))
    assert [s.sentence_id for s in report.sentences if s.checked] == ["s3", "s4"]
    assert [s.sentence_id for s in report.sentences if s.checkworthy] == ["s3", "s4"]
    script = next(s for s in report.sentences if "<script>" in s.text)
    assert not script.checked and script.text.startswith("<script>alert('xss')</script>")


def test_the_json_layout_round_trips(checked):
    report, _ = checked
    d = json.loads(json.dumps(report.to_dict()))
    assert list(d) == ["format", "document_format", "text", "chars", "date", "threshold", "min_score", "top",
                       "checkworthy", "sentences", "claims"]  # fmt: skip
    assert d["date"] == "2016-06-01" and d["claims"][0]["report"]["format"] == "factscout-report/1"
    assert d["claims"][0]["report"] == report.claims[0].report.to_dict()  # timeline and leakage included
    again = DocumentReport.from_dict(d)
    assert again == report and again.to_dict() == d
    with pytest.raises(InputError, match="not a factscout-document-report/1"):
        DocumentReport.from_dict(report.claims[0].report.to_dict())
    with pytest.raises(InputError, match="malformed"):
        DocumentReport.from_dict({**d, "sentences": "none"})


def test_progress_scores_then_checks(checked):
    _, steps = checked
    assert steps == [("scoring", 5, 5), ("checking", 0, 2), ("checking", 1, 2), ("checking", 2, 2)]


def test_min_score_replaces_the_threshold(checker):
    model = KeywordModel()
    low = plan_document(parse_document(DOCUMENT), model, top=3, min_score=0.3)
    assert [r.sentence.sentence_id for r in low.chosen] == ["s3", "s4", "s5"]  # s5 is below the threshold
    none = plan_document(parse_document(DOCUMENT), model, min_score=1.0)
    assert none.chosen == () and none.claims() == []
    empty = check_document(checker, parse_document(DOCUMENT), min_score=1.0, model=model)
    assert empty.claims == () and len(empty.sentences) == 5 and empty.min_score == 1.0
    assert not any(s.checked for s in empty.sentences)


def test_the_plan_makes_the_report_from_reports_given_back(checked):
    report, _ = checked
    plan = plan_document(parse_document(DOCUMENT), KeywordModel(), top=2, date=DAY)
    claims = plan.claims(prefix="job-")
    assert [c.claim_id for c in claims] == ["job-s3", "job-s4"] and claims[1].meta["context_ids"] == ["s2", "s3"]
    dicts = [c.report.to_dict() for c in report.claims]
    again = plan.report([dicts[0], None])  # a failed check: no report, the span kept
    assert again.claims[0].report == report.claims[0].report and again.claims[1].report is None
    assert again.claims[1].start == report.claims[1].start and again.sentences == report.sentences
    with pytest.raises(InputError, match="1 reports for the 2 claims"):
        plan.report(dicts[:1])


@pytest.mark.parametrize("top", [0, -1, True, 1.5])
def test_a_bad_top_is_refused(top):
    with pytest.raises(InputError, match="top must be a positive number"):
        plan_document(parse_document(DOCUMENT), KeywordModel(), top=top)


def test_spans_of_markdown_html_and_transcripts_point_into_the_report_text():
    model = KeywordModel()
    markdown = plan_document(parse_document(f"# Meals\n\nWe learnt that **{FOLATE[:-1]}**.\n", "markdown"), model)
    md = markdown.report([None] * len(markdown.chosen))
    (claim,) = md.claims
    assert md.text[claim.start : claim.end] == f"We learnt that **{FOLATE[:-1]}**."  # the markup inside kept
    page = f"<html><body><article><p>{FOLATE} &amp; more.</p><script>x()</script></article></body></html>"
    html = plan_document(parse_document(page, "html"), model).report([None])
    assert (
        "<script>" not in html.text and html.text[html.claims[0].start : html.claims[0].end] == html.claims[0].sentence
    )
    tsv = "1\tMINISTER\tIt was fine.\n2\tMINISTER\tAnd folate levels rose 40 percent.\n"
    transcript = plan_document(parse_document(tsv, "transcript"), model).report([None])
    (said,) = transcript.claims
    assert said.speaker == "MINISTER" and said.line == 2 and tsv[said.start : said.end] == said.sentence
    assert said.context_ids == ("s1",) and said.claim == "It was fine. And folate levels rose 40 percent."


def test_the_shipped_model_checks_a_statistic_not_an_opinion(checker):
    report = check_document(checker, parse_document(DOCUMENT), top=1)
    assert len(report.claims) == 1 and "opinion" not in report.claims[0].sentence
    assert report.claims[0].sentence != "I think it was a lovely speech."
    assert report.claims[0].score >= report.threshold
